//! pprof `perftools.profiles.Profile` (gzip-compressed on disk) as written by
//! `jax.profiler.save_device_memory_profile`, into a [`DeviceMemorySnapshot`].
//!
//! Every string, location and function id in the file is checked before use:
//! a profile that points outside its own tables is reported, never indexed.
//!
//! Nothing is held decoded that the snapshot does not keep: the string table
//! is borrowed from the input, a location is kept as where its message lies
//! and turned into frames when a sample first refers to it, and samples are
//! walked on the wire and decoded one at a time. What a large profile holds
//! many of (samples, inlined lines, functions) costs the snapshot a few
//! words each, and tables are found by sorting rather than by hash maps.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;

use super::proto::pprof;
use super::wire::{self, Field, Fields, Walker, WireError};
use crate::error::{Error, Result};
use crate::model::device_memory::Function;
use crate::model::{DeviceMemorySnapshot, Frame, Label, LabelValue, LiveGroup, Stack};

/// What to tell a user whose pprof file is some other kind of profile.
const HOW_TO_PRODUCE: &str = "expected a device memory profile from jax.profiler.save_device_memory_profile, \
with sample types allocations/count and space/bytes";

/// Profile field numbers (profile.proto).
const SAMPLE_TYPE: u32 = 1;
const SAMPLE: u32 = 2;
const LOCATION: u32 = 4;
const FUNCTION: u32 = 5;
const STRING_TABLE: u32 = 6;
/// `Location.line`.
const LINE: u32 = 4;

/// Decodes a profile. Bytes that stop decoding part-way (a file cut short,
/// bytes after the profile that are not part of it) are read up to that
/// point, as an xplane's are: the tables and samples whole before it are
/// kept, a sample that refers to a location or function lost with the rest
/// is left out (and counted), and a name lost with the string table reads
/// [`CUT_OFF`]. [`Decoded::damage`] says where and what was left out.
pub fn decode(path: &Path, bytes: Bytes) -> Result<Decoded> {
    let tables = Tables::read(path, &bytes)?;
    let cut = tables.cut.clone();
    if let (Some(cut), true) = (&cut, tables.strings.is_empty()) {
        return Err(Error::malformed(
            path,
            Some(cut.at),
            format!(
                "pprof: {}, inside its {}, before its string table, which names everything in it: nothing can be read",
                cut.what, cut.part
            ),
        ));
    }
    // Samples are walked on the wire and decoded one at a time, so none is
    // held decoded beside the snapshot; the walk stops where the tables' did.
    let walker = Walker::new(&bytes, 0);
    let samples = walker.fields(&bytes).map_while(|field| field.ok()).filter_map(|field| {
        match (field.number, field.as_bytes()) {
            (SAMPLE, Some(sample)) => Some(pprof::Sample::decode(sample).map_err(|e| invalid(path, e.to_string()))),
            _ => None,
        }
    });
    let mut decoder = Decoder::new(path, tables)?;
    let snapshot = match (decoder.snapshot(samples), &cut) {
        (Ok(snapshot), _) => snapshot,
        (Err(e), Some(cut)) => {
            return Err(Error::malformed(path, Some(cut.at), format!("{e}; the file ends inside its {}", cut.part)))
        }
        (Err(e), None) => return Err(e),
    };
    let damage = cut.map(|cut| {
        let mut kept = format!("{} samples kept", decoder.samples_read - decoder.samples_lost);
        if decoder.samples_lost > 0 {
            kept.push_str(&format!(
                ", {} left out that refer to locations or functions after the damage",
                decoder.samples_lost
            ));
        }
        if decoder.names_lost {
            kept.push_str(&format!(", names after the damage read \"{CUT_OFF}\""));
        }
        Error::malformed(path, Some(cut.at), format!("pprof: {}, inside its {}; {kept}", cut.what, cut.part))
    });
    Ok(Decoded { snapshot, damage })
}

/// What a name lost with the end of a damaged profile's string table reads.
pub const CUT_OFF: &str = "(cut off)";

/// A profile's snapshot, and where its bytes stopped decoding, if they did
/// before their end.
#[derive(Debug)]
pub struct Decoded {
    pub snapshot: DeviceMemorySnapshot,
    pub damage: Option<Error>,
}

/// Where a profile's bytes stop decoding, and the part they stop in.
#[derive(Debug, Clone)]
struct Cut {
    at: u64,
    what: String,
    part: &'static str,
}

fn invalid(path: &Path, what: String) -> Error {
    Error::malformed(path, None, format!("not a valid pprof profile: {what}"))
}

/// The tables of a profile other than its samples, read in one walk over
/// its fields and borrowed from its bytes. Every location is decoded here
/// to check it, so a malformed one is reported whether or not a sample
/// refers to it, and kept as its message: only a location a sample refers
/// to is decoded again, line by line, into frames.
#[derive(Default)]
struct Tables<'a> {
    sample_types: Vec<pprof::ValueType>,
    strings: Vec<Text<'a>>,
    /// Each location's id and message, in file order.
    locations: Vec<(u64, &'a [u8])>,
    functions: Vec<pprof::Function>,
    /// Where the fields stop decoding, if before the end.
    cut: Option<Cut>,
}

impl<'a> Tables<'a> {
    fn read(path: &Path, bytes: &'a [u8]) -> Result<Self> {
        let decode_error = |e: prost::DecodeError| invalid(path, e.to_string());
        let mut tables = Tables::default();
        for field in Walker::new(bytes, 0).fields(bytes) {
            let field = match field {
                Ok(field) => field,
                Err(e) => {
                    let number = usize::try_from(e.field_start).ok().and_then(|at| wire::cut_short_field(bytes, at));
                    let part = match number.map(|(number, _)| number) {
                        Some(SAMPLE) => "samples",
                        Some(LOCATION) => "locations",
                        Some(FUNCTION) => "functions",
                        Some(STRING_TABLE) => "string table",
                        _ => "fields, where the profile's bytes end",
                    };
                    tables.cut = Some(Cut { at: e.field_start, what: e.what, part });
                    break;
                }
            };
            if !matches!(field.number, SAMPLE_TYPE | LOCATION | FUNCTION | STRING_TABLE) {
                continue;
            }
            let message = field.as_bytes().ok_or_else(|| {
                invalid(path, format!("field {} at byte {} is not length-delimited", field.number, field.offset))
            })?;
            match field.number {
                SAMPLE_TYPE => tables.sample_types.push(pprof::ValueType::decode(message).map_err(decode_error)?),
                LOCATION => {
                    tables.locations.push((pprof::Location::decode(message).map_err(decode_error)?.id, message))
                }
                FUNCTION => tables.functions.push(pprof::Function::decode(message).map_err(decode_error)?),
                _ => {
                    let text = std::str::from_utf8(message).map_err(|_| {
                        invalid(path, format!("string table entry {} is not UTF-8", tables.strings.len()))
                    })?;
                    tables.strings.push(Text::Borrowed(text));
                }
            }
        }
        Ok(tables)
    }
}

/// A string-table entry: borrowed from the input until the snapshot keeps
/// it, then one copy shared by everything that keeps it.
enum Text<'a> {
    Borrowed(&'a str),
    Shared(Arc<str>),
}

impl Text<'_> {
    fn as_str(&self) -> &str {
        match self {
            Text::Borrowed(text) => text,
            Text::Shared(text) => text,
        }
    }
}

/// The first id, in file order, that is zero or repeats an earlier one.
fn first_bad_id(ids: impl Iterator<Item = u64>) -> Option<u64> {
    let mut by_id: Vec<(u64, usize)> = ids.enumerate().map(|(at, id)| (id, at)).collect();
    by_id.sort_unstable();
    let zeros = by_id.iter().take_while(|(id, _)| *id == 0);
    let repeats = by_id.windows(2).filter_map(|pair| match pair {
        [(first, _), repeat] if *first == repeat.0 => Some(repeat),
        _ => None,
    });
    zeros.chain(repeats).min_by_key(|(_, at)| *at).map(|(id, _)| *id)
}

/// A location, by id, and once a sample refers to it, its frames.
struct Location<'a> {
    id: u64,
    message: &'a [u8],
    frames: Option<Arc<[Frame]>>,
}

/// Where a pprof function stands in [`DeviceMemorySnapshot::functions`].
#[derive(Clone, Copy)]
enum Made {
    /// Not made yet: the first function (an index into `Decoder::functions`)
    /// with the same name, file and start line, which is made for all of them.
    SameAs(usize),
    /// Made, at this index of the snapshot's functions.
    At(usize),
}

struct Decoder<'a> {
    path: &'a Path,
    sample_types: Vec<pprof::ValueType>,
    strings: Vec<Text<'a>>,
    /// By id.
    locations: Vec<Location<'a>>,
    /// By id.
    functions: Vec<pprof::Function>,
    /// Per entry of `functions`.
    made: Vec<Made>,
    /// Each distinct location's frames, shared by the locations that have them.
    segments: HashMap<Arc<[Frame]>, Arc<[Frame]>>,
    snapshot: DeviceMemorySnapshot,
    /// The profile's bytes stop decoding before their end: a string id past
    /// the table reads [`CUT_OFF`], and a sample that refers to a location
    /// or function that is not there is left out.
    damaged: bool,
    samples_read: usize,
    samples_lost: usize,
    names_lost: bool,
}

impl<'a> Decoder<'a> {
    fn new(path: &'a Path, tables: Tables<'a>) -> Result<Self> {
        let Tables { sample_types, strings, locations, mut functions, cut } = tables;
        if strings.first().is_none_or(|s| !s.as_str().is_empty()) {
            return Err(Error::malformed(path, None, "pprof string table does not start with the empty string"));
        }
        let malformed = |what: String| Error::malformed(path, None, format!("pprof: {what}"));
        if let Some(id) = first_bad_id(locations.iter().map(|(id, _)| *id)) {
            return Err(malformed(format!("location id {id} is zero or repeated")));
        }
        if let Some(id) = first_bad_id(functions.iter().map(|f| f.id)) {
            return Err(malformed(format!("function id {id} is zero or repeated")));
        }
        let mut locations: Vec<Location> =
            locations.into_iter().map(|(id, message)| Location { id, message, frames: None }).collect();
        locations.sort_unstable_by_key(|location| location.id);
        functions.sort_unstable_by_key(|function| function.id);
        let made = same_functions(&functions, &strings);
        Ok(Decoder {
            path,
            sample_types,
            strings,
            locations,
            functions,
            made,
            segments: HashMap::new(),
            snapshot: DeviceMemorySnapshot::default(),
            damaged: cut.is_some(),
            samples_read: 0,
            samples_lost: 0,
            names_lost: false,
        })
    }

    fn malformed(&self, what: String) -> Error {
        Error::malformed(self.path, None, format!("pprof: {what}"))
    }

    fn string(&self, id: i64) -> Result<&str> {
        usize::try_from(id).ok().and_then(|i| self.strings.get(i)).map(Text::as_str).ok_or_else(|| self.outside(id))
    }

    fn outside(&self, id: i64) -> Error {
        self.malformed(format!("string id {id} is outside the string table ({} entries)", self.strings.len()))
    }

    /// One shared string per string-table entry.
    fn shared_string(&mut self, id: i64) -> Result<Arc<str>> {
        let Some(text) = usize::try_from(id).ok().and_then(|i| self.strings.get_mut(i)) else {
            if self.damaged && id > 0 {
                self.names_lost = true;
                return Ok(Arc::from(CUT_OFF));
            }
            return Err(self.outside(id));
        };
        let shared = match text {
            Text::Shared(shared) => shared.clone(),
            Text::Borrowed(borrowed) => Arc::from(*borrowed),
        };
        *text = Text::Shared(shared.clone());
        Ok(shared)
    }

    fn sample_type_index(&self, kind: &str, unit: &str) -> Result<usize> {
        let mut found = Vec::with_capacity(self.sample_types.len());
        for (index, sample_type) in self.sample_types.iter().enumerate() {
            let (t, u) = (self.string(sample_type.r#type)?, self.string(sample_type.unit)?);
            if (t, u) == (kind, unit) {
                return Ok(index);
            }
            found.push(format!("{t}/{u}"));
        }
        Err(Error::unrecognised(
            self.path,
            format!("pprof profile with sample types [{}]; {HOW_TO_PRODUCE}", found.join(", ")),
        ))
    }

    fn snapshot(&mut self, samples: impl Iterator<Item = Result<pprof::Sample>>) -> Result<DeviceMemorySnapshot> {
        let count_index = self.sample_type_index("allocations", "count")?;
        let bytes_index = self.sample_type_index("space", "bytes")?;
        // Stacks by the sample's locations, then by their locations' frames
        // (each location's shared once for equal frames, so a stack is
        // known by its segments' addresses): locations that differ only by
        // address make one stack.
        let mut stack_ids: HashMap<Box<[u64]>, usize> = HashMap::new();
        let mut stacks_by_segments: HashMap<Box<[usize]>, usize> = HashMap::new();
        // Label sets by the string ids and numbers they are made of, and
        // groups by stack, label set and whether their size is known.
        let mut label_set_ids: HashMap<Box<[[i64; 4]]>, usize> = HashMap::new();
        let mut label_sets: Vec<Arc<[Label]>> = Vec::new();
        let mut groups: HashMap<(usize, usize, bool), usize> = HashMap::new();
        let mut totals = (0i64, 0i64);
        for (n, sample) in samples.enumerate() {
            self.samples_read += 1;
            let sample = match sample {
                Ok(sample) => sample,
                Err(_) if self.damaged => {
                    self.samples_lost += 1;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let value = |index: usize| {
                sample.value.get(index).copied().ok_or_else(|| {
                    self.malformed(format!(
                        "sample {n} has {} values for {} sample types",
                        sample.value.len(),
                        self.sample_types.len()
                    ))
                })
            };
            let (count, bytes) = (value(count_index)?, value(bytes_index)?);
            if count < 0 {
                return Err(self.malformed(format!("sample {n} has a negative allocation count ({count})")));
            }
            // Old jaxlib on TPU writes -1 per executable for a size it does not know.
            let size_unknown = bytes < 0;
            let bytes = bytes.max(0);
            totals = match (totals.0.checked_add(count), totals.1.checked_add(bytes)) {
                (Some(count), Some(bytes)) => (count, bytes),
                _ => return Err(self.malformed(format!("the sample values overflow 64 bits at sample {n}"))),
            };
            let stack = match stack_ids.get(sample.location_id.as_slice()) {
                Some(&stack) => stack,
                None => {
                    let frames = match self.stack(n, &sample.location_id) {
                        Ok(frames) => frames,
                        Err(_) if self.damaged => {
                            self.samples_lost += 1;
                            continue;
                        }
                        Err(e) => return Err(e),
                    };
                    let stacks = &mut self.snapshot.stacks;
                    let key: Box<[usize]> = frames.segments.iter().map(|s| s.as_ptr() as usize).collect();
                    let index = *stacks_by_segments.entry(key).or_insert_with(|| {
                        stacks.push(frames);
                        stacks.len() - 1
                    });
                    stack_ids.insert(sample.location_id.into_boxed_slice(), index);
                    index
                }
            };
            let raw: Box<[[i64; 4]]> = sample.label.iter().map(|l| [l.key, l.str, l.num, l.num_unit]).collect();
            let label_set = match label_set_ids.get(&raw) {
                Some(&index) => index,
                None => {
                    label_sets.push(sample.label.iter().map(|label| self.label(label)).collect::<Result<_>>()?);
                    label_set_ids.insert(raw, label_sets.len() - 1);
                    label_sets.len() - 1
                }
            };
            let samples = &mut self.snapshot.samples;
            let group = *groups.entry((stack, label_set, size_unknown)).or_insert_with(|| {
                let labels = label_sets.get(label_set).cloned().unwrap_or_default();
                samples.push(LiveGroup { count: 0, bytes: 0, size_unknown, stack, labels });
                samples.len() - 1
            });
            // Each group's sums are at most the totals, which fit.
            if let Some(group) = samples.get_mut(group) {
                group.count += count;
                group.bytes += bytes;
            }
        }
        Ok(std::mem::take(&mut self.snapshot))
    }

    /// The frames of a sample's locations, innermost first, as the
    /// locations' shared frames: a stack costs a word per location, however
    /// many lines its locations inline.
    fn stack(&mut self, sample: usize, location_ids: &[u64]) -> Result<Stack> {
        let segments = location_ids.iter().map(|&location_id| self.of_location(sample, location_id));
        Ok(Stack { segments: segments.collect::<Result<_>>()? })
    }

    /// A location's frames, made once however many samples refer to it. Its
    /// lines (its inlined calls) run from the innermost outwards, as the
    /// stack does.
    fn of_location(&mut self, sample: usize, location_id: u64) -> Result<Arc<[Frame]>> {
        let found = self.locations.binary_search_by_key(&location_id, |location| location.id).ok();
        let Some(location) = found.and_then(|index| self.locations.get(index)) else {
            return Err(
                self.malformed(format!("sample {sample} refers to location id {location_id}, which is not defined"))
            );
        };
        if let Some(frames) = &location.frames {
            return Ok(frames.clone());
        }
        let message = location.message;
        let lines =
            || Fields::new(message, 0).filter(|field| field.as_ref().map_or(true, |field| field.number == LINE));
        // Collected from a range, so straight into a slice of the known length:
        // a location of a million inlined lines is not built twice. After an
        // error the rest are placeholders, and the error is returned instead.
        let count = lines().count();
        let mut fields = lines();
        let mut failed = None;
        let frames: Arc<[Frame]> = (0..count)
            .map(|_| match failed.is_none().then(|| self.frame(location_id, fields.next())) {
                Some(Ok(frame)) => frame,
                Some(Err(e)) => {
                    failed = Some(e);
                    Frame { function: 0, line: 0 }
                }
                None => Frame { function: 0, line: 0 },
            })
            .collect();
        if let Some(e) = failed {
            return Err(e);
        }
        // Locations with the same frames (differing only by address) share them.
        let frames = self.segments.entry(frames.clone()).or_insert(frames).clone();
        if let Some(location) = found.and_then(|index| self.locations.get_mut(index)) {
            location.frames = Some(frames.clone());
        }
        Ok(frames)
    }

    /// The frame of one of a location's `line` fields.
    fn frame(&mut self, location_id: u64, field: Option<std::result::Result<Field, WireError>>) -> Result<Frame> {
        let line = field.and_then(|field| field.ok()?.as_bytes()).map(pprof::Line::decode);
        // The location was decoded whole when the tables were read.
        let Some(Ok(line)) = line else {
            return Err(self.malformed(format!("location {location_id} cannot be decoded")));
        };
        Ok(Frame { function: self.function(location_id, line.function_id)?, line: line.line })
    }

    /// The snapshot's function for a pprof function id, made when first
    /// referred to (from the text of the function referring to it first).
    fn function(&mut self, location_id: u64, function_id: u64) -> Result<usize> {
        let index = self.functions.binary_search_by_key(&function_id, |function| function.id).ok();
        let (Some(index), Some(&made)) = (index, index.and_then(|index| self.made.get(index))) else {
            return Err(self.malformed(format!(
                "location {location_id} refers to function id {function_id}, which is not defined"
            )));
        };
        let same = match made {
            Made::At(at) => return Ok(at),
            Made::SameAs(same) => same,
        };
        if let Some(&Made::At(at)) = self.made.get(same) {
            return Ok(at);
        }
        let (name, file, start_line) = match self.functions.get(index) {
            Some(function) => (function.name, function.filename, function.start_line),
            None => return Err(self.malformed(format!("function id {function_id} is not defined"))),
        };
        let function = Function { name: self.shared_string(name)?, file: self.shared_string(file)?, start_line };
        let at = self.snapshot.functions.len();
        self.snapshot.functions.push(function);
        for slot in [index, same] {
            if let Some(made) = self.made.get_mut(slot) {
                *made = Made::At(at);
            }
        }
        Ok(at)
    }

    fn label(&mut self, label: &pprof::Label) -> Result<Label> {
        let key = self.shared_string(label.key)?;
        // pprof sets `str` for a text label and `num` (with an optional unit) for a number.
        // String id 0 is the empty string: a label with neither a number nor a unit is
        // text whose value is empty (JAX writes `device=""` for a device without a name).
        let value = if label.str != 0 || (label.num == 0 && label.num_unit == 0) {
            LabelValue::Text(self.shared_string(label.str)?)
        } else {
            let unit = Some(self.string(label.num_unit)?).filter(|u| !u.is_empty()).map(str::to_string);
            LabelValue::Number { value: label.num, unit }
        };
        Ok(Label { key, value })
    }
}

/// For each function (sorted by id), the first of those with the same name,
/// file and start line: frames in any of them are one frame. Found by
/// sorting, so a profile of a million functions needs no map of their text.
/// A string id outside the table sorts as no text; such a function is
/// refused when a location refers to it, before its group is looked at.
fn same_functions(functions: &[pprof::Function], strings: &[Text]) -> Vec<Made> {
    let string = |id: i64| usize::try_from(id).ok().and_then(|i| strings.get(i)).map(Text::as_str);
    let text = |index: &usize| {
        functions.get(*index).map(|function| (string(function.name), string(function.filename), function.start_line))
    };
    let mut order: Vec<usize> = (0..functions.len()).collect();
    order.sort_unstable_by(|a, b| text(a).cmp(&text(b)).then(a.cmp(b)));
    let mut made = vec![Made::SameAs(0); functions.len()];
    for group in order.chunk_by(|a, b| text(a) == text(b)) {
        let first = group.first().copied().unwrap_or_default();
        for &index in group {
            if let Some(slot) = made.get_mut(index) {
                *slot = Made::SameAs(first);
            }
        }
    }
    made
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::proto::pprof::{Function, Line, Location, Profile, Sample, ValueType};

    const PATH: &str = "snapshot.prof";

    /// A two-sample device memory profile in JAX's layout: one buffer on
    /// `cpu:0` allocated two calls deep (one of them inlined), one executable.
    fn profile() -> Profile {
        let strings = ["", "allocations", "count", "space", "bytes", "kind", "buffer", "device", "cpu:0"];
        let more = ["executable", "step", "train.py", "init", "model.py", "shard", "bytes_per_row"];
        let label = |key, str| pprof::Label { key, str, num: 0, num_unit: 0 };
        Profile {
            sample_type: vec![ValueType { r#type: 1, unit: 2 }, ValueType { r#type: 3, unit: 4 }],
            sample: vec![
                Sample {
                    location_id: vec![7, 8],
                    value: vec![3, 3072],
                    label: vec![
                        label(5, 6),
                        label(7, 8),
                        pprof::Label { key: 14, str: 0, num: 2, num_unit: 0 },
                        pprof::Label { key: 15, str: 0, num: 1024, num_unit: 4 },
                    ],
                },
                Sample { location_id: vec![8], value: vec![1, 0], label: vec![label(5, 9)] },
            ],
            location: vec![
                Location {
                    id: 7,
                    line: vec![
                        Line { function_id: 2, line: 12, column: 0 },
                        Line { function_id: 1, line: 30, column: 0 },
                    ],
                    ..Location::default()
                },
                Location { id: 8, line: vec![Line { function_id: 1, line: 40, column: 0 }], ..Location::default() },
            ],
            function: vec![
                Function { id: 1, name: 10, system_name: 10, filename: 11, start_line: 25 },
                Function { id: 2, name: 12, system_name: 12, filename: 13, start_line: 10 },
            ],
            string_table: strings.iter().chain(&more).map(|s| s.to_string()).collect(),
            ..Profile::default()
        }
    }

    fn decode_profile(profile: &Profile) -> Result<DeviceMemorySnapshot> {
        decode(Path::new(PATH), Bytes::from(profile.encode_to_vec())).map(|decoded| decoded.snapshot)
    }

    fn error_of(profile: &Profile) -> String {
        let message = decode_profile(profile).expect_err("the profile should be refused").to_string();
        assert!(message.starts_with(PATH), "{message}");
        message
    }

    #[test]
    fn samples_frames_and_labels_are_read() {
        let snapshot = decode_profile(&profile()).unwrap();
        let [buffer, executable] = snapshot.samples.as_slice() else { panic!("{:?}", snapshot.samples) };
        assert_eq!((buffer.count, buffer.bytes, executable.count, executable.bytes), (3, 3072, 1, 0));
        assert_eq!(buffer.text_label("kind"), Some("buffer"));
        assert_eq!(buffer.text_label("device"), Some("cpu:0"));
        assert_eq!(executable.text_label("kind"), Some("executable"));
        assert_eq!(executable.text_label("device"), None);
        assert_eq!(buffer.labels[2].value, LabelValue::Number { value: 2, unit: None });
        assert_eq!(buffer.labels[3].value, LabelValue::Number { value: 1024, unit: Some("bytes".into()) });
        let frames: Vec<(&str, &str, i64, i64)> = snapshot.stacks[buffer.stack]
            .iter()
            .map(|frame| {
                let function = &snapshot.functions[frame.function];
                (&*function.name, &*function.file, frame.line, function.start_line)
            })
            .collect();
        assert_eq!(frames, [("init", "model.py", 12, 10), ("step", "train.py", 30, 25), ("step", "train.py", 40, 25)]);
        // The executable's one frame is the buffer's outermost one, in a function stored once.
        let outermost = snapshot.stacks[buffer.stack].iter().nth(2).copied();
        assert_eq!(snapshot.stacks[executable.stack].iter().copied().collect::<Vec<_>>(), Vec::from_iter(outermost));
        assert_eq!(snapshot.functions.len(), 2);
    }

    /// jaxlib on TPU (2021) wrote executables with size -1 each, and a
    /// device without a name as a `device` label with an empty value.
    #[test]
    fn sizes_of_minus_one_are_unknown_and_an_empty_device_is_a_device() {
        let mut p = profile();
        p.sample[1].value = vec![2, -2];
        p.sample[0].label[1].str = 0;
        let snapshot = decode_profile(&p).unwrap();
        let [buffer, executable] = snapshot.samples.as_slice() else { panic!("{:?}", snapshot.samples) };
        assert_eq!((executable.count, executable.bytes, executable.size_unknown), (2, 0, true));
        assert_eq!((buffer.bytes, buffer.size_unknown), (3072, false));
        assert_eq!(buffer.text_label("device"), Some(""));
        assert_eq!(executable.text_label("device"), None);
    }

    #[test]
    fn samples_of_one_location_list_share_one_stack() {
        let mut p = profile();
        p.sample.push(Sample { location_id: vec![7, 8], value: vec![1, 8], label: vec![] });
        let snapshot = decode_profile(&p).unwrap();
        assert_eq!(snapshot.samples[0].stack, snapshot.samples[2].stack);
        assert_eq!(snapshot.stacks.len(), 2);
    }

    /// Samples are summed per stack, label set and known size: a profile of
    /// a million samples from one call site is one group.
    #[test]
    fn samples_of_one_stack_and_label_set_are_one_group() {
        let mut p = profile();
        let again = Sample { location_id: vec![8], value: vec![2, 0], label: p.sample[1].label.clone() };
        p.sample.push(again);
        p.sample.push(Sample { location_id: vec![8], value: vec![1, -1], label: p.sample[1].label.clone() });
        let snapshot = decode_profile(&p).unwrap();
        let [_, executable, unknown] = snapshot.samples.as_slice() else { panic!("{:?}", snapshot.samples) };
        assert_eq!((executable.count, executable.bytes, executable.size_unknown), (3, 0, false));
        assert_eq!((unknown.count, unknown.bytes, unknown.size_unknown), (1, 0, true));
        assert!(Arc::ptr_eq(&executable.labels, &unknown.labels));
    }

    /// Two pprof functions of one name, file and start line are one function,
    /// so locations that differ only by which of them they name make one stack.
    #[test]
    fn functions_of_the_same_text_are_one() {
        let mut p = profile();
        p.function.push(Function { id: 3, name: 10, system_name: 10, filename: 11, start_line: 25 });
        p.location.push(Location {
            id: 9,
            line: vec![Line { function_id: 3, line: 40, column: 0 }],
            ..Location::default()
        });
        p.sample.push(Sample { location_id: vec![9], value: vec![1, 0], label: p.sample[1].label.clone() });
        let snapshot = decode_profile(&p).unwrap();
        assert_eq!(snapshot.functions.len(), 2);
        assert_eq!(snapshot.stacks.len(), 2);
        assert_eq!(snapshot.samples.len(), 2);
        assert_eq!(snapshot.samples[1].count, 2);
    }

    #[test]
    fn the_first_bad_id_in_file_order_is_named() {
        assert_eq!(first_bad_id([3, 1, 2].into_iter()), None);
        assert_eq!(first_bad_id([5, 4, 4, 5].into_iter()), Some(4));
        assert_eq!(first_bad_id([5, 5, 0].into_iter()), Some(5));
        assert_eq!(first_bad_id([2, 0, 2].into_iter()), Some(0));
    }

    #[test]
    fn ids_outside_the_tables_are_refused() {
        let mut p = profile();
        p.sample[0].label[0].str = 99;
        assert!(error_of(&p).contains("string id 99 is outside the string table (16 entries)"));

        let mut p = profile();
        p.function[1].filename = -1;
        assert!(error_of(&p).contains("string id -1"));

        let mut p = profile();
        p.sample[1].location_id = vec![9];
        assert!(error_of(&p).contains("sample 1 refers to location id 9, which is not defined"));

        let mut p = profile();
        p.location[0].line[0].function_id = 5;
        assert!(error_of(&p).contains("location 7 refers to function id 5, which is not defined"));

        let mut p = profile();
        p.location[1].id = 7;
        assert!(error_of(&p).contains("location id 7 is zero or repeated"));

        let mut p = profile();
        p.function[0].id = 0;
        assert!(error_of(&p).contains("function id 0 is zero or repeated"));
    }

    #[test]
    fn values_must_match_the_sample_types_and_add_up() {
        let mut p = profile();
        p.sample[1].value = vec![1];
        assert!(error_of(&p).contains("sample 1 has 1 values for 2 sample types"));

        let mut p = profile();
        p.sample[0].value = vec![-1, 8];
        assert!(error_of(&p).contains("sample 0 has a negative allocation count (-1)"));

        let mut p = profile();
        p.sample[0].value = vec![1, i64::MAX];
        p.sample[1].value = vec![1, 1];
        assert!(error_of(&p).contains("overflow"));
    }

    #[test]
    fn other_pprof_profiles_are_named_and_refused() {
        let mut p = profile();
        p.string_table[1] = "samples".into();
        p.string_table[3] = "cpu".into();
        p.string_table[4] = "nanoseconds".into();
        let message = error_of(&p);
        assert!(message.contains("sample types [samples/count, cpu/nanoseconds]"), "{message}");
        assert!(message.contains("jax.profiler.save_device_memory_profile"), "{message}");

        let mut p = profile();
        p.string_table[0] = "x".into();
        assert!(error_of(&p).contains("string table does not start with the empty string"));

        assert!(decode(Path::new(PATH), Bytes::from_static(b"\x0a\xff")).is_err());
    }
}

//! pprof `perftools.profiles.Profile` (gzip-compressed on disk) as written by
//! `jax.profiler.save_device_memory_profile`, into a [`DeviceMemorySnapshot`].
//!
//! Every string, location and function id in the file is checked before use:
//! a profile that points outside its own tables is reported, never indexed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;

use super::proto::pprof::{self, ProfileWithoutSamples};
use super::wire::Walker;
use crate::error::{Error, Result};
use crate::model::{DeviceMemorySnapshot, Frame, Label, LabelValue, LiveGroup};

/// What to tell a user whose pprof file is some other kind of profile.
const HOW_TO_PRODUCE: &str = "expected a device memory profile from jax.profiler.save_device_memory_profile, \
with sample types allocations/count and space/bytes";

pub fn decode(path: &Path, bytes: Bytes) -> Result<DeviceMemorySnapshot> {
    let invalid = |what: String| Error::malformed(path, None, format!("not a valid pprof profile: {what}"));
    let profile = ProfileWithoutSamples::decode(&bytes[..]).map_err(|e| invalid(e.to_string()))?;
    // Samples are walked on the wire and decoded one at a time, so none is
    // held decoded beside the snapshot.
    let walker = Walker::new(&bytes, 0);
    let samples = walker.fields(&bytes).filter_map(|field| match field {
        Ok(field) => match (field.number, field.as_bytes()) {
            (2, Some(sample)) => Some(pprof::Sample::decode(sample).map_err(|e| invalid(e.to_string()))),
            _ => None,
        },
        Err(e) => Some(Err(invalid(e.what))),
    });
    Decoder::new(path, &profile)?.snapshot(samples)
}

struct Decoder<'a> {
    path: &'a Path,
    profile: &'a ProfileWithoutSamples,
    locations: HashMap<u64, &'a pprof::Location>,
    functions: HashMap<u64, &'a pprof::Function>,
}

impl<'a> Decoder<'a> {
    fn new(path: &'a Path, profile: &'a ProfileWithoutSamples) -> Result<Self> {
        if profile.string_table.first().is_none_or(|s| !s.is_empty()) {
            return Err(Error::malformed(path, None, "pprof string table does not start with the empty string"));
        }
        let mut decoder = Decoder {
            path,
            profile,
            locations: HashMap::with_capacity(profile.location.len()),
            functions: HashMap::with_capacity(profile.function.len()),
        };
        for location in &profile.location {
            if location.id == 0 || decoder.locations.insert(location.id, location).is_some() {
                return Err(decoder.malformed(format!("location id {} is zero or repeated", location.id)));
            }
        }
        for function in &profile.function {
            if function.id == 0 || decoder.functions.insert(function.id, function).is_some() {
                return Err(decoder.malformed(format!("function id {} is zero or repeated", function.id)));
            }
        }
        Ok(decoder)
    }

    fn malformed(&self, what: String) -> Error {
        Error::malformed(self.path, None, format!("pprof: {what}"))
    }

    fn string(&self, id: i64) -> Result<&'a str> {
        usize::try_from(id).ok().and_then(|i| self.profile.string_table.get(i)).map(String::as_str).ok_or_else(|| {
            self.malformed(format!(
                "string id {id} is outside the string table ({} entries)",
                self.profile.string_table.len()
            ))
        })
    }

    fn sample_type_index(&self, kind: &str, unit: &str) -> Result<usize> {
        let mut found = Vec::with_capacity(self.profile.sample_type.len());
        for (index, sample_type) in self.profile.sample_type.iter().enumerate() {
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

    fn snapshot(&self, samples: impl Iterator<Item = Result<pprof::Sample>>) -> Result<DeviceMemorySnapshot> {
        let count_index = self.sample_type_index("allocations", "count")?;
        let bytes_index = self.sample_type_index("space", "bytes")?;
        let mut snapshot = DeviceMemorySnapshot::default();
        let mut frames = Frames::default();
        // Stacks by the sample's locations, then by their frames: locations
        // that differ only by address make one stack.
        let mut stack_ids: HashMap<Box<[u64]>, usize> = HashMap::new();
        let mut label_strings: HashMap<i64, Arc<str>> = HashMap::new();
        let mut stacks_by_frames: HashMap<Vec<usize>, usize> = HashMap::new();
        let mut totals = (0i64, 0i64);
        for (n, sample) in samples.enumerate() {
            let sample = sample?;
            let value = |index: usize| {
                sample.value.get(index).copied().ok_or_else(|| {
                    self.malformed(format!(
                        "sample {n} has {} values for {} sample types",
                        sample.value.len(),
                        self.profile.sample_type.len()
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
                    let mut stack = Vec::new();
                    for &location_id in &sample.location_id {
                        stack.extend_from_slice(frames.of_location(self, n, location_id)?);
                    }
                    let index = match stacks_by_frames.get(&stack) {
                        Some(&index) => index,
                        None => {
                            stacks_by_frames.insert(stack.clone(), snapshot.stacks.len());
                            snapshot.stacks.push(stack);
                            snapshot.stacks.len() - 1
                        }
                    };
                    stack_ids.insert(sample.location_id.into_boxed_slice(), index);
                    index
                }
            };
            let mut labels = Vec::with_capacity(sample.label.len());
            for label in &sample.label {
                labels.push(self.label(label, &mut label_strings)?);
            }
            snapshot.samples.push(LiveGroup { count, bytes, size_unknown, stack, labels });
        }
        snapshot.frames = frames.distinct;
        Ok(snapshot)
    }

    fn frame(&self, location_id: u64, line: &pprof::Line) -> Result<Frame> {
        let function = self.functions.get(&line.function_id).ok_or_else(|| {
            self.malformed(format!(
                "location {location_id} refers to function id {}, which is not defined",
                line.function_id
            ))
        })?;
        Ok(Frame {
            function: self.string(function.name)?.to_string(),
            file: self.string(function.filename)?.to_string(),
            line: line.line,
            function_line: function.start_line,
        })
    }

    /// One shared string per string-table entry a label names.
    fn shared_string(&self, id: i64, shared: &mut HashMap<i64, Arc<str>>) -> Result<Arc<str>> {
        if let Some(text) = shared.get(&id) {
            return Ok(text.clone());
        }
        let text: Arc<str> = Arc::from(self.string(id)?);
        shared.insert(id, text.clone());
        Ok(text)
    }

    fn label(&self, label: &pprof::Label, shared: &mut HashMap<i64, Arc<str>>) -> Result<Label> {
        let key = self.shared_string(label.key, shared)?;
        // pprof sets `str` for a text label and `num` (with an optional unit) for a number.
        // String id 0 is the empty string: a label with neither a number nor a unit is
        // text whose value is empty (JAX writes `device=""` for a device without a name).
        let value = if label.str != 0 || (label.num == 0 && label.num_unit == 0) {
            LabelValue::Text(self.shared_string(label.str, shared)?)
        } else {
            let unit = Some(self.string(label.num_unit)?).filter(|u| !u.is_empty()).map(str::to_string);
            LabelValue::Number { value: label.num, unit }
        };
        Ok(Label { key, value })
    }
}

/// The frames of each location, made once per location however many
/// samples refer to it: a location's lines (its inlined calls) are turned into
/// frames and interned once, and a stack entry is then a copy of indexes.
/// Frames are interned by function and line, each function by its name, file
/// and start line once, so no frame's text is hashed per line.
#[derive(Default)]
struct Frames<'a> {
    distinct: Vec<Frame>,
    /// pprof function id → the first function id of the same name, file and start line.
    same_function: HashMap<u64, u64>,
    functions_by_name: HashMap<(&'a str, &'a str, i64), u64>,
    /// (function, as `same_function` maps it; line) → index into `distinct`.
    ids: HashMap<(u64, i64), usize>,
    by_location: HashMap<u64, Vec<usize>>,
}

impl<'a> Frames<'a> {
    fn of_location(&mut self, decoder: &Decoder<'a>, sample: usize, location_id: u64) -> Result<&[usize]> {
        if !self.by_location.contains_key(&location_id) {
            let location = decoder.locations.get(&location_id).ok_or_else(|| {
                decoder.malformed(format!("sample {sample} refers to location id {location_id}, which is not defined"))
            })?;
            // A location's lines run from the innermost inlined call outwards, as the stack does.
            let mut indexes = Vec::with_capacity(location.line.len());
            self.ids.reserve(location.line.len());
            self.distinct.reserve(location.line.len());
            for line in &location.line {
                let function = self.function(decoder, location_id, line.function_id)?;
                let index = match self.ids.get(&(function, line.line)) {
                    Some(&index) => index,
                    None => {
                        self.distinct.push(decoder.frame(location_id, line)?);
                        self.ids.insert((function, line.line), self.distinct.len() - 1);
                        self.distinct.len() - 1
                    }
                };
                indexes.push(index);
            }
            self.by_location.insert(location_id, indexes);
        }
        Ok(self.by_location.get(&location_id).map(Vec::as_slice).unwrap_or_default())
    }

    fn function(&mut self, decoder: &Decoder<'a>, location_id: u64, function_id: u64) -> Result<u64> {
        if let Some(&same) = self.same_function.get(&function_id) {
            return Ok(same);
        }
        let function = decoder.functions.get(&function_id).ok_or_else(|| {
            decoder
                .malformed(format!("location {location_id} refers to function id {function_id}, which is not defined"))
        })?;
        let key = (decoder.string(function.name)?, decoder.string(function.filename)?, function.start_line);
        let same = *self.functions_by_name.entry(key).or_insert(function_id);
        self.same_function.insert(function_id, same);
        Ok(same)
    }
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
        decode(Path::new(PATH), Bytes::from(profile.encode_to_vec()))
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
            .map(|&i| &snapshot.frames[i])
            .map(|f| (f.function.as_str(), f.file.as_str(), f.line, f.function_line))
            .collect();
        assert_eq!(frames, [("init", "model.py", 12, 10), ("step", "train.py", 30, 25), ("step", "train.py", 40, 25)]);
        // The executable's one frame is the buffer's outermost one, stored once.
        assert_eq!(snapshot.stacks[executable.stack], [snapshot.stacks[buffer.stack][2]]);
        assert_eq!(snapshot.frames.len(), 3);
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

//! pprof `perftools.profiles.Profile` (gzip-compressed on disk) as written by
//! `jax.profiler.save_device_memory_profile`, into a [`DeviceMemorySnapshot`].
//!
//! Every string, location and function id in the file is checked before use:
//! a profile that points outside its own tables is reported, never indexed.

use std::collections::HashMap;
use std::path::Path;

use bytes::Bytes;
use prost::Message;

use super::proto::pprof::{self, Profile};
use crate::error::{Error, Result};
use crate::model::{DeviceMemorySnapshot, Frame, Label, LabelValue, LiveGroup};

/// What to tell a user whose pprof file is some other kind of profile.
const HOW_TO_PRODUCE: &str = "expected a device memory profile from jax.profiler.save_device_memory_profile, \
with sample types allocations/count and space/bytes";

pub fn decode(path: &Path, bytes: Bytes) -> Result<DeviceMemorySnapshot> {
    let profile =
        Profile::decode(bytes).map_err(|e| Error::malformed(path, None, format!("not a valid pprof profile: {e}")))?;
    Decoder::new(path, &profile)?.snapshot()
}

struct Decoder<'a> {
    path: &'a Path,
    profile: &'a Profile,
    locations: HashMap<u64, &'a pprof::Location>,
    functions: HashMap<u64, &'a pprof::Function>,
}

impl<'a> Decoder<'a> {
    fn new(path: &'a Path, profile: &'a Profile) -> Result<Self> {
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

    fn snapshot(&self) -> Result<DeviceMemorySnapshot> {
        let count_index = self.sample_type_index("allocations", "count")?;
        let bytes_index = self.sample_type_index("space", "bytes")?;
        let mut snapshot = DeviceMemorySnapshot::default();
        let mut frame_ids: HashMap<Frame, usize> = HashMap::new();
        let mut totals = (0i64, 0i64);
        for (n, sample) in self.profile.sample.iter().enumerate() {
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
            if count < 0 || bytes < 0 {
                return Err(self.malformed(format!("sample {n} has a negative count ({count}) or size ({bytes})")));
            }
            totals = match (totals.0.checked_add(count), totals.1.checked_add(bytes)) {
                (Some(count), Some(bytes)) => (count, bytes),
                _ => return Err(self.malformed(format!("the sample values overflow 64 bits at sample {n}"))),
            };
            let mut stack = Vec::with_capacity(sample.location_id.len());
            for &location_id in &sample.location_id {
                let location = self.locations.get(&location_id).ok_or_else(|| {
                    self.malformed(format!("sample {n} refers to location id {location_id}, which is not defined"))
                })?;
                // A location's lines run from the innermost inlined call outwards, as the stack does.
                for line in &location.line {
                    let frame = self.frame(location_id, line)?;
                    let next = snapshot.frames.len();
                    let index = *frame_ids.entry(frame.clone()).or_insert(next);
                    if index == next {
                        snapshot.frames.push(frame);
                    }
                    stack.push(index);
                }
            }
            let labels = sample.label.iter().map(|label| self.label(label)).collect::<Result<_>>()?;
            snapshot.samples.push(LiveGroup { count, bytes, stack, labels });
        }
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

    fn label(&self, label: &pprof::Label) -> Result<Label> {
        let key = self.string(label.key)?.to_string();
        // pprof sets `str` for a text label and `num` (with an optional unit) for a number;
        // string id 0 is the empty string, so a zero `str` means "not text".
        let value = if label.str != 0 {
            LabelValue::Text(self.string(label.str)?.to_string())
        } else {
            let unit = Some(self.string(label.num_unit)?).filter(|u| !u.is_empty()).map(str::to_string);
            LabelValue::Number { value: label.num, unit }
        };
        Ok(Label { key, value })
    }
}

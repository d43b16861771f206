//! The live set at each peak as a pprof profile (profile.proto, gzip), so
//! `go tool pprof` and speedscope can browse it: one sample per buffer, its
//! size in bytes, its stack the Python frames, then the op-name scopes, then
//! the HLO instruction as the leaf; labels name the module, memory space,
//! category and shape.

use std::collections::HashMap;
use std::io::{self, Write};

use flate2::write::GzEncoder;
use flate2::Compression;
use prost::Message;

use super::table::file_name_and_line;
use crate::analysis::attribution::op_name_components;
use crate::analysis::{BufferAtPeak, Report};
use crate::ingest::proto::pprof::{Function, Label, Line, Location, Profile, Sample, ValueType};

pub fn write(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut gzip = GzEncoder::new(out, Compression::default());
    gzip.write_all(&profile(report).encode_to_vec())?;
    gzip.finish()?.flush()
}

/// The profile of every memory space's live set at its peak.
pub fn profile(report: &Report) -> Profile {
    let mut builder = Builder::default();
    builder.string("");
    let sample_type = ValueType { r#type: builder.string("space"), unit: builder.string("bytes") };
    for module in &report.modules {
        let module_name = module.display_name();
        for space in &module.memory_spaces {
            for buffer in &space.at_peak {
                let sample = builder.sample(buffer, &[("module", &module_name), ("memory_space", &space.name)]);
                builder.profile.sample.push(sample);
            }
        }
    }
    let mut profile = builder.profile;
    profile.sample_type = vec![sample_type];
    profile.string_table = builder.strings;
    profile
}

#[derive(Default)]
struct Builder {
    profile: Profile,
    strings: Vec<String>,
    string_ids: HashMap<String, i64>,
    /// (function name, file, line) → location id.
    locations: HashMap<(String, String, i64), u64>,
    functions: HashMap<(String, String), u64>,
}

impl Builder {
    fn string(&mut self, text: &str) -> i64 {
        if let Some(&id) = self.string_ids.get(text) {
            return id;
        }
        let id = self.strings.len() as i64;
        self.strings.push(text.to_string());
        self.string_ids.insert(text.to_string(), id);
        id
    }

    fn location(&mut self, function: &str, file: &str, line: i64) -> u64 {
        let key = (function.to_string(), file.to_string(), line);
        if let Some(&id) = self.locations.get(&key) {
            return id;
        }
        let function_key = (function.to_string(), file.to_string());
        let function_id = match self.functions.get(&function_key) {
            Some(&id) => id,
            None => {
                let id = self.profile.function.len() as u64 + 1;
                let (name, filename) = (self.string(function), self.string(file));
                self.profile.function.push(Function { id, name, system_name: name, filename, start_line: 0 });
                self.functions.insert(function_key, id);
                id
            }
        };
        let id = self.profile.location.len() as u64 + 1;
        self.profile.location.push(Location {
            id,
            line: vec![Line { function_id, line, column: 0 }],
            ..Default::default()
        });
        self.locations.insert(key, id);
        id
    }

    /// Leaf first, as profile.proto orders a stack.
    fn sample(&mut self, buffer: &BufferAtPeak, labels: &[(&str, &str)]) -> Sample {
        let mut location_id = vec![self.location(&buffer.instruction, "", 0)];
        for scope in op_name_components(&buffer.op_name).into_iter().rev() {
            location_id.push(self.location(scope, "", 0));
        }
        for frame in buffer.stack.as_deref().unwrap_or_default().lines() {
            let mut parts = frame.splitn(3, ':');
            let (file, line) = (parts.next().unwrap_or(""), parts.next().and_then(|l| l.parse().ok()).unwrap_or(0));
            let name = file_name_and_line(&format!("{file}:{line}"));
            location_id.push(self.location(&name, file, line));
        }
        let mut label: Vec<Label> = labels
            .iter()
            .copied()
            .chain([("category", buffer.category.label()), ("shape", &*buffer.shape)])
            .map(|(key, value)| Label { key: self.string(key), str: self.string(value), num: 0, num_unit: 0 })
            .collect();
        label.push(Label { key: self.string("bytes"), str: 0, num: buffer.size_bytes, num_unit: self.string("bytes") });
        Sample { location_id, value: vec![buffer.size_bytes], label }
    }
}

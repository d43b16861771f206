//! The live set at each peak as a pprof profile (profile.proto, gzip), so
//! `go tool pprof` and speedscope can browse it: one sample per buffer, its
//! size in bytes, its stack the program (`jit_step(40)`, the root), the
//! memory space, the Python frames, then the op-name scopes, then the HLO
//! instruction as the leaf; labels name the module, memory space, category
//! and shape. A program's peaks happen at different times from another's, so
//! the profile's total is the sum of every program's peaks, and the root
//! frames are what `pprof -top` should be read by: each totals its program's
//! peak, and `-focus` on one shows that program alone. pprof merges
//! functions by name, so an instruction or memory space whose name is in
//! several programs is named with its program, `fusion.1 (jit_step(40))`.

use std::collections::{HashMap, HashSet};
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
    builder.shared = names_in_several_programs(report);
    for module in &report.modules {
        let module_name = module.display_name();
        for space in &module.memory_spaces {
            for buffer in &space.at_peak {
                let sample = builder.sample(buffer, &module_name, &space.name);
                builder.profile.sample.push(sample);
            }
        }
    }
    let mut profile = builder.profile;
    profile.sample_type = vec![sample_type];
    profile.string_table = builder.strings;
    profile
}

/// The instruction and memory space names that more than one program of the
/// report has at a peak.
fn names_in_several_programs(report: &Report) -> HashSet<String> {
    let mut programs_of: HashMap<&str, usize> = HashMap::new();
    for module in &report.modules {
        let mut names: HashSet<&str> = HashSet::new();
        for space in &module.memory_spaces {
            names.insert(&space.name);
            names.extend(space.at_peak.iter().map(|buffer| &*buffer.instruction));
        }
        for name in names {
            *programs_of.entry(name).or_default() += 1;
        }
    }
    programs_of.into_iter().filter(|&(_, programs)| programs > 1).map(|(name, _)| name.to_string()).collect()
}

#[derive(Default)]
struct Builder {
    /// See [`names_in_several_programs`]: these are named with their program.
    shared: HashSet<String>,
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

    /// `name`, or `name (module)` when another program has it too.
    fn of_program(&self, name: &str, module: &str) -> String {
        if self.shared.contains(name) {
            format!("{name} ({module})")
        } else {
            name.to_string()
        }
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

    /// Leaf first, as profile.proto orders a stack; `module` is the
    /// program's display name.
    fn sample(&mut self, buffer: &BufferAtPeak, module: &str, memory_space: &str) -> Sample {
        let leaf = self.of_program(&buffer.instruction, module);
        let mut location_id = vec![self.location(&leaf, "", 0)];
        for scope in op_name_components(&buffer.op_name).into_iter().rev() {
            location_id.push(self.location(scope, "", 0));
        }
        for frame in buffer.stack.as_deref().unwrap_or_default().lines() {
            let mut parts = frame.splitn(3, ':');
            let (file, line) = (parts.next().unwrap_or(""), parts.next().and_then(|l| l.parse().ok()).unwrap_or(0));
            let name = file_name_and_line(&format!("{file}:{line}"));
            location_id.push(self.location(&name, file, line));
        }
        let memory_space_frame = self.of_program(memory_space, module);
        location_id.push(self.location(&memory_space_frame, "", 0));
        location_id.push(self.location(module, "", 0));
        let labels = [("module", module), ("memory_space", memory_space)];
        let mut label: Vec<Label> = labels
            .into_iter()
            .chain([("category", buffer.category.label()), ("shape", &*buffer.shape)])
            .map(|(key, value)| Label { key: self.string(key), str: self.string(value), num: 0, num_unit: 0 })
            .collect();
        label.push(Label { key: self.string("bytes"), str: 0, num: buffer.size_bytes, num_unit: self.string("bytes") });
        Sample { location_id, value: vec![buffer.size_bytes], label }
    }
}

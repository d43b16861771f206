//! Bytes in, [`model`](crate::model) out. One module per input format, and
//! [`guess_dir`] and [`guess_file`] to tell them apart by content. Nothing outside this module sees
//! a protobuf type or a file layout.

mod allocator_events;
mod consistency;
pub mod glob;
pub mod hlo;
mod mapped;
pub mod pickle;
pub mod pprof;
pub mod progress;
pub mod proto;
pub mod source;
mod step_grouping;
pub mod torch_snapshot;
mod wire;
mod xla_shape;
pub mod xspace;

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use rayon::prelude::*;

pub use progress::Progress;

use crate::error::{Error, Result};
use crate::model::{Capture, Module};

/// How inputs are found and read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// In a log directory, the run to read instead of the newest.
    pub run: Option<String>,
    /// Ceiling on the bytes read or decompressed from any one file
    /// (by default [`source::default_max_input_size`]).
    pub max_input_size: u64,
    /// Where long reads report how far they have got.
    pub progress: Progress,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { run: None, max_input_size: source::default_max_input_size(), progress: Progress::default() }
    }
}

/// What a directory turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirKind {
    /// `<logdir>/plugins/profile/<run>/`: the run that will be read.
    LogDir { run: PathBuf },
    /// A run directory: one `<host>.xplane.pb` per host.
    RunDir { hosts: Vec<PathBuf> },
    /// An XLA dump directory or any directory of HloProto files.
    HloDir { files: Vec<PathBuf> },
    /// A directory of `*.pb` files that may be bare HloModuleProtos and
    /// BufferAssignmentProtos saved apart, told apart by content and paired.
    BareProtos { files: Vec<PathBuf> },
}

/// What a file turned out to be, by its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    XSpace,
    HloProto,
    /// An HloModuleProto on its own: the HLO without any buffer assignment.
    HloModule,
    /// A BufferAssignmentProto on its own, saved apart from its HloModuleProto
    /// (JAX: `memory_analysis().serialized_buffer_assignment_proto`).
    BufferAssignment,
    /// A pprof profile; [`load`] accepts the device memory profiles JAX writes.
    Pprof,
    /// A Python pickle; [`load`] accepts PyTorch CUDA memory snapshots.
    TorchSnapshot,
}

const PROFILE_SUBDIR: &str = "plugins/profile";

fn is_xplane_name(name: &str) -> bool {
    name.ends_with(".xplane.pb") || name.ends_with(".xplane.pb.gz") || name.ends_with(".xspace.pb")
}

/// XLA's optimized-module dumps and XProf's extracted protos; not the
/// `before_optimizations` or per-pass dumps, which have no buffer assignment.
fn is_optimized_hlo_name(name: &str) -> bool {
    let stem = name.strip_suffix(".gz").unwrap_or(name);
    (stem.ends_with("after_optimizations.hlo.pb") || stem.ends_with(".hlo_proto.pb")) && !stem.starts_with("NO_MODULE")
}

fn sorted_entries(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        if keep(&name.to_string_lossy()) {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Tells what a directory holds: a log dir, a run dir or HLO protos.
pub fn guess_dir(path: &Path, options: &ReadOptions) -> Result<DirKind> {
    let profiles = path.join(PROFILE_SUBDIR);
    if profiles.is_dir() {
        let runs = sorted_entries(&profiles, |_| true)?.into_iter().filter(|p| p.is_dir()).collect::<Vec<_>>();
        let run = match &options.run {
            Some(name) => match runs.iter().find(|r| r.file_name().is_some_and(|n| n == name.as_str())) {
                Some(run) => run.clone(),
                None => {
                    let names: Vec<String> =
                        runs.iter().filter_map(|r| r.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
                    let known = crate::suggest::closest_first(name, names.iter().map(String::as_str));
                    return Err(Error::unrecognised(
                        path,
                        format!("no run named '{name}' under {PROFILE_SUBDIR}; runs there: {known}"),
                    ));
                }
            },
            // Run directories are named by timestamp, so the newest sorts last.
            None => runs
                .into_iter()
                .next_back()
                .ok_or_else(|| Error::unrecognised(path, format!("{PROFILE_SUBDIR} holds no run directory")))?,
        };
        return Ok(DirKind::LogDir { run });
    }
    let hosts = sorted_entries(path, is_xplane_name)?;
    if !hosts.is_empty() {
        return Ok(DirKind::RunDir { hosts });
    }
    let files = sorted_entries(path, is_optimized_hlo_name)?;
    if !files.is_empty() {
        return Ok(DirKind::HloDir { files });
    }
    let files = sorted_entries(path, |name| name.ends_with(".pb"))?;
    if !files.is_empty() {
        return Ok(DirKind::BareProtos { files });
    }
    Err(Error::unrecognised(path, NO_PROFILE_IN_DIR))
}

const NO_PROFILE_IN_DIR: &str = "holds no profile: expected a log dir (with plugins/profile/), a run dir \
(*.xplane.pb), an XLA dump dir (*after_optimizations.hlo.pb, from XLA_FLAGS=\"--xla_dump_to=DIR \
--xla_dump_hlo_as_proto\"), or an HloModuleProto and its BufferAssignmentProto (*.pb)";

/// Tells the inputs apart by their bytes. A Python pickle (a PyTorch memory
/// snapshot) opens with the `PROTO` opcode, 0x80 and a protocol of 2 to 5,
/// which no protobuf message xmem reads can: as a field tag it would be
/// field 32 or above. A pprof profile has a string
/// table (field 6) whose first entry is the empty string, which pprof
/// requires and none of the other formats has. Otherwise the first fields
/// decide: an HloProto's field 1 is an HloModuleProto, which opens with its
/// name (field 1); an XSpace's field 1 is an XPlane, which opens with its id
/// or name; a bare HloModuleProto's field 1 is the module name itself,
/// followed by its computations in field 3. A bare BufferAssignmentProto is
/// told first, by its shape (see [`is_buffer_assignment`]).
pub fn guess_file(path: &Path, bytes: &Bytes) -> Result<FileKind> {
    const EXPECTED: &str = "expected an XProf profile (*.xplane.pb), an XLA HloProto (*.hlo.pb, *.hlo_proto.pb), \
                            a JAX device memory profile (pprof, from jax.profiler.save_device_memory_profile) \
                            or a PyTorch memory snapshot (pickle, from torch.cuda.memory._dump_snapshot)";
    if bytes.is_empty() {
        return Err(Error::unrecognised(path, format!("the file is empty; {EXPECTED}")));
    }
    if pickle::is_pickle(bytes) {
        return Ok(FileKind::TorchSnapshot);
    }
    if is_buffer_assignment(bytes) {
        return Ok(FileKind::BufferAssignment);
    }
    let mut first_payload = None;
    let mut has_computations = false;
    let mut string_table_opens_empty = None;
    for field in wire::Fields::new(bytes, 0) {
        let field = match field {
            Ok(field) => field,
            Err(e) => {
                // A file cut short is told by what came before the cut, or
                // by what there is of a first field the cut runs through.
                if first_payload.is_none() {
                    let cut = usize::try_from(e.field_start).ok().and_then(|at| wire::cut_short_field(bytes, at));
                    first_payload = cut.filter(|(number, _)| *number == 1).map(|(_, partial)| partial);
                }
                if first_payload.is_some() || string_table_opens_empty.is_some() {
                    break;
                }
                return Err(Error::malformed(
                    path,
                    Some(e.offset),
                    format!("not a protobuf message ({}); {EXPECTED}", e.what),
                ));
            }
        };
        match (field.number, field.as_bytes()) {
            (1, Some(payload)) if first_payload.is_none() => first_payload = Some(payload),
            (3, Some(_)) => has_computations = true,
            (6, Some(entry)) if string_table_opens_empty.is_none() => string_table_opens_empty = Some(entry.is_empty()),
            _ => {}
        }
    }
    if string_table_opens_empty == Some(true) || first_payload.is_some_and(is_value_type) {
        return Ok(FileKind::Pprof);
    }
    let Some(payload) = first_payload else {
        return Err(Error::unrecognised(path, format!("not a profile or HLO proto; {EXPECTED}")));
    };
    if has_computations && std::str::from_utf8(payload).is_ok_and(|name| !name.is_empty()) {
        return Ok(FileKind::HloModule);
    }
    match payload.first() {
        Some(0x0a) => Ok(FileKind::HloProto),
        None | Some(0x08 | 0x12 | 0x1a | 0x22 | 0x2a | 0x32) => Ok(FileKind::XSpace),
        Some(_) => Err(Error::unrecognised(path, format!("not a profile or HLO proto; {EXPECTED}"))),
    }
}

/// A pprof `ValueType` (`{type = 1, unit = 2}`, both varints): a profile's
/// first field, by which one cut short before its string table is still
/// told. No XPlane or HloModuleProto opens so (their field 2 is a string).
fn is_value_type(message: &[u8]) -> bool {
    let numbers: Option<Vec<(u32, bool)>> =
        wire::Fields::new(message, 0).map(|f| f.ok().map(|f| (f.number, f.as_u64().is_some()))).collect();
    numbers.is_some_and(|numbers| numbers == [(1, true), (2, true)])
}

/// Whether `bytes` are a BufferAssignmentProto: only messages, in fields 1
/// to 5 (logical buffers, aliases, allocations, heap traces, peak buffers),
/// and the first logical buffer (else the first allocation) shaped as one:
/// `{id = 1, size = 2, color = 4}` varints and its `defined_at = 3`. An
/// XSpace also holds only fields 1 to 4 of bytes, but its first plane names
/// itself in field 2; an HloProto's module opens with its name; a bare
/// HloModuleProto has its id, a varint, in field 5.
fn is_buffer_assignment(bytes: &[u8]) -> bool {
    let (mut first_buffer, mut first_allocation) = (None, None);
    for field in wire::Fields::new(bytes, 0) {
        let Ok(field) = field else { return false };
        match (field.number, field.as_bytes()) {
            (1, Some(buffer)) => first_buffer = first_buffer.or(Some(buffer)),
            (3, Some(allocation)) => first_allocation = first_allocation.or(Some(allocation)),
            (2 | 4 | 5, Some(_)) => {}
            _ => return false,
        }
    }
    // Each field of `message` is a varint among `varints` or bytes among `messages`.
    let shaped = |message: &[u8], varints: &[u32], messages: &[u32]| {
        wire::Fields::new(message, 0).all(|part| match part {
            Ok(part) if part.as_u64().is_some() => varints.contains(&part.number),
            Ok(part) if part.as_bytes().is_some() => messages.contains(&part.number),
            _ => false,
        })
    };
    let has_field = |message: &[u8], number: u32| wire::Fields::new(message, 0).flatten().any(|f| f.number == number);
    match (first_buffer, first_allocation) {
        (Some(buffer), _) => shaped(buffer, &[1, 2, 4], &[3]) && has_field(buffer, 3),
        // BufferAllocationProto: `assigned = 9` is a message and `parameter_shape_index = 10`
        // packed; every other field is a varint.
        (None, Some(allocation)) => shaped(allocation, &[1, 2, 3, 5, 6, 7, 8, 10, 11, 12], &[9, 10]),
        (None, None) => false,
    }
}

/// What to tell a user who passed a BufferAssignmentProto without its module.
const ASSIGNMENT_WITHOUT_MODULE: &str = "a BufferAssignmentProto on its own names buffers by instruction id only: \
pass the HloModuleProto of the same program with it (from JAX: \
compiled.runtime_executable().hlo_modules()[0].as_serialized_hlo_module_proto()), \
as another input or in the same directory";

/// Reads everything xmem can use from `path`.
///
/// `-` is standard input (`gsutil cat gs://…/host.xplane.pb.gz | xmem report -`),
/// recognised by its content like any file.
pub fn load(path: &Path, options: &ReadOptions) -> Result<Capture> {
    if path == Path::new("-") {
        return load_contents(Path::new("<stdin>"), source::read_stdin(options.max_input_size)?, &options.progress);
    }
    let metadata = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !metadata.is_dir() {
        return load_contents(path, source::read(path, options.max_input_size, &options.progress)?, &options.progress);
    }
    let mut capture = Capture { input: path.display().to_string(), ..Capture::default() };
    match guess_dir(path, options)? {
        DirKind::LogDir { run } => read_hosts(&run, &sorted_entries(&run, is_xplane_name)?, options, &mut capture)?,
        DirKind::RunDir { hosts } => read_hosts(path, &hosts, options, &mut capture)?,
        DirKind::HloDir { files } => read_hlo_files(path, &files, options, &mut capture)?,
        DirKind::BareProtos { files } => {
            let mut protos = Vec::with_capacity(files.len());
            for file in files {
                let contents = source::read(&file, options.max_input_size, &options.progress)?;
                protos.push((file, contents.cut_short.map_or(Ok(contents.bytes), Err)?));
            }
            capture.modules = pair_bare_protos(protos)?;
            if capture.modules.is_empty() {
                return Err(Error::unrecognised(path, NO_PROFILE_IN_DIR));
            }
        }
    }
    Ok(capture)
}

/// Reads every input as [`load`] does, except that the bare HloModuleProto
/// and BufferAssignmentProto files among them are paired into the modules
/// they make together, in one capture that stands where the first of them
/// stood.
pub fn load_inputs(paths: &[PathBuf], options: &ReadOptions) -> Result<Vec<Capture>> {
    let mut captures = Vec::with_capacity(paths.len());
    let mut bare = Vec::new();
    let mut bare_at = None;
    for path in paths {
        if path == Path::new("-") || std::fs::metadata(path).map_err(|e| Error::io(path, e))?.is_dir() {
            captures.push(load(path, options)?);
            continue;
        }
        let contents = source::read(path, options.max_input_size, &options.progress)?;
        match guess_file(path, &contents.bytes) {
            Ok(FileKind::HloModule | FileKind::BufferAssignment) if contents.cut_short.is_none() => {
                bare_at.get_or_insert(captures.len());
                bare.push((path.clone(), contents.bytes));
            }
            _ => captures.push(load_contents(path, contents, &options.progress)?),
        }
    }
    if let Some(at) = bare_at {
        let input = bare.iter().map(|(path, _)| path.display().to_string()).collect::<Vec<_>>().join(" + ");
        captures.insert(at, Capture { input, modules: pair_bare_protos(bare)?, ..Capture::default() });
    }
    Ok(captures)
}

/// Protos given as bytes, each named (its file, or where JAX gave it), as
/// one capture named `input`: HloProtos as they are, and bare modules with
/// the bare buffer assignments that belong to them.
pub fn load_protos(input: &str, protos: Vec<(PathBuf, Bytes)>) -> Result<Capture> {
    let mut capture = Capture { input: input.to_string(), ..Capture::default() };
    let mut bare = Vec::new();
    for (name, bytes) in protos {
        match guess_file(&name, &bytes)? {
            FileKind::HloProto => {
                let decoded = hlo::decode(&name, &bytes, 0, None)?;
                capture.warnings.extend(decoded.damage.as_ref().map(Error::to_string));
                capture.modules.push(decoded.module);
            }
            FileKind::HloModule | FileKind::BufferAssignment => bare.push((name, bytes)),
            FileKind::XSpace | FileKind::Pprof | FileKind::TorchSnapshot => {
                return Err(Error::unrecognised(&name, "expected an HloProto, HloModuleProto or BufferAssignmentProto"))
            }
        }
    }
    capture.modules.extend(pair_bare_protos(bare)?);
    Ok(capture)
}

/// Bare HloModuleProtos and BufferAssignmentProtos (other files are left
/// out) as modules: each assignment with the one module it belongs to (see
/// [`hlo::decode_pair`]), and each module no assignment belongs to on its
/// own. An assignment that belongs to no module, or to several, is an error.
fn pair_bare_protos(protos: Vec<(PathBuf, Bytes)>) -> Result<Vec<Module>> {
    let (mut modules, mut assignments) = (Vec::new(), Vec::new());
    for (path, bytes) in protos {
        match guess_file(&path, &bytes) {
            Ok(FileKind::HloModule) => modules.push((path, bytes, false)),
            Ok(FileKind::BufferAssignment) => assignments.push((path, bytes)),
            _ => {}
        }
    }
    let mut paired = Vec::new();
    for (assignment, assignment_bytes) in &assignments {
        let mut fits = Vec::new();
        let mut last_error = None;
        for (slot, (module, module_bytes, taken)) in modules.iter().enumerate() {
            if *taken {
                continue;
            }
            match hlo::decode_pair((module, module_bytes), (assignment, assignment_bytes)) {
                Ok(decoded) => fits.push((slot, decoded)),
                Err(e) => last_error = Some(e),
            }
        }
        let names = || modules.iter().map(|(p, _, _)| p.display().to_string()).collect::<Vec<_>>().join(", ");
        match fits.len() {
            1 => {
                let (slot, decoded) = fits.remove(0);
                if let Some(module) = modules.get_mut(slot) {
                    module.2 = true;
                }
                paired.push(decoded);
            }
            0 => {
                return Err(match (modules.len(), last_error) {
                    (1, Some(e)) => e,
                    (0, _) => Error::unrecognised(assignment, ASSIGNMENT_WITHOUT_MODULE),
                    _ => Error::unrecognised(
                        assignment,
                        format!(
                        "this BufferAssignmentProto is the buffer assignment of none of the HloModuleProtos given ({})",
                        names()
                    ),
                    ),
                })
            }
            _ => {
                let both: Vec<String> = fits
                    .iter()
                    .filter_map(|(slot, _)| modules.get(*slot))
                    .map(|(p, _, _)| p.display().to_string())
                    .collect();
                return Err(Error::unrecognised(
                    assignment,
                    format!("this BufferAssignmentProto fits several HloModuleProtos ({}): pass only the one it was saved with", both.join(", ")),
                ));
            }
        }
    }
    for (path, bytes, taken) in &modules {
        if !taken {
            paired.push(hlo::decode_module(path, bytes)?);
        }
    }
    Ok(paired)
}

/// Reads one file's (already decompressed) bytes; `path` names it in errors.
pub fn load_bytes(path: &Path, bytes: Bytes, progress: &Progress) -> Result<Capture> {
    load_contents(path, source::Contents { bytes, was_gzip: false, cut_short: None }, progress)
}

fn load_contents(path: &Path, contents: source::Contents, progress: &Progress) -> Result<Capture> {
    let source::Contents { bytes, cut_short, .. } = contents;
    let mut capture = Capture { input: path.display().to_string(), ..Capture::default() };
    match load_into(path, bytes, progress, &mut capture) {
        Ok(damage) => capture.warnings.extend(damage_warning(cut_short, damage)),
        // Nothing usable in what a gzip stream cut short gave: the cut is why.
        Err(e) => return Err(cut_short.unwrap_or(e)),
    }
    Ok(capture)
}

/// Reads one file's decompressed bytes into `capture`; returns where an
/// XSpace is damaged, if it is.
fn load_into(path: &Path, bytes: Bytes, progress: &Progress, capture: &mut Capture) -> Result<Option<xspace::Damage>> {
    match guess_file(path, &bytes)? {
        FileKind::XSpace => {
            let mut contents = xspace::read(path, &bytes, progress)?;
            let damage = contents.damage.take();
            let pending = add_xspace(path, &bytes, contents, &mut SeenPrograms::new(), capture);
            decode_embedded(pending, capture);
            return Ok(damage);
        }
        FileKind::HloProto => {
            let decoded = hlo::decode(path, &bytes, 0, program_id_in_file_name(path))?;
            capture.warnings.extend(decoded.damage.as_ref().map(Error::to_string));
            capture.modules.push(decoded.module);
        }
        FileKind::HloModule => capture.modules.push(hlo::decode_module(path, &bytes)?),
        FileKind::BufferAssignment => return Err(Error::unrecognised(path, ASSIGNMENT_WITHOUT_MODULE)),
        FileKind::Pprof => {
            let decoded = pprof::decode(path, bytes)?;
            capture.warnings.extend(decoded.damage.as_ref().map(Error::to_string));
            capture.device_memory = Some(decoded.snapshot);
        }
        FileKind::TorchSnapshot => {
            let (snapshot, warnings) = torch_snapshot::decode(path, &bytes)?;
            capture.torch_snapshot = Some(snapshot);
            capture.warnings.extend(warnings);
        }
    }
    Ok(None)
}

/// One warning for a damaged file, however many parts are damaged: where
/// the damage starts, what it cost (the module entries and allocator events
/// lost, named), and that what was complete around it is kept.
fn damage_warning(cut_short: Option<Error>, damage: Option<xspace::Damage>) -> Option<String> {
    let mut parts: Vec<String> = cut_short.iter().map(Error::to_string).collect();
    let mut lost = Vec::new();
    if let Some(damage) = damage {
        let more = match damage.further {
            0 => String::new(),
            1 => " (and 1 more damaged part)".to_string(),
            n => format!(" (and {n} more damaged parts)"),
        };
        parts.push(format!("{}{more}", damage.first));
        lost = damage.lost;
    }
    let kept = match lost.as_slice() {
        [] => "kept every complete plane and module".to_string(),
        lost => format!("lost {}; kept everything else that is complete", lost.join("; ")),
    };
    (!parts.is_empty()).then(|| format!("{}; {kept}", parts.join("; ")))
}

/// The id in the file names XProf writes beside a profile,
/// `<name>(<program_id>).hlo_proto.pb`: all that says which id XProf gave
/// the module when its HloProto is read without the xplane.
fn program_id_in_file_name(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".gz").unwrap_or(name).strip_suffix(".hlo_proto.pb")?;
    let (_, id) = stem.strip_suffix(')')?.rsplit_once('(')?;
    id.parse().ok()
}

/// Reads every host of a run: the hosts' planes in parallel, then each
/// distinct program once (the same program is often captured on every host),
/// its modules decoded in parallel.
fn read_hosts(dir: &Path, hosts: &[PathBuf], options: &ReadOptions, capture: &mut Capture) -> Result<()> {
    if hosts.is_empty() {
        return Err(Error::unrecognised(dir, "the run directory holds no *.xplane.pb file"));
    }
    let read: Vec<Result<(source::Contents, xspace::XSpaceContents)>> = hosts
        .par_iter()
        .map(|host| {
            let contents = source::read_regular(host, options.max_input_size, &options.progress)?;
            let xspace = guess_file(host, &contents.bytes).and_then(|kind| match kind {
                FileKind::XSpace => xspace::read(host, &contents.bytes, &options.progress),
                FileKind::Pprof => Err(Error::unrecognised(host, "named like an xplane but holds a pprof profile")),
                FileKind::TorchSnapshot => Err(Error::unrecognised(
                    host,
                    "named like an xplane but holds a Python pickle (a PyTorch memory snapshot?)",
                )),
                _ => Err(Error::unrecognised(host, "named like an xplane but holds an HLO proto")),
            });
            match xspace {
                Ok(xspace) => Ok((contents, xspace)),
                // Nothing usable in what a gzip stream cut short gave: the cut is why.
                Err(e) => Err(contents.cut_short.unwrap_or(e)),
            }
        })
        .collect();
    let mut seen_programs = SeenPrograms::new();
    let mut fresh = Vec::new();
    let mut last_error = None;
    for (host, read) in hosts.iter().zip(read) {
        match read {
            Ok((file, mut contents)) => {
                capture.warnings.extend(damage_warning(file.cut_short, contents.damage.take()));
                fresh.extend(add_xspace(host, &file.bytes, contents, &mut seen_programs, capture));
            }
            Err(e) => {
                capture.warnings.push(format!("skipped {e}"));
                last_error = Some(e);
            }
        }
    }
    decode_embedded(fresh, capture);
    match (capture.hosts.is_empty(), last_error) {
        (true, Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// An embedded HloProto still to decode, with the host file it came from.
struct PendingModule<'a> {
    host: &'a Path,
    name: String,
    program_id: u64,
    bytes: Bytes,
    base: u64,
}

/// The programs of a run already taken, by `name(program_id)` (the module's
/// own name), with the host they came from and their bytes.
type SeenPrograms<'a> = HashMap<(String, u64), (&'a Path, Bytes)>;

/// Adds one host's allocators and returns its programs not seen on an
/// earlier host. Programs are told apart as XProf tells them: on one host by
/// program id, across hosts by `name(program_id)`, so hosts whose different
/// programs share ids keep every program. When two hosts hold different
/// programs under one `name(program_id)`, XProf keeps the first; so does
/// xmem, and it says so.
fn add_xspace<'a>(
    host: &'a Path,
    bytes: &Bytes,
    contents: xspace::XSpaceContents,
    seen_programs: &mut SeenPrograms<'a>,
    capture: &mut Capture,
) -> Vec<PendingModule<'a>> {
    capture.hosts.push(contents.host);
    capture.allocators.extend(contents.allocators);
    capture.devices.extend(contents.devices);
    let file = host.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    capture
        .damaged_allocator_planes
        .extend(contents.damaged_allocator_planes.iter().map(|plane| format!("{plane} of {file}")));
    let mut ids_on_host: HashMap<u64, String> = HashMap::new();
    let mut shadowed = Vec::new();
    let mut same_id = Vec::new();
    let pending = contents
        .hlo_protos
        .into_iter()
        .filter(|embedded| match ids_on_host.entry(embedded.program_id) {
            Entry::Vacant(slot) => {
                slot.insert(embedded.name.clone());
                true
            }
            Entry::Occupied(first) => {
                same_id.push(format!("{} and {}", first.get(), embedded.name));
                false
            }
        })
        .filter(|embedded| {
            let name = hlo::module_name(&embedded.bytes).unwrap_or_default();
            match seen_programs.entry((name, embedded.program_id)) {
                Entry::Vacant(slot) => {
                    slot.insert((host, embedded.bytes.clone()));
                    true
                }
                Entry::Occupied(taken) => {
                    if taken.get().1 != embedded.bytes {
                        let (name, id) = taken.key();
                        shadowed.push(format!("{name}({id})"));
                    }
                    false
                }
            }
        })
        .map(|embedded| PendingModule {
            host,
            base: wire::offset_within(bytes, &embedded.bytes),
            name: embedded.name,
            program_id: embedded.program_id,
            bytes: embedded.bytes,
        })
        .collect();
    if let Some(first) = same_id.first() {
        let more = match same_id.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more pairs)"),
        };
        capture.warnings.push(format!(
            "{}: modules {first} have one program id{more}; only the first is reported, as XProf keeps one",
            host.display()
        ));
    }
    if !shadowed.is_empty() {
        capture.warnings.push(format!(
            "{}: an earlier host of the run holds a different program under the same name and id for {}; \
             the earlier host's are reported, as XProf does",
            host.display(),
            shadowed.join(", ")
        ));
    }
    pending
}

fn decode_embedded(pending: Vec<PendingModule>, capture: &mut Capture) {
    let decoded: Vec<_> =
        pending.into_par_iter().map(|p| (p.name, hlo::decode(p.host, &p.bytes, p.base, Some(p.program_id)))).collect();
    for (name, module) in decoded {
        match module {
            Ok(decoded) => {
                capture.warnings.extend(decoded.damage.map(|e| format!("module {name}: {e}")));
                capture.modules.push(decoded.module);
            }
            Err(e) => capture.warnings.push(format!("skipped module {name}: {e}")),
        }
    }
}

fn read_hlo_files(dir: &Path, files: &[PathBuf], options: &ReadOptions, capture: &mut Capture) -> Result<()> {
    let decoded: Vec<(PathBuf, Result<hlo::Decoded>)> = files
        .par_iter()
        .map(|file| {
            let module = source::read_regular(file, options.max_input_size, &options.progress)
                .and_then(|c| c.cut_short.map_or(Ok(c.bytes), Err))
                .and_then(|bytes| hlo::decode(file, &bytes, 0, program_id_in_file_name(file)));
            (file.clone(), module)
        })
        .collect();
    let mut last_error = None;
    for (_, module) in decoded {
        match module {
            Ok(decoded) => {
                capture.warnings.extend(decoded.damage.as_ref().map(Error::to_string));
                capture.modules.push(decoded.module);
            }
            Err(e) => {
                capture.warnings.push(format!("skipped {e}"));
                last_error = Some(e);
            }
        }
    }
    match (capture.modules.is_empty(), last_error) {
        (true, Some(e)) => Err(e),
        (true, None) => Err(Error::unrecognised(dir, "no HLO proto could be read")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(relative: &str) -> Result<FileKind> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        guess_file(&path, &source::read(&path, 1 << 30, &Progress::default())?.bytes)
    }

    #[test]
    fn each_format_is_told_by_its_bytes() {
        let kinds = [
            ("fixtures/pprof/host_offload/device_memory_host_and_device_live.prof", FileKind::Pprof),
            ("fixtures/profiles/pair_base/profile/plugins/profile/2026_11_22_07_55_28/vm.xplane.pb", FileKind::XSpace),
            (
                "fixtures/profiles/pair_base/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb",
                FileKind::HloProto,
            ),
        ];
        for (file, kind) in kinds {
            assert_eq!(kind_of(file).unwrap(), kind, "{file}");
        }
        let not_a_profile = kind_of("fixtures/pprof/host_offload/memory_analysis.json").unwrap_err().to_string();
        assert!(not_a_profile.contains("memory_analysis.json") && not_a_profile.contains("pprof"), "{not_a_profile}");
    }

    #[test]
    fn the_two_halves_of_an_hlo_proto_are_told_apart() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/profiles/pair_base/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb");
        let bytes = source::read(&path, 1 << 30, &Progress::default()).unwrap().bytes;
        let field = |number| {
            let field = wire::Fields::new(&bytes, 0).flatten().find(|f| f.number == number).unwrap();
            Bytes::copy_from_slice(field.as_bytes().unwrap())
        };
        assert_eq!(guess_file(&path, &field(1)).unwrap(), FileKind::HloModule);
        assert_eq!(guess_file(&path, &field(3)).unwrap(), FileKind::BufferAssignment);
        assert!(!is_buffer_assignment(&bytes));
    }
}

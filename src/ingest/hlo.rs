//! `xla.HloProto` (an XLA dump's `*after_optimizations.hlo.pb`, XProf's
//! `*.hlo_proto.pb`, or the `Hlo Proto` stat inside an xplane) into a
//! [`Module`].

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

use prost::Message;
use rustc_hash::FxHashMap;

use super::consistency;
use super::proto::xla::buffer_assignment_proto::PeakBuffers as PeakBuffersProto;
use super::proto::xla::{
    BufferAllocationProto, HloInputOutputAliasProto, HloInstructionProto, LogicalBufferProto, ProgramShapeProto,
    ShapeProto, StackFrameIndexProto,
};
use super::wire::{self, Walker, WireError};
use super::xla_shape;
use crate::error::{Error, Result};
use crate::id_index::IdIndex;
use crate::interner::Interner;
use crate::model::{
    Allocation, BufferAssignment, EntryInterface, HeapEvent, HeapEventKind, HeapTrace, Inconsistency, InputOutputAlias,
    Instruction, LogicalBuffer, Module, PeakBuffers, ScopedAllocation, SourceLocation,
};

/// What to tell a user whose proto has no buffer assignment.
pub const NO_BUFFER_ASSIGNMENT: &str = "the HLO proto has no buffer assignment (it was saved before \
optimization); dump the optimized module with XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_proto\" \
and pass DIR or its *after_optimizations.hlo.pb";

/// An HloProto: the module and its buffer assignment. `base` is where these
/// bytes start in the file, so errors point at the right byte; `program_id`
/// is the id the profile files the module under, when it has one (else the
/// module is named by its `HloModuleProto.id`).
///
/// Bytes that stop decoding part-way are read up to that point, as an
/// xplane's are: bytes after a whole HloProto that are not part of it are
/// left out, and a file cut short keeps what is whole before the cut (the
/// module's name and parts; the buffers, allocations and heap events of a
/// buffer assignment, whose memory spaces are then marked inconsistent).
/// [`Decoded::damage`] says where and what was left out.
pub fn decode(path: &Path, bytes: &[u8], base: u64, program_id: Option<u64>) -> Result<Decoded> {
    let walker = Walker::new(bytes, base);
    let mut module = None;
    let mut assignment = None;
    // Where the bytes stop decoding, and the part the file was cut inside.
    let mut damage: Option<(WireError, Option<&str>)> = None;
    for field in walker.fields(bytes) {
        let field = match field {
            Ok(field) => field,
            Err(e) => {
                let cut = e.field_start.checked_sub(base).and_then(|at| usize::try_from(at).ok());
                let cut = cut.and_then(|at| wire::cut_short_field(bytes, at));
                let part = match cut {
                    Some((1, partial)) if module.is_none() => {
                        module = Some((partial, true));
                        Some("its HLO module")
                    }
                    Some((3, partial)) if assignment.is_none() => {
                        assignment = Some((partial, true));
                        Some("its buffer assignment")
                    }
                    _ => None,
                };
                damage = Some((e, part));
                break;
            }
        };
        match (field.number, field.as_bytes()) {
            (1, Some(b)) if module.is_none() => module = Some((b, false)),
            (3, Some(b)) if assignment.is_none() => assignment = Some((b, false)),
            // Written once each: a second one is bytes that are not this proto's.
            (1 | 3, _) => {
                let what = format!("a second or mistyped field {}, where the HloProto's bytes end", field.number);
                damage = Some((WireError { offset: field.offset, what, field_start: field.offset }, None));
                break;
            }
            _ => {}
        }
    }
    let Some((module, module_cut)) = module else {
        return Err(match damage {
            Some((e, _)) => wire_error(path, e),
            None => Error::unrecognised(path, "the HloProto holds no hlo_module"),
        });
    };
    let mut strings = Interner::default();
    let assignment = assignment.map(|(b, cut)| decode_assignment(path, walker, b, cut)).transpose()?;
    let mut module =
        decode_module_parts(path, walker, (module, module_cut), assignment, program_id, &mut strings, None)?;
    let end = base.saturating_add(bytes.len() as u64);
    let damage = damage.map(|(e, part)| {
        let left_out = match part {
            Some(part) => format!("the file ends inside {part}; what is whole before the cut is kept"),
            None => "the bytes from there on are left out".to_string(),
        };
        let what = format!("HloProto: {}; {left_out}", e.what);
        match (&mut module.buffer_assignment, part) {
            (Ok(assignment), Some(_)) => assignment.inconsistencies.push(Inconsistency {
                color: None,
                trace: None,
                what: format!(
                    "the file ends at byte {end}, inside {}: what came after it is missing, the figures cover what was read",
                    part.unwrap_or_default()
                ),
            }),
            (Err(problem), Some(part)) => {
                *problem = format!("the file ends at byte {end}, inside {part}, before its buffer assignment")
            }
            _ => {}
        }
        Error::malformed(path, Some(e.field_start), what)
    });
    Ok(Decoded { module, damage })
}

/// An HloProto's module, and where its bytes stopped decoding, if they did
/// before their end (a file cut short, bytes after the proto).
#[derive(Debug)]
pub struct Decoded {
    pub module: Module,
    pub damage: Option<Error>,
}

/// An HloModuleProto and a BufferAssignmentProto saved apart (from JAX:
/// `hlo_modules()[i].as_serialized_hlo_module_proto()` and
/// `memory_analysis().serialized_buffer_assignment_proto`) as the one module
/// an HloProto of both would be; an error naming both files when the
/// assignment is not the module's: a buffer defined by an instruction id the
/// module lacks, or a heap-simulator event at an instruction it lacks.
pub fn decode_pair(module: (&Path, &[u8]), assignment: (&Path, &[u8])) -> Result<Module> {
    let ((module_path, module_bytes), (assignment_path, assignment_bytes)) = (module, assignment);
    let mut strings = Interner::default();
    let assignment = decode_assignment(assignment_path, Walker::new(assignment_bytes, 0), assignment_bytes, false)?;
    let mut check = BelongingCheck {
        assignment: assignment_path,
        unseen_trace_names: trace_instruction_names(&assignment, &mut strings)?,
    };
    decode_module_parts(
        module_path,
        Walker::new(module_bytes, 0),
        (module_bytes, false),
        Some(assignment),
        None,
        &mut strings,
        Some(&mut check),
    )
}

/// The instruction names the events of an assignment's heap traces give.
fn trace_instruction_names(
    assignment: &RawAssignment,
    strings: &mut Interner,
) -> Result<std::collections::HashSet<Arc<str>>> {
    let mut names = std::collections::HashSet::new();
    for &(trace, cut) in &assignment.heap_traces {
        let trace = walk_heap_trace(assignment.path, assignment.walker, (trace, cut), strings, |_, _, _| 0)?;
        names.extend(trace.instruction_names.iter().cloned());
    }
    Ok(names)
}

/// Whether an array shape's byte size is its dense size whatever the backend:
/// whole-byte elements, static dimensions, and a layout without tiling,
/// element size or memory space (nothing after a `:`).
fn dense_shape(shape: &str) -> bool {
    const WHOLE_BYTES: [&str; 15] =
        ["pred", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f16", "bf16", "f32", "f64", "c64", "c128"];
    let Some((element, rest)) = shape.split_once('[') else { return false };
    let layout = rest.split_once('{').map_or("", |(_, layout)| layout);
    WHOLE_BYTES.contains(&element) && !rest.contains("<=") && !layout.contains(':')
}

/// What [`decode_pair`] checks while it walks the module: the instruction
/// names the assignment's heap traces use and the module has not shown yet.
struct BelongingCheck<'a> {
    assignment: &'a Path,
    unseen_trace_names: std::collections::HashSet<Arc<str>>,
}

impl BelongingCheck<'_> {
    /// The first fact that tells the assignment is another module's, once the
    /// module is walked: a buffer defined by an instruction the module lacks,
    /// or whose size is not its shape's where the shape fixes the size (see
    /// [`dense_shape`]); a parameter the module aliases to an output whose
    /// allocation is not live out; a heap-simulator event at an instruction
    /// the module lacks. The same program compiled for other shapes or
    /// donation is told by the sizes or the aliases.
    fn verdict(
        &self,
        module_path: &Path,
        module_name: &str,
        raw: &RawAssignment,
        defining: &DefiningInstructions,
        aliases: &[InputOutputAlias],
    ) -> Result<()> {
        let mismatch = |what: String| {
            Err(Error::Inconsistent {
                path: self.assignment.to_path_buf(),
                module: format!("{module_name} ({})", module_path.display()),
                what: format!("this BufferAssignmentProto is not the buffer assignment of that HloModuleProto: {what}"),
            })
        };
        for buffer in &raw.logical_buffers {
            let Some(defined_at) = &buffer.defined_at else { continue };
            let slot = defining.slots.get(defined_at.instruction_id);
            if !matches!(slot.and_then(|slot| defining.instructions.get(slot)), Some(Some(_))) {
                return mismatch(format!(
                    "its logical buffer {} is defined by instruction id {}, which the module does not have",
                    buffer.id, defined_at.instruction_id
                ));
            }
            // The shape of a nested tuple element is not resolved (see `resolve_shape_index`).
            let shape = match defined_at.shape_index.as_slice() {
                [] | [_] => slot.and_then(|slot| defining.shape_of(slot, defined_at.shape_index.last().copied())),
                _ => None,
            };
            if let Some((shape, dense)) = shape.filter(|(shape, dense)| dense_shape(shape) && *dense != buffer.size) {
                return mismatch(format!(
                    "its logical buffer {} has {} bytes, but the module's instruction id {} makes a {shape} of {dense}",
                    buffer.id, buffer.size, defined_at.instruction_id
                ));
            }
        }
        for alias in aliases.iter().filter(|a| a.parameter_index.is_empty()) {
            let live_out = raw.buffer_allocations.iter().any(|a| {
                a.is_entry_computation_parameter
                    && a.parameter_number == alias.parameter_number
                    && a.parameter_shape_index.is_empty()
                    && a.maybe_live_out
            });
            if !live_out {
                return mismatch(format!(
                    "the module aliases parameter {} to an output (donated), but its allocation is not live out",
                    alias.parameter_number
                ));
            }
        }
        let mut unseen: Vec<&str> = self.unseen_trace_names.iter().map(|n| &**n).filter(|n| !n.is_empty()).collect();
        unseen.sort_unstable();
        match unseen.first() {
            Some(name) => {
                mismatch(format!("its heap-simulator trace names instruction '{name}', which the module does not have"))
            }
            None => Ok(()),
        }
    }
}

/// The module's name (`HloProto.hlo_module.name`), read off the wire without
/// decoding the module; `None` when the bytes hold none.
pub fn module_name(bytes: &[u8]) -> Option<String> {
    fn first_field<'b>(walker: Walker<'b>, message: &'b [u8]) -> Option<&'b [u8]> {
        walker.fields(message).map_while(|f| f.ok()).find_map(|f| (f.number == 1).then(|| f.as_bytes()).flatten())
    }
    let walker = Walker::new(bytes, 0);
    let module = first_field(walker, bytes)?;
    first_field(walker, module).map(|name| String::from_utf8_lossy(name).into_owned())
}

/// A bare HloModuleProto: the program without its buffer assignment, which
/// xmem can name but not analyse.
pub fn decode_module(path: &Path, bytes: &[u8]) -> Result<Module> {
    decode_module_parts(path, Walker::new(bytes, 0), (bytes, false), None, None, &mut Interner::default(), None)
}

/// The buffer assignment: buffers and allocations decoded; heap traces as
/// their bytes (and whether they are cut short), walked once the buffers
/// they name are known.
struct RawAssignment<'b> {
    logical_buffers: Vec<LogicalBufferProto>,
    buffer_allocations: Vec<BufferAllocationProto>,
    heap_traces: Vec<(&'b [u8], bool)>,
    peak_buffers: Vec<PeakBuffers>,
    /// Where the assignment's bytes are, for the heap traces' errors.
    path: &'b Path,
    walker: Walker<'b>,
}

/// `BufferAssignmentProto`: `logical_buffers` = 1 and `buffer_allocations`
/// = 3 decoded one by one into lists sized by a first pass over the wire
/// (a list grown while decoding holds up to twice its room, and a module
/// can have millions of buffers), `heap_simulator_traces` = 4 walked,
/// `peak_buffers` = 5 decoded. In bytes `cut` short, what is whole before
/// the cut is read, and of a heap trace cut short, its whole events.
fn decode_assignment<'b>(path: &'b Path, walker: Walker<'b>, bytes: &'b [u8], cut: bool) -> Result<RawAssignment<'b>> {
    let (mut buffers, mut allocations) = (0, 0);
    for field in walker.fields(bytes) {
        let field = match field {
            Ok(field) => field,
            Err(_) if cut => break,
            Err(e) => return Err(wire_error(path, e)),
        };
        match field.number {
            1 => buffers += 1,
            3 => allocations += 1,
            _ => {}
        }
    }
    let mut raw = RawAssignment {
        logical_buffers: Vec::with_capacity(buffers),
        buffer_allocations: Vec::with_capacity(allocations),
        heap_traces: Vec::new(),
        peak_buffers: Vec::new(),
        path,
        walker,
    };
    for field in walker.fields(bytes) {
        let field = match field {
            Ok(field) => field,
            Err(e) if cut => {
                let start = e.field_start.checked_sub(walker.offset(bytes)).and_then(|s| usize::try_from(s).ok());
                if let Some((4, trace)) = start.and_then(|s| wire::cut_short_field(bytes, s)) {
                    raw.heap_traces.push((trace, true));
                }
                break;
            }
            Err(e) => return Err(wire_error(path, e)),
        };
        let malformed = |what: &str, e: prost::DecodeError| {
            Error::malformed(path, Some(field.offset), format!("HloProto buffer_assignment {what}: {e}"))
        };
        match (field.number, field.as_bytes()) {
            (1, Some(b)) => {
                raw.logical_buffers.push(LogicalBufferProto::decode(b).map_err(|e| malformed("logical_buffers", e))?)
            }
            (3, Some(b)) => raw
                .buffer_allocations
                .push(BufferAllocationProto::decode(b).map_err(|e| malformed("buffer_allocations", e))?),
            (4, Some(trace)) => raw.heap_traces.push((trace, false)),
            (5, Some(b)) => {
                let peak = PeakBuffersProto::decode(b).map_err(|e| malformed("peak_buffers", e))?;
                raw.peak_buffers
                    .push(PeakBuffers { allocation_index: peak.index, logical_buffer_ids: peak.logical_buffer_ids });
            }
            _ => {}
        }
    }
    Ok(raw)
}

/// `HeapSimulatorTrace.events` = 1, each `{kind = 1, buffer_id = 2,
/// instruction_name = 4, share_with_canonical_id = 5}`; instruction names are
/// interned as they are read, and `buffer` turns an event's buffer id into
/// the buffer's index among the model's (given the event's index, and
/// whether the id is the one shared with). A trace `cut` short keeps its
/// whole events.
fn walk_heap_trace(
    path: &Path,
    walker: Walker,
    (trace, cut): (&[u8], bool),
    strings: &mut Interner,
    mut buffer: impl FnMut(usize, i64, bool) -> u32,
) -> Result<HeapTrace> {
    // Interning a name per event is the hot loop of a large trace; FxHash is
    // several times faster than SipHash here and names are not adversarial.
    let mut names: FxHashMap<&[u8], u32> = FxHashMap::default();
    // Sized by a first pass, as the buffers are: a grown list of millions of
    // events holds up to twice their room.
    let events = walker.fields(trace).map_while(|f| f.ok()).filter(|f| f.number == 1).count();
    let mut out = HeapTrace { events: Vec::with_capacity(events), instruction_names: Arc::default() };
    let mut instruction_names = Vec::new();
    for field in walker.fields(trace) {
        let field = match field {
            Ok(field) => field,
            Err(_) if cut => break,
            Err(e) => return Err(wire_error(path, e)),
        };
        let (1, Some(event)) = (field.number, field.as_bytes()) else { continue };
        let (mut kind, mut buffer_id, mut share_with_canonical_id, mut name): (u64, i64, i64, &[u8]) = (0, 0, 0, &[]);
        for part in walker.fields(event) {
            let part = part.map_err(|e| wire_error(path, e))?;
            match (part.number, part.as_u64(), part.as_bytes()) {
                (1, Some(v), _) => kind = v,
                (2, Some(v), _) => buffer_id = v as i64,
                (5, Some(v), _) => share_with_canonical_id = v as i64,
                (4, _, Some(b)) => name = b,
                _ => {}
            }
        }
        let next = instruction_names.len() as u32;
        let instruction = *names.entry(name).or_insert_with_key(|name| {
            instruction_names.push(strings.bytes(name));
            next
        });
        let kind = match kind {
            0 => HeapEventKind::Alloc,
            1 => HeapEventKind::Free,
            2 => HeapEventKind::ShareWith,
            other => HeapEventKind::Unknown(u16::try_from(other).unwrap_or(u16::MAX)),
        };
        let at = out.events.len();
        let share_with = match kind {
            HeapEventKind::ShareWith => buffer(at, share_with_canonical_id, true),
            _ => HeapEvent::NO_BUFFER,
        };
        out.events.push(HeapEvent { kind, instruction, buffer: buffer(at, buffer_id, false), share_with });
    }
    out.instruction_names = instruction_names.into();
    Ok(out)
}

fn wire_error(path: &Path, e: WireError) -> Error {
    Error::malformed(path, Some(e.offset), format!("HloProto: {}", e.what))
}

/// Walks the HloModuleProto on the wire and decodes only what analysis
/// needs: of a module's instructions (435k in a large training step) only
/// the few thousand that define a logical buffer are decoded; the others
/// are scanned for their id and for memory spaces named in their layouts.
fn decode_module_parts(
    path: &Path,
    walker: Walker,
    (module, module_cut): (&[u8], bool),
    assignment: Option<RawAssignment>,
    program_id: Option<u64>,
    strings: &mut Interner,
    mut belonging: Option<&mut BelongingCheck>,
) -> Result<Module> {
    let mut defining = DefiningInstructions::for_buffers(assignment.iter().flat_map(|a| a.logical_buffers.iter()));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut name = String::new();
    let mut entry_computation = String::new();
    let mut entry_signature = String::new();
    // proto3 leaves a zero id off the wire: the first module a process compiles has id 0.
    let mut module_id = 0;
    let mut stack_frames = None;
    let mut layout_memory_spaces = BTreeSet::new();
    let mut max_scoped_vmem: Option<ScopedAllocation> = None;
    let mut entry_interface = EntryInterface::default();
    for field in walker.fields(module) {
        let field = match field {
            // A module cut short: what is whole before the cut.
            Err(_) if module_cut => break,
            field => field.map_err(|e| wire_error(path, e))?,
        };
        match (field.number, field.as_bytes()) {
            (1, Some(b)) => name = text(b),
            (2, Some(b)) => entry_computation = text(b),
            (5, None) => module_id = field.as_u64().unwrap_or(0),
            (4, Some(program_shape)) => {
                let decoded = ProgramShapeProto::decode(program_shape).map_err(|e| {
                    Error::malformed(path, Some(field.offset), format!("HloModuleProto host_program_shape: {e}"))
                })?;
                entry_signature = signature(&decoded);
                entry_interface.parameters =
                    decoded.parameters.iter().map(xla_shape::human_string_with_layout).collect();
                entry_interface.results = decoded.result.as_ref().map(result_elements).unwrap_or_default();
                for shape in walker.fields(program_shape) {
                    let shape = shape.map_err(|e| wire_error(path, e))?;
                    if let (1 | 2, Some(shape)) = (shape.number, shape.as_bytes()) {
                        layout_spaces(walker, shape, &mut layout_memory_spaces, 0).map_err(|e| wire_error(path, e))?;
                    }
                }
            }
            (8, Some(b)) => {
                let decoded = HloInputOutputAliasProto::decode(b).map_err(|e| {
                    Error::malformed(path, Some(field.offset), format!("HloModuleProto input_output_alias: {e}"))
                })?;
                entry_interface.aliases = decoded
                    .entries
                    .into_iter()
                    .map(|entry| InputOutputAlias {
                        output_index: entry.output_shape_index,
                        parameter_number: entry.parameter_number,
                        parameter_index: entry.parameter_shape_index,
                    })
                    .collect();
            }
            (17, Some(b)) => {
                let at = field.offset;
                stack_frames =
                    Some(StackFrameIndexProto::decode(b).map_err(|e| {
                        Error::malformed(path, Some(at), format!("HloModuleProto stack_frame_index: {e}"))
                    })?);
            }
            (3, Some(computation)) => {
                for instruction in walker.fields(computation) {
                    let instruction = instruction.map_err(|e| wire_error(path, e))?;
                    let (2, Some(bytes)) = (instruction.number, instruction.as_bytes()) else { continue };
                    // proto3 leaves a zero id off the wire: absent is id 0.
                    let mut id = 0;
                    let (mut instruction_name, mut scoped_vmem): (&[u8], i64) = (&[], 0);
                    for part in walker.fields(bytes) {
                        let part = part.map_err(|e| wire_error(path, e))?;
                        match (part.number, part.as_bytes()) {
                            (35, None) => id = part.as_u64().unwrap_or(0) as i64,
                            (1, Some(b)) => instruction_name = b,
                            (3, Some(shape)) => layout_spaces(walker, shape, &mut layout_memory_spaces, 0)
                                .map_err(|e| wire_error(path, e))?,
                            (43, Some(config)) => scoped_vmem = scoped_vmem_bytes(config),
                            _ => {}
                        }
                    }
                    if let Some(check) = belonging.as_deref_mut() {
                        if let Ok(name) = std::str::from_utf8(instruction_name) {
                            check.unseen_trace_names.remove(name);
                        }
                    }
                    if scoped_vmem > max_scoped_vmem.as_ref().map_or(0, |s| s.bytes) {
                        max_scoped_vmem =
                            Some(ScopedAllocation { bytes: scoped_vmem, instruction: text(instruction_name) });
                    }
                    if let Some(slot) = defining.slots.get(id) {
                        let decoded = HloInstructionProto::decode(bytes).map_err(|e| {
                            Error::malformed(path, Some(instruction.offset), format!("HloInstructionProto: {e}"))
                        })?;
                        defining.add(slot, decoded, strings);
                    }
                }
            }
            _ => {}
        }
    }
    if let (Some(check), Some(raw)) = (belonging, &assignment) {
        check.verdict(path, &name, raw, &defining, &entry_interface.aliases)?;
    }
    let buffer_assignment = match assignment {
        Some(assignment) => Ok(convert_assignment(assignment, defining, stack_frames.as_ref(), strings)?),
        None => Err(NO_BUFFER_ASSIGNMENT.to_string()),
    };
    Ok(Module {
        name,
        program_id: program_id.unwrap_or(module_id),
        module_id,
        entry_computation,
        entry_signature,
        layout_memory_spaces: layout_memory_spaces.into_iter().collect(),
        entry_interface,
        buffer_assignment,
        max_scoped_vmem,
    })
}

/// The VMEM memory space in TPU backend configs.
const VMEM: i64 = 1;

/// The largest `used_scoped_memory_configs[].size` with `memory_space` 1 in
/// an instruction's backend config (JSON; int64 fields as numbers or, in
/// proto3 JSON, strings; a missing field counts as 0), as XProf reads it.
/// Most configs hold no scoped memory and are not parsed at all.
fn scoped_vmem_bytes(config: &[u8]) -> i64 {
    const KEY: &[u8] = b"used_scoped_memory_configs";
    if !config.windows(KEY.len()).any(|w| w == KEY) {
        return 0;
    }
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(config) else { return 0 };
    let int = |entry: &serde_json::Value, key: &str| match entry.get(key) {
        Some(serde_json::Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(serde_json::Value::String(s)) => s.parse().unwrap_or(0),
        _ => 0,
    };
    let entries = json.get("used_scoped_memory_configs").and_then(serde_json::Value::as_array);
    entries
        .into_iter()
        .flatten()
        .filter(|entry| int(entry, "memory_space") == VMEM)
        .map(|entry| int(entry, "size"))
        .max()
        .unwrap_or(0)
}

/// The result's top-level elements with their output index, or the result
/// itself when it is not a tuple.
fn result_elements(result: &ShapeProto) -> Vec<(Vec<i64>, String)> {
    if !xla_shape::is_tuple(result) {
        return vec![(Vec::new(), xla_shape::human_string_with_layout(result))];
    }
    (0i64..).zip(&result.tuple_shapes).map(|(i, shape)| (vec![i], xla_shape::human_string_with_layout(shape))).collect()
}

/// Shapes nest (tuples of tuples); a corrupt proto could nest them without
/// end, so the walk stops at a depth no real shape reaches.
const MAX_SHAPE_DEPTH: usize = 64;

/// Adds every non-zero `S(n)` memory space of a ShapeProto's layouts
/// (`ShapeProto.layout` = 5 → `LayoutProto.memory_space` = 8; tuple
/// elements are `ShapeProto.tuple_shapes` = 4), without decoding the shape.
fn layout_spaces(walker: Walker, shape: &[u8], spaces: &mut BTreeSet<i64>, depth: usize) -> Result<(), WireError> {
    if depth > MAX_SHAPE_DEPTH {
        return Ok(());
    }
    for field in walker.fields(shape) {
        let field = field?;
        match (field.number, field.as_bytes()) {
            (4, Some(element)) => layout_spaces(walker, element, spaces, depth + 1)?,
            (5, Some(layout)) => {
                for part in walker.fields(layout) {
                    let part = part?;
                    if let (8, Some(space)) = (part.number, part.as_u64()) {
                        if space != 0 {
                            spaces.insert(space as i64);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `(f32[8]{0}, s32[]) -> f32[8]{0}`: only the entry parameters and result,
/// a handful of shapes however large the module.
fn signature(shape: &ProgramShapeProto) -> String {
    let parameters: Vec<String> = shape.parameters.iter().map(xla_shape::human_string_with_layout).collect();
    let result = shape.result.as_ref().map(xla_shape::human_string_with_layout).unwrap_or_default();
    format!("({}) -> {result}", parameters.join(", "))
}

/// What analysis needs of each instruction that defines a logical buffer,
/// kept instead of the decoded proto: a large module has millions of
/// instructions, and holding their protos costs memory and cache misses.
struct DefiningInstructions {
    /// Instruction id → slot in `instructions`.
    slots: IdIndex,
    /// `(slot, tuple element)`: per instruction, the tuple elements its
    /// buffers need shapes for (an instruction may define thousands), sorted
    /// and distinct; one flat list, not a list per instruction, because most
    /// define one buffer.
    elements: Vec<(usize, Option<i64>)>,
    /// Where each slot's elements start in `elements` (one more entry than
    /// slots), so an instruction finds its own without a search.
    element_starts: Vec<usize>,
    /// Shape with layout and unpadded size of each of `elements` (`None`
    /// element: the whole shape), filled as the instructions are found.
    shapes: Vec<Option<(Arc<str>, i64)>>,
    /// Filled as the instructions are found; `None` for an id no
    /// instruction has (a corrupt proto).
    instructions: Vec<Option<DefiningInstruction>>,
}

#[derive(Default)]
struct DefiningInstruction {
    name: Arc<str>,
    opcode: Arc<str>,
    op_name: Arc<str>,
    source_file: Arc<str>,
    source_line: i32,
    stack_frame_id: i32,
}

impl DefiningInstructions {
    fn for_buffers<'a>(buffers: impl Iterator<Item = &'a LogicalBufferProto> + Clone) -> Self {
        let mut ids: Vec<i64> =
            buffers.clone().filter_map(|b| b.defined_at.as_ref().map(|d| d.instruction_id)).collect();
        ids.sort_unstable();
        ids.dedup();
        let slots = IdIndex::new(&ids);
        let mut elements: Vec<(usize, Option<i64>)> = buffers
            .filter_map(|b| b.defined_at.as_ref())
            .filter_map(|location| {
                slots.get(location.instruction_id).map(|slot| (slot, location.shape_index.last().copied()))
            })
            .collect();
        elements.sort_unstable();
        elements.dedup();
        elements.shrink_to_fit();
        let mut element_starts = Vec::with_capacity(ids.len() + 1);
        let mut next = 0;
        for slot in 0..=ids.len() {
            while elements.get(next).is_some_and(|&(s, _)| s < slot) {
                next += 1;
            }
            element_starts.push(next);
        }
        let instructions = (0..ids.len()).map(|_| None).collect();
        let shapes = vec![None; elements.len()];
        DefiningInstructions { slots, elements, element_starts, shapes, instructions }
    }

    /// Where slot's elements lie in `elements` and `shapes`.
    fn element_range(&self, slot: usize) -> Option<std::ops::Range<usize>> {
        let (&first, &end) = self.element_starts.get(slot).zip(self.element_starts.get(slot + 1))?;
        (first <= end && end <= self.elements.len()).then_some(first..end)
    }

    /// The shape and unpadded size of one tuple element (`None`: the whole
    /// shape) of the instruction in `slot`, once it was found.
    fn shape_of(&self, slot: usize, element: Option<i64>) -> Option<&(Arc<str>, i64)> {
        let range = self.element_range(slot)?;
        let at = self.elements.get(range.clone())?.binary_search_by_key(&element, |&(_, e)| e).ok()?;
        self.shapes.get(range.start + at)?.as_ref()
    }

    fn add(&mut self, slot: usize, hlo: HloInstructionProto, strings: &mut Interner) {
        let Some(range) = self.element_range(slot) else { return };
        let Some(entry) = self.instructions.get_mut(slot) else { return };
        let shape = hlo.shape.unwrap_or_default();
        let elements = self.elements.get(range.clone()).unwrap_or_default();
        let shapes = self.shapes.get_mut(range).unwrap_or_default();
        for (&(_, element), wanted) in elements.iter().zip(shapes) {
            let resolved = xla_shape::resolve_shape_index(&shape, element.as_slice());
            *wanted = Some((
                strings.text(&xla_shape::human_string_with_layout(resolved)),
                xla_shape::unpadded_size(resolved),
            ));
        }
        let metadata = hlo.metadata.unwrap_or_default();
        *entry = Some(DefiningInstruction {
            name: strings.text(&hlo.name),
            opcode: strings.text(&hlo.opcode),
            op_name: strings.text(&metadata.op_name),
            source_file: strings.text(&metadata.source_file),
            source_line: metadata.source_line,
            stack_frame_id: metadata.stack_frame_id,
        });
    }
}

fn convert_assignment(
    assignment: RawAssignment,
    defining: DefiningInstructions,
    stack_frames: Option<&StackFrameIndexProto>,
    strings: &mut Interner,
) -> Result<BufferAssignment> {
    let RawAssignment { logical_buffers, buffer_allocations, heap_traces, peak_buffers, path, walker } = assignment;
    let mut findings = consistency::check_assignment(&logical_buffers, &buffer_allocations);
    let ids: Vec<i64> = logical_buffers.iter().map(|b| b.id).collect();
    let logical_protos = IdIndex::new(&ids);
    let mut out = BufferAssignment { logical_buffers: Vec::with_capacity(ids.len()), ..Default::default() };
    // Per logical buffer, its place in `out`: the last assignment wins, as in XProf.
    let mut buffer_slot: Vec<Option<usize>> = vec![None; ids.len()];
    let mut is_assigned = vec![false; ids.len()];

    for (allocation_slot, allocation) in buffer_allocations.iter().enumerate() {
        out.allocations.push(Allocation {
            index: allocation.index,
            size: allocation.size,
            color: allocation.color,
            is_thread_local: allocation.is_thread_local,
            is_tuple: allocation.is_tuple,
            is_entry_computation_parameter: allocation.is_entry_computation_parameter,
            parameter_number: allocation.parameter_number,
            parameter_shape_index: allocation.parameter_shape_index.clone(),
            is_constant: allocation.is_constant,
            maybe_live_out: allocation.maybe_live_out,
            assigned: allocation.assigned.iter().map(|a| a.logical_buffer_id).collect(),
        });
        for assigned in &allocation.assigned {
            let Some(position) = logical_protos.get(assigned.logical_buffer_id) else { continue };
            let Some(proto) = logical_buffers.get(position) else { continue };
            if let Some(flag) = is_assigned.get_mut(position) {
                *flag = true;
            }
            let element = proto.defined_at.as_ref().map(|d| (d.instruction_id, d.shape_index.last().copied()));
            let found = element.and_then(|(id, element)| {
                let instruction = defining.slots.get(id)?;
                Some((instruction, defining.shape_of(instruction, element)?))
            });
            let (Some(defined_at), Some((instruction, (shape, unpadded_size)))) = (&proto.defined_at, found) else {
                findings.add("buffer without instruction", Some(proto.color), None, || match element {
                    Some((id, _)) => format!(
                        "logical buffer {} is defined by instruction {id}, which the module does not hold; it is left out",
                        proto.id
                    ),
                    None => format!("logical buffer {} names no defining instruction; it is left out", proto.id),
                });
                continue;
            };
            let buffer = LogicalBuffer {
                id: proto.id,
                size: proto.size,
                unpadded_size: *unpadded_size,
                color: proto.color,
                instruction,
                shape_index: defined_at.shape_index.clone(),
                shape: shape.clone(),
                allocation: allocation_slot,
                offset: assigned.offset,
            };
            match buffer_slot.get_mut(position) {
                Some(Some(slot)) => out.logical_buffers[*slot] = buffer,
                Some(slot) => {
                    *slot = Some(out.logical_buffers.len());
                    out.logical_buffers.push(buffer);
                }
                None => {}
            }
        }
    }
    // The heap traces' events name buffers by id; the model's name them by
    // their index, and an id the model does not hold is reported here.
    for (trace_index, trace) in heap_traces.into_iter().enumerate() {
        let trace = walk_heap_trace(path, walker, trace, strings, |event, id, share| {
            let why = match logical_protos.get(id) {
                Some(position) => match (buffer_slot.get(position).copied().flatten(), is_assigned.get(position)) {
                    (Some(slot), _) => return u32::try_from(slot).unwrap_or(HeapEvent::NO_BUFFER),
                    (None, Some(true)) => "which the assignment leaves out",
                    (None, _) => "which no allocation holds",
                },
                None => "which the assignment does not define",
            };
            let role = if share { "as the one it shares with " } else { "" };
            findings.add(if share { "event share" } else { "event buffer" }, None, Some(trace_index), || {
                format!("heap trace {trace_index}: event {event} names {role}buffer {id}, {why}; the replay skips it")
            });
            HeapEvent::NO_BUFFER
        })?;
        out.heap_traces.push(trace);
    }
    // The proto is no longer needed: freed before the instructions are
    // converted, so the two are never held at once.
    drop((logical_protos, logical_buffers, buffer_allocations));
    // Instructions share stacks (a layer's ops all point at one frame): each
    // frame's stack is built once and shared, or a deep stack would be
    // rebuilt and stored again for every instruction under it.
    let mut stacks: HashMap<i32, Arc<str>> = HashMap::new();
    out.instructions = defining
        .instructions
        .into_iter()
        .map(|d| {
            let d = d.unwrap_or_default();
            let stack = match stack_frames {
                Some(index) => stacks
                    .entry(d.stack_frame_id)
                    .or_insert_with(|| build_stack(index, d.stack_frame_id).into())
                    .clone(),
                None => Arc::from(""),
            };
            Instruction {
                name: d.name,
                opcode: d.opcode,
                op_name: d.op_name,
                source: source_location(d.source_file, d.source_line, stack, strings),
            }
        })
        .collect();
    out.peak_buffers = peak_buffers;
    out.inconsistencies = findings.into_inconsistencies();
    Ok(out)
}

/// XProf's rule (`GetSourceInfo`): the metadata's own source_file and
/// source_line when it names a file; otherwise the innermost stack frame's
/// `file:line`. The stack is kept either way.
fn source_location(file: Arc<str>, line: i32, stack: Arc<str>, strings: &mut Interner) -> Option<SourceLocation> {
    if !file.is_empty() {
        return Some(SourceLocation { file, line, stack });
    }
    let first = stack.lines().next()?;
    let mut parts = first.split(':');
    let (frame_file, frame_line) = (parts.next()?, parts.next()?);
    let frame_line = frame_line.parse::<i32>().unwrap_or(0);
    Some(SourceLocation { file: strings.text(frame_file), line: frame_line, stack })
}

/// Frames from `frame_id` (1-based) outwards, `file:line:column` each.
fn build_stack(index: &StackFrameIndexProto, mut frame_id: i32) -> String {
    let mut stack = String::new();
    // A cycle in parent ids must not loop forever: no real stack is deeper
    // than the number of frames.
    for _ in 0..index.stack_frames.len() {
        let Some(frame) =
            usize::try_from(frame_id).ok().and_then(|id| id.checked_sub(1)).and_then(|i| index.stack_frames.get(i))
        else {
            break;
        };
        frame_id = frame.parent_frame_id;
        let location = usize::try_from(frame.file_location_id)
            .ok()
            .and_then(|id| id.checked_sub(1))
            .and_then(|i| index.file_locations.get(i));
        let (file, line, column) = match location {
            Some(location) => {
                let file = usize::try_from(location.file_name_id)
                    .ok()
                    .and_then(|id| id.checked_sub(1))
                    .and_then(|i| index.file_names.get(i))
                    .map(String::as_str)
                    .unwrap_or("");
                (file, location.line, location.column)
            }
            None => ("", -1, -1),
        };
        if !stack.is_empty() {
            stack.push('\n');
        }
        let _ = write!(stack, "{file}:{line}:{column}");
    }
    stack
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_source_wins_over_the_stack_which_is_kept() {
        // PyTorch/XLA: the op's own line, and a stack whose innermost frame is torch's dispatcher.
        let stack: Arc<str> = Arc::from("torch/_ops.py:841:0\nrmsprop.py:167:0");
        let strings = &mut Interner::default();
        let source = source_location("rmsprop.py".into(), 167, stack.clone(), strings).unwrap();
        assert_eq!((&*source.file, source.line, source.stack), ("rmsprop.py", 167, stack.clone()));
        let from_stack = source_location(Arc::default(), 0, stack, strings).unwrap();
        assert_eq!((&*from_stack.file, from_stack.line), ("torch/_ops.py", 841));
        assert_eq!(source_location(Arc::default(), 0, Arc::from(""), strings), None);
    }

    #[test]
    fn scoped_vmem_is_read_from_the_backend_config() {
        // As a Pallas matmul on TPU v6e writes it (proto3 JSON: int64 as strings).
        let config = br#"{"used_scoped_memory_configs":[{"memory_space":"1","offset":"0","size":"9437184"},{"memory_space":"0","size":"99999999"}],"retry_config":{"retry_count":"0"}}"#;
        assert_eq!(scoped_vmem_bytes(config), 9_437_184);
        assert_eq!(scoped_vmem_bytes(br#"{"used_scoped_memory_configs":[{"memory_space":1,"size":4096}]}"#), 4096);
        assert_eq!(scoped_vmem_bytes(b"{\"used_scoped_memory_configs\": not json"), 0);
        assert_eq!(scoped_vmem_bytes(b""), 0);
    }
}

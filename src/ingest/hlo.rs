//! `xla.HloProto` (an XLA dump's `*after_optimizations.hlo.pb`, XProf's
//! `*.hlo_proto.pb`, or the `Hlo Proto` stat inside an xplane) into a
//! [`Module`].

use std::collections::HashMap;
use std::path::Path;

use bytes::Bytes;
use prost::Message;

use super::proto::xla::{
    BufferAssignmentProto, HloInstructionProto, HloModuleProto, HloProto, ShapeProto, StackFrameIndexProto,
};
use super::xla_shape;
use crate::error::{Error, Result};
use crate::model::{
    Allocation, BufferAssignment, HeapEvent, HeapEventKind, HeapTrace, Instruction, LogicalBuffer, Module,
    SourceLocation,
};

/// What to tell a user whose proto has no buffer assignment.
pub const NO_BUFFER_ASSIGNMENT: &str = "the HLO proto has no buffer assignment (it was saved before \
optimization); dump the optimized module with XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_proto\" \
and pass DIR or its *after_optimizations.hlo.pb";

pub fn decode(path: &Path, bytes: Bytes, program_id: Option<u64>) -> Result<Module> {
    let proto =
        HloProto::decode(bytes).map_err(|e| Error::malformed(path, None, format!("not a valid xla.HloProto: {e}")))?;
    let module = proto.hlo_module.ok_or_else(|| Error::unrecognised(path, "the HloProto holds no hlo_module"))?;
    Ok(convert(module, proto.buffer_assignment, program_id))
}

/// A bare HloModuleProto: the program without its buffer assignment, which
/// xmem can name but not analyse.
pub fn decode_module(path: &Path, bytes: Bytes) -> Result<Module> {
    let module = HloModuleProto::decode(bytes)
        .map_err(|e| Error::malformed(path, None, format!("not a valid xla.HloModuleProto: {e}")))?;
    Ok(convert(module, None, None))
}

fn convert(module: HloModuleProto, assignment: Option<BufferAssignmentProto>, program_id: Option<u64>) -> Module {
    let mut layout_memory_spaces = Vec::new();
    if let Some(shape) = &module.host_program_shape {
        for parameter in &shape.parameters {
            xla_shape::collect_memory_spaces(parameter, &mut layout_memory_spaces);
        }
        if let Some(result) = &shape.result {
            xla_shape::collect_memory_spaces(result, &mut layout_memory_spaces);
        }
    }
    let instructions: HashMap<i64, &HloInstructionProto> =
        module.computations.iter().flat_map(|c| c.instructions.iter()).map(|i| (i.id, i)).collect();
    for instruction in instructions.values() {
        if let Some(shape) = &instruction.shape {
            xla_shape::collect_memory_spaces(shape, &mut layout_memory_spaces);
        }
    }
    layout_memory_spaces.sort_unstable();

    let buffer_assignment = match assignment {
        Some(assignment) => Ok(convert_assignment(assignment, &instructions, module.stack_frame_index.as_ref())),
        None => Err(NO_BUFFER_ASSIGNMENT.to_string()),
    };
    Module {
        name: module.name,
        program_id: program_id.or(u64::try_from(module.id).ok()),
        entry_computation: module.entry_computation_name,
        layout_memory_spaces,
        buffer_assignment,
    }
}

fn convert_assignment(
    assignment: BufferAssignmentProto,
    instructions: &HashMap<i64, &HloInstructionProto>,
    stack_frames: Option<&StackFrameIndexProto>,
) -> BufferAssignment {
    let logical_protos: HashMap<i64, _> = assignment.logical_buffers.iter().map(|b| (b.id, b)).collect();
    let mut out = BufferAssignment::default();
    let mut instruction_index: HashMap<i64, usize> = HashMap::new();
    // Keyed by logical buffer id: the last assignment wins, as in XProf.
    let mut buffer_slot: HashMap<i64, usize> = HashMap::new();
    let no_shape = ShapeProto::default();

    for (allocation_slot, allocation) in assignment.buffer_allocations.iter().enumerate() {
        out.allocations.push(Allocation {
            index: allocation.index,
            size: allocation.size,
            color: allocation.color,
            is_thread_local: allocation.is_thread_local,
            is_tuple: allocation.is_tuple,
            is_entry_computation_parameter: allocation.is_entry_computation_parameter,
            is_constant: allocation.is_constant,
            maybe_live_out: allocation.maybe_live_out,
            assigned: allocation.assigned.iter().map(|a| a.logical_buffer_id).collect(),
        });
        for assigned in &allocation.assigned {
            let Some(proto) = logical_protos.get(&assigned.logical_buffer_id) else { continue };
            let defined_at = proto.defined_at.clone().unwrap_or_default();
            let Some(hlo) = instructions.get(&defined_at.instruction_id) else { continue };
            let instruction = *instruction_index.entry(hlo.id).or_insert_with(|| {
                out.instructions.push(convert_instruction(hlo, stack_frames));
                out.instructions.len() - 1
            });
            let shape = hlo.shape.as_ref().unwrap_or(&no_shape);
            let shape = xla_shape::resolve_shape_index(shape, &defined_at.shape_index);
            let buffer = LogicalBuffer {
                id: proto.id,
                size: proto.size,
                unpadded_size: xla_shape::unpadded_size(shape),
                color: proto.color,
                instruction,
                shape_index: defined_at.shape_index,
                shape: xla_shape::human_string_with_layout(shape),
                allocation: allocation_slot,
                offset: assigned.offset,
            };
            match buffer_slot.get(&proto.id) {
                Some(&slot) => out.logical_buffers[slot] = buffer,
                None => {
                    buffer_slot.insert(proto.id, out.logical_buffers.len());
                    out.logical_buffers.push(buffer);
                }
            }
        }
    }

    for trace in assignment.heap_simulator_traces {
        let mut names: HashMap<String, u32> = HashMap::new();
        let mut converted = HeapTrace { events: Vec::with_capacity(trace.events.len()), instruction_names: Vec::new() };
        for event in trace.events {
            let next = converted.instruction_names.len() as u32;
            let instruction = *names.entry(event.instruction_name).or_insert_with_key(|name| {
                converted.instruction_names.push(name.clone());
                next
            });
            converted.events.push(HeapEvent {
                kind: match event.kind {
                    0 => HeapEventKind::Alloc,
                    1 => HeapEventKind::Free,
                    2 => HeapEventKind::ShareWith,
                    other => HeapEventKind::Unknown(other),
                },
                buffer_id: event.buffer_id,
                share_with_canonical_id: event.share_with_canonical_id,
                instruction,
            });
        }
        out.heap_traces.push(converted);
    }
    out
}

fn convert_instruction(hlo: &HloInstructionProto, stack_frames: Option<&StackFrameIndexProto>) -> Instruction {
    let metadata = hlo.metadata.clone().unwrap_or_default();
    let stack = stack_frames.map(|index| build_stack(index, metadata.stack_frame_id)).unwrap_or_default();
    Instruction {
        name: hlo.name.clone(),
        opcode: hlo.opcode.clone(),
        op_name: metadata.op_name,
        source: source_location(metadata.source_file, metadata.source_line, stack),
    }
}

/// XProf's rule: the innermost stack frame wins when it names a file and a
/// non-zero line; otherwise the metadata's own source_file and source_line.
fn source_location(file: String, line: i32, stack: String) -> Option<SourceLocation> {
    if let Some(first) = stack.lines().next() {
        let mut parts = first.split(':');
        if let (Some(frame_file), Some(frame_line)) = (parts.next(), parts.next()) {
            let frame_line = frame_line.parse::<i32>().unwrap_or(0);
            if !frame_file.is_empty() && frame_line != 0 {
                return Some(SourceLocation { file: frame_file.to_string(), line: frame_line, stack });
            }
        }
    }
    (!file.is_empty()).then_some(SourceLocation { file, line, stack })
}

/// Frames from `frame_id` (1-based) outwards, `file:line:column` each.
fn build_stack(index: &StackFrameIndexProto, mut frame_id: i32) -> String {
    let mut lines = Vec::new();
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
        lines.push(format!("{file}:{line}:{column}"));
    }
    lines.join("\n")
}

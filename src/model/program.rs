//! Compiled XLA programs: their logical buffers, buffer allocations and the
//! heap-simulator traces that say in which order buffers come and go.

use std::sync::Arc;

/// One compiled program (an HLO module).
#[derive(Debug, Clone)]
pub struct Module {
    pub name: String,
    /// The id XProf names the module by, `name(program_id)`: the program
    /// fingerprint when the profile records one, else the id the profile
    /// files the module under, else [`Module::module_id`]. 0 is a valid id.
    pub program_id: u64,
    /// `HloModuleProto.id`: the compiler's counter, which grows in compile order.
    pub module_id: u64,
    pub entry_computation: String,
    /// The entry computation's parameter and result shapes, `(f32[8]{0}, s32[]) -> f32[8]{0}`:
    /// what tells apart several compilations of one function (`jit__normal` for each shape).
    pub entry_signature: String,
    /// Memory spaces named in layouts (`S(n)`) of instruction or entry shapes,
    /// so a memory space with no buffer of its own colour is still listed.
    pub layout_memory_spaces: Vec<i64>,
    /// Entry parameter and result shapes and the aliases between them.
    pub entry_interface: EntryInterface,
    /// `Err` when the proto carries no buffer assignment; the string says
    /// what was missing and how to get a complete proto.
    pub buffer_assignment: Result<BufferAssignment, String>,
    /// The largest scoped-VMEM request of any instruction (TPU backend
    /// configs' `used_scoped_memory_configs` with memory space 1), as XProf
    /// reports it for the VMEM memory space.
    pub max_scoped_vmem: Option<ScopedAllocation>,
}

/// Memory an instruction reserves for its own duration (TPU kernels' scoped
/// VMEM), which the buffer assignment does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopedAllocation {
    pub bytes: i64,
    pub instruction: String,
}

impl Module {
    /// The name XProf shows: `jit_step(22)`.
    pub fn display_name(&self) -> String {
        format!("{}({})", self.name, self.program_id)
    }
}

/// What goes in and out of the entry computation, for donation hints.
#[derive(Debug, Clone, Default)]
pub struct EntryInterface {
    /// Shape with layout of each entry parameter, by parameter number.
    pub parameters: Vec<String>,
    /// Shape with layout of each top-level result element with its output
    /// index (`[i]`), or of the whole result (`[]`) when it is not a tuple.
    pub results: Vec<(Vec<i64>, String)>,
    /// Outputs that reuse a parameter's buffer (`input_output_alias`).
    pub aliases: Vec<InputOutputAlias>,
}

/// An output that may be written into a (donated) parameter's buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputOutputAlias {
    pub output_index: Vec<i64>,
    pub parameter_number: i64,
    pub parameter_index: Vec<i64>,
}

#[derive(Debug, Clone, Default)]
pub struct BufferAssignment {
    /// Instructions that define at least one logical buffer.
    pub instructions: Vec<Instruction>,
    /// Logical buffers that are assigned to an allocation.
    pub logical_buffers: Vec<LogicalBuffer>,
    pub allocations: Vec<Allocation>,
    pub heap_traces: Vec<HeapTrace>,
    /// XLA's own record of the buffers live at the heap simulator's peak of
    /// each allocation (`BufferAssignmentProto.peak_buffers`), which newer
    /// XLA writes even where it leaves the heap traces out.
    pub peak_buffers: Vec<PeakBuffers>,
    /// What in the assignment does not add up, found as it was read; the
    /// memory spaces it touches carry it, so that no figure made from it
    /// passes for sound.
    pub inconsistencies: Vec<Inconsistency>,
}

/// The logical buffers live at the peak of one allocation's heap simulation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeakBuffers {
    /// `BufferAllocationProto.index` of the allocation.
    pub allocation_index: i64,
    pub logical_buffer_ids: Vec<i64>,
}

/// A part of the input that contradicts another or cannot be true (a
/// negative size, an id listed twice, a buffer past its allocation's end, an
/// event naming a buffer the assignment does not hold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconsistency {
    /// The memory space (buffer colour) whose figures it touches; `None` for
    /// every memory space of the trace or module.
    pub color: Option<i64>,
    /// The heap trace it lies in, when it lies in one.
    pub trace: Option<usize>,
    /// What is wrong, naming the ids and values involved, and how many more
    /// of the same kind there are.
    pub what: String,
}

impl Inconsistency {
    /// Whether it touches the figures of memory space `color` replayed from `trace`.
    pub fn touches(&self, color: i64, trace: Option<usize>) -> bool {
        self.color.is_none_or(|c| c == color) && self.trace.is_none_or(|t| Some(t) == trace)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Instruction {
    /// Shared with the heap trace's names and the reports that name it; the
    /// strings below are shared by every instruction that repeats them, so
    /// a module of a million buffers holds each distinct string once.
    pub name: Arc<str>,
    pub opcode: Arc<str>,
    /// The framework op that produced it, e.g. `jit(step)/dot_general`.
    pub op_name: Arc<str>,
    pub source: Option<SourceLocation>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLocation {
    pub file: Arc<str>,
    pub line: i32,
    /// The whole Python stack, innermost frame first, one `file:line:column`
    /// per line; shared by the instructions under the same frame.
    pub stack: Arc<str>,
}

#[derive(Debug, Clone)]
pub struct LogicalBuffer {
    pub id: i64,
    /// Padded size: the compiler's own number, which covers tiling.
    pub size: i64,
    /// Dense size of the same shape without layout padding.
    pub unpadded_size: i64,
    pub color: i64,
    /// Index into [`BufferAssignment::instructions`].
    pub instruction: usize,
    /// Tuple index within the defining instruction's shape; empty for arrays.
    pub shape_index: Vec<i64>,
    /// Shape with layout as XLA prints it, e.g. `bf16[8,128]{1,0:T(8,128)(2,1)}`;
    /// one string per distinct shape.
    pub shape: Arc<str>,
    /// Index into [`BufferAssignment::allocations`].
    pub allocation: usize,
    /// Offset within the allocation.
    pub offset: i64,
}

#[derive(Debug, Clone, Default)]
pub struct Allocation {
    pub index: i64,
    pub size: i64,
    pub color: i64,
    pub is_thread_local: bool,
    pub is_tuple: bool,
    pub is_entry_computation_parameter: bool,
    /// For an entry parameter's allocation: which parameter, and which
    /// element of it (empty for the whole parameter).
    pub parameter_number: i64,
    pub parameter_shape_index: Vec<i64>,
    pub is_constant: bool,
    pub maybe_live_out: bool,
    /// Logical buffer ids in the order the proto lists them.
    pub assigned: Vec<i64>,
}

#[derive(Debug, Clone, Default)]
pub struct HeapTrace {
    pub events: Vec<HeapEvent>,
    /// Distinct instruction names, referenced by index from the events so a
    /// million-event trace does not hold a million strings; the same strings
    /// as [`Instruction::name`].
    pub instruction_names: Arc<[Arc<str>]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapEventKind {
    Alloc,
    Free,
    ShareWith,
    /// A kind this version of xmem does not know; analysis reports it.
    /// 16 bits (larger kinds saturate) keep an event at 16 bytes, which
    /// counts in a trace of millions.
    Unknown(u16),
}

/// One heap-simulator event. Its buffers are the model's own (indices into
/// [`BufferAssignment::logical_buffers`], resolved from the proto's ids as
/// the trace is read, where an id the model does not hold is reported), so
/// an event is 16 bytes and a replay finds a buffer without a lookup.
#[derive(Debug, Clone, Copy)]
pub struct HeapEvent {
    pub kind: HeapEventKind,
    /// Index into [`HeapTrace::instruction_names`].
    pub instruction: u32,
    /// The buffer: an index into [`BufferAssignment::logical_buffers`], or
    /// [`HeapEvent::NO_BUFFER`].
    pub buffer: u32,
    /// For a SHARE_WITH, the buffer whose memory it shares, likewise.
    pub share_with: u32,
}

impl HeapEvent {
    /// An id the model holds no buffer for.
    pub const NO_BUFFER: u32 = u32::MAX;

    pub fn buffer(&self) -> Option<usize> {
        (self.buffer != Self::NO_BUFFER).then_some(self.buffer as usize)
    }

    pub fn share_with(&self) -> Option<usize> {
        (self.share_with != Self::NO_BUFFER).then_some(self.share_with as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heap_event_is_16_bytes() {
        // A trace of millions of events is held whole; see `HeapEventKind::Unknown`.
        assert_eq!(std::mem::size_of::<HeapEvent>(), 16);
    }
}

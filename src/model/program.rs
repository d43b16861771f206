//! Compiled XLA programs: their logical buffers, buffer allocations and the
//! heap-simulator traces that say in which order buffers come and go.

use std::sync::Arc;

/// One compiled program (an HLO module).
#[derive(Debug, Clone)]
pub struct Module {
    pub name: String,
    /// XLA's unique id for the program; XProf shows modules as `name(id)`.
    pub program_id: Option<u64>,
    pub entry_computation: String,
    /// The entry computation's parameter and result shapes, `(f32[8]{0}, s32[]) -> f32[8]{0}`:
    /// what tells apart several compilations of one function (`jit__normal` for each shape).
    pub entry_signature: String,
    /// Memory spaces named in layouts (`S(n)`) of instruction or entry shapes,
    /// so a memory space with no buffer of its own colour is still listed.
    pub layout_memory_spaces: Vec<i64>,
    /// `Err` when the proto carries no buffer assignment; the string says
    /// what was missing and how to get a complete proto.
    pub buffer_assignment: Result<BufferAssignment, String>,
}

impl Module {
    /// The name XProf shows: `jit_step(22)`.
    pub fn display_name(&self) -> String {
        match self.program_id {
            Some(id) => format!("{}({id})", self.name),
            None => self.name.clone(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct BufferAssignment {
    /// Instructions that define at least one logical buffer.
    pub instructions: Vec<Instruction>,
    /// Logical buffers that are assigned to an allocation.
    pub logical_buffers: Vec<LogicalBuffer>,
    pub allocations: Vec<Allocation>,
    pub heap_traces: Vec<HeapTrace>,
}

#[derive(Debug, Clone, Default)]
pub struct Instruction {
    pub name: String,
    pub opcode: String,
    /// The framework op that produced it, e.g. `jit(step)/dot_general`.
    pub op_name: String,
    pub source: Option<SourceLocation>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLocation {
    pub file: String,
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
    /// Shape with layout as XLA prints it, e.g. `bf16[8,128]{1,0:T(8,128)(2,1)}`.
    pub shape: String,
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
    pub is_constant: bool,
    pub maybe_live_out: bool,
    /// Logical buffer ids in the order the proto lists them.
    pub assigned: Vec<i64>,
}

#[derive(Debug, Clone, Default)]
pub struct HeapTrace {
    pub events: Vec<HeapEvent>,
    /// Distinct instruction names, referenced by index from the events so a
    /// million-event trace does not hold a million strings.
    pub instruction_names: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapEventKind {
    Alloc,
    Free,
    ShareWith,
    /// A kind this version of xmem does not know; analysis reports it.
    Unknown(i32),
}

#[derive(Debug, Clone, Copy)]
pub struct HeapEvent {
    pub kind: HeapEventKind,
    pub buffer_id: i64,
    pub share_with_canonical_id: i64,
    /// Index into [`HeapTrace::instruction_names`].
    pub instruction: u32,
}

//! What a memory allocator (TensorFlow's BFC allocator, e.g. `GPU_0_bfc`)
//! reported about itself while a profile was taken: one event per allocation
//! and deallocation, each with the allocator's totals right after it, and
//! the programs the host executed while they happened.

use std::sync::Arc;

/// One allocator on one host, with its events in the order the profile
/// stores them (thread by thread), which is the order XProf reads them in.
#[derive(Debug, Clone, Default)]
pub struct Allocator {
    /// The host that ran it: the xplane's file name without `.xplane.pb`.
    pub host: String,
    /// The allocator's name, or its device ordinal when it has no name, as
    /// XProf keys it.
    pub name: String,
    pub events: Vec<AllocatorEvent>,
    /// Op names, region types, data types and shapes, referenced by index
    /// from the events so a million events do not hold a million strings.
    /// Index 0 is the empty string.
    pub strings: Vec<String>,
    /// What in its events cannot be true (a negative total or size, totals
    /// past 2^63 - 1), found as they were read: the allocator's figures are
    /// then marked as not sound.
    pub inconsistencies: Vec<String>,
    /// The program executions of the allocator's host, referenced by index
    /// from the events; shared by every allocator of the host.
    pub runs: Arc<[ProgramRun]>,
}

/// One execution of a compiled program on a host thread, from the outermost
/// `…Executable::Execute…` event of the thread to its end: the allocations
/// the thread makes in that time (its temporaries, its outputs) are the
/// program's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramRun {
    /// The module name the run's events give (`jit_train_step`: a
    /// `module_name` or `hlo_module` stat, `jit_train_step:XLA GPU module`,
    /// `CommonPjRtLoadedExecutable::Execute (jit_train_step)`); empty when
    /// none of them names it.
    pub name: String,
    /// The program id the profile gives for that name: the `program_id` of a
    /// kernel or copy of the run, else the only one any event of the host
    /// gives for that name; `None` when there is none, or several.
    pub program_id: Option<u64>,
}

impl Allocator {
    pub fn string(&self, index: u32) -> &str {
        self.strings.get(index as usize).map(String::as_str).unwrap_or_default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocatorEventKind {
    Allocation,
    Deallocation,
}

#[derive(Debug, Clone, Copy)]
pub struct AllocatorEvent {
    pub kind: AllocatorEventKind,
    /// Absolute time: the thread's start plus the event's offset.
    pub time_ps: i64,
    /// The offset from the start of the event's thread, which is all XProf
    /// uses as the event's time.
    pub thread_offset_ps: i64,
    /// Reserved for the stack of a device that has one; 0 for BFC allocators.
    pub stack_reserved_bytes: i64,
    /// Bytes in use, after this event.
    pub heap_allocated_bytes: i64,
    /// Limit minus reserved minus in use, after this event.
    pub free_memory_bytes: i64,
    /// 1 − largest free chunk / all free bytes.
    pub fragmentation: f64,
    /// The allocator's own high-water mark since it was created.
    pub peak_bytes_in_use: i64,
    pub requested_bytes: i64,
    /// The chunk actually taken: the request rounded up to the allocator's bins.
    pub allocation_bytes: i64,
    pub address: u64,
    /// Indices into [`Allocator::strings`].
    pub op_name: u32,
    pub region_type: u32,
    pub data_type: u32,
    pub shape: u32,
    /// The training step the event belongs to, as XProf's step grouping
    /// finds it; `None` when the event is outside every step.
    pub step: Option<i64>,
    /// Index into [`Allocator::runs`]: the program its thread was executing
    /// when the event happened, if any.
    pub run: Option<u32>,
    /// Index into [`Allocator::strings`]: what its thread was doing outside
    /// any program (the innermost event around it that is not a Python
    /// frame, else the innermost Python frame, `DevicePut`); 0 inside a
    /// program or when nothing was open.
    pub made_in: u32,
}

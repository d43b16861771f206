//! What a memory allocator (TensorFlow's BFC allocator, e.g. `GPU_0_bfc`)
//! reported about itself while a profile was taken: one event per allocation
//! and deallocation, each with the allocator's totals right after it.

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
}

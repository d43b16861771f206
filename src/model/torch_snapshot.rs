//! A PyTorch CUDA caching allocator's memory snapshot, as
//! `torch.cuda.memory._dump_snapshot` records it: per device, the segments
//! the allocator reserved with their blocks at the moment of the snapshot,
//! and the trace of what it did before (allocations, frees, segments
//! reserved and released, out-of-memory failures), each with the stack that
//! did it. Nothing here knows it came from a pickle.

use std::sync::Arc;

/// One snapshot: its devices, and the frames and stacks they share.
#[derive(Debug, Clone, Default)]
pub struct TorchSnapshot {
    /// Distinct frames, referenced by index from [`Self::stacks`].
    pub frames: Vec<TorchFrame>,
    /// Distinct stacks, innermost frame first, as indices into [`Self::frames`].
    /// Stack 0 is the empty stack (a block allocated before recording began).
    pub stacks: Vec<Box<[u32]>>,
    /// CUDA devices, by index.
    pub devices: Vec<DeviceMemoryTrace>,
    /// Pinned host memory (`host_segments` / `host_traces`), when recorded.
    pub host: Option<DeviceMemoryTrace>,
    pub settings: AllocatorSettings,
}

impl TorchSnapshot {
    /// The frames of stack `stack`, innermost first; empty for an unknown index.
    pub fn stack(&self, stack: u32) -> impl Iterator<Item = &TorchFrame> + Clone {
        self.stacks
            .get(stack as usize)
            .into_iter()
            .flat_map(|frames| frames.iter())
            .filter_map(|&f| self.frames.get(f as usize))
    }
}

/// A frame, Python or C++ (the two are interleaved on a stack).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TorchFrame {
    pub function: Arc<str>,
    /// `??` or empty when the C++ symbolizer did not know it.
    pub file: Arc<str>,
    /// 0 for C++ frames without line information.
    pub line: i64,
}

/// What the allocator was configured with (`PYTORCH_CUDA_ALLOC_CONF`); it
/// decides how a request is rounded to a block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocatorSettings {
    /// The `PYTORCH_CUDA_ALLOC_CONF` text, when the snapshot records it.
    pub conf: Option<String>,
    pub expandable_segments: bool,
    /// Blocks this large or larger are never split; `None` for no limit.
    pub max_split_size: Option<u64>,
    /// Divisions per power-of-two interval from 1 MiB (index 0) to 32 GiB
    /// (index 15), as `roundup_power2_divisions` sets them; 0 or 1 for none.
    pub roundup_power2_divisions: [u64; 16],
}

/// One device's segments at the snapshot and its trace.
#[derive(Debug, Clone, Default)]
pub struct DeviceMemoryTrace {
    /// The device index (`cuda:N`); -1 for pinned host memory.
    pub device: i64,
    pub segments: Vec<Segment>,
    /// In the order the allocator recorded it, oldest first.
    pub trace: Vec<TraceEntry>,
    /// The `device_free` bytes of each [`Action::Oom`] entry, in trace order.
    pub oom_device_free: Vec<u64>,
    /// Whether the entries carry `time_us` (PyTorch before 2.1 did not record it).
    pub timed: bool,
}

/// A range of device memory the allocator reserved (`cudaMalloc`, or the
/// mapped part of an expandable segment), as it was at the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: u64,
    pub active_size: u64,
    pub requested_size: u64,
    pub stream: u64,
    pub pool: Pool,
    pub expandable: bool,
    /// The stack that reserved it.
    pub stack: u32,
    /// In address order, covering the segment.
    pub blocks: Vec<Block>,
}

/// Which of the allocator's pools a segment serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// Requests of at most 1 MiB, from 2 MiB segments.
    Small,
    Large,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub address: u64,
    pub size: u64,
    /// What the program asked for; `size` is that rounded up by the allocator.
    pub requested_size: u64,
    pub state: BlockState,
    /// The stack that allocated it; 0 when it predates the recording.
    pub stack: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    /// In use by a tensor.
    Allocated,
    /// Freed by the program, waiting for a stream to finish with it (`record_stream`): still active.
    PendingFree,
    /// Cached: reserved but free.
    Inactive,
}

/// One entry of the allocator's trace: 32 bytes, so a trace of a million
/// entries takes 32 MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceEntry {
    /// Microseconds since the epoch; 0 when the trace is not [`DeviceMemoryTrace::timed`].
    pub time_us: i64,
    pub addr: u64,
    /// The bytes asked for (allocations and frees record the request, not the block).
    pub size: u64,
    pub stack: u32,
    pub action: Action,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Alloc,
    /// The program freed the block; it stays active until `FreeCompleted`.
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    /// Pages mapped into an expandable segment.
    SegmentMap,
    SegmentUnmap,
    /// A request the allocator could not satisfy.
    Oom,
    /// A snapshot was taken here.
    Snapshot,
    /// An action this version of xmem does not know.
    Other,
}

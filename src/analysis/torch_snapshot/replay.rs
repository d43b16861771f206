//! The caching allocator's active memory, replayed from its trace.
//!
//! A trace records what the program asked for (`size` of an `alloc` is the
//! request), but PyTorch's `active_bytes` counts blocks, and a block is the
//! request rounded up (to 512 bytes, or to a power-of-two division when
//! `roundup_power2_divisions` is set), and in the large pool the whole free
//! block the request was cut from when less than 1 MiB would be left over
//! (`should_split`). The replay applies the same rules: it keeps the blocks
//! live at each moment by address, and the segments, so it knows how far
//! the free space at an allocation's address reaches (free blocks are always
//! merged, so it reaches the next live block or the segment's end). That
//! makes the replayed peak PyTorch's `active_bytes.all.peak`, and the bytes
//! live at the end the segments' `active_size`, to the byte.
//!
//! Each step costs a lookup in two ordered maps: linear in the trace, with
//! memory for the blocks live at once.

use std::collections::BTreeMap;

use crate::model::torch_snapshot::{Action, AllocatorSettings, BlockState, DeviceMemoryTrace, Pool, TraceEntry};

/// The smallest block (`kMinBlockSize`); every block is a multiple of it.
const MIN_BLOCK: u64 = 512;
/// A large-pool block is split only when more than this is left (`kSmallSize`).
const SPLIT_REMAINDER: u64 = 1 << 20;

/// How an allocation's block size follows from its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizing {
    /// The CUDA caching allocator with `cudaMalloc` segments: rounded, and
    /// the whole free block where too little would be left to split off.
    Blocks,
    /// Expandable segments: always split, so the rounded request.
    Expandable,
    /// As recorded: pinned host memory, whose allocator rounds by rules the snapshot does not record.
    AsRecorded,
}

impl Sizing {
    /// `request` as a block before any segment is looked at.
    fn rounded(self, request: u64, settings: &AllocatorSettings) -> u64 {
        match self {
            Sizing::Blocks | Sizing::Expandable => round_size(request, settings),
            Sizing::AsRecorded => request,
        }
    }
}

/// A block live during the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveBlock {
    pub size: u64,
    pub requested: u64,
    pub stack: u32,
    /// The entry that allocated it; `None` for a block from before the trace.
    pub allocated_at: Option<usize>,
}

#[derive(Debug, Clone, Copy)]
struct SegmentExtent {
    size: u64,
    pool: Pool,
}

/// What was live when the trace began: known from the blocks freed in it
/// that it never allocated, and from the blocks live at the end that it
/// never allocated.
#[derive(Debug, Clone, Default)]
pub struct StartState {
    blocks: BTreeMap<u64, LiveBlock>,
    segments: BTreeMap<u64, SegmentExtent>,
    reserved: u64,
    /// Blocks freed in the trace that it never allocated, and their bytes
    /// (each its request rounded as the allocator rounds: the block may have been larger).
    pub freed_unseen: (usize, u64),
    /// Blocks live at the end that the trace never allocated, and their bytes (exact).
    pub live_unseen: (usize, u64),
}

impl StartState {
    pub fn of(device: &DeviceMemoryTrace, settings: &AllocatorSettings, sizing: Sizing) -> Self {
        let mut start = StartState::default();
        // Blocks the trace frees without having allocated them were live at its start.
        let mut allocated: rustc_hash::FxHashSet<u64> = Default::default();
        for entry in &device.trace {
            match entry.action {
                Action::Alloc => {
                    allocated.insert(entry.addr);
                }
                Action::FreeCompleted if !allocated.remove(&entry.addr) => {
                    let size = sizing.rounded(entry.size, settings);
                    let block = LiveBlock { size, requested: entry.size, stack: entry.stack, allocated_at: None };
                    if start.blocks.insert(entry.addr, block).is_none() {
                        start.freed_unseen.0 += 1;
                        start.freed_unseen.1 = start.freed_unseen.1.saturating_add(size);
                    }
                }
                _ => {}
            }
        }
        for segment in &device.segments {
            for block in segment.blocks.iter().filter(|b| b.state != BlockState::Inactive) {
                if allocated.contains(&block.address) || start.blocks.contains_key(&block.address) {
                    continue;
                }
                let live = LiveBlock {
                    size: block.size,
                    requested: block.requested_size,
                    stack: block.stack,
                    allocated_at: None,
                };
                start.blocks.insert(block.address, live);
                start.live_unseen.0 += 1;
                start.live_unseen.1 = start.live_unseen.1.saturating_add(block.size);
            }
        }
        // Segments: those at the end that the trace did not reserve, and those it released without reserving them.
        let mut first_action: BTreeMap<u64, &TraceEntry> = BTreeMap::new();
        // Reserved at the start: at the end, less what the trace reserved, plus what it released.
        let mut reserved: i128 = device.segments.iter().map(|s| i128::from(s.total_size)).sum();
        for entry in &device.trace {
            match entry.action {
                Action::SegmentAlloc | Action::SegmentMap => reserved -= i128::from(entry.size),
                Action::SegmentFree | Action::SegmentUnmap => reserved += i128::from(entry.size),
                _ => continue,
            }
            if matches!(entry.action, Action::SegmentAlloc | Action::SegmentFree) {
                first_action.entry(entry.addr).or_insert(entry);
            }
        }
        start.reserved = u64::try_from(reserved.max(0)).unwrap_or(u64::MAX);
        for segment in &device.segments {
            let reserved_in_trace =
                first_action.get(&segment.address).is_some_and(|e| e.action == Action::SegmentAlloc);
            if !reserved_in_trace {
                start.segments.insert(segment.address, SegmentExtent { size: segment.total_size, pool: segment.pool });
            }
        }
        for (address, entry) in first_action {
            if entry.action == Action::SegmentFree {
                start.segments.entry(address).or_insert(SegmentExtent { size: entry.size, pool: pool_of(entry.size) });
            }
        }
        start
    }

    pub fn live_bytes(&self) -> u64 {
        self.blocks.values().fold(0, |total, b| total.saturating_add(b.size))
    }
}

/// The pool of a segment reserved in the trace: the small pool's are 2 MiB.
fn pool_of(segment_size: u64) -> Pool {
    if segment_size == 2 << 20 {
        Pool::Small
    } else {
        Pool::Large
    }
}

/// The allocator's state as the trace is replayed.
pub struct Replay<'a> {
    settings: &'a AllocatorSettings,
    sizing: Sizing,
    pub live: BTreeMap<u64, LiveBlock>,
    segments: BTreeMap<u64, SegmentExtent>,
    /// Active bytes: the blocks live now.
    pub active: u64,
    /// The requests of those blocks.
    pub requested: u64,
    pub reserved: u64,
}

/// What one entry changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Allocated(LiveBlock),
    Freed(LiveBlock),
    None,
}

impl<'a> Replay<'a> {
    pub fn new(start: &StartState, settings: &'a AllocatorSettings, sizing: Sizing) -> Self {
        let active = start.live_bytes();
        let requested = start.blocks.values().fold(0u64, |total, b| total.saturating_add(b.requested));
        Replay {
            settings,
            sizing,
            live: start.blocks.clone(),
            segments: start.segments.clone(),
            active,
            requested,
            reserved: start.reserved,
        }
    }

    pub fn step(&mut self, index: usize, entry: &TraceEntry) -> Change {
        match entry.action {
            Action::Alloc => {
                let size = self.block_size(entry);
                let block = LiveBlock { size, requested: entry.size, stack: entry.stack, allocated_at: Some(index) };
                if let Some(replaced) = self.live.insert(entry.addr, block) {
                    // Allocated twice without a free between: the trace lost the free; the old block is gone.
                    self.active = self.active.saturating_sub(replaced.size);
                    self.requested = self.requested.saturating_sub(replaced.requested);
                }
                self.active = self.active.saturating_add(size);
                self.requested = self.requested.saturating_add(entry.size);
                Change::Allocated(block)
            }
            Action::FreeCompleted => match self.live.remove(&entry.addr) {
                Some(block) => {
                    self.active = self.active.saturating_sub(block.size);
                    self.requested = self.requested.saturating_sub(block.requested);
                    Change::Freed(block)
                }
                None => Change::None,
            },
            Action::SegmentAlloc => {
                self.reserved = self.reserved.saturating_add(entry.size);
                self.segments.insert(entry.addr, SegmentExtent { size: entry.size, pool: pool_of(entry.size) });
                Change::None
            }
            Action::SegmentFree => {
                self.reserved = self.reserved.saturating_sub(entry.size);
                self.segments.remove(&entry.addr);
                Change::None
            }
            Action::SegmentMap => {
                self.reserved = self.reserved.saturating_add(entry.size);
                Change::None
            }
            Action::SegmentUnmap => {
                self.reserved = self.reserved.saturating_sub(entry.size);
                Change::None
            }
            Action::FreeRequested | Action::Oom | Action::Snapshot | Action::Other => Change::None,
        }
    }

    /// The block an allocation got: its request rounded, or in the large
    /// pool the whole free block it came from when the rest would be 1 MiB or
    /// less (or when the request is at least `max_split_size`).
    fn block_size(&self, entry: &TraceEntry) -> u64 {
        let rounded = self.sizing.rounded(entry.size, self.settings);
        if self.sizing != Sizing::Blocks {
            // Expandable segments split whenever 512 bytes are left, so a block is its rounded request.
            return rounded;
        }
        let Some((&start, segment)) = self.segments.range(..=entry.addr).next_back() else { return rounded };
        let end = start.saturating_add(segment.size);
        if entry.addr >= end {
            return rounded;
        }
        let next_live = self.live.range(entry.addr.saturating_add(1)..).next().map_or(end, |(&address, _)| address);
        let free = next_live.min(end) - entry.addr;
        let Some(remaining) = free.checked_sub(rounded) else { return rounded };
        let splits = match segment.pool {
            Pool::Small => remaining >= MIN_BLOCK,
            Pool::Large => self.settings.max_split_size.is_none_or(|max| rounded < max) && remaining > SPLIT_REMAINDER,
        };
        if splits {
            rounded
        } else {
            free
        }
    }

    /// The largest run of free memory in one segment now, as the allocator
    /// could hand it out; `None` with expandable segments, whose free pages
    /// are remapped rather than kept in runs, and for host memory.
    pub fn largest_free_block(&self) -> Option<u64> {
        if self.sizing != Sizing::Blocks {
            return None;
        }
        let mut largest = 0;
        for (&start, segment) in &self.segments {
            let end = start.saturating_add(segment.size);
            let mut at = start;
            for (&address, block) in self.live.range(start..end) {
                largest = largest.max(address.saturating_sub(at));
                at = at.max(address.saturating_add(block.size));
            }
            largest = largest.max(end.saturating_sub(at));
        }
        Some(largest)
    }
}

/// A request rounded to a block as the allocator's `round_size` does.
pub fn round_size(size: u64, settings: &AllocatorSettings) -> u64 {
    if size < MIN_BLOCK {
        return MIN_BLOCK;
    }
    let interval = (63 - size.leading_zeros()).saturating_sub(20).min(15) as usize;
    let divisions = settings.roundup_power2_divisions[interval];
    if divisions > 1 && size > MIN_BLOCK.saturating_mul(divisions) {
        return next_power2_division(size, divisions);
    }
    size.div_ceil(MIN_BLOCK).saturating_mul(MIN_BLOCK)
}

/// `size` rounded up to the next of `divisions` equal steps between the powers of two around it.
fn next_power2_division(size: u64, divisions: u64) -> u64 {
    if size.is_power_of_two() {
        return size;
    }
    let floor = 1u64 << (63 - size.leading_zeros());
    let step = floor >> (63 - divisions.leading_zeros());
    if step == 0 {
        return floor.saturating_mul(2);
    }
    let below = size & !(step - 1);
    if below == size {
        size
    } else {
        below.saturating_add(step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_as_the_allocator_rounds_them() {
        let plain = AllocatorSettings::default();
        assert_eq!(round_size(0, &plain), 512);
        assert_eq!(round_size(4, &plain), 512);
        assert_eq!(round_size(512, &plain), 512);
        assert_eq!(round_size(513, &plain), 1024);
        assert_eq!(round_size(3 << 20, &plain), 3 << 20);
        // A corrupt size saturates instead of wrapping round.
        assert_eq!(round_size(u64::MAX, &plain), u64::MAX);
        // roundup_power2_divisions:4 — 1200 MiB lies between 1024 and 2048 MiB, whose quarters are 256 MiB apart.
        let divided = AllocatorSettings { roundup_power2_divisions: [4; 16], ..Default::default() };
        assert_eq!(round_size(1200 << 20, &divided), 1280 << 20);
        assert_eq!(round_size(1024 << 20, &divided), 1024 << 20);
        // At or below 512 × divisions the plain rounding applies.
        assert_eq!(round_size(2000, &divided), 2048);
    }
}

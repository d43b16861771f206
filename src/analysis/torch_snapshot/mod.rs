//! A PyTorch memory snapshot, per device: the active-memory timeline
//! replayed from the allocator's trace, its peak and what was live there by
//! the user's frame and by stack, the reserved memory and its fragmentation,
//! and the out-of-memory failure the trace records, if any.
//!
//! The replay ([`replay`]) reproduces the allocator's block sizes, so the
//! figures are PyTorch's own `memory_stats()`: the peak is
//! `active_bytes.all.peak` and the bytes live at the end are
//! `active_bytes.all.current` when the recording covered the run.

pub mod replay;
pub mod user_frame;

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::device_memory::StackFrame;
use super::drawing::drawing_indices;
use crate::model::torch_snapshot::{Action, BlockState, DeviceMemoryTrace, TorchSnapshot};
use crate::units::{human_bytes, human_bytes_precise};
use replay::{Change, LiveBlock, Replay, Sizing, StartState};
pub use user_frame::frame_label;
use user_frame::Owner;

/// Points kept for a timeline: two per pixel column of a chart.
pub const TIMELINE_POINTS: usize = 2000;
/// User frames a timeline shows as bands of their own; the rest are summed.
pub const TIMELINE_BANDS: usize = 6;

/// One device of one snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct TorchSnapshotReport {
    pub input: String,
    /// `cuda:N`, or `host` for pinned host memory.
    pub device: String,
    pub trace_entries: usize,
    pub actions: ActionCounts,
    /// When the trace's first and last entries were recorded (µs since the epoch); null when untimed.
    pub trace_start_us: Option<i64>,
    pub trace_end_us: Option<i64>,
    /// The most bytes active at once (blocks allocated or waiting for a stream to free them).
    pub peak_bytes: i64,
    pub peak_time_us: Option<i64>,
    /// The trace entry that reached the peak; null when the peak is where the trace began.
    pub peak_entry: Option<usize>,
    /// Who made the allocation that reached the peak.
    pub peak_owner: Option<Owner>,
    /// What the program asked for of the blocks live at the peak (before rounding).
    pub peak_requested_bytes: i64,
    pub reserved_at_peak_bytes: i64,
    /// The most bytes reserved at once during the trace (`reserved_bytes.all.peak` when it covered the run).
    pub reserved_peak_bytes: i64,
    /// Active bytes after the last entry, replayed.
    pub live_at_end_bytes: i64,
    /// The segments' own `active_size`, summed: equal to `live_at_end_bytes` when the trace and segments agree.
    pub segments_active_bytes: i64,
    /// Reserved at the snapshot: the segments' `total_size`, summed.
    pub reserved_bytes: i64,
    pub before_trace: BeforeTrace,
    /// Every block live at the peak, largest first.
    pub at_peak: Vec<Allocation>,
    pub at_peak_by_user_frame: Vec<FrameGroup>,
    pub at_peak_by_stack: Vec<StackGroup>,
    pub segments: SegmentSummary,
    /// The last out-of-memory entry of the trace: the failure that raised.
    pub oom: Option<TorchOom>,
    pub timeline: Timeline,
    pub notes: Vec<String>,
}

/// How many entries of each action the trace holds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ActionCounts {
    pub alloc: usize,
    pub free_requested: usize,
    pub free_completed: usize,
    pub segment_alloc: usize,
    pub segment_free: usize,
    pub segment_map: usize,
    pub segment_unmap: usize,
    pub oom: usize,
    pub snapshot: usize,
    pub other: usize,
}

/// Blocks live when the trace began.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct BeforeTrace {
    /// Still live at the snapshot: counted from the segments, as memory_viz does (exact sizes).
    pub live_at_end_count: usize,
    pub live_at_end_bytes: i64,
    /// Freed in the trace: the trace begins mid-run (recording started late,
    /// or `max_entries` dropped its oldest entries). Each counts its request
    /// rounded as the allocator rounds; its block may have been up to 1 MiB larger.
    pub freed_in_trace_count: usize,
    pub freed_in_trace_bytes: i64,
}

/// A block live at the peak.
#[derive(Debug, Clone, Serialize)]
pub struct Allocation {
    pub address: u64,
    pub size_bytes: i64,
    pub requested_bytes: i64,
    /// Null for a block allocated before the trace began.
    pub allocated_at_us: Option<i64>,
    #[serde(flatten)]
    pub owner: Owner,
    /// The whole stack, innermost first, Python and C++ frames as recorded.
    pub frames: Arc<[StackFrame]>,
}

/// Bytes live under one user frame (or, without one, under what owns them).
#[derive(Debug, Clone, Serialize)]
pub struct FrameGroup {
    #[serde(flatten)]
    pub owner: Owner,
    pub bytes: i64,
    pub count: i64,
}

/// Bytes live under one whole stack.
#[derive(Debug, Clone, Serialize)]
pub struct StackGroup {
    pub bytes: i64,
    pub count: i64,
    #[serde(flatten)]
    pub owner: Owner,
    pub frames: Arc<[StackFrame]>,
}

/// The reserved memory at the snapshot.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SegmentSummary {
    pub count: usize,
    pub reserved_bytes: i64,
    pub allocated_bytes: i64,
    pub active_bytes: i64,
    pub requested_bytes: i64,
    /// Reserved but not active: cached by the allocator for reuse.
    pub free_bytes: i64,
    /// The largest inactive block: the largest request the cache could serve without reserving more.
    pub largest_free_block_bytes: i64,
    /// `1 − largest_free_block / free`: 0 when the free memory is one block,
    /// near 1 when it is in many small pieces.
    pub fragmentation: f64,
    pub small_pool_bytes: i64,
    pub large_pool_bytes: i64,
    /// The allocator used expandable segments (`expandable_segments:True`).
    pub expandable: bool,
    pub expandable_segments: usize,
    /// Pages mapped into and unmapped from expandable segments during the trace.
    pub mapped_bytes: i64,
    pub unmapped_bytes: i64,
}

/// The out-of-memory failure: the last `oom` entry of the trace.
#[derive(Debug, Clone, Serialize)]
pub struct TorchOom {
    pub entry: usize,
    pub time_us: Option<i64>,
    /// What the failing allocation asked for.
    pub requested_bytes: i64,
    /// What the device had free (`cudaMemGetInfo`) when it failed.
    pub device_free_bytes: i64,
    /// Active at that moment.
    pub live_bytes: i64,
    pub reserved_bytes: i64,
    /// The largest free run in the reserved segments then (null with expandable segments).
    pub largest_free_block_bytes: Option<i64>,
    /// `oom` entries before this one: failures the program caught and
    /// retried (cuDNN probes workspace sizes this way).
    pub earlier_ooms: usize,
    /// Who made the request that failed.
    #[serde(flatten)]
    pub owner: Owner,
    pub frames: Arc<[StackFrame]>,
    pub cause: OomCause,
    /// One sentence per fact the cause rests on, and what to change.
    pub explanation: Vec<String>,
    pub at_oom: Vec<FrameGroup>,
}

/// Why the request failed, as the numbers show it. Sizes in the
/// explanation have two decimals, as PyTorch's own message prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OomCause {
    /// The device had less free than asked, and the cache had no block large enough.
    DeviceFull,
    /// The cache held more free than asked, but in pieces all smaller than the request.
    Fragmentation,
    /// The device had more free than asked: a limit of the process refused it
    /// (`torch.cuda.set_per_process_memory_fraction`).
    ProcessLimit,
}

/// Active and reserved bytes after trace entries, thinned to
/// [`TIMELINE_POINTS`] (every window keeps its highest and lowest point, and
/// the peak is kept). Drawn over entries, as memory_viz draws its timeline:
/// a step of a few milliseconds gets as much room as a warm-up of seconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    /// The trace entry of each point.
    pub entry: Vec<usize>,
    /// When each was recorded (µs since the epoch); empty when the trace has no times.
    pub time_us: Vec<i64>,
    pub active_bytes: Vec<i64>,
    pub reserved_bytes: Vec<i64>,
    /// The active bytes of the largest user frames at the peak, then of everything else.
    pub bands: Vec<Band>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Band {
    pub label: String,
    pub bytes: Vec<i64>,
}

fn signed(bytes: u64) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

/// Frames and user frames of the snapshot's stacks, converted once each.
struct Stacks<'a> {
    snapshot: &'a TorchSnapshot,
    frames: HashMap<u32, Arc<[StackFrame]>>,
    owners: HashMap<u32, Owner>,
}

impl<'a> Stacks<'a> {
    fn new(snapshot: &'a TorchSnapshot) -> Self {
        Stacks { snapshot, frames: HashMap::new(), owners: HashMap::new() }
    }

    fn frames(&mut self, stack: u32) -> Arc<[StackFrame]> {
        let snapshot = self.snapshot;
        self.frames
            .entry(stack)
            .or_insert_with(|| {
                snapshot
                    .stack(stack)
                    .map(|f| StackFrame { function: f.function.clone(), file: f.file.clone(), line: f.line })
                    .collect()
            })
            .clone()
    }

    fn owner(&mut self, stack: u32) -> Owner {
        let snapshot = self.snapshot;
        self.owners.entry(stack).or_insert_with(|| user_frame::owner(snapshot.stack(stack))).clone()
    }
}

/// Groups live blocks by owner, largest first (ties in owner order).
fn by_user_frame<'b>(stacks: &mut Stacks, blocks: impl Iterator<Item = &'b LiveBlock>) -> Vec<FrameGroup> {
    let mut groups: HashMap<Owner, (i64, i64)> = HashMap::new();
    for block in blocks {
        let total = groups.entry(stacks.owner(block.stack)).or_default();
        total.0 = total.0.saturating_add(signed(block.size));
        total.1 += 1;
    }
    let mut groups: Vec<FrameGroup> =
        groups.into_iter().map(|(owner, (bytes, count))| FrameGroup { owner, bytes, count }).collect();
    groups.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.owner.cmp(&b.owner)));
    groups
}

/// Analyses every device of a snapshot (and its pinned host memory), in device order.
pub fn analyze(input: &str, snapshot: &TorchSnapshot) -> Vec<TorchSnapshotReport> {
    let mut stacks = Stacks::new(snapshot);
    let devices = snapshot.devices.iter().map(|d| (format!("cuda:{}", d.device), d));
    let host = snapshot.host.iter().map(|h| ("host".to_string(), h));
    devices.chain(host).map(|(name, device)| analyze_device(input, name, snapshot, device, &mut stacks)).collect()
}

/// What the first replay finds: the peak, the last OOM and the series to thin.
struct FirstPass {
    peak: u64,
    peak_entry: Option<usize>,
    reserved_at_peak: u64,
    reserved_peak: u64,
    /// Active bytes after each entry.
    active: Vec<u64>,
    live_at_end: u64,
    oom: Option<OomState>,
}

/// The allocator when the last out-of-memory entry was recorded.
struct OomState {
    entry: usize,
    live: u64,
    reserved: u64,
    largest_free: Option<u64>,
    blocks: Vec<LiveBlock>,
}

fn analyze_device(
    input: &str,
    name: String,
    snapshot: &TorchSnapshot,
    device: &DeviceMemoryTrace,
    stacks: &mut Stacks,
) -> TorchSnapshotReport {
    let settings = &snapshot.settings;
    let expandable = settings.expandable_segments
        || device.segments.iter().any(|s| s.expandable)
        || device.trace.iter().any(|e| matches!(e.action, Action::SegmentMap | Action::SegmentUnmap));
    let sizing = match (device.device < 0, expandable) {
        (true, _) => Sizing::AsRecorded,
        (false, true) => Sizing::Expandable,
        (false, false) => Sizing::Blocks,
    };
    let start = StartState::of(device, settings, sizing);
    let actions = count_actions(device);
    let first = first_pass(device, &start, settings, sizing, actions.oom);

    // The live set at the peak: a second replay stopped there.
    let mut replay = Replay::new(&start, settings, sizing);
    if let Some(peak_entry) = first.peak_entry {
        for (index, entry) in device.trace.iter().enumerate().take(peak_entry + 1) {
            replay.step(index, entry);
        }
    }
    let time = |index: usize| device.timed.then(|| device.trace.get(index).map(|e| e.time_us)).flatten();
    let mut at_peak: Vec<Allocation> = replay
        .live
        .iter()
        .map(|(&address, block)| Allocation {
            address,
            size_bytes: signed(block.size),
            requested_bytes: signed(block.requested),
            allocated_at_us: block.allocated_at.and_then(time),
            owner: stacks.owner(block.stack),
            frames: stacks.frames(block.stack),
        })
        .collect();
    at_peak.sort_by(|a, b| b.size_bytes.cmp(&a.size_bytes).then(a.address.cmp(&b.address)));
    let at_peak_by_user_frame = by_user_frame(stacks, replay.live.values());
    let at_peak_by_stack = by_stack(stacks, replay.live.values());
    let peak_requested = replay.requested;

    let segments = segment_summary(device, expandable);
    let segments_active: u64 = device.segments.iter().fold(0, |t, s| t.saturating_add(s.active_size));
    let timeline = timeline(device, &start, settings, sizing, &first, &at_peak_by_user_frame, stacks);
    let oom = first.oom.as_ref().map(|state| oom_report(device, state, actions.oom, expandable, stacks));
    let mut notes = Vec::new();
    if device.trace.is_empty() {
        notes.push(
            "the snapshot holds no trace (recorded without torch.cuda.memory._record_memory_history, or the segments \
             alone): the peak and the live set are the segments' at the snapshot"
                .to_string(),
        );
    }
    if start.freed_unseen.0 > 0 {
        notes.push(format!(
            "the trace begins mid-run: {} block(s) ({}) freed in it were allocated before its first entry, so recording \
             started late or max_entries dropped the oldest entries; the peak is the highest point within the trace, and \
             memory may have been higher before it (memory_stats()[\"active_bytes.all.peak\"] has the process's peak)",
            start.freed_unseen.0,
            human_bytes(start.freed_unseen.1)
        ));
    }
    if start.live_unseen.0 > 0 && !device.trace.is_empty() {
        notes.push(format!(
            "{} block(s) ({}) live at the snapshot were allocated before the trace began: they are counted from the \
             segments, as memory_viz counts them, from the trace's first entry on",
            start.live_unseen.0,
            human_bytes(start.live_unseen.1)
        ));
    }
    if first.live_at_end != segments_active && !device.segments.is_empty() {
        notes.push(format!(
            "the replayed trace ends with {} active but the segments hold {} ({} bytes apart): the trace does not \
             account for every block",
            human_bytes(first.live_at_end),
            human_bytes(segments_active),
            signed(first.live_at_end) - signed(segments_active)
        ));
    }
    if device.device < 0 {
        notes.push(
            "pinned host memory: blocks are counted at the sizes the trace records (the host allocator's rounding is not \
             in the snapshot)"
                .to_string(),
        );
    }
    TorchSnapshotReport {
        input: input.to_string(),
        device: name,
        trace_entries: device.trace.len(),
        actions,
        trace_start_us: device.timed.then(|| device.trace.first().map(|e| e.time_us)).flatten(),
        trace_end_us: device.timed.then(|| device.trace.last().map(|e| e.time_us)).flatten(),
        peak_bytes: signed(first.peak),
        peak_time_us: first.peak_entry.and_then(time),
        peak_entry: first.peak_entry,
        peak_owner: first.peak_entry.and_then(|index| device.trace.get(index)).map(|entry| stacks.owner(entry.stack)),
        peak_requested_bytes: signed(peak_requested),
        reserved_at_peak_bytes: signed(first.reserved_at_peak),
        reserved_peak_bytes: signed(first.reserved_peak),
        live_at_end_bytes: signed(first.live_at_end),
        segments_active_bytes: signed(segments_active),
        reserved_bytes: segments.reserved_bytes,
        before_trace: BeforeTrace {
            live_at_end_count: start.live_unseen.0,
            live_at_end_bytes: signed(start.live_unseen.1),
            freed_in_trace_count: start.freed_unseen.0,
            freed_in_trace_bytes: signed(start.freed_unseen.1),
        },
        at_peak,
        at_peak_by_user_frame,
        at_peak_by_stack,
        segments,
        oom,
        timeline,
        notes,
    }
}

fn count_actions(device: &DeviceMemoryTrace) -> ActionCounts {
    let mut counts = ActionCounts::default();
    for entry in &device.trace {
        let count = match entry.action {
            Action::Alloc => &mut counts.alloc,
            Action::FreeRequested => &mut counts.free_requested,
            Action::FreeCompleted => &mut counts.free_completed,
            Action::SegmentAlloc => &mut counts.segment_alloc,
            Action::SegmentFree => &mut counts.segment_free,
            Action::SegmentMap => &mut counts.segment_map,
            Action::SegmentUnmap => &mut counts.segment_unmap,
            Action::Oom => &mut counts.oom,
            Action::Snapshot => &mut counts.snapshot,
            Action::Other => &mut counts.other,
        };
        *count += 1;
    }
    counts
}

/// Replays the whole trace: the peak (its first maximum, as `memory_stats`
/// keeps it), the series to draw, and the state at the last OOM.
fn first_pass(
    device: &DeviceMemoryTrace,
    start: &StartState,
    settings: &crate::model::torch_snapshot::AllocatorSettings,
    sizing: Sizing,
    ooms: usize,
) -> FirstPass {
    let mut replay = Replay::new(start, settings, sizing);
    let mut pass = FirstPass {
        peak: replay.active,
        peak_entry: None,
        reserved_at_peak: replay.reserved,
        reserved_peak: replay.reserved,
        active: Vec::with_capacity(device.trace.len()),
        live_at_end: 0,
        oom: None,
    };
    let mut seen_ooms = 0;
    for (index, entry) in device.trace.iter().enumerate() {
        replay.step(index, entry);
        if replay.active > pass.peak {
            pass.peak = replay.active;
            pass.peak_entry = Some(index);
            pass.reserved_at_peak = replay.reserved;
        }
        pass.reserved_peak = pass.reserved_peak.max(replay.reserved);
        if entry.action == Action::Oom {
            seen_ooms += 1;
            if seen_ooms == ooms {
                pass.oom = Some(OomState {
                    entry: index,
                    live: replay.active,
                    reserved: replay.reserved,
                    largest_free: replay.largest_free_block(),
                    blocks: replay.live.values().copied().collect(),
                });
            }
        }
        pass.active.push(replay.active);
    }
    pass.live_at_end = replay.active;
    pass
}

fn by_stack<'b>(stacks: &mut Stacks, blocks: impl Iterator<Item = &'b LiveBlock>) -> Vec<StackGroup> {
    let mut totals: HashMap<u32, (i64, i64)> = HashMap::new();
    for block in blocks {
        let total = totals.entry(block.stack).or_default();
        total.0 = total.0.saturating_add(signed(block.size));
        total.1 += 1;
    }
    let mut groups: Vec<(u32, StackGroup)> = totals
        .into_iter()
        .map(|(stack, (bytes, count))| {
            (stack, StackGroup { bytes, count, owner: stacks.owner(stack), frames: stacks.frames(stack) })
        })
        .collect();
    groups.sort_by(|(a_stack, a), (b_stack, b)| {
        b.bytes.cmp(&a.bytes).then(b.count.cmp(&a.count)).then(a_stack.cmp(b_stack))
    });
    groups.into_iter().map(|(_, group)| group).collect()
}

fn segment_summary(device: &DeviceMemoryTrace, expandable: bool) -> SegmentSummary {
    let sum = |field: fn(&crate::model::torch_snapshot::Segment) -> u64| {
        signed(device.segments.iter().fold(0u64, |total, s| total.saturating_add(field(s))))
    };
    let reserved = sum(|s| s.total_size);
    let active = sum(|s| s.active_size);
    let free = reserved.saturating_sub(active).max(0);
    let largest = device
        .segments
        .iter()
        .flat_map(|s| &s.blocks)
        .filter(|b| b.state == BlockState::Inactive)
        .map(|b| signed(b.size))
        .max()
        .unwrap_or(0);
    let traced = |action: Action| {
        signed(device.trace.iter().filter(|e| e.action == action).fold(0u64, |t, e| t.saturating_add(e.size)))
    };
    SegmentSummary {
        count: device.segments.len(),
        reserved_bytes: reserved,
        allocated_bytes: sum(|s| s.allocated_size),
        active_bytes: active,
        requested_bytes: sum(|s| s.requested_size),
        free_bytes: free,
        largest_free_block_bytes: largest,
        fragmentation: if free > 0 { 1.0 - largest.min(free) as f64 / free as f64 } else { 0.0 },
        small_pool_bytes: sum(|s| if s.pool == crate::model::torch_snapshot::Pool::Small { s.total_size } else { 0 }),
        large_pool_bytes: sum(|s| if s.pool == crate::model::torch_snapshot::Pool::Large { s.total_size } else { 0 }),
        expandable,
        expandable_segments: device.segments.iter().filter(|s| s.expandable).count(),
        mapped_bytes: traced(Action::SegmentMap),
        unmapped_bytes: traced(Action::SegmentUnmap),
    }
}

/// The series to draw: every window's extremes and the peak, with the
/// active bytes of the largest user frames at the peak as bands.
fn timeline(
    device: &DeviceMemoryTrace,
    start: &StartState,
    settings: &crate::model::torch_snapshot::AllocatorSettings,
    sizing: Sizing,
    first: &FirstPass,
    at_peak: &[FrameGroup],
    stacks: &mut Stacks,
) -> Timeline {
    if device.trace.is_empty() {
        return Timeline::default();
    }
    let active: Vec<i64> = first.active.iter().map(|&b| signed(b)).collect();
    let mut kept = drawing_indices(&active, TIMELINE_POINTS);
    if let Some(peak) = first.peak_entry {
        if let Err(at) = kept.binary_search(&peak) {
            kept.insert(at, peak);
        }
    }
    let banded: Vec<&Owner> = at_peak.iter().filter(|g| g.bytes > 0).take(TIMELINE_BANDS).map(|g| &g.owner).collect();
    let rest = banded.len();
    let mut band_of_stack: HashMap<u32, usize> = HashMap::new();
    let mut band = |stack: u32, stacks: &mut Stacks| {
        *band_of_stack.entry(stack).or_insert_with(|| {
            let owner = stacks.owner(stack);
            banded.iter().position(|b| **b == owner).unwrap_or(rest)
        })
    };
    let mut totals = vec![0u64; rest + 1];
    let mut replay = Replay::new(start, settings, sizing);
    for block in replay.live.values() {
        totals[band(block.stack, stacks)] += block.size;
    }
    let mut series = vec![Vec::with_capacity(kept.len() + 1); rest + 1];
    let mut timeline = Timeline::default();
    let mut next = kept.iter().peekable();
    for (index, entry) in device.trace.iter().enumerate() {
        match replay.step(index, entry) {
            Change::Allocated(block) => totals[band(block.stack, stacks)] += block.size,
            Change::Freed(block) => {
                let slot = &mut totals[band(block.stack, stacks)];
                *slot = slot.saturating_sub(block.size);
            }
            Change::None => {}
        }
        if next.peek() == Some(&&index) {
            next.next();
            timeline.entry.push(index);
            if device.timed {
                timeline.time_us.push(entry.time_us);
            }
            timeline.active_bytes.push(active[index]);
            timeline.reserved_bytes.push(signed(replay.reserved));
            for (values, total) in series.iter_mut().zip(&totals) {
                values.push(signed(*total));
            }
        }
    }
    let labels = banded.iter().map(|owner| owner.label());
    timeline.bands = labels
        .chain(std::iter::once("everything else".to_string()))
        .zip(series)
        .map(|(label, bytes)| Band { label, bytes })
        .filter(|band| band.bytes.iter().any(|&b| b > 0))
        .collect();
    timeline
}

/// The failure, from the allocator's state when it was recorded.
fn oom_report(
    device: &DeviceMemoryTrace,
    state: &OomState,
    ooms: usize,
    expandable: bool,
    stacks: &mut Stacks,
) -> TorchOom {
    let OomState { entry, live, reserved, largest_free, ref blocks } = *state;
    let failed = device.trace.get(entry).copied().unwrap_or(crate::model::torch_snapshot::TraceEntry {
        time_us: 0,
        addr: 0,
        size: 0,
        stack: 0,
        action: Action::Oom,
    });
    let device_free = device.oom_device_free.last().copied().unwrap_or(0);
    let requested = failed.size;
    let cached_free = reserved.saturating_sub(live);
    let at_oom = by_user_frame(stacks, blocks.iter());
    let fragmented = cached_free >= requested && largest_free.is_some_and(|largest| largest < requested);
    let cause = if requested <= device_free {
        OomCause::ProcessLimit
    } else if fragmented {
        OomCause::Fragmentation
    } else {
        OomCause::DeviceFull
    };
    let (asked, free) = (human_bytes_precise(requested), human_bytes_precise(device_free));
    let mut explanation = vec![match cause {
        OomCause::ProcessLimit => format!(
            "The device had {free} free, more than the {asked} asked: the allocator refused the request at a limit \
             of this process (torch.cuda.set_per_process_memory_fraction), with {} reserved.",
            human_bytes_precise(reserved)
        ),
        OomCause::Fragmentation => format!(
            "The device had {free} free, less than the {asked} asked; the allocator's cache held {} free, enough, but \
             its largest free block was {}: the cached memory was fragmented.",
            human_bytes_precise(cached_free),
            human_bytes_precise(largest_free.unwrap_or(0))
        ),
        OomCause::DeviceFull => format!(
            "The device had {free} free, less than the {asked} asked, and the allocator's cache held {} free{}.",
            human_bytes_precise(cached_free),
            match largest_free {
                Some(largest) => format!(" (its largest free block {})", human_bytes_precise(largest)),
                None => String::new(),
            }
        ),
    }];
    explanation.push(format!(
        "At the failure {} was active (in use by tensors) of {} reserved by PyTorch.",
        human_bytes_precise(live),
        human_bytes_precise(reserved)
    ));
    if let Some(owner) = at_oom.first().filter(|g| g.bytes > 0) {
        explanation.push(format!(
            "The largest owner then was {}: {} in {} block(s).",
            owner.owner.label(),
            human_bytes_precise(owner.bytes.unsigned_abs()),
            owner.count
        ));
    }
    if ooms > 1 {
        explanation.push(format!(
            "{} earlier out-of-memory failure(s) in the trace were caught and retried (cuDNN and autotuners probe \
             workspace sizes this way); the last one is the failure that raised.",
            ooms - 1
        ));
    }
    match cause {
        OomCause::Fragmentation if !expandable => explanation.push(
            "To change: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets the allocator map the free memory into \
             one range instead of keeping it in pieces."
                .to_string(),
        ),
        OomCause::ProcessLimit => explanation.push(
            "To change: raise the process's memory fraction, or make what is live at the failure smaller.".to_string(),
        ),
        _ => {}
    }
    TorchOom {
        entry,
        time_us: device.timed.then_some(failed.time_us),
        requested_bytes: signed(requested),
        device_free_bytes: signed(device_free),
        live_bytes: signed(live),
        reserved_bytes: signed(reserved),
        largest_free_block_bytes: largest_free.map(signed),
        earlier_ooms: ooms.saturating_sub(1),
        owner: stacks.owner(failed.stack),
        frames: stacks.frames(failed.stack),
        cause,
        explanation,
        at_oom,
    }
}

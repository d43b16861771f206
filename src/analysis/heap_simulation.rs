//! Replays a module's heap-simulator trace per memory space exactly as XProf
//! 2.24.2's Memory Viewer does (`hlo_proto_to_memory_visualization_utils.cc`),
//! so every figure agrees with it to the byte, and goes beyond it where it
//! fails: a trace touching several allocations is simulated with a note
//! instead of an error, every trace of a colour is simulated, a trace holding
//! several colours is replayed per colour (XProf replays all of it for each),
//! SHARE_WITH chains are followed with path compression and a cycle stops the
//! replay (XProf recurses without end), and the live set at the peak is found
//! without copying it at every new maximum (XProf's copy is quadratic on
//! monotonically growing traces). Work per colour is proportional to its own
//! events, whatever the number of colours.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{
    checked_sum_bytes, sum_bytes, BufferAtPeak, Category, EventInstructions, HeapBreakdown, Lifetime,
    MemorySpaceReport, TraceStatus,
};
use crate::id_index::IdIndex;
use crate::model::{Allocation, BufferAssignment, HeapEventKind, HeapTrace, LogicalBuffer, ScopedAllocation};

/// XProf folds buffers smaller than this into one "small" entry.
pub const SMALL_BUFFER_BYTES: i64 = 16 * 1024;

/// XLA's buffer colours as XProf's Memory Viewer names them.
pub fn memory_space_name(color: i64) -> String {
    match color {
        0 => "hbm".into(),
        1 => "vmem".into(),
        2 => "sflag".into(),
        3 => "cmem".into(),
        4 => "smem".into(),
        5 => "host".into(),
        6 => "sparsecore".into(),
        other => format!("color {other}"),
    }
}

/// XProf 2.24.2 (the pip build) leaves thread-local allocations out of the
/// always-live baseline and of the totals.
fn is_indefinite(allocation: &Allocation) -> bool {
    allocation.is_entry_computation_parameter || allocation.is_constant || allocation.maybe_live_out
}

fn category(allocation: &Allocation) -> Category {
    if allocation.is_entry_computation_parameter {
        Category::Parameter
    } else if allocation.maybe_live_out {
        Category::Output
    } else if allocation.is_thread_local {
        Category::ThreadLocal
    } else if allocation.is_constant {
        Category::Constant
    } else {
        Category::Temporary
    }
}

/// Colours that need a report: every colour of an allocation or logical
/// buffer, plus memory spaces named only in layouts.
fn colors_present(assignment: &BufferAssignment, layout_memory_spaces: &[i64]) -> Vec<i64> {
    let mut colors: Vec<i64> = assignment
        .allocations
        .iter()
        .map(|a| a.color)
        .chain(assignment.logical_buffers.iter().map(|b| b.color))
        .chain(layout_memory_spaces.iter().copied())
        .collect();
    colors.sort_unstable();
    colors.dedup();
    colors
}

/// The events of one trace that belong to one colour.
struct ColorEvents {
    color: i64,
    trace: usize,
    /// How many events name a buffer of this colour (XProf's fallback
    /// picks the trace where this is largest).
    count: usize,
    /// Where its positions start in [`Index::positions`]; `None` when the
    /// trace holds no other colour, so the whole trace is replayed as XProf
    /// replays it.
    first_position: Option<usize>,
}

struct Index<'a> {
    assignment: &'a BufferAssignment,
    slot_of_buffer: IdIndex,
    /// Heap trace used for each allocation slot, found from the trace's first
    /// event (the trace's own allocation index is unreliable, as XProf notes).
    trace_of_allocation: FxHashMap<usize, usize>,
    /// `(colour, allocation slot)`, by colour, slots in proto order.
    allocations_by_color: Vec<(i64, usize)>,
    /// Per colour, its events in each trace that has any, by colour and
    /// trace, found in one pass so that a trace of thousands of colours costs
    /// each colour only its own events. Flat, because a module may hold a
    /// colour per buffer: a list or map entry per colour would cost more
    /// than the colour's own events.
    events_by_color: Vec<ColorEvents>,
    /// The event positions of every trace of several colours, grouped as
    /// `events_by_color` lists them.
    positions: Vec<u32>,
    /// Per trace of several colours, the note each of their reports carries.
    note_of_trace: Vec<Option<Arc<str>>>,
}

impl<'a> Index<'a> {
    fn new(assignment: &'a BufferAssignment) -> Self {
        let ids: Vec<i64> = assignment.logical_buffers.iter().map(|b| b.id).collect();
        let slot_of_buffer = IdIndex::new(&ids);
        let buffer = |slot: Option<usize>| slot.and_then(|slot| assignment.logical_buffers.get(slot));
        let mut trace_of_allocation = FxHashMap::default();
        let mut events_by_color = Vec::new();
        let mut positions = Vec::new();
        let mut note_of_trace = Vec::with_capacity(assignment.heap_traces.len());
        for (trace, heap_trace) in assignment.heap_traces.iter().enumerate() {
            if let Some(first) = heap_trace.events.first().and_then(|e| buffer(e.buffer())) {
                trace_of_allocation.insert(first.allocation, trace);
            }
            // Most traces hold one colour: that is found in one pass and the
            // trace is replayed whole, with nothing collected or sorted.
            let mut colors = heap_trace.events.iter().filter_map(|e| buffer(e.buffer()).map(|b| b.color));
            let first_color = colors.next();
            let mut count = usize::from(first_color.is_some());
            let one_color = colors.all(|color| {
                count += 1;
                Some(color) == first_color
            });
            if one_color {
                note_of_trace.push(None);
                if let Some(color) = first_color {
                    events_by_color.push(ColorEvents { color, trace, count, first_position: None });
                }
                continue;
            }
            // Stable: each colour's positions stay in trace order.
            let mut events: Vec<(i64, u32)> = (0u32..)
                .zip(&heap_trace.events)
                .filter_map(|(position, event)| buffer(event.buffer()).map(|b| (b.color, position)))
                .collect();
            events.sort_by_key(|&(color, _)| color);
            let runs = events.chunk_by(|a, b| a.0 == b.0);
            let colors = runs.clone().count();
            note_of_trace.push(Some(
                format!(
                    "heap trace {trace} holds buffers of {colors} memory spaces; XProf replays all its events \
                     for each of them, xmem replays only this memory space's events"
                )
                .into(),
            ));
            for run in runs {
                let first_position = Some(positions.len());
                positions.extend(run.iter().map(|&(_, position)| position));
                let color = run.first().map_or(0, |&(color, _)| color);
                events_by_color.push(ColorEvents { color, trace, count: run.len(), first_position });
            }
        }
        events_by_color.sort_by_key(|c| (c.color, c.trace));
        let mut allocations_by_color: Vec<(i64, usize)> =
            assignment.allocations.iter().enumerate().map(|(slot, a)| (a.color, slot)).collect();
        allocations_by_color.sort_unstable();
        Index {
            assignment,
            slot_of_buffer,
            trace_of_allocation,
            allocations_by_color,
            events_by_color,
            positions,
            note_of_trace,
        }
    }

    fn buffer(&self, id: i64) -> Option<(usize, &'a LogicalBuffer)> {
        self.slot_of_buffer.get(id).and_then(|slot| self.at(slot))
    }

    /// The buffer at `slot` of the assignment's logical buffers.
    fn at(&self, slot: usize) -> Option<(usize, &'a LogicalBuffer)> {
        self.assignment.logical_buffers.get(slot).map(|b| (slot, b))
    }

    fn allocation_of(&self, buffer: &LogicalBuffer) -> &'a Allocation {
        &self.assignment.allocations[buffer.allocation]
    }

    /// The allocation slots of `color`, in proto order.
    fn allocation_slots(&self, color: i64) -> impl Iterator<Item = usize> + '_ {
        let first = self.allocations_by_color.partition_point(|&(c, _)| c < color);
        let of_color = self.allocations_by_color.get(first..).unwrap_or_default();
        of_color.iter().take_while(move |&&(c, _)| c == color).map(|&(_, slot)| slot)
    }

    fn allocations(&self, color: i64) -> impl Iterator<Item = &'a Allocation> + '_ {
        self.allocation_slots(color).filter_map(|slot| self.assignment.allocations.get(slot))
    }

    /// The traces holding events of `color`, in trace order, with those events.
    fn traces_of_color(&self, color: i64) -> &[ColorEvents] {
        let first = self.events_by_color.partition_point(|c| c.color < color);
        let end = self.events_by_color.partition_point(|c| c.color <= color);
        self.events_by_color.get(first..end).unwrap_or_default()
    }

    /// The positions of `events` in their trace; `None` for the whole trace.
    fn positions(&self, events: &ColorEvents) -> Option<&[u32]> {
        let first = events.first_position?;
        self.positions.get(first..first.checked_add(events.count)?)
    }

    /// XProf's choice: the first non-indefinite allocation of this colour that
    /// has a trace; failing that, the trace with the most events of the colour.
    fn primary_trace(&self, color: i64) -> Option<usize> {
        let by_allocation = self
            .allocation_slots(color)
            .filter(|&slot| self.assignment.allocations.get(slot).is_some_and(|a| !is_indefinite(a)))
            .find_map(|slot| self.trace_of_allocation.get(&slot).copied());
        by_allocation.or_else(|| {
            let mut best = None;
            let mut best_count = 0;
            for events in self.traces_of_color(color) {
                if events.count > best_count {
                    best = Some(events.trace);
                    best_count = events.count;
                }
            }
            best
        })
    }
}

/// Every memory space of a module: each colour of its buffers and
/// allocations, each memory space `layout_memory_spaces` names, and VMEM
/// when an instruction holds scoped VMEM. A colour's first report is the
/// XProf-compatible one; one more follows per further trace that holds
/// buffers of that colour.
pub fn analyze(
    assignment: &BufferAssignment,
    layout_memory_spaces: &[i64],
    max_scoped_vmem: Option<&ScopedAllocation>,
) -> Vec<MemorySpaceReport> {
    let index = Index::new(assignment);
    let scoped_space = max_scoped_vmem.map(|_| VMEM);
    let mut colors = colors_present(assignment, layout_memory_spaces);
    if let Some(vmem) = scoped_space.filter(|c| !colors.contains(c)) {
        colors.push(vmem);
        colors.sort_unstable();
    }
    // A module can hold a memory space per buffer (issue 17): the reports
    // are stored without the spare room a growing list leaves.
    let mut reports: Vec<MemorySpaceReport> = Vec::with_capacity(colors.len());
    reports.extend(colors.into_iter().flat_map(|color| {
        let mut reports = analyze_color(&index, color);
        if color == VMEM {
            for report in &mut reports {
                report.max_scoped_vmem_bytes = max_scoped_vmem.map(|s| s.bytes);
                report.max_scoped_vmem_instruction = max_scoped_vmem.map(|s| s.instruction.clone());
            }
        }
        reports
    }));
    reports.shrink_to_fit();
    reports
}

/// The memory space XProf reports scoped VMEM for.
const VMEM: i64 = 1;

fn analyze_color(index: &Index, color: i64) -> Vec<MemorySpaceReport> {
    let primary = index.primary_trace(color);
    let mut reports = vec![report(index, color, primary)];
    if let Some(primary) = primary {
        for i in index.traces_of_color(color).iter().map(|c| c.trace).filter(|&i| i != primary) {
            let mut extra = report(index, color, Some(i));
            extra.shown_by_xprof = false;
            extra.notes.insert(
                0,
                format!("trace {i} of this memory space; XProf shows only trace {primary} and ignores this one").into(),
            );
            reports.push(extra);
        }
    }
    reports
}

/// An index into a replay's events, buffers or live list in 32 bits, `None`
/// as `u32::MAX`: the per-event and per-buffer records of a replay of
/// millions of events are most of its memory. A replay stops before
/// [`MAX_EVENTS`], and a module cannot hold 2^32 buffers in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Compact(u32);

impl Compact {
    const NONE: Compact = Compact(u32::MAX);

    fn new(index: usize) -> Self {
        Compact(u32::try_from(index).unwrap_or(u32::MAX - 1).min(u32::MAX - 1))
    }

    fn get(self) -> Option<usize> {
        (self != Compact::NONE).then_some(self.0 as usize)
    }

    fn take(&mut self) -> Option<usize> {
        std::mem::replace(self, Compact::NONE).get()
    }
}

impl Default for Compact {
    fn default() -> Self {
        Compact::NONE
    }
}

/// The most events one replay goes through; a trace longer than that (it
/// would be a file of tens of gigabytes) stops there, with a note.
const MAX_EVENTS: usize = u32::MAX as usize - 2;

/// A buffer's part in one replay. Only buffers the replayed events name get
/// one, so a colour's replay costs its own events, not the module's buffers.
#[derive(Default)]
struct BufferState {
    ref_count: i64,
    /// The buffer it shares memory with (XProf's `canonical_buffer`), or,
    /// once a lookup has compressed the path, that buffer's root.
    canonical: Compact,
    /// The latest entry of this buffer on the live list, if any is on it.
    open_push: Compact,
    /// XProf's `span`: from the event that made the buffer live to the one
    /// that freed it, with the buffer whose memory it occupied.
    span: Option<Span>,
    /// An event names this buffer (XProf reports spans of these only).
    seen: bool,
    /// Allocated (or shared) and not freed since: a second ALLOC is counted
    /// twice, as XProf counts it, and marked.
    allocated: bool,
}

/// Each buffer's part in one replay: a table over all the module's buffers
/// when the replay has at least a quarter as many events as there are
/// buffers (a map of millions of entries misses the cache at every event),
/// a map otherwise (a colour of a few events must not cost the module's
/// buffers).
enum BufferStates {
    Table(Vec<BufferState>),
    Map(FxHashMap<usize, BufferState>),
}

impl BufferStates {
    fn for_replay(events: usize, buffers: usize) -> Self {
        if events.saturating_mul(4) >= buffers {
            BufferStates::Table((0..buffers).map(|_| BufferState::default()).collect())
        } else {
            BufferStates::Map(FxHashMap::default())
        }
    }

    fn get(&self, slot: usize) -> Option<&BufferState> {
        match self {
            BufferStates::Table(table) => table.get(slot),
            BufferStates::Map(map) => map.get(&slot),
        }
    }

    fn get_mut(&mut self, slot: usize) -> &mut BufferState {
        match self {
            BufferStates::Table(table) => {
                // Slots come from the assignment's own buffers, so the table
                // holds them; growing it keeps a stray one from panicking.
                if slot >= table.len() {
                    table.resize_with(slot + 1, BufferState::default);
                }
                &mut table[slot]
            }
            BufferStates::Map(map) => map.entry(slot).or_default(),
        }
    }

    fn iter(&self) -> Box<dyn Iterator<Item = (usize, &BufferState)> + '_> {
        match self {
            BufferStates::Table(table) => Box::new(table.iter().enumerate()),
            BufferStates::Map(map) => Box::new(map.iter().map(|(&slot, state)| (slot, state))),
        }
    }
}

#[derive(Clone, Copy)]
struct Span {
    start: Compact,
    end: Compact,
    memory: Compact,
    /// Its end is final.
    closed: bool,
}

impl Span {
    fn new(start: usize, end: usize, memory: usize) -> Self {
        Span { start: Compact::new(start), end: Compact::new(end), memory: Compact::new(memory), closed: false }
    }

    fn close(&mut self, event: usize) {
        self.end = Compact::new(event);
        self.closed = true;
    }
}

/// One entry of XProf's live list: the root buffer whose memory became live.
#[derive(Debug, Clone)]
struct Push {
    slot: Compact,
    event: Compact,
    /// The event that took it off the live list, if any.
    removed_at: Compact,
    /// The previous entry of the same buffer still on the list: XProf
    /// removes every entry of a buffer at once, so they form a chain.
    previous_open: Compact,
}

/// A share that brought a freed buffer back: from then on XProf shows the
/// sharer in the root's place.
#[derive(Debug, Clone)]
struct Revival {
    event: Compact,
    root: Compact,
    sharer: Compact,
}

struct Simulation {
    heap: Vec<i64>,
    unpadded_heap: Vec<i64>,
    instruction_at: Vec<u32>,
    peak: i64,
    peak_unpadded: i64,
    peak_position: usize,
    pushes: Vec<Push>,
    revivals: Vec<Revival>,
    states: BufferStates,
    allocations_touched: FxHashSet<usize>,
    /// Events replayed: the last index of a span that is never freed.
    events: usize,
    error: Option<String>,
    /// Buffers allocated again while live: the first (event, buffer id) and how many.
    double_allocations: Option<(usize, i64, usize)>,
    /// The first event at which the heap passed 2^63 - 1 bytes and was held there.
    overflow_at: Option<usize>,
}

impl Simulation {
    fn state(&mut self, slot: usize) -> &mut BufferState {
        self.states.get_mut(slot)
    }

    fn parent(&self, slot: usize) -> Option<usize> {
        self.states.get(slot).and_then(|s| s.canonical.get())
    }

    /// The root of a sharing chain (XProf's `get_canonical_buffer`), with
    /// path compression so that long chains cost amortised near-constant
    /// time per event. A buffer shares once in a valid trace, so compressing
    /// never changes which root a buffer reaches; links never form a cycle
    /// (see `share`), so the walk ends.
    fn root(&mut self, slot: usize) -> usize {
        let mut root = slot;
        while let Some(next) = self.parent(root) {
            root = next;
        }
        let mut node = slot;
        while let Some(next) = self.parent(node) {
            self.state(node).canonical = Compact::new(root);
            node = next;
        }
        root
    }

    fn increase(&mut self, index: &Index, slot: usize, event: usize) {
        let buffer = &index.assignment.logical_buffers[slot];
        let next = Compact::new(self.pushes.len());
        let previous_open = std::mem::replace(&mut self.state(slot).open_push, next);
        self.pushes.push(Push {
            slot: Compact::new(slot),
            event: Compact::new(event),
            removed_at: Compact::NONE,
            previous_open,
        });
        let heap = self.heap_now().checked_add(buffer.size).unwrap_or_else(|| {
            self.overflow_at.get_or_insert(event);
            i64::MAX
        });
        let unpadded = self.unpadded_now().saturating_add(buffer.unpadded_size);
        self.set_now(heap, unpadded);
        if heap > self.peak {
            self.peak = heap;
            self.peak_position = event;
            self.peak_unpadded = unpadded;
        }
    }

    fn decrease(&mut self, index: &Index, slot: usize, event: usize) -> Result<(), String> {
        let buffer = &index.assignment.logical_buffers[slot];
        let mut open = self.state(slot).open_push.take();
        while let Some(push) = open.and_then(|p| self.pushes.get_mut(p)) {
            push.removed_at = Compact::new(event);
            open = push.previous_open.take();
        }
        let heap = self.heap_now().saturating_sub(buffer.size);
        if heap < 0 {
            return Err(format!(
                "heap size becomes negative ({heap} bytes) at event {event}, freeing buffer {}",
                buffer.id
            ));
        }
        let unpadded = self.unpadded_now().saturating_sub(buffer.unpadded_size);
        self.set_now(heap, unpadded);
        // The root's own span closes when its memory is first released;
        // memory a sharer revives later is the sharer's span.
        if let Some(span) = self.state(slot).span.as_mut().filter(|s| !s.closed) {
            span.close(event);
        }
        Ok(())
    }

    fn alloc(&mut self, index: &Index, slot: usize, event: usize) {
        if std::mem::replace(&mut self.state(slot).allocated, true) {
            let id = index.assignment.logical_buffers[slot].id;
            let (_, _, count) = self.double_allocations.get_or_insert((event, id, 0));
            *count += 1;
        }
        let root = self.root(slot);
        self.state(root).ref_count += 1;
        self.increase(index, slot, event);
        let last = self.events.saturating_sub(1);
        self.state(slot).span = Some(Span::new(event, last, slot));
    }

    fn free(&mut self, index: &Index, slot: usize, event: usize) -> Result<(), String> {
        self.state(slot).allocated = false;
        let root = self.root(slot);
        let state = self.state(root);
        state.ref_count -= 1;
        match state.ref_count {
            rc if rc < 0 => {
                let id = index.assignment.logical_buffers[slot].id;
                return Err(format!("buffer {id} is freed more often than allocated, at event {event}"));
            }
            0 => self.decrease(index, root, event)?,
            _ => {}
        }
        // A sharer's span ends at its own FREE.
        let state = self.state(slot);
        if let (Some(span), Some(_)) = (&mut state.span, state.canonical.get()) {
            span.close(event);
        }
        Ok(())
    }

    fn share(&mut self, index: &Index, slot: usize, canonical: usize, event: usize) -> Result<(), String> {
        let root = self.root(canonical);
        // Once compressed, `canonical` links straight to its root, so only a
        // share with itself or with its own root's chain would close a cycle.
        if root == slot || canonical == slot {
            let id = index.assignment.logical_buffers[slot].id;
            return Err(format!("buffer {id} shares memory with itself through a cycle, at event {event}"));
        }
        let sharer = self.state(slot);
        sharer.canonical = Compact::new(canonical);
        sharer.allocated = true;
        let state = self.state(root);
        state.ref_count += 1;
        // Sharing with a buffer that was already freed brings its memory back.
        if state.ref_count == 1 {
            self.revivals.push(Revival {
                event: Compact::new(event),
                root: Compact::new(root),
                sharer: Compact::new(slot),
            });
            let last = self.events.saturating_sub(1);
            self.state(slot).span = Some(Span::new(event, last, root));
            self.increase(index, root, event);
        }
        Ok(())
    }

    // The running heap lives in the slot past the recorded history.
    fn heap_now(&self) -> i64 {
        self.heap.last().copied().unwrap_or(0)
    }
    fn unpadded_now(&self) -> i64 {
        self.unpadded_heap.last().copied().unwrap_or(0)
    }
    fn set_now(&mut self, heap: i64, unpadded: i64) {
        if let (Some(h), Some(u)) = (self.heap.last_mut(), self.unpadded_heap.last_mut()) {
            *h = heap;
            *u = unpadded;
        }
    }

    /// XProf's live list at the peak, in its order: entries pushed at or
    /// before the peak event and not removed by then, each shown as the
    /// latest sharer that had revived it by the peak. Found once at the end
    /// instead of copying the list at every new maximum, which is quadratic.
    fn live_at_peak(&self) -> Vec<usize> {
        if self.peak == 0 {
            return Vec::new();
        }
        live_at(&self.pushes, &self.revivals, self.peak_position)
    }

    /// XProf's `logicalBufferSpans`: every buffer an event names that got a
    /// span, by start.
    fn spans(&self) -> Vec<(usize, Span)> {
        let mut spans: Vec<(usize, Span)> = self
            .states
            .iter()
            .filter(|(_, s)| s.seen)
            .filter_map(|(slot, s)| s.span.map(|span| (slot, span)))
            .collect();
        spans.sort_unstable_by_key(|&(slot, span)| (span.start.0, slot));
        spans
    }
}

/// The buffers on XProf's live list after event `position`, in list order,
/// each shown as XProf shows it: a root whose freed memory a share revived
/// appears as its latest sharer.
fn live_at(pushes: &[Push], revivals: &[Revival], position: usize) -> Vec<usize> {
    let at = |index: Compact| index.get().unwrap_or(usize::MAX);
    let mut shown: FxHashMap<usize, usize> = FxHashMap::default();
    for revival in revivals.iter().take_while(|r| at(r.event) <= position) {
        shown.insert(at(revival.root), at(revival.sharer));
    }
    pushes
        .iter()
        .filter(|p| at(p.event) <= position && p.removed_at.get().is_none_or(|r| r > position))
        .map(|p| shown.get(&at(p.slot)).copied().unwrap_or(at(p.slot)))
        .collect()
}

/// XProf's live list over a whole replay, kept so that the live set at any
/// point of program order (`--at`) comes from the same bookkeeping as the
/// peak's.
#[derive(Debug, Clone, Default)]
pub struct LiveHistory {
    pushes: Vec<Push>,
    revivals: Vec<Revival>,
}

impl LiveHistory {
    /// The temporaries live after event `position`, as slots of the
    /// assignment's logical buffers (always-live buffers are not on the list).
    pub fn live_at(&self, position: usize) -> Vec<usize> {
        live_at(&self.pushes, &self.revivals, position)
    }

    /// The whole history as stretches of program order, one per entry of
    /// the list and in its order: the slots [`LiveHistory::live_at`] gives
    /// for a position are those of the stretches that cover it. An entry
    /// shows the sharer of the last revival of its buffer at or before it; a
    /// later revival cannot change that while the entry is on the list, for
    /// a buffer is revived only once its count fell to zero, which took all
    /// of its entries off.
    pub fn stretches(&self) -> Vec<LiveStretch> {
        let at = |index: Compact| index.get().unwrap_or(usize::MAX);
        let mut revivals_of: FxHashMap<usize, Vec<&Revival>> = FxHashMap::default();
        for revival in &self.revivals {
            revivals_of.entry(at(revival.root)).or_default().push(revival);
        }
        self.pushes
            .iter()
            .map(|push| {
                // Revivals are recorded in event order.
                let revivals = revivals_of.get(&at(push.slot)).map_or(&[][..], Vec::as_slice);
                let shown = match revivals.partition_point(|r| at(r.event) <= at(push.event)) {
                    0 => push.slot,
                    later => revivals[later - 1].sharer,
                };
                LiveStretch { slot: at(shown), from: at(push.event), until: push.removed_at.get() }
            })
            .collect()
    }
}

/// A buffer on XProf's live list after every event from `from` up to, not
/// including, `until` (to the end of the trace when `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveStretch {
    pub slot: usize,
    pub from: usize,
    pub until: Option<usize>,
}

impl LiveStretch {
    pub fn covers(&self, position: usize) -> bool {
        self.from <= position && self.until.is_none_or(|until| position < until)
    }
}

/// Replays `positions` of `trace` (all of it when `None`).
fn simulate(index: &Index, trace: &HeapTrace, positions: Option<&[u32]>) -> Simulation {
    let all = positions.map_or(trace.events.len(), <[u32]>::len);
    let n = all.min(MAX_EVENTS);
    let event_at =
        |i: usize| positions.map_or(Some(i), |p| p.get(i).map(|&p| p as usize)).and_then(|p| trace.events.get(p));
    // Every ALLOC and SHARE_WITH may push once: the live list is sized for
    // them, not grown to twice its need.
    let pushes = (0..n)
        .filter_map(event_at)
        .filter(|e| matches!(e.kind, HeapEventKind::Alloc | HeapEventKind::ShareWith))
        .count();
    let mut sim = Simulation {
        heap: Vec::with_capacity(n + 1),
        unpadded_heap: Vec::with_capacity(n + 1),
        instruction_at: Vec::with_capacity(n + 1),
        peak: 0,
        peak_unpadded: 0,
        peak_position: 0,
        pushes: Vec::with_capacity(pushes),
        revivals: Vec::new(),
        states: BufferStates::for_replay(n, index.assignment.logical_buffers.len()),
        allocations_touched: FxHashSet::default(),
        events: n,
        error: None,
        double_allocations: None,
        overflow_at: None,
    };
    // heap[i] is the heap before event i; the last element is the running value.
    sim.heap.push(0);
    sim.unpadded_heap.push(0);
    if n < all {
        sim.error = Some(format!("the trace has {all} events, more than the {MAX_EVENTS} one replay goes through"));
    }
    for i in 0..n {
        let Some(event) = event_at(i) else { break };
        let (heap, unpadded) = (sim.heap_now(), sim.unpadded_now());
        sim.heap.push(heap);
        sim.unpadded_heap.push(unpadded);
        sim.instruction_at.push(event.instruction);
        let Some((slot, buffer)) = event.buffer().and_then(|slot| index.at(slot)) else { continue };
        sim.allocations_touched.insert(buffer.allocation);
        sim.state(slot).seen = true;
        let outcome = match event.kind {
            HeapEventKind::Alloc => {
                sim.alloc(index, slot, i);
                Ok(())
            }
            HeapEventKind::Free => sim.free(index, slot, i),
            HeapEventKind::ShareWith => match event.share_with().and_then(|slot| index.at(slot)) {
                Some((canonical, _)) => sim.share(index, slot, canonical, i),
                None => Ok(()),
            },
            HeapEventKind::Unknown(kind) => Err(format!("unknown heap event kind {kind} at event {i}")),
        };
        if let Err(e) = outcome {
            sim.error = Some(e);
            break;
        }
    }
    sim.instruction_at.push(u32::MAX);
    sim
}

/// The defining instruction's name, with `{i,j}` for a tuple element.
fn buffer_name(buffer: &LogicalBuffer, instruction: &Arc<str>) -> Arc<str> {
    if buffer.shape_index.is_empty() {
        instruction.clone()
    } else {
        let index: Vec<String> = buffer.shape_index.iter().map(i64::to_string).collect();
        format!("{instruction}{{{}}}", index.join(",")).into()
    }
}

fn buffer_at_peak(index: &Index, slot: usize) -> BufferAtPeak {
    let assignment = index.assignment;
    let buffer = &assignment.logical_buffers[slot];
    let instruction = assignment.instructions.get(buffer.instruction).cloned().unwrap_or_default();
    BufferAtPeak {
        instruction: buffer_name(buffer, &instruction.name),
        logical_buffer_id: buffer.id,
        size_bytes: buffer.size,
        unpadded_bytes: buffer.unpadded_size,
        shape: buffer.shape.clone(),
        category: category(index.allocation_of(buffer)),
        opcode: instruction.opcode,
        op_name: instruction.op_name,
        source: instruction.source.as_ref().map(|s| format!("{}:{}", s.file, s.line)),
        stack: instruction.source.map(|s| s.stack).filter(|s| !s.is_empty()),
        allocation: index.allocation_of(buffer).index,
        offset: buffer.offset,
        listed_by_xprof: true,
        always_live: false,
    }
}

fn report(index: &Index, color: i64, trace_index: Option<usize>) -> MemorySpaceReport {
    let assignment = index.assignment;
    let allocations: Vec<&Allocation> = index.allocations(color).collect();
    let mut notes: Vec<Arc<str>> = Vec::new();
    // What reading the assignment found wrong here, then what the replay finds.
    let mut inconsistencies: Vec<Arc<str>> = assignment
        .inconsistencies
        .iter()
        .filter(|found| found.touches(color, trace_index))
        .map(|found| Arc::from(found.what.as_str()))
        .collect();

    // Always-live buffers: for each indefinite allocation, its largest
    // logical buffer stands for it (XProf's choice), and the allocation's size
    // joins the baseline added to every point of the heap series. XProf
    // lists them among the buffers at the peak only in HBM (colour 0): in
    // other memory spaces XLA does not place them during assignment. xmem
    // lists them everywhere, so the buffers at the peak add up to the peak,
    // and marks the ones XProf leaves out.
    let mut at_peak = Vec::new();
    let mut baseline = 0i64;
    let mut breakdown = HeapBreakdown::default();
    for allocation in allocations.iter().filter(|a| is_indefinite(a)) {
        let mut best: Option<(usize, i64)> = None;
        for id in &allocation.assigned {
            if let Some((slot, buffer)) = index.buffer(*id) {
                if buffer.size > best.map_or(0, |(_, size)| size) {
                    best = Some((slot, buffer.size));
                }
            }
        }
        if let Some((slot, _)) = best {
            baseline = baseline.saturating_add(allocation.size);
            match category(allocation) {
                Category::Parameter => breakdown.parameters = breakdown.parameters.saturating_add(allocation.size),
                Category::Output => breakdown.outputs = breakdown.outputs.saturating_add(allocation.size),
                _ => breakdown.constants = breakdown.constants.saturating_add(allocation.size),
            }
            at_peak.push(BufferAtPeak {
                listed_by_xprof: color == 0,
                always_live: true,
                ..buffer_at_peak(index, slot)
            });
        }
    }
    if color != 0 && baseline > 0 {
        notes.push(
            "parameters, outputs and constants are listed among this memory space's buffers at the peak; \
             XProf lists them for HBM only (JSON: listed_by_xprof false)"
                .into(),
        );
    }
    breakdown.thread_local = sum_bytes(allocations.iter().filter(|a| a.is_thread_local).map(|a| a.size));

    let total_allocation_bytes = checked_sum_bytes(allocations.iter().filter(|a| !a.is_thread_local).map(|a| a.size))
        .unwrap_or_else(|| {
            inconsistencies
                .push("the sizes of this memory space's allocations add up to more than 2^63 - 1 bytes".into());
            i64::MAX
        });
    let indefinite_bytes: i64 = sum_bytes(allocations.iter().filter(|a| is_indefinite(a)).map(|a| a.size));
    let temporary_allocations = allocations.iter().any(|a| !is_indefinite(a) && !a.is_thread_local && a.size > 0);

    let mut heap_bytes = Vec::new();
    let mut unpadded_heap_bytes = Vec::new();
    let mut instructions = EventInstructions::default();
    let mut lifetimes = Vec::new();
    let mut live_history = LiveHistory::default();
    let (mut peak, mut peak_unpadded, mut peak_position, mut peak_instruction) = (0, 0, 0, None);
    let status = match trace_index.and_then(|i| assignment.heap_traces.get(i).map(|t| (i, t))) {
        Some((trace_number, trace)) => {
            let events = index.traces_of_color(color).iter().find(|c| c.trace == trace_number);
            let positions = events.and_then(|c| index.positions(c));
            if let Some(note) = index.note_of_trace.get(trace_number).cloned().flatten() {
                notes.push(note);
            }
            let sim = simulate(index, trace, positions);
            if let Some(error) = &sim.error {
                notes.push(format!("heap simulation stopped: {error}; figures cover the events before it").into());
                inconsistencies.push(format!("heap trace {trace_number} does not add up: {error}").into());
            }
            if let Some((event, id, count)) = sim.double_allocations {
                let more = if count > 1 { format!(" (and {} more like it)", count - 1) } else { String::new() };
                inconsistencies.push(
                    format!(
                        "heap trace {trace_number}: event {event} allocates buffer {id} again while it is live; \
                         it is counted twice, as XProf counts it{more}"
                    )
                    .into(),
                );
            }
            if let Some(event) = sim.overflow_at {
                inconsistencies.push(
                    format!(
                        "heap trace {trace_number}: the heap passes 2^63 - 1 bytes at event {event} and is held there"
                    )
                    .into(),
                );
            }
            let allocations_touched = sim.allocations_touched.len();
            if allocations_touched > 1 {
                notes.push(format!(
                    "heap trace {trace_number} spans {allocations_touched} buffer allocations; XProf refuses such a trace, xmem simulates it"
                ).into());
            }
            for slot in sim.live_at_peak() {
                at_peak.push(buffer_at_peak(index, slot));
            }
            let spans = sim.spans();
            lifetimes.reserve_exact(spans.len());
            for (slot, span) in spans {
                let buffer = &assignment.logical_buffers[slot];
                let Some(memory) = span.memory.get().and_then(|m| assignment.logical_buffers.get(m)) else { continue };
                let unnamed = Arc::default();
                let instruction = assignment.instructions.get(buffer.instruction).map_or(&unnamed, |i| &i.name);
                lifetimes.push(Lifetime {
                    logical_buffer_id: buffer.id,
                    instruction: buffer_name(buffer, instruction),
                    start: span.start.get().unwrap_or_default(),
                    end: span.end.get().unwrap_or_default(),
                    offset: memory.offset,
                    size_bytes: memory.size,
                    category: category(index.allocation_of(memory)),
                });
            }
            peak = sim.peak;
            peak_unpadded = sim.peak_unpadded;
            peak_position = sim.peak_position;
            peak_instruction =
                sim.instruction_at.get(peak_position).and_then(|&i| trace.instruction_names.get(i as usize)).cloned();
            let status = if sim.error.is_some() { TraceStatus::Broken } else { TraceStatus::Simulated };
            // The series are the replay's own, the baseline added in place,
            // and the events' instructions stay indices into the trace's
            // shared names: a trace of millions of events is not copied.
            heap_bytes = sim.heap;
            unpadded_heap_bytes = sim.unpadded_heap;
            for series in [&mut heap_bytes, &mut unpadded_heap_bytes] {
                series.iter_mut().for_each(|h| *h = h.saturating_add(baseline));
            }
            instructions = EventInstructions::new(trace.instruction_names.clone(), sim.instruction_at);
            let (mut pushes, mut revivals) = (sim.pushes, sim.revivals);
            pushes.shrink_to_fit();
            revivals.shrink_to_fit();
            live_history = LiveHistory { pushes, revivals };
            status
        }
        None if temporary_allocations => match xla_peak(index, &allocations) {
            Some(xla) => {
                notes.push(xla.note.into());
                at_peak.extend(xla.slots.iter().map(|&slot| buffer_at_peak(index, slot)));
                (peak, peak_unpadded) = (xla.bytes, xla.unpadded_bytes);
                TraceStatus::XlaPeakBuffers
            }
            None => {
                notes.push(
                "no heap-simulator trace for this memory space: the peak counts only always-live buffers \
                 (parameters, outputs, constants), not temporaries. TensorFlow's profiler stores such protos; \
                 dump the module with XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_proto\" and pass DIR for the full picture"
                    .into(),
                );
                TraceStatus::Missing
            }
        },
        None => TraceStatus::NotNeeded,
    };
    breakdown.temporaries = peak;
    // As the text lists them: largest first.
    at_peak.sort_by(BufferAtPeak::largest_first);
    // Nor the spare room of each report's own lists.
    at_peak.shrink_to_fit();
    lifetimes.shrink_to_fit();
    notes.shrink_to_fit();

    let peak_bytes = peak.checked_add(baseline).unwrap_or_else(|| {
        inconsistencies.push("the peak passes 2^63 - 1 bytes and is held there".into());
        i64::MAX
    });
    inconsistencies.shrink_to_fit();
    let fragmentation_denominator = total_allocation_bytes.saturating_sub(indefinite_bytes);
    let fragmentation = if fragmentation_denominator > 0 {
        total_allocation_bytes.saturating_sub(peak_bytes) as f64 / fragmentation_denominator as f64
    } else {
        0.0
    };
    MemorySpaceReport {
        color,
        name: memory_space_name(color),
        trace_index,
        shown_by_xprof: true,
        heap_simulation: status,
        peak_bytes,
        peak_unpadded_bytes: peak_unpadded.saturating_add(baseline),
        peak_position,
        peak_instruction,
        indefinite_bytes,
        total_allocation_bytes,
        entry_parameters_bytes: sum_bytes(
            allocations.iter().filter(|a| a.is_entry_computation_parameter).map(|a| a.size),
        ),
        maybe_live_out_bytes: sum_bytes(allocations.iter().filter(|a| a.maybe_live_out).map(|a| a.size)),
        non_reusable_bytes: sum_bytes(allocations.iter().filter(|a| a.is_thread_local || a.is_tuple).map(|a| a.size)),
        fragmentation,
        breakdown,
        heap_bytes,
        unpadded_heap_bytes,
        instructions,
        at_peak,
        live_history,
        lifetimes,
        max_scoped_vmem_bytes: None,
        max_scoped_vmem_instruction: None,
        notes,
        inconsistencies,
        attribution: Default::default(),
    }
}

/// The temporaries at the peak as XLA recorded them, for a memory space
/// whose heap-simulator trace XLA left out of the proto.
struct XlaPeak {
    /// Logical buffer slots, allocation by allocation.
    slots: Vec<usize>,
    bytes: i64,
    unpadded_bytes: i64,
    note: String,
}

/// The heap simulator's peak from `peak_buffers` (XLA writes them from
/// jaxlib 0.10 on, also where it leaves the traces out, as the buffer
/// assignment JAX's `memory_analysis()` returns does): the buffers live at
/// the peak of each of the colour's heap-simulated allocations (neither
/// always-live nor thread-local), which XLA's record extends with the
/// buffers it placed in the allocation outside the heap simulation (small
/// tuples of a loop; XProf's replay of the trace never sees those). `None`
/// when an allocation has no such record. With one such allocation (the common case) this is the trace's
/// peak; with several their peaks are added, which may overstate the peak
/// if they fall at different points, and the note says so.
fn xla_peak(index: &Index, allocations: &[&Allocation]) -> Option<XlaPeak> {
    let peak_buffers = &index.assignment.peak_buffers;
    let heap: Vec<&Allocation> =
        allocations.iter().copied().filter(|a| !is_indefinite(a) && !a.is_thread_local && a.size > 0).collect();
    let mut slots = Vec::new();
    for allocation in &heap {
        let recorded = peak_buffers.iter().find(|p| p.allocation_index == allocation.index)?;
        slots.extend(recorded.logical_buffer_ids.iter().filter_map(|&id| index.buffer(id).map(|(slot, _)| slot)));
    }
    let buffers = || slots.iter().filter_map(|&slot| index.assignment.logical_buffers.get(slot));
    let mut note = "no heap-simulator trace for this memory space (XLA left it out of this proto): the peak is \
                    XLA's own, the always-live buffers and the buffers XLA records live at the peak (peak_buffers), \
                    which also counts any buffer XLA placed in the allocation outside the heap simulation (XProf \
                    leaves those out); there is no timeline"
        .to_string();
    if heap.len() > 1 {
        note.push_str(&format!(
            "; the peaks of {} allocations are added, which overstates the peak if they fall at different points",
            heap.len()
        ));
    }
    Some(XlaPeak {
        bytes: sum_bytes(buffers().map(|b| b.size)),
        unpadded_bytes: sum_bytes(buffers().map(|b| b.unpadded_size)),
        slots,
        note,
    })
}

/// Logical buffers by their place in the assignment, described as
/// [`BufferAtPeak`]s; places the assignment does not hold are left out.
pub fn describe(assignment: &BufferAssignment, slots: &[usize]) -> Vec<BufferAtPeak> {
    let index = Index::new(assignment);
    slots
        .iter()
        .filter(|&&slot| slot < assignment.logical_buffers.len())
        .map(|&slot| buffer_at_peak(&index, slot))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HeapEvent, Instruction};

    fn buffer(id: i64, size: i64, allocation: usize) -> LogicalBuffer {
        LogicalBuffer {
            id,
            size,
            unpadded_size: size,
            color: 0,
            instruction: 0,
            shape_index: Vec::new(),
            shape: "f32[4]{0}".into(),
            allocation,
            offset: 0,
        }
    }

    /// An event naming buffers by their index, which is their id in these tests.
    fn event(kind: HeapEventKind, buffer: u32, share_with: u32) -> HeapEvent {
        HeapEvent { kind, buffer, share_with, instruction: 0 }
    }

    /// One temporary allocation holding `sizes.len()` buffers, replayed by `events`.
    fn assignment(sizes: &[i64], events: Vec<HeapEvent>) -> BufferAssignment {
        BufferAssignment {
            instructions: vec![Instruction { name: "fusion".into(), ..Default::default() }],
            logical_buffers: sizes.iter().enumerate().map(|(i, &s)| buffer(i as i64, s, 0)).collect(),
            allocations: vec![Allocation {
                index: 0,
                size: sizes.iter().copied().fold(0, i64::saturating_add),
                assigned: (0..sizes.len() as i64).collect(),
                ..Default::default()
            }],
            heap_traces: vec![HeapTrace { events, instruction_names: vec!["fusion".into()].into() }],
            peak_buffers: Vec::new(),
            inconsistencies: Vec::new(),
        }
    }

    use HeapEventKind::{Alloc, Free, ShareWith, Unknown};

    #[test]
    fn without_a_trace_the_peak_is_xlas_recorded_peak_buffers() {
        // As JAX's memory_analysis() proto on jaxlib 0.10+: the trace left out, peak_buffers kept.
        let mut assignment = assignment(&[100, 40, 60], Vec::new());
        assignment.heap_traces.clear();
        let missing = analyze(&assignment, &[], None);
        assert_eq!((missing[0].heap_simulation, missing[0].peak_bytes), (TraceStatus::Missing, 0));
        assignment.peak_buffers =
            vec![crate::model::PeakBuffers { allocation_index: 0, logical_buffer_ids: vec![0, 2] }];
        let space = &analyze(&assignment, &[], None)[0];
        assert_eq!(
            (space.heap_simulation, space.peak_bytes, space.breakdown.temporaries),
            (TraceStatus::XlaPeakBuffers, 160, 160)
        );
        let at_peak: Vec<i64> = space.at_peak.iter().map(|b| b.logical_buffer_id).collect();
        assert_eq!(at_peak, [0, 2]);
        assert!(space.heap_bytes.is_empty() && space.lifetimes.is_empty());
        // An allocation without a record: nothing to go by.
        assignment.peak_buffers[0].allocation_index = 7;
        assert_eq!(analyze(&assignment, &[], None)[0].heap_simulation, TraceStatus::Missing);
    }

    #[test]
    fn peak_is_the_first_maximum_and_its_live_set() {
        let events = vec![
            event(Alloc, 0, 0),
            event(Alloc, 1, 0),
            event(Free, 1, 0),
            event(Alloc, 2, 0),
            event(Free, 0, 0),
            event(Free, 2, 0),
        ];
        let space = &analyze(&assignment(&[100, 50, 50], events), &[], None)[0];
        assert_eq!(space.peak_bytes, 150);
        assert_eq!(space.peak_position, 1);
        assert_eq!(space.heap_bytes, [0, 100, 150, 100, 150, 50, 0]);
        let live: Vec<i64> = space.at_peak.iter().map(|b| b.logical_buffer_id).collect();
        assert_eq!(live, [0, 1]);
    }

    #[test]
    fn sharing_a_freed_buffer_revives_it_and_shows_the_sharer() {
        let events = vec![event(Alloc, 0, 0), event(Free, 0, 0), event(ShareWith, 1, 0), event(Free, 1, 0)];
        let space = &analyze(&assignment(&[64, 64], events), &[], None)[0];
        assert_eq!(space.heap_bytes, [0, 64, 0, 64, 0]);
        assert_eq!(space.peak_position, 0);
        assert_eq!(space.at_peak.iter().map(|b| b.logical_buffer_id).collect::<Vec<_>>(), [0]);
    }

    /// The live list at every event, as [`LiveHistory::live_at`] gives it
    /// and as the stretches that cover the event give it.
    fn live_lists(history: &LiveHistory, events: usize) -> [Vec<Vec<usize>>; 2] {
        let stretches = history.stretches();
        let from_stretches =
            (0..events).map(|at| stretches.iter().filter(|s| s.covers(at)).map(|s| s.slot).collect()).collect();
        [(0..events).map(|at| history.live_at(at)).collect(), from_stretches]
    }

    #[test]
    fn stretches_give_the_live_list_of_every_event_with_revived_buffers_shown_as_their_sharer() {
        // Buffer 0 is freed, revived by 1, freed, revived by 2; 3 lives across it all.
        let events = vec![
            event(Alloc, 3, 0),
            event(Alloc, 0, 0),
            event(Free, 0, 0),
            event(ShareWith, 1, 0),
            event(Free, 1, 0),
            event(ShareWith, 2, 0),
            event(Alloc, 4, 0),
            event(Free, 2, 0),
            event(Free, 3, 0),
        ];
        let space = &analyze(&assignment(&[64, 64, 64, 8, 16], events), &[], None)[0];
        let [expected, from_stretches] = live_lists(&space.live_history, 9);
        assert_eq!(expected[3], [3, 1], "the revived buffer shows as its sharer");
        assert_eq!(expected[6], [3, 2, 4]);
        assert_eq!(from_stretches, expected);
    }

    #[test]
    fn a_free_without_alloc_stops_with_the_event_index() {
        let events = vec![event(Alloc, 0, 0), event(Free, 1, 0), event(Alloc, 1, 0)];
        let space = &analyze(&assignment(&[10, 20], events), &[], None)[0];
        assert_eq!(space.heap_simulation, TraceStatus::Broken);
        assert!(space.notes.iter().any(|n| n.contains("buffer 1") && n.contains("event 1")), "{:?}", space.notes);
        assert_eq!(space.peak_bytes, 10);
    }

    #[test]
    fn unknown_kinds_and_dangling_ids_are_reported_not_fatal() {
        let events = vec![event(Alloc, 0, 0), event(Alloc, 99, 0), event(ShareWith, 0, 77), event(Unknown(7), 0, 0)];
        let space = &analyze(&assignment(&[8], events), &[], None)[0];
        assert_eq!(space.heap_simulation, TraceStatus::Broken);
        assert!(space.notes.iter().any(|n| n.contains("unknown heap event kind 7 at event 3")), "{:?}", space.notes);
        assert_eq!(space.peak_bytes, 8);
    }

    #[test]
    fn absurd_sizes_saturate_instead_of_overflowing() {
        let events = vec![event(Alloc, 0, 0), event(Alloc, 1, 0), event(Free, 0, 0), event(Free, 1, 0)];
        let space = &analyze(&assignment(&[i64::MAX, i64::MAX], events), &[], None)[0];
        assert_eq!(space.peak_bytes, i64::MAX);
        let negative = vec![event(Alloc, 0, 0), event(Free, 0, 0)];
        let space = &analyze(&assignment(&[i64::MIN], negative), &[], None)[0];
        assert!(space.peak_bytes >= 0);
    }

    #[test]
    fn every_trace_of_a_colour_is_simulated() {
        // Two temporary allocations of colour 0, each with its own trace:
        // XProf simulates only the first; xmem reports the second as well.
        let mut two = assignment(&[100, 30], vec![event(Alloc, 0, 0), event(Free, 0, 0)]);
        two.logical_buffers[1].allocation = 1;
        two.allocations[0].assigned = vec![0];
        two.allocations.push(Allocation { index: 1, size: 30, assigned: vec![1], ..Default::default() });
        two.heap_traces.push(HeapTrace {
            events: vec![event(Alloc, 1, 0), event(Free, 1, 0)],
            instruction_names: vec!["f".into()].into(),
        });
        let spaces = analyze(&two, &[], None);
        assert_eq!(
            spaces.iter().map(|s| (s.trace_index, s.peak_bytes)).collect::<Vec<_>>(),
            [(Some(0), 100), (Some(1), 30)]
        );
        assert!(spaces[1].notes[0].contains("XProf shows only trace 0"));
        assert_eq!(spaces.iter().map(|s| s.shown_by_xprof).collect::<Vec<_>>(), [true, false]);
    }

    #[test]
    fn a_buffer_sharing_with_itself_stops_the_replay() {
        // Buffer 1 shares buffer 0's memory, then names itself: without a
        // check, its link to itself loops every later lookup (found by fuzzing).
        let events = vec![event(Alloc, 0, 0), event(ShareWith, 1, 0), event(ShareWith, 1, 1), event(Alloc, 1, 0)];
        let space = &analyze(&assignment(&[16, 16], events), &[], None)[0];
        assert_eq!(space.heap_simulation, TraceStatus::Broken);
        assert!(space.notes.iter().any(|n| n.contains("buffer 1 shares memory with itself") && n.contains("event 2")));
    }

    #[test]
    fn share_cycles_stop_the_replay_with_the_event() {
        let events = vec![event(Alloc, 0, 0), event(ShareWith, 1, 0), event(ShareWith, 0, 1), event(Free, 0, 0)];
        let space = &analyze(&assignment(&[16, 16], events), &[], None)[0];
        assert_eq!(space.heap_simulation, TraceStatus::Broken);
        assert!(space.notes.iter().any(|n| n.contains("buffer 0 shares memory with itself") && n.contains("event 2")));
        assert_eq!(space.heap_bytes, [0, 16, 16, 16]);
    }

    /// Buffers 1 and 2 take over buffer 0's memory one after the other, each
    /// after the previous one was freed (in-place ops on one slice of a temp
    /// allocation): XProf's live list holds the root once, shown as the
    /// latest sharer, so the buffers at the peak add up to the peak.
    #[test]
    fn a_chain_of_revivals_lists_the_memory_once_as_its_latest_sharer() {
        let events = vec![
            event(Alloc, 0, 0),
            event(Free, 0, 0),
            event(ShareWith, 1, 0),
            event(Free, 1, 0),
            event(ShareWith, 2, 1),
            event(Alloc, 3, 0),
            event(Free, 2, 0),
            event(Free, 3, 0),
        ];
        let space = &analyze(&assignment(&[64, 64, 64, 16], events), &[], None)[0];
        assert_eq!(space.heap_bytes, [0, 64, 0, 64, 0, 64, 80, 16, 0]);
        assert_eq!((space.peak_bytes, space.peak_position), (80, 5));
        let live: Vec<(i64, i64)> = space.at_peak.iter().map(|b| (b.logical_buffer_id, b.size_bytes)).collect();
        assert_eq!(live, [(2, 64), (3, 16)]);
        let spans: Vec<(i64, usize, usize)> =
            space.lifetimes.iter().map(|l| (l.logical_buffer_id, l.start, l.end)).collect();
        assert_eq!(spans, [(0, 0, 1), (1, 2, 3), (2, 4, 6), (3, 5, 7)]);
    }

    #[test]
    fn long_share_chains_resolve_to_their_root() {
        let n = 10_000;
        let mut events = vec![event(Alloc, 0, 0)];
        events.extend((1..n).map(|i| event(ShareWith, i, i - 1)));
        events.extend((0..n).rev().map(|i| event(Free, i, 0)));
        let sizes = vec![8; n as usize];
        let space = &analyze(&assignment(&sizes, events), &[], None)[0];
        assert_eq!(space.heap_simulation, TraceStatus::Simulated);
        assert_eq!((space.peak_bytes, space.heap_bytes.last().copied()), (8, Some(0)));
    }

    #[test]
    fn always_live_buffers_outside_hbm_are_listed_but_not_as_xprof_lists_them() {
        let mut host = assignment(&[100, 10], vec![event(Alloc, 1, 0), event(Free, 1, 0)]);
        for buffer in &mut host.logical_buffers {
            buffer.color = 5;
        }
        host.logical_buffers[0].allocation = 1;
        host.allocations[0].assigned = vec![1];
        host.allocations[0].color = 5;
        host.allocations.push(Allocation {
            index: 1,
            size: 100,
            color: 5,
            is_entry_computation_parameter: true,
            assigned: vec![0],
            ..Default::default()
        });
        let space = &analyze(&host, &[], None)[0];
        assert_eq!((space.color, space.peak_bytes), (5, 110));
        let listed: Vec<(i64, bool)> = space.at_peak.iter().map(|b| (b.logical_buffer_id, b.listed_by_xprof)).collect();
        assert_eq!(listed, [(0, false), (1, true)]);
        assert_eq!(space.at_peak.iter().map(|b| b.size_bytes).sum::<i64>(), space.peak_bytes);
    }

    #[test]
    fn a_trace_of_several_colours_is_replayed_per_colour() {
        let mut mixed =
            assignment(&[100, 30], vec![event(Alloc, 0, 0), event(Alloc, 1, 0), event(Free, 1, 0), event(Free, 0, 0)]);
        mixed.logical_buffers[1].color = 3;
        let spaces = analyze(&mixed, &[], None);
        let peaks: Vec<(i64, i64, usize)> =
            spaces.iter().map(|s| (s.color, s.peak_bytes, s.heap_bytes.len())).collect();
        assert_eq!(peaks, [(0, 100, 3), (3, 30, 3)]);
        assert!(spaces[1].notes.iter().any(|n| n.contains("holds buffers of 2 memory spaces")));
    }

    #[test]
    fn a_colour_of_few_events_among_many_buffers_is_replayed_the_same() {
        // Colour 0: 64 buffers, each allocated and freed (a table of states);
        // colour 5: one buffer shared by another, 3 events among 66 buffers
        // (a map of states). Both must replay as a trace of their own would.
        let mut sizes = vec![10; 64];
        sizes.extend([700, 700]);
        let mut events: Vec<HeapEvent> = (0..64).flat_map(|id| [event(Alloc, id, 0), event(Free, id, 0)]).collect();
        events.splice(10..10, [event(Alloc, 64, 0), event(ShareWith, 65, 64), event(Free, 64, 0)]);
        let mut mixed = assignment(&sizes, events);
        mixed.logical_buffers[64].color = 5;
        mixed.logical_buffers[65].color = 5;
        assert!(matches!(BufferStates::for_replay(3, 66), BufferStates::Map(_)));
        assert!(matches!(BufferStates::for_replay(128, 66), BufferStates::Table(_)));
        let spaces = analyze(&mixed, &[], None);
        let summary: Vec<(i64, i64, usize, usize)> =
            spaces.iter().map(|s| (s.color, s.peak_bytes, s.heap_bytes.len(), s.lifetimes.len())).collect();
        assert_eq!(summary, [(0, 10, 129, 64), (5, 700, 4, 1)]);
        let sharing = &spaces[1];
        let ids: Vec<i64> = sharing.at_peak.iter().map(|b| b.logical_buffer_id).collect();
        assert_eq!(ids, [64]);
        let spans: Vec<(i64, usize, usize)> =
            sharing.lifetimes.iter().map(|l| (l.logical_buffer_id, l.start, l.end)).collect();
        // The sharer joined live memory, so only the root has a span; it is
        // never released (the sharer still holds it).
        assert_eq!(spans, [(64, 0, 2)]);
    }

    #[test]
    fn scoped_vmem_is_reported_for_vmem_only() {
        let scoped = ScopedAllocation { bytes: 9_437_184, instruction: "matmul_optimized.1".into() };
        let spaces = analyze(&assignment(&[8], vec![event(Alloc, 0, 0), event(Free, 0, 0)]), &[], Some(&scoped));
        let figures: Vec<(i64, Option<i64>, Option<&str>)> = spaces
            .iter()
            .map(|s| (s.color, s.max_scoped_vmem_bytes, s.max_scoped_vmem_instruction.as_deref()))
            .collect();
        assert_eq!(figures, [(0, None, None), (1, Some(9_437_184), Some("matmul_optimized.1"))]);
    }
}

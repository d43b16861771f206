//! Replays a module's heap-simulator trace per memory space exactly as XProf
//! 2.24.2's Memory Viewer does (`hlo_proto_to_memory_visualization_utils.cc`),
//! so every figure agrees with it to the byte, and goes beyond it where it
//! fails: a trace touching several allocations is simulated with a note
//! instead of an error, every trace of a colour is simulated, and the live set
//! at the peak is found without copying it at every new maximum (XProf's copy
//! is quadratic on monotonically growing traces).

use std::collections::HashMap;
use std::sync::Arc;

use super::{sum_bytes, BufferAtPeak, Category, HeapBreakdown, Lifetime, MemorySpaceReport, TraceStatus};
use crate::id_index::IdIndex;
use crate::model::{Allocation, BufferAssignment, HeapEventKind, HeapTrace, LogicalBuffer};

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

struct Index<'a> {
    assignment: &'a BufferAssignment,
    slot_of_buffer: IdIndex,
    /// Heap trace used for each allocation slot, found from the trace's first
    /// event (the trace's own allocation index is unreliable, as XProf notes).
    trace_of_allocation: HashMap<usize, usize>,
}

impl<'a> Index<'a> {
    fn new(assignment: &'a BufferAssignment) -> Self {
        let ids: Vec<i64> = assignment.logical_buffers.iter().map(|b| b.id).collect();
        let slot_of_buffer = IdIndex::new(&ids);
        let mut trace_of_allocation = HashMap::new();
        for (trace_index, trace) in assignment.heap_traces.iter().enumerate() {
            let Some(first) = trace.events.first() else { continue };
            if let Some(buffer) =
                slot_of_buffer.get(first.buffer_id).and_then(|slot| assignment.logical_buffers.get(slot))
            {
                trace_of_allocation.insert(buffer.allocation, trace_index);
            }
        }
        Index { assignment, slot_of_buffer, trace_of_allocation }
    }

    fn buffer(&self, id: i64) -> Option<(usize, &'a LogicalBuffer)> {
        self.slot_of_buffer.get(id).and_then(|slot| self.assignment.logical_buffers.get(slot).map(|b| (slot, b)))
    }

    fn allocation_of(&self, buffer: &LogicalBuffer) -> &'a Allocation {
        &self.assignment.allocations[buffer.allocation]
    }

    /// XProf's choice: the first non-indefinite allocation of this colour that
    /// has a trace; failing that, the trace with the most events of the colour.
    fn primary_trace(&self, color: i64) -> Option<usize> {
        let by_allocation = self
            .assignment
            .allocations
            .iter()
            .enumerate()
            .filter(|(_, a)| a.color == color && !is_indefinite(a))
            .find_map(|(slot, _)| self.trace_of_allocation.get(&slot).copied());
        by_allocation.or_else(|| {
            let mut best = None;
            let mut best_count = 0;
            for (i, trace) in self.assignment.heap_traces.iter().enumerate() {
                let count = self.events_of_color(trace, color);
                if count > best_count {
                    best = Some(i);
                    best_count = count;
                }
            }
            best
        })
    }

    fn events_of_color(&self, trace: &HeapTrace, color: i64) -> usize {
        trace.events.iter().filter(|e| self.buffer(e.buffer_id).is_some_and(|(_, b)| b.color == color)).count()
    }
}

/// The reports for one memory space: the XProf-compatible one first, then
/// one per further trace that holds buffers of this colour.
/// Every memory space of a module: each colour of its buffers and
/// allocations, and each memory space `layout_memory_spaces` names.
pub fn analyze(assignment: &BufferAssignment, layout_memory_spaces: &[i64]) -> Vec<MemorySpaceReport> {
    let index = Index::new(assignment);
    colors_present(assignment, layout_memory_spaces)
        .into_iter()
        .flat_map(|color| analyze_color(&index, color))
        .collect()
}

fn analyze_color(index: &Index, color: i64) -> Vec<MemorySpaceReport> {
    let primary = index.primary_trace(color);
    let mut reports = vec![report(index, color, primary)];
    if primary.is_some() {
        for (i, trace) in index.assignment.heap_traces.iter().enumerate() {
            if Some(i) != primary && index.events_of_color(trace, color) > 0 {
                let mut extra = report(index, color, Some(i));
                extra.shown_by_xprof = false;
                extra.notes.insert(
                    0,
                    format!(
                        "trace {i} of this memory space; XProf shows only trace {} and ignores this one",
                        primary.unwrap_or(0)
                    ),
                );
                reports.push(extra);
            }
        }
    }
    reports
}

#[derive(Default)]
struct BufferState {
    ref_count: i64,
    canonical: Option<usize>,
}

/// One entry of XProf's live list: a buffer that became live.
struct Push {
    /// The buffer whose memory this is.
    slot: usize,
    /// The buffer XProf shows for it: the sharer, when a share revives a
    /// freed buffer.
    shown: usize,
    event: usize,
    /// The event that took it off the live list, if any.
    removed_at: Option<usize>,
    /// The previous push of the same slot still on the list.
    previous_open: Option<usize>,
}

struct Simulation {
    heap: Vec<i64>,
    unpadded_heap: Vec<i64>,
    instruction_at: Vec<u32>,
    peak: i64,
    peak_unpadded: i64,
    peak_position: usize,
    pushes: Vec<Push>,
    /// Per slot, its latest push still on the live list (XProf removes every
    /// entry of a buffer at once, so each slot's open pushes form a chain).
    open_push: Vec<Option<usize>>,
    states: Vec<BufferState>,
    seen_allocations: Vec<bool>,
    error: Option<String>,
}

impl Simulation {
    fn root(&self, mut slot: usize) -> usize {
        // Sharing chains are short; the bound only guards against cycles in a corrupt trace.
        for _ in 0..self.states.len() {
            match self.states[slot].canonical {
                Some(next) => slot = next,
                None => break,
            }
        }
        slot
    }

    fn increase(&mut self, index: &Index, slot: usize, shown: usize, event: usize) {
        let buffer = &index.assignment.logical_buffers[slot];
        self.pushes.push(Push { slot, shown, event, removed_at: None, previous_open: self.open_push[slot] });
        self.open_push[slot] = Some(self.pushes.len() - 1);
        let heap = self.heap_now().saturating_add(buffer.size);
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
        let mut open = self.open_push[slot].take();
        while let Some(push) = open.and_then(|p| self.pushes.get_mut(p)) {
            push.removed_at = Some(event);
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

    /// Live list at the peak in XProf's order: pushed at or before the peak
    /// event and not removed by then. Found once at the end instead of
    /// copying the list at every new maximum, which is quadratic.
    fn live_at_peak(&self) -> Vec<usize> {
        if self.peak == 0 {
            return Vec::new();
        }
        self.pushes
            .iter()
            .filter(|p| p.event <= self.peak_position && p.removed_at.is_none_or(|r| r > self.peak_position))
            .map(|p| p.shown)
            .collect()
    }
}

fn simulate(index: &Index, trace: &HeapTrace) -> Simulation {
    let n = trace.events.len();
    let mut sim = Simulation {
        heap: Vec::with_capacity(n + 1),
        unpadded_heap: Vec::with_capacity(n + 1),
        instruction_at: Vec::with_capacity(n + 1),
        peak: 0,
        peak_unpadded: 0,
        peak_position: 0,
        pushes: Vec::new(),
        open_push: vec![None; index.assignment.logical_buffers.len()],
        states: (0..index.assignment.logical_buffers.len()).map(|_| BufferState::default()).collect(),
        seen_allocations: vec![false; index.assignment.allocations.len()],
        error: None,
    };
    // heap[i] is the heap before event i; the last element is the running value.
    sim.heap.push(0);
    sim.unpadded_heap.push(0);
    for (i, event) in trace.events.iter().enumerate() {
        let (heap, unpadded) = (sim.heap_now(), sim.unpadded_now());
        sim.heap.push(heap);
        sim.unpadded_heap.push(unpadded);
        sim.instruction_at.push(event.instruction);
        let Some((slot, buffer)) = index.buffer(event.buffer_id) else { continue };
        if let Some(seen) = sim.seen_allocations.get_mut(buffer.allocation) {
            *seen = true;
        }
        let outcome = match event.kind {
            HeapEventKind::Alloc => {
                let root = sim.root(slot);
                sim.states[root].ref_count += 1;
                sim.increase(index, slot, slot, i);
                Ok(())
            }
            HeapEventKind::Free => {
                let root = sim.root(slot);
                sim.states[root].ref_count -= 1;
                match sim.states[root].ref_count {
                    rc if rc < 0 => {
                        Err(format!("buffer {} is freed more often than allocated, at event {i}", buffer.id))
                    }
                    0 => sim.decrease(index, root, i),
                    _ => Ok(()),
                }
            }
            HeapEventKind::ShareWith => match index.buffer(event.share_with_canonical_id) {
                Some((canonical, _)) if canonical != slot => {
                    sim.states[slot].canonical = Some(canonical);
                    let root = sim.root(canonical);
                    sim.states[root].ref_count += 1;
                    // Sharing with a buffer that was already freed brings it back.
                    if sim.states[root].ref_count == 1 {
                        sim.increase(index, canonical, slot, i);
                    }
                    Ok(())
                }
                _ => Ok(()),
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
fn buffer_name(buffer: &LogicalBuffer, instruction: &str) -> String {
    if buffer.shape_index.is_empty() {
        instruction.to_string()
    } else {
        let index: Vec<String> = buffer.shape_index.iter().map(i64::to_string).collect();
        format!("{instruction}{{{}}}", index.join(","))
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
    }
}

fn report(index: &Index, color: i64, trace_index: Option<usize>) -> MemorySpaceReport {
    let assignment = index.assignment;
    let allocations: Vec<&Allocation> = assignment.allocations.iter().filter(|a| a.color == color).collect();
    let mut notes = Vec::new();

    // Always-live buffers: for each indefinite allocation, its largest
    // logical buffer stands for it (XProf's choice), and the allocation's size
    // joins the baseline added to every point of the heap series.
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
            at_peak.push(buffer_at_peak(index, slot));
        }
    }
    let always_live_count = at_peak.len();
    breakdown.thread_local = sum_bytes(allocations.iter().filter(|a| a.is_thread_local).map(|a| a.size));

    let total_allocation_bytes: i64 = sum_bytes(allocations.iter().filter(|a| !a.is_thread_local).map(|a| a.size));
    let indefinite_bytes: i64 = sum_bytes(allocations.iter().filter(|a| is_indefinite(a)).map(|a| a.size));
    let temporary_allocations = allocations.iter().any(|a| !is_indefinite(a) && !a.is_thread_local && a.size > 0);

    let mut heap_bytes = Vec::new();
    let mut unpadded_heap_bytes = Vec::new();
    let mut instructions = Vec::new();
    let mut lifetimes = Vec::new();
    let (mut peak, mut peak_unpadded, mut peak_position, mut peak_instruction) = (0, 0, 0, None);
    let status = match trace_index.and_then(|i| assignment.heap_traces.get(i).map(|t| (i, t))) {
        Some((trace_number, trace)) => {
            let sim = simulate(index, trace);
            if let Some(error) = &sim.error {
                notes.push(format!("heap simulation stopped: {error}; figures cover the events before it"));
            }
            let allocations_touched = sim.seen_allocations.iter().filter(|&&seen| seen).count();
            if allocations_touched > 1 {
                notes.push(format!(
                    "heap trace {trace_number} spans {allocations_touched} buffer allocations; XProf refuses such a trace, xmem simulates it"
                ));
            }
            for slot in sim.live_at_peak() {
                at_peak.push(buffer_at_peak(index, slot));
            }
            // One box per stretch of occupied memory: from the event that made
            // a buffer live to the one that freed it, named as XProf names it
            // (the sharer, when a share revived a freed buffer).
            let last_event = trace.events.len().saturating_sub(1);
            for push in &sim.pushes {
                let memory = &assignment.logical_buffers[push.slot];
                let shown = &assignment.logical_buffers[push.shown];
                let instruction = assignment.instructions.get(shown.instruction).map_or("", |i| i.name.as_str());
                lifetimes.push(Lifetime {
                    logical_buffer_id: shown.id,
                    instruction: buffer_name(shown, instruction),
                    start: push.event,
                    end: push.removed_at.unwrap_or(last_event),
                    offset: memory.offset,
                    size_bytes: memory.size,
                    freed: push.removed_at.is_some(),
                    category: category(index.allocation_of(memory)),
                });
            }
            peak = sim.peak;
            peak_unpadded = sim.peak_unpadded;
            peak_position = sim.peak_position;
            peak_instruction =
                sim.instruction_at.get(peak_position).and_then(|&i| trace.instruction_names.get(i as usize)).cloned();
            heap_bytes = sim.heap.iter().map(|h| h.saturating_add(baseline)).collect();
            unpadded_heap_bytes = sim.unpadded_heap.iter().map(|h| h.saturating_add(baseline)).collect();
            // One shared string per distinct name: a million events must not
            // mean a million string copies.
            let names: Vec<Arc<str>> = trace.instruction_names.iter().map(|n| Arc::from(n.as_str())).collect();
            let no_name: Arc<str> = Arc::from("");
            instructions =
                sim.instruction_at.iter().map(|&i| names.get(i as usize).unwrap_or(&no_name).clone()).collect();
            if sim.error.is_some() {
                TraceStatus::Broken
            } else {
                TraceStatus::Simulated
            }
        }
        None if temporary_allocations => {
            notes.push(
                "no heap-simulator trace for this memory space: the peak counts only always-live buffers \
                 (parameters, outputs, constants), not temporaries. TensorFlow's profiler stores such protos; \
                 dump the module with XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_proto\" and pass DIR for the full picture"
                    .to_string(),
            );
            TraceStatus::Missing
        }
        None => TraceStatus::NotNeeded,
    };
    breakdown.temporaries = peak;

    let peak_bytes = peak.saturating_add(baseline);
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
        always_live_count,
        lifetimes,
        notes,
        attribution: Default::default(),
    }
}

/// Buffers by logical buffer id, described as [`BufferAtPeak`]s; ids the
/// assignment does not hold are left out.
pub fn describe(assignment: &BufferAssignment, ids: &[i64]) -> Vec<BufferAtPeak> {
    let index = Index::new(assignment);
    ids.iter().filter_map(|&id| index.buffer(id)).map(|(slot, _)| buffer_at_peak(&index, slot)).collect()
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

    fn event(kind: HeapEventKind, buffer_id: i64, share_with_canonical_id: i64) -> HeapEvent {
        HeapEvent { kind, buffer_id, share_with_canonical_id, instruction: 0 }
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
            heap_traces: vec![HeapTrace { events, instruction_names: vec!["fusion".into()] }],
        }
    }

    use HeapEventKind::{Alloc, Free, ShareWith, Unknown};

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
        let space = &analyze(&assignment(&[100, 50, 50], events), &[])[0];
        assert_eq!(space.peak_bytes, 150);
        assert_eq!(space.peak_position, 1);
        assert_eq!(space.heap_bytes, [0, 100, 150, 100, 150, 50, 0]);
        let live: Vec<i64> = space.at_peak.iter().map(|b| b.logical_buffer_id).collect();
        assert_eq!(live, [0, 1]);
    }

    #[test]
    fn sharing_a_freed_buffer_revives_it_and_shows_the_sharer() {
        let events = vec![event(Alloc, 0, 0), event(Free, 0, 0), event(ShareWith, 1, 0), event(Free, 1, 0)];
        let space = &analyze(&assignment(&[64, 64], events), &[])[0];
        assert_eq!(space.heap_bytes, [0, 64, 0, 64, 0]);
        assert_eq!(space.peak_position, 0);
        assert_eq!(space.at_peak.iter().map(|b| b.logical_buffer_id).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn a_free_without_alloc_stops_with_the_event_index() {
        let events = vec![event(Alloc, 0, 0), event(Free, 1, 0), event(Alloc, 1, 0)];
        let space = &analyze(&assignment(&[10, 20], events), &[])[0];
        assert_eq!(space.heap_simulation, TraceStatus::Broken);
        assert!(space.notes.iter().any(|n| n.contains("buffer 1") && n.contains("event 1")), "{:?}", space.notes);
        assert_eq!(space.peak_bytes, 10);
    }

    #[test]
    fn unknown_kinds_and_dangling_ids_are_reported_not_fatal() {
        let events = vec![event(Alloc, 0, 0), event(Alloc, 99, 0), event(ShareWith, 0, 77), event(Unknown(7), 0, 0)];
        let space = &analyze(&assignment(&[8], events), &[])[0];
        assert_eq!(space.heap_simulation, TraceStatus::Broken);
        assert!(space.notes.iter().any(|n| n.contains("unknown heap event kind 7 at event 3")), "{:?}", space.notes);
        assert_eq!(space.peak_bytes, 8);
    }

    #[test]
    fn absurd_sizes_saturate_instead_of_overflowing() {
        let events = vec![event(Alloc, 0, 0), event(Alloc, 1, 0), event(Free, 0, 0), event(Free, 1, 0)];
        let space = &analyze(&assignment(&[i64::MAX, i64::MAX], events), &[])[0];
        assert_eq!(space.peak_bytes, i64::MAX);
        let negative = vec![event(Alloc, 0, 0), event(Free, 0, 0)];
        let space = &analyze(&assignment(&[i64::MIN], negative), &[])[0];
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
            instruction_names: vec!["f".into()],
        });
        let spaces = analyze(&two, &[]);
        assert_eq!(
            spaces.iter().map(|s| (s.trace_index, s.peak_bytes)).collect::<Vec<_>>(),
            [(Some(0), 100), (Some(1), 30)]
        );
        assert!(spaces[1].notes[0].contains("XProf shows only trace 0"));
        assert_eq!(spaces.iter().map(|s| s.shown_by_xprof).collect::<Vec<_>>(), [true, false]);
    }

    #[test]
    fn share_cycles_terminate() {
        let events = vec![event(Alloc, 0, 0), event(ShareWith, 1, 0), event(ShareWith, 0, 1), event(Free, 0, 0)];
        let space = &analyze(&assignment(&[16, 16], events), &[])[0];
        assert_eq!(space.heap_bytes.len(), 5);
    }
}

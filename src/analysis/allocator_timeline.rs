//! Allocator timelines: what an allocator actually held over time, from its
//! allocation and deallocation events, with the peak, and everything live at
//! the peak attributed to the allocation that made it.
//!
//! Two views are computed. xmem's own orders events by absolute time and
//! attributes the heap at the peak across the whole capture. XProf's Memory
//! Profile (`xplane_to_memory_profile.cc`) is reproduced beside it, quirks
//! included, so its figures can be compared with the UI: it takes its summary
//! in the order threads are stored, times events by their offset within their
//! thread, and breaks the peak down over the peak step only.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde::Serialize;

use super::allocation_owner::{is_recorded_op, Owner, Programs};
use crate::model::{Allocator, AllocatorEvent, AllocatorEventKind};
use crate::units::{human_bytes, milliseconds};

/// What XProf calls the heap at the peak it cannot find an allocation for
/// in the peak step: memory allocated before that step.
pub const XPROF_UNMAPPED_OP: &str = "unused preallocated device memory";
const XPROF_STACK_OP: &str = "stack";
/// What a row without an op or owner says (XProf leaves the cell blank).
pub const NO_OP_RECORDED: &str = "(no op recorded)";

/// How many snapshots XProf's UI keeps; its allocation counts cover only those.
const XPROF_MAX_SNAPSHOTS: usize = 1000;

#[derive(Debug, Clone, Serialize)]
pub struct AllocatorReport {
    pub name: String,
    pub host: String,
    /// Heap plus stack at the peak.
    pub peak_bytes: i64,
    /// Absolute time of the event that reached the peak (the last such event
    /// when the peak was reached more than once, as in XProf).
    pub peak_time_ps: i64,
    /// Heap, stack and free bytes together at the peak: the allocator's limit.
    pub capacity_bytes: i64,
    /// The allocator's own high-water mark, which may predate the capture.
    pub lifetime_peak_bytes: i64,
    pub fragmentation_at_peak: f64,
    pub num_allocations: u64,
    pub num_deallocations: u64,
    /// Heap at the peak that no allocation in the capture accounts for: it
    /// was allocated before the capture started.
    pub unattributed_at_peak_bytes: i64,
    /// Allocations live at the peak, equal ones merged, largest first.
    pub at_peak: Vec<AllocationRow>,
    pub peak_heap_bytes: i64,
    pub peak_stack_bytes: i64,
    pub peak_free_bytes: i64,
    /// The step of the peak event, when the profile has steps.
    pub peak_step: Option<i64>,
    /// The peak of every step, in step order; empty when the profile has none.
    pub steps: Vec<StepPeak>,
    pub timeline: Timeline,
    /// XProf's summary card, figure by figure.
    pub xprof_summary: XprofSummary,
    /// XProf's memory breakdown table: the allocations of the peak step only.
    pub xprof_peak_step: XprofPeakStep,
    /// Where xmem's figures differ from XProf's, one line each.
    pub notes: Vec<String>,
    /// What in the allocator's events cannot be true; when not empty, the
    /// figures above are computed from them but are not sound.
    pub inconsistencies: Vec<String>,
    /// Every allocation with the stretch of the timeline it was live, when asked for.
    #[serde(skip)]
    pub intervals: Option<Box<AllocationIntervals>>,
}

/// Every allocation of the capture and when it was live, so that what was
/// live at any point of the timeline can be shown as [`AllocatorReport::at_peak`]
/// shows the peak: after the event at position `p` of [`Timeline`] (time
/// order), the allocations whose interval covers `p` are live, and the heap
/// they leave unexplained was allocated before the capture.
#[derive(Debug, Clone, Default)]
pub struct AllocationIntervals {
    /// In the order of their allocation events.
    pub allocations: Vec<LiveAllocation>,
    /// The position of the peak event in time order.
    pub peak_position: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct LiveAllocation {
    /// The allocation, as one row of `at_peak` (`occurrences` 1).
    pub row: AllocationRow,
    /// [`AllocationRow::made_by`], said once here for the pages that show it.
    pub made_by: String,
    /// Live after the events from position `from` up to, not including,
    /// `until`: its deallocation, a newer allocation at its address, or the end.
    pub from: usize,
    pub until: usize,
}

impl AllocationIntervals {
    /// Replays every event in time order as [`attribute_live`] replays those up to the peak.
    fn of(allocator: &Allocator, programs: &Programs, order: &[usize], peak_position: Option<usize>) -> Self {
        let events = &allocator.events;
        let mut allocations: Vec<LiveAllocation> = Vec::new();
        let mut live: HashMap<u64, usize> = HashMap::new();
        for (position, &i) in order.iter().enumerate() {
            let event = &events[i];
            let ended = match event.kind {
                AllocatorEventKind::Allocation => {
                    let row = row(allocator, event, Some(programs.owner(allocator, event)));
                    let made_by = row.made_by();
                    allocations.push(LiveAllocation { row, made_by, from: position, until: order.len() });
                    live.insert(event.address, allocations.len() - 1)
                }
                AllocatorEventKind::Deallocation => live.remove(&event.address),
            };
            if let Some(allocation) = ended.and_then(|a| allocations.get_mut(a)) {
                allocation.until = position;
            }
        }
        AllocationIntervals { allocations, peak_position }
    }

    /// The allocations live after the event at `position` (time order).
    pub fn live_at(&self, position: usize) -> impl Iterator<Item = &LiveAllocation> {
        self.allocations.iter().filter(move |a| a.from <= position && position < a.until)
    }
}

impl AllocatorReport {
    /// `vm/GPU_0_bfc`: allocators are per host.
    pub fn display_name(&self) -> String {
        format!("{}/{}", self.host, self.name)
    }

    /// The `top` largest rows live at the peak, and what the others add up to.
    pub fn largest_rows(&self, top: usize) -> RowTable<'_> {
        let rest = self.at_peak.get(top..).unwrap_or_default();
        RowTable {
            allocations: self.at_peak.iter().map(|r| r.occurrences).sum(),
            rows: self.at_peak.iter().take(top).collect(),
            rest_count: rest.len(),
            rest_bytes: rest.iter().map(AllocationRow::total_bytes).fold(0, i64::saturating_add),
        }
    }
}

/// Rows at the peak as a table shows them.
#[derive(Debug)]
pub struct RowTable<'a> {
    /// Allocations in all rows, shown or not.
    pub allocations: u64,
    pub rows: Vec<&'a AllocationRow>,
    pub rest_count: usize,
    pub rest_bytes: i64,
}

/// Equal allocations (same op, sizes, region, data type, shape and owner), counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocationRow {
    pub op_name: String,
    /// The size of one allocation: the chunk the allocator handed out.
    pub allocation_bytes: i64,
    pub requested_bytes: i64,
    pub occurrences: u64,
    pub region_type: String,
    pub data_type: String,
    pub shape: String,
    /// What made the allocations (`program`, `attribution`, `made_in` in
    /// JSON); `None` in XProf's own rows, which do not say.
    #[serde(flatten)]
    pub owner: Option<Owner>,
}

impl AllocationRow {
    pub fn total_bytes(&self) -> i64 {
        self.allocation_bytes.saturating_mul(self.occurrences as i64)
    }

    /// What made the allocations, in words: the op the allocator recorded,
    /// the program that was running (and which of its buffers they are), or
    /// what the thread did outside any program.
    pub fn made_by(&self) -> String {
        let label = self.owner.as_ref().and_then(Owner::label);
        match (is_recorded_op(&self.op_name), label) {
            (true, Some(label)) => format!("{} ({label})", self.op_name),
            (true, None) => self.op_name.clone(),
            (false, Some(label)) => label,
            (false, None) => NO_OP_RECORDED.to_string(),
        }
    }

    /// The data type the allocator recorded; empty where it recorded none
    /// (JAX: XProf shows its data type 0, `INVALID`).
    pub fn recorded_data_type(&self) -> &str {
        if self.data_type == "INVALID" {
            ""
        } else {
            &self.data_type
        }
    }

    /// The data type and shape the allocator recorded, if it did.
    pub fn type_and_shape(&self) -> Option<String> {
        let recorded: Vec<&str> =
            [self.recorded_data_type(), self.shape.as_str()].into_iter().filter(|s| !s.is_empty()).collect();
        (!recorded.is_empty()).then(|| recorded.join(" "))
    }

    /// XProf's table order: larger allocations first, then by name and kind.
    fn xprof_order(&self, other: &Self) -> Ordering {
        other
            .allocation_bytes
            .cmp(&self.allocation_bytes)
            .then(other.requested_bytes.cmp(&self.requested_bytes))
            .then_with(|| self.op_name.cmp(&other.op_name))
            .then_with(|| self.region_type.cmp(&other.region_type))
            .then_with(|| self.data_type.cmp(&other.data_type))
            .then_with(|| self.shape.cmp(&other.shape))
            .then_with(|| self.owner.cmp(&other.owner))
    }

    fn same_allocation(&self, other: &Self) -> bool {
        self.xprof_order(other) == Ordering::Equal
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct StepPeak {
    pub step: i64,
    /// When the step's first event happened: where a chart marks its start.
    pub first_time_ps: i64,
    pub peak_bytes: i64,
    pub peak_time_ps: i64,
    pub num_events: u64,
}

/// The allocator's state after each event, in time order.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    pub time_ps: Vec<i64>,
    pub heap_bytes: Vec<i64>,
    pub stack_bytes: Vec<i64>,
    pub free_bytes: Vec<i64>,
    pub fragmentation: Vec<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct XprofSummary {
    /// XProf's "Lifetime Peak Heap Usage": the high-water mark reported by
    /// the last event it read, in thread order, not in time order.
    pub peak_bytes_usage_lifetime: i64,
    pub peak_bytes: i64,
    pub peak_heap_bytes: i64,
    pub peak_stack_bytes: i64,
    pub peak_free_bytes: i64,
    pub fragmentation_at_peak: f64,
    /// The peak event's offset within its thread, which XProf uses as its time.
    pub peak_time_ps: i64,
    pub capacity_bytes: i64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct XprofPeakStep {
    pub step: i64,
    /// XProf's rows, including its "unused preallocated device memory" and
    /// "stack" rows.
    pub rows: Vec<AllocationRow>,
    /// The bytes of its "unused preallocated device memory" row.
    pub unmapped_bytes: i64,
}

fn in_use(event: &AllocatorEvent) -> i64 {
    event.heap_allocated_bytes.saturating_add(event.stack_reserved_bytes)
}

/// XProf's step ids: an event outside every step gets the step after the
/// last one seen (0 before the first).
fn fill_steps(events: &[AllocatorEvent], order: &[usize]) -> Vec<i64> {
    let mut last_valid = -1i64;
    order
        .iter()
        .map(|&i| match events[i].step {
            Some(step) => {
                last_valid = step;
                step
            }
            None => last_valid.saturating_add(1),
        })
        .collect()
}

/// The last position in `order` where heap plus stack is largest.
fn last_maximum(events: &[AllocatorEvent], order: &[usize]) -> Option<usize> {
    let mut best: Option<(usize, i64)> = None;
    for (position, &i) in order.iter().enumerate() {
        let bytes = in_use(&events[i]);
        if best.is_none_or(|(_, peak)| bytes >= peak) {
            best = Some((position, bytes));
        }
    }
    best.map(|(position, _)| position)
}

fn row(allocator: &Allocator, event: &AllocatorEvent, owner: Option<Owner>) -> AllocationRow {
    AllocationRow {
        op_name: allocator.string(event.op_name).to_string(),
        allocation_bytes: event.allocation_bytes,
        requested_bytes: event.requested_bytes,
        occurrences: 1,
        region_type: allocator.string(event.region_type).to_string(),
        data_type: allocator.string(event.data_type).to_string(),
        shape: allocator.string(event.shape).to_string(),
        owner,
    }
}

/// Sorts rows as XProf does and merges equal neighbours into one with a count.
fn merge_rows(mut rows: Vec<AllocationRow>) -> Vec<AllocationRow> {
    rows.sort_by(AllocationRow::xprof_order);
    let mut merged: Vec<AllocationRow> = Vec::with_capacity(rows.len());
    for row in rows {
        match merged.last_mut() {
            Some(last) if last.same_allocation(&row) => last.occurrences += 1,
            _ => merged.push(row),
        }
    }
    merged
}

/// A row XProf adds for bytes it has no allocation for.
fn special_row(op_name: &str, region_type: &str, bytes: i64) -> AllocationRow {
    AllocationRow {
        op_name: op_name.to_string(),
        allocation_bytes: bytes,
        requested_bytes: bytes,
        occurrences: 1,
        region_type: region_type.to_string(),
        data_type: "INVALID".to_string(),
        shape: "unknown".to_string(),
        owner: None,
    }
}

/// The allocator's report; `programs` are the modules of the allocator's
/// capture, which tell what made each allocation; with `intervals`, every
/// allocation's live interval too.
pub fn analyze_allocator(allocator: &Allocator, programs: &Programs, intervals: bool) -> AllocatorReport {
    let events = &allocator.events;
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| events[i].time_ps);
    let steps = fill_steps(events, &order);
    let peak_position = last_maximum(events, &order);
    let peak = peak_position.and_then(|p| order.get(p)).map(|&i| events[i]);

    let (at_peak, unattributed) = match peak_position {
        Some(position) => {
            attribute_live(allocator, programs, &order[..=position], peak.map_or(0, |e| e.heap_allocated_bytes))
        }
        None => (Vec::new(), 0),
    };
    let timeline = Timeline {
        time_ps: order.iter().map(|&i| events[i].time_ps).collect(),
        heap_bytes: order.iter().map(|&i| events[i].heap_allocated_bytes).collect(),
        stack_bytes: order.iter().map(|&i| events[i].stack_reserved_bytes).collect(),
        free_bytes: order.iter().map(|&i| events[i].free_memory_bytes).collect(),
        fragmentation: order.iter().map(|&i| events[i].fragmentation).collect(),
    };
    let has_steps = events.iter().any(|e| e.step.is_some());
    let (xprof_summary, xprof_peak_step) = xprof_memory_profile(allocator);
    let mut report = AllocatorReport {
        name: allocator.name.clone(),
        host: allocator.host.clone(),
        peak_bytes: peak.map_or(0, |e| in_use(&e)),
        peak_time_ps: peak.map_or(0, |e| e.time_ps),
        capacity_bytes: peak.map_or(0, |e| in_use(&e).saturating_add(e.free_memory_bytes)),
        lifetime_peak_bytes: events.iter().map(|e| e.peak_bytes_in_use).max().unwrap_or(0),
        fragmentation_at_peak: peak.map_or(0.0, |e| e.fragmentation),
        num_allocations: events.iter().filter(|e| e.kind == AllocatorEventKind::Allocation).count() as u64,
        num_deallocations: events.iter().filter(|e| e.kind == AllocatorEventKind::Deallocation).count() as u64,
        unattributed_at_peak_bytes: unattributed,
        at_peak,
        peak_heap_bytes: peak.map_or(0, |e| e.heap_allocated_bytes),
        peak_stack_bytes: peak.map_or(0, |e| e.stack_reserved_bytes),
        peak_free_bytes: peak.map_or(0, |e| e.free_memory_bytes),
        peak_step: peak_position.filter(|_| has_steps).and_then(|p| steps.get(p).copied()),
        steps: if has_steps { step_peaks(events, &order, &steps) } else { Vec::new() },
        timeline,
        xprof_summary,
        xprof_peak_step,
        notes: Vec::new(),
        inconsistencies: allocator.inconsistencies.clone(),
        intervals: intervals.then(|| Box::new(AllocationIntervals::of(allocator, programs, &order, peak_position))),
    };
    report.notes = differences(&report, events.len());
    report
}

/// Replays `replay` (time order, up to the peak) and returns the allocations
/// still live, as rows, and the heap they leave unexplained.
fn attribute_live(
    allocator: &Allocator,
    programs: &Programs,
    replay: &[usize],
    heap_at_peak: i64,
) -> (Vec<AllocationRow>, i64) {
    let events = &allocator.events;
    // An allocation at a live address means the free in between was not
    // recorded; the newer allocation replaces the older, as in XProf.
    let mut live: HashMap<u64, usize> = HashMap::new();
    for &i in replay {
        let event = &events[i];
        match event.kind {
            AllocatorEventKind::Allocation => {
                live.insert(event.address, i);
            }
            AllocatorEventKind::Deallocation => {
                live.remove(&event.address);
            }
        }
    }
    let attributed: i64 = live.values().map(|&i| events[i].allocation_bytes).fold(0, i64::saturating_add);
    let rows =
        live.values().map(|&i| row(allocator, &events[i], Some(programs.owner(allocator, &events[i])))).collect();
    (merge_rows(rows), heap_at_peak.saturating_sub(attributed))
}

fn step_peaks(events: &[AllocatorEvent], order: &[usize], steps: &[i64]) -> Vec<StepPeak> {
    let mut peaks: Vec<StepPeak> = Vec::new();
    let mut by_step: HashMap<i64, usize> = HashMap::new();
    for (&i, &step) in order.iter().zip(steps) {
        let event = &events[i];
        let slot = *by_step.entry(step).or_insert_with(|| {
            peaks.push(StepPeak {
                step,
                first_time_ps: event.time_ps,
                peak_bytes: in_use(event),
                peak_time_ps: event.time_ps,
                num_events: 0,
            });
            peaks.len() - 1
        });
        let peak = &mut peaks[slot];
        peak.num_events += 1;
        peak.first_time_ps = peak.first_time_ps.min(event.time_ps);
        if in_use(event) >= peak.peak_bytes {
            peak.peak_bytes = in_use(event);
            peak.peak_time_ps = event.time_ps;
        }
    }
    peaks.sort_by_key(|p| p.step);
    peaks
}

/// XProf's `ConvertXPlaneToMemoryProfile` for one allocator: its summary and
/// its breakdown of the peak step.
fn xprof_memory_profile(allocator: &Allocator) -> (XprofSummary, XprofPeakStep) {
    let events = &allocator.events;
    let mut summary = XprofSummary::default();
    // The summary follows the events as stored, thread after thread.
    for event in events {
        summary.peak_bytes_usage_lifetime = event.peak_bytes_in_use;
        if in_use(event) >= summary.peak_bytes {
            summary = XprofSummary {
                peak_bytes_usage_lifetime: event.peak_bytes_in_use,
                peak_bytes: in_use(event),
                peak_heap_bytes: event.heap_allocated_bytes,
                peak_stack_bytes: event.stack_reserved_bytes,
                peak_free_bytes: event.free_memory_bytes,
                fragmentation_at_peak: event.fragmentation,
                peak_time_ps: event.thread_offset_ps,
                capacity_bytes: in_use(event).saturating_add(event.free_memory_bytes),
            };
        }
    }
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| events[i].thread_offset_ps);
    let steps = fill_steps(events, &order);
    let peak_step = order
        .iter()
        .zip(&steps)
        .filter(|(&i, _)| in_use(&events[i]) == summary.peak_bytes)
        .map(|(_, &step)| step)
        .next_back()
        .unwrap_or(0);

    let mut unmapped = summary.peak_heap_bytes;
    let mut unmapped_deallocations = 0i64;
    let mut live: HashMap<u64, usize> = HashMap::new();
    for (&i, &step) in order.iter().zip(&steps) {
        let event = &events[i];
        if event.thread_offset_ps > summary.peak_time_ps {
            break;
        }
        if step != peak_step {
            continue;
        }
        match event.kind {
            AllocatorEventKind::Allocation => {
                live.insert(event.address, i);
                unmapped = unmapped.saturating_sub(event.allocation_bytes);
            }
            AllocatorEventKind::Deallocation => {
                if live.remove(&event.address).is_none() {
                    unmapped_deallocations = unmapped_deallocations.saturating_add(event.allocation_bytes);
                }
                unmapped = unmapped.saturating_add(event.allocation_bytes);
            }
        }
    }
    unmapped = unmapped.saturating_sub(unmapped_deallocations);
    let mut rows: Vec<AllocationRow> = live.values().map(|&i| row(allocator, &events[i], None)).collect();
    if unmapped > 0 {
        rows.push(special_row(XPROF_UNMAPPED_OP, "persist/dynamic", unmapped));
    }
    if summary.peak_stack_bytes > 0 {
        rows.push(special_row(XPROF_STACK_OP, "stack", summary.peak_stack_bytes));
    }
    let peak_step = XprofPeakStep { step: peak_step, rows: merge_rows(rows), unmapped_bytes: unmapped.max(0) };
    (summary, peak_step)
}

/// One line for each place where xmem and XProf disagree on this allocator.
fn differences(report: &AllocatorReport, events: usize) -> Vec<String> {
    let xprof = &report.xprof_summary;
    let mut notes = Vec::new();
    let same_peak = xprof.peak_bytes == report.peak_bytes
        && xprof.peak_heap_bytes == report.peak_heap_bytes
        && xprof.peak_free_bytes == report.peak_free_bytes
        && xprof.fragmentation_at_peak == report.fragmentation_at_peak;
    if !same_peak {
        notes.push(format!(
            "XProf takes the peak in the order threads are stored ({} in use, {:.1}% fragmentation); \
             in time order it is {} with {:.1}% fragmentation",
            human_bytes(xprof.peak_bytes.max(0) as u64),
            xprof.fragmentation_at_peak * 100.0,
            human_bytes(report.peak_bytes.max(0) as u64),
            report.fragmentation_at_peak * 100.0
        ));
    }
    if xprof.peak_time_ps != report.peak_time_ps {
        notes.push(format!(
            "times are absolute; XProf times each event from the start of its thread and puts the peak at {}",
            milliseconds(xprof.peak_time_ps)
        ));
    }
    if xprof.peak_bytes_usage_lifetime != report.lifetime_peak_bytes {
        notes.push(format!(
            "XProf shows a lifetime peak of {} (the last event it read); the allocator's high-water mark is {}",
            human_bytes(xprof.peak_bytes_usage_lifetime.max(0) as u64),
            human_bytes(report.lifetime_peak_bytes.max(0) as u64)
        ));
    }
    let step = &report.xprof_peak_step;
    if step.unmapped_bytes > 0 {
        notes.push(format!(
            "XProf's breakdown covers step {} only and calls {} \"{XPROF_UNMAPPED_OP}\"; here every allocation of \
             the capture is counted and only {} predates it",
            step.step,
            human_bytes(step.unmapped_bytes as u64),
            human_bytes(report.unattributed_at_peak_bytes.max(0) as u64)
        ));
    }
    if events > XPROF_MAX_SNAPSHOTS {
        notes.push(format!(
            "XProf's UI counts allocations over {XPROF_MAX_SNAPSHOTS} sampled events; these counts cover all {events}"
        ));
    }
    if report.unattributed_at_peak_bytes < 0 {
        notes.push(format!(
            "the events account for {} more than the allocator reports in use: some frees were not recorded",
            human_bytes(report.unattributed_at_peak_bytes.unsigned_abs())
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_intervals_live_at_the_peak_are_the_allocations_at_the_peak() {
        for workload in ["tf_keras_fit", "tf_keras_xla", "gpu_mlp_adam"] {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles").join(workload);
            let capture = crate::ingest::load(&root.join("profile"), &Default::default()).unwrap();
            let programs = Programs::of(&capture.modules);
            for allocator in &capture.allocators {
                let report = analyze_allocator(allocator, &programs, true);
                let intervals = report.intervals.as_deref().unwrap();
                let peak = intervals.peak_position.unwrap();
                assert_eq!(report.timeline.time_ps[peak], report.peak_time_ps);
                let live: Vec<AllocationRow> = intervals.live_at(peak).map(|a| a.row.clone()).collect();
                let attributed = live.iter().map(|r| r.allocation_bytes).sum::<i64>();
                assert_eq!(merge_rows(live), report.at_peak, "{workload} {}", allocator.name);
                assert_eq!(report.peak_heap_bytes - attributed, report.unattributed_at_peak_bytes);
                let allocations = intervals.allocations.len() as u64;
                assert_eq!(allocations, report.num_allocations, "one interval per allocation");
            }
        }
    }
}

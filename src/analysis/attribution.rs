//! Who owns the memory at a point of a module's program order: the live set
//! grouped by source line, by op-name scope and by category; the live set at
//! any event (`--at`); and the distinct peaks of a module (`--peaks`).

use std::collections::HashMap;

use serde::Serialize;

use super::device_memory::DeviceMemoryReport;
use super::heap_simulation;
use super::{AllocatorReport, BufferAtPeak, MemorySpaceReport};
use crate::model::BufferAssignment;

/// The key of buffers whose instruction names no source line.
pub const NO_SOURCE: &str = "(no source)";
/// The key of buffers whose instruction has no op name.
pub const NO_OP_NAME: &str = "(no op name)";

/// What the user asked for beyond the peak: how deep op-name scopes go,
/// which program point to show, how many peaks.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep this many `/`-separated components of an op name; all when `None`.
    pub op_name_depth: Option<usize>,
    pub at: Option<ProgramPoint>,
    pub peaks: Option<PeakSearch>,
    /// Keep the live set at every point as [`LiveIntervals`] (and each
    /// allocator's as [`AllocationIntervals`](super::allocator_timeline::AllocationIntervals)),
    /// for a page that lets its reader move along the timeline.
    pub intervals: bool,
}

/// `--at EVENT|INSTRUCTION`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgramPoint {
    /// A heap-simulator event index, as in `peak_position`.
    Event(usize),
    /// The event of this instruction where the heap is highest (the first such).
    Instruction(String),
}

impl ProgramPoint {
    /// A number is an event index; anything else names an instruction.
    pub fn parse(text: &str) -> Self {
        match text.parse::<usize>() {
            Ok(event) => ProgramPoint::Event(event),
            Err(_) => ProgramPoint::Instruction(text.to_string()),
        }
    }
}

/// `--peaks N --peak-drop PCT`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakSearch {
    pub count: usize,
    /// Two maxima are distinct when the heap falls between them by at least
    /// this share of the earlier one.
    pub drop: f64,
}

/// Bytes and buffer count under one key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    pub key: String,
    pub bytes: i64,
    pub count: usize,
}

/// One live set three ways; each list sums to the live bytes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Groups {
    pub by_source: Vec<Group>,
    pub by_op_name: Vec<Group>,
    pub by_category: Vec<Group>,
}

impl Groups {
    pub fn of(buffers: &[BufferAtPeak], op_name_depth: Option<usize>) -> Self {
        Groups {
            by_source: group_by(buffers.iter().map(|b| (b.source.as_deref().unwrap_or(NO_SOURCE), b.size_bytes, 1))),
            by_op_name: group_by(buffers.iter().map(|b| (op_name_scope(&b.op_name, op_name_depth), b.size_bytes, 1))),
            by_category: group_by(buffers.iter().map(|b| (b.category.label(), b.size_bytes, 1))),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_source.is_empty()
    }
}

/// Sums bytes and counts per key; largest first, then by key so equal
/// groups keep one order.
pub fn group_by<'a>(items: impl Iterator<Item = (&'a str, i64, usize)>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut slot_of: HashMap<&'a str, usize> = HashMap::new();
    for (key, bytes, count) in items {
        let slot = *slot_of.entry(key).or_insert_with(|| {
            groups.push(Group { key: key.to_string(), bytes: 0, count: 0 });
            groups.len() - 1
        });
        let group = &mut groups[slot];
        group.bytes = group.bytes.saturating_add(bytes);
        group.count = group.count.saturating_add(count);
    }
    groups.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
    groups.shrink_to_fit();
    groups
}

/// The first `depth` components of an op name: `jit(step)/jvp(model)/dot_general`
/// at depth 2 is `jit(step)/jvp(model)`. A `/` inside brackets (`jit(a/b)`)
/// does not split.
pub fn op_name_scope(op_name: &str, depth: Option<usize>) -> &str {
    if op_name.is_empty() {
        return NO_OP_NAME;
    }
    let Some(depth) = depth else { return op_name };
    let mut nesting = 0i32;
    let mut components = 0;
    for (i, c) in op_name.char_indices() {
        match c {
            '(' | '[' | '{' => nesting += 1,
            ')' | ']' | '}' => nesting -= 1,
            '/' if nesting <= 0 => {
                components += 1;
                if components >= depth.max(1) {
                    return &op_name[..i];
                }
            }
            _ => {}
        }
    }
    op_name
}

/// The components of an op name, outermost first, split as [`op_name_scope`] splits.
pub fn op_name_components(op_name: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = op_name;
    while !rest.is_empty() {
        let scope = op_name_scope(rest, Some(1));
        parts.push(scope);
        rest = rest.get(scope.len() + 1..).unwrap_or("");
    }
    parts
}

/// The live set at one point of program order.
#[derive(Debug, Clone, Serialize)]
pub struct LiveSet {
    /// Heap-simulator event index: the live set is the one after this event.
    pub position: usize,
    pub instruction: Option<String>,
    pub heap_bytes: i64,
    pub unpadded_heap_bytes: i64,
    /// Always-live buffers first, then temporaries in program order.
    pub buffers: Vec<BufferAtPeak>,
    pub groups: Groups,
}

/// Everything xmem adds to a memory space about who owns its memory.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Attribution {
    /// `at_peak` grouped by source line, op name and category (design.md).
    pub at_peak_groups: Groups,
    /// The live set at `--at`, when asked for and the point exists. Boxed,
    /// as is the padding hint: a module can have a memory space per buffer,
    /// and most have neither.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Box<LiveSet>>,
    /// The distinct peaks `--peaks` asked for, largest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub peaks: Vec<LiveSet>,
    /// Buffers with the most layout padding, when padding is a large part of the peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub padding: Option<Box<super::hints::PaddingHint>>,
    /// The live set at every point, when [`Options::intervals`] asked for it.
    #[serde(skip)]
    pub intervals: Option<Box<LiveIntervals>>,
}

/// The live set at every point of a memory space's program order, in a size
/// that grows with its buffers, not with events × buffers: the always-live
/// buffers, then one interval per entry of XProf's live list. The live set
/// after event `i` is the always-live buffers, then the buffer of every
/// interval that covers `i`, in order: [`live_set`] at `i`, buffer for buffer.
#[derive(Debug, Clone, Default)]
pub struct LiveIntervals {
    /// Every buffer an interval names, once; the always-live ones first.
    pub buffers: Vec<BufferAtPeak>,
    /// How many of `buffers` are live at every point.
    pub always_live: usize,
    pub intervals: Vec<LiveInterval>,
}

/// `buffers[buffer]` is live after every event from `from` up to, not
/// including, `until` (the number of events when it is never freed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveInterval {
    pub buffer: usize,
    pub from: usize,
    pub until: usize,
}

impl LiveIntervals {
    fn of(space: &MemorySpaceReport, assignment: &BufferAssignment) -> Self {
        let events = space.heap_bytes.len().saturating_sub(1);
        let always_live: Vec<BufferAtPeak> = space.at_peak.iter().filter(|b| b.always_live).cloned().collect();
        let stretches = space.live_history.stretches();
        let mut slots: Vec<usize> = Vec::new();
        let mut buffer_of: HashMap<usize, usize> = HashMap::new();
        let intervals = stretches
            .iter()
            .map(|stretch| {
                let buffer = *buffer_of.entry(stretch.slot).or_insert_with(|| {
                    slots.push(stretch.slot);
                    always_live.len() + slots.len() - 1
                });
                LiveInterval { buffer, from: stretch.from, until: stretch.until.unwrap_or(events) }
            })
            .collect();
        let always_live_count = always_live.len();
        let mut buffers = always_live;
        buffers.extend(heap_simulation::describe(assignment, &slots));
        LiveIntervals { buffers, always_live: always_live_count, intervals }
    }

    /// The buffers live after event `position`, in [`live_set`]'s order.
    pub fn live_at(&self, position: usize) -> impl Iterator<Item = &BufferAtPeak> {
        let always_live = self.buffers.iter().take(self.always_live);
        let covering = self.intervals.iter().filter(move |i| i.from <= position && position < i.until);
        always_live.chain(covering.filter_map(|i| self.buffers.get(i.buffer)))
    }
}

/// Fills a memory space's [`Attribution`]; the assignment describes buffers
/// that are live at other points than the peak. An `--at` this memory space
/// does not have is returned as the reason, the rest is filled regardless.
pub fn attribute(
    space: &mut MemorySpaceReport,
    assignment: &BufferAssignment,
    options: &Options,
) -> Result<(), String> {
    space.attribution.at_peak_groups = Groups::of(&space.at_peak, options.op_name_depth);
    space.attribution.padding = super::hints::padding(space).map(Box::new);
    if let Some(search) = options.peaks {
        space.attribution.peaks = distinct_peaks(&space.heap_bytes, search)
            .into_iter()
            .map(|p| live_set(space, assignment, p, options.op_name_depth))
            .collect();
    }
    if options.intervals {
        space.attribution.intervals = Some(Box::new(LiveIntervals::of(space, assignment)));
    }
    if let Some(point) = &options.at {
        let position = resolve(space, point)?;
        space.attribution.at = Some(Box::new(live_set(space, assignment, position, options.op_name_depth)));
    }
    Ok(())
}

/// The event `point` names in this memory space's trace; an event past the
/// trace, or an instruction with no event in it, is an error.
fn resolve(space: &MemorySpaceReport, point: &ProgramPoint) -> Result<usize, String> {
    let events = space.heap_bytes.len().saturating_sub(1);
    match point {
        ProgramPoint::Event(event) if *event < events => Ok(*event),
        ProgramPoint::Event(event) if events == 0 => Err(format!("--at {event}: this memory space has no heap events")),
        ProgramPoint::Event(event) => Err(format!("--at {event}: the trace has events 0 to {}", events - 1)),
        ProgramPoint::Instruction(name) => {
            let mut best: Option<(usize, i64)> = None;
            for (event, instruction) in space.instructions.iter().enumerate().take(events) {
                let heap = space.heap_bytes.get(event + 1).copied().unwrap_or(0);
                if instruction == name.as_str() && best.is_none_or(|(_, h)| heap > h) {
                    best = Some((event, heap));
                }
            }
            best.map(|(event, _)| event).ok_or_else(|| format!("--at {name}: no heap event of this instruction"))
        }
    }
}

/// What is live after event `position`: the always-live buffers and every
/// simulated span that covers it, described as at the peak.
pub fn live_set(
    space: &MemorySpaceReport,
    assignment: &BufferAssignment,
    position: usize,
    op_name_depth: Option<usize>,
) -> LiveSet {
    let mut buffers: Vec<BufferAtPeak> = space.at_peak.iter().filter(|b| b.always_live).cloned().collect();
    buffers.extend(heap_simulation::describe(assignment, &space.live_history.live_at(position)));
    LiveSet {
        position,
        instruction: space.instructions.get(position).filter(|i| !i.is_empty()).map(str::to_string),
        heap_bytes: space.heap_bytes.get(position + 1).copied().unwrap_or(0),
        unpadded_heap_bytes: space.unpadded_heap_bytes.get(position + 1).copied().unwrap_or(0),
        groups: Groups::of(&buffers, op_name_depth),
        buffers,
    }
}

/// Local maxima of the heap after each event, two of them distinct when the
/// heap falls by at least `search.drop` of the earlier one between them; the
/// `search.count` largest, largest first (the first of equal ones first).
pub fn distinct_peaks(heap_bytes: &[i64], search: PeakSearch) -> Vec<usize> {
    let after_event = heap_bytes.get(1..).unwrap_or_default();
    let mut peaks: Vec<(usize, i64)> = Vec::new();
    let mut climbing: Option<(usize, i64)> = None;
    let mut low = i64::MAX;
    for (event, &heap) in after_event.iter().enumerate() {
        match climbing {
            Some((_, top)) if heap > top => climbing = Some((event, heap)),
            Some((at, top)) => {
                if (heap as f64) <= top as f64 * (1.0 - search.drop) {
                    peaks.push((at, top));
                    climbing = None;
                    low = heap;
                }
            }
            None if heap > low || peaks.is_empty() => climbing = Some((event, heap)),
            None => low = low.min(heap),
        }
    }
    peaks.extend(climbing);
    peaks.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    peaks.into_iter().take(search.count).map(|(event, _)| event).collect()
}

/// A device memory profile's live bytes by the source line each stack is
/// blamed on (its innermost frame of the user's code), as a program's peak
/// is grouped; sums to its total.
pub fn device_memory_groups(report: &DeviceMemoryReport) -> Vec<Group> {
    let keys: Vec<(String, i64, usize)> = report
        .stacks
        .iter()
        .map(|stack| {
            let key = stack.blamed_frame().map_or_else(|| NO_SOURCE.to_string(), |f| format!("{}:{}", f.file, f.line));
            (key, stack.bytes, usize::try_from(stack.count).unwrap_or(0))
        })
        .collect();
    group_by(keys.iter().map(|(key, bytes, count)| (key.as_str(), *bytes, *count)))
}

/// The key of an allocator's heap at the peak that no captured allocation explains.
pub const BEFORE_CAPTURE: &str = "(allocated before the capture started)";
/// An allocator's heap at the peak by what made it (the op, or the
/// program and which of its buffers); sums to the heap at the peak.
pub fn allocator_groups(allocator: &AllocatorReport) -> Vec<Group> {
    let keys: Vec<(String, i64, usize)> = allocator
        .at_peak
        .iter()
        .map(|row| (row.made_by(), row.total_bytes(), usize::try_from(row.occurrences).unwrap_or(usize::MAX)))
        .collect();
    let rows = keys.iter().map(|(key, bytes, count)| (key.as_str(), *bytes, *count));
    let before = (allocator.unattributed_at_peak_bytes != 0).then_some((
        BEFORE_CAPTURE,
        allocator.unattributed_at_peak_bytes,
        0,
    ));
    group_by(rows.chain(before))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fixture module's live set after every event, as [`live_set`]
    /// gives it (what `--at` prints) and as the intervals give it.
    #[test]
    fn intervals_give_the_live_set_of_every_event() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles");
        let options = Options { intervals: true, ..Options::default() };
        let mut events_checked = 0;
        for input in ["memory_hungry/profile", "token_mixer/xla_dump", "host_offload/profile", "pair_new/profile"] {
            let capture = crate::ingest::load(&fixtures.join(input), &Default::default()).unwrap();
            for module in &capture.modules {
                let Ok(assignment) = &module.buffer_assignment else { continue };
                for space in crate::analysis::analyze_module(module, &options).memory_spaces {
                    let intervals = space.attribution.intervals.as_deref().unwrap();
                    for position in 0..space.heap_bytes.len().saturating_sub(1) {
                        let expected = live_set(&space, assignment, position, None).buffers;
                        let shown: Vec<(i64, i64)> =
                            intervals.live_at(position).map(|b| (b.logical_buffer_id, b.size_bytes)).collect();
                        let expected: Vec<(i64, i64)> =
                            expected.iter().map(|b| (b.logical_buffer_id, b.size_bytes)).collect();
                        assert_eq!(shown, expected, "{input} {} event {position}", module.name);
                        events_checked += 1;
                    }
                }
            }
        }
        assert!(events_checked > 1000, "{events_checked} events");
    }

    #[test]
    fn scopes_keep_the_first_components_and_ignore_slashes_in_brackets() {
        let op = "jit(train_step)/jvp(model/x)/block_3/dot_general";
        assert_eq!(op_name_scope(op, Some(2)), "jit(train_step)/jvp(model/x)");
        assert_eq!(op_name_scope(op, Some(9)), op);
        assert_eq!(op_name_scope(op, None), op);
        assert_eq!(op_name_scope("", Some(1)), NO_OP_NAME);
        assert_eq!(op_name_components(op), ["jit(train_step)", "jvp(model/x)", "block_3", "dot_general"]);
    }

    #[test]
    fn groups_are_largest_first_with_counts() {
        let groups = group_by([("a", 5, 1), ("b", 7, 1), ("a", 4, 1)].into_iter());
        assert_eq!(
            groups,
            [Group { key: "a".into(), bytes: 9, count: 2 }, Group { key: "b".into(), bytes: 7, count: 1 }]
        );
    }

    #[test]
    fn peaks_are_separated_by_a_drop() {
        // heap before event 0, then after each event.
        let heap = [0, 50, 100, 95, 60, 80, 40, 90, 90, 10];
        let search = |count, drop| distinct_peaks(&heap, PeakSearch { count, drop });
        // 100 (event 1), then 80 (event 4) after a fall to 60, then 90 (event 6) after a fall to 40.
        assert_eq!(search(3, 0.2), [1, 6, 4]);
        // A 50% drop separates 100 from 90 (40 ≤ 50) but not 80 from 100.
        assert_eq!(search(5, 0.5), [1, 6]);
        assert_eq!(search(1, 0.01), [1]);
    }
}

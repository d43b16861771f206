//! What an HTML page embeds for its script, as JSON: for every memory space
//! with a heap-simulator trace, the heap after each event, the instruction of
//! each event, its buffers and when each is live ([`LiveIntervals`]); for
//! every allocator the same for its allocations ([`AllocationIntervals`]).
//! The script shows these and derives only the live set at a point from the
//! intervals. Strings are written once (`strings`, referred to by index),
//! integer series as differences, and intervals as flat triples, so that the
//! data grows with buffers and events, never with events × buffers; past the
//! [`MAX_DESCRIBED`] largest buffers of a chart, a buffer is only its size, so
//! that what a page describes one by one stays bounded as the charts' do.

use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::analysis::allocator_timeline::NO_OP_RECORDED;
use crate::analysis::allocator_timeline::{AllocationIntervals, LiveAllocation};
use crate::analysis::attribution::{LiveIntervals, BEFORE_CAPTURE, NO_SOURCE};
use crate::analysis::{AllocatorReport, BufferAtPeak, MemorySpaceReport};

/// How many buffers (or allocations) of one memory space (or allocator) the
/// page describes one by one, the largest; the others are given by their size.
pub const MAX_DESCRIBED: usize = 5000;

/// The largest integer a browser's number holds exactly (2^53 − 1).
const EXACT_IN_A_BROWSER: i64 = (1 << 53) - 1;

#[derive(Debug, Default, Serialize)]
pub struct PageData<'r> {
    strings: Vec<&'r str>,
    #[serde(skip)]
    string_index: FxHashMap<&'r str, usize>,
    /// How the page names what has no source line or op name, as the text report does.
    labels: Labels,
    /// How many rows a table shows before "show all" (`--top`).
    top: usize,
    spaces: Vec<SpaceData>,
    allocators: Vec<AllocatorData>,
}

#[derive(Debug, Serialize)]
struct Labels {
    no_source: &'static str,
    no_op_recorded: &'static str,
    before_capture: &'static str,
}

impl Default for Labels {
    fn default() -> Self {
        Labels { no_source: NO_SOURCE, no_op_recorded: NO_OP_RECORDED, before_capture: BEFORE_CAPTURE }
    }
}

/// One memory space's live sets, for the section `section` (and, in a diff,
/// one of its two runs).
#[derive(Debug, Serialize)]
struct SpaceData {
    section: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'static str>,
    events: usize,
    peak: usize,
    /// The `--peaks` peaks, largest first; the peak alone without `--peaks`.
    peaks: Vec<usize>,
    /// The heap after each event, as differences from the previous (the first from 0).
    heap: Vec<i64>,
    /// The string of each event's instruction.
    instructions: Vec<usize>,
    /// Always-live buffers first.
    buffers: Vec<BufferData>,
    always_live: usize,
    /// `[buffer, from, until]` for each interval, flattened.
    intervals: Vec<usize>,
}

/// A described buffer: `[instruction, size, unpadded, category, shape,
/// op_name, source or null, logical_buffer_id]` (strings by index); or, past
/// the largest [`MAX_DESCRIBED`], its size alone.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum BufferData {
    Described(usize, i64, i64, usize, usize, usize, Option<usize>, i64),
    Size(i64),
}

#[derive(Debug, Serialize)]
struct AllocatorData {
    section: String,
    peak: Option<usize>,
    /// Picoseconds of each event (time order), as differences from the previous.
    time: Vec<i64>,
    /// The heap after each event, as differences.
    heap: Vec<i64>,
    /// `[made_by (the op or the program), allocation_bytes, requested_bytes,
    /// region_type, data_type, shape]` (strings by index), or past the largest [`MAX_DESCRIBED`] the
    /// allocation's size alone.
    allocations: Vec<AllocationData>,
    /// `[allocation, from, until]` for each allocation, flattened.
    intervals: Vec<usize>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum AllocationData {
    Described(usize, i64, i64, usize, usize, usize),
    Size(i64),
}

/// Differences between neighbours, the first from 0: what the script adds up again.
fn differences(values: &[i64]) -> Vec<i64> {
    let mut previous = 0i64;
    values
        .iter()
        .map(|&value| {
            let difference = value.saturating_sub(previous);
            previous = value;
            difference
        })
        .collect()
}

/// Whether every value is one a browser holds exactly.
fn exact(values: impl IntoIterator<Item = i64>) -> bool {
    values.into_iter().all(|v| v.unsigned_abs() <= EXACT_IN_A_BROWSER as u64)
}

/// Which of `sizes` are among the `MAX_DESCRIBED` largest (the earlier of equal ones first).
fn described(sizes: &[i64]) -> Vec<bool> {
    let mut by_size: Vec<usize> = (0..sizes.len()).collect();
    by_size.sort_by_key(|&i| (std::cmp::Reverse(sizes[i]), i));
    let mut described = vec![false; sizes.len()];
    for &i in by_size.iter().take(MAX_DESCRIBED) {
        described[i] = true;
    }
    described
}

/// Each item as `describe` writes it when it is among the [`MAX_DESCRIBED`]
/// largest by `size`, else by its size alone.
fn largest_described<'i, T, D>(
    items: &'i [T],
    size: impl Fn(&T) -> i64,
    mut describe: impl FnMut(&'i T) -> D,
    size_alone: impl Fn(i64) -> D,
) -> Vec<D> {
    let sizes: Vec<i64> = items.iter().map(&size).collect();
    items
        .iter()
        .zip(described(&sizes))
        .map(|(item, described)| if described { describe(item) } else { size_alone(size(item)) })
        .collect()
}

impl<'r> PageData<'r> {
    pub fn new(top: usize) -> Self {
        PageData { top, ..PageData::default() }
    }

    fn string(&mut self, text: &'r str) -> usize {
        *self.string_index.entry(text).or_insert_with(|| {
            self.strings.push(text);
            self.strings.len() - 1
        })
    }

    /// Adds a memory space's live sets, when analysis kept them, it has
    /// events, and its sizes are ones a browser holds exactly.
    pub fn add_space(&mut self, section: &str, run: Option<&'static str>, space: &'r MemorySpaceReport) {
        let Some(intervals) = space.attribution.intervals.as_deref() else { return };
        let events = space.heap_bytes.len().saturating_sub(1);
        let sizes = intervals.buffers.iter().map(|b| b.size_bytes);
        if events == 0 || !exact(space.heap_bytes.iter().copied().chain(sizes)) {
            return;
        }
        let instructions = space.instructions.iter().take(events).map(|i| self.string(i)).collect();
        let peaks = match space.attribution.peaks.as_slice() {
            [] => vec![space.peak_position],
            peaks => peaks.iter().map(|p| p.position).collect(),
        };
        let data = SpaceData {
            section: section.to_string(),
            run,
            events,
            peak: space.peak_position,
            peaks,
            heap: differences(space.heap_bytes.get(1..).unwrap_or_default()),
            instructions,
            buffers: self.buffers(intervals),
            always_live: intervals.always_live,
            intervals: intervals.intervals.iter().flat_map(|i| [i.buffer, i.from, i.until]).collect(),
        };
        self.spaces.push(data);
    }

    fn buffers(&mut self, intervals: &'r LiveIntervals) -> Vec<BufferData> {
        let described = |b: &'r BufferAtPeak| {
            BufferData::Described(
                self.string(&b.instruction),
                b.size_bytes,
                b.unpadded_bytes,
                self.string(b.category.label()),
                self.string(&b.shape),
                self.string(&b.op_name),
                b.source.as_deref().map(|s| self.string(s)),
                b.logical_buffer_id,
            )
        };
        largest_described(&intervals.buffers, |b| b.size_bytes, described, BufferData::Size)
    }

    /// Adds an allocator's live allocations, when analysis kept them and
    /// its figures are ones a browser holds exactly.
    pub fn add_allocator(&mut self, section: &str, allocator: &'r AllocatorReport) {
        let Some(intervals) = allocator.intervals.as_deref() else { return };
        let timeline = &allocator.timeline;
        let sizes = intervals.allocations.iter().map(|a| a.row.allocation_bytes);
        let times = timeline.time_ps.first().copied().into_iter().chain(timeline.time_ps.last().copied());
        if timeline.time_ps.is_empty() || !exact(timeline.heap_bytes.iter().copied().chain(sizes).chain(times)) {
            return;
        }
        let data = AllocatorData {
            section: section.to_string(),
            peak: intervals.peak_position,
            time: differences(&timeline.time_ps),
            heap: differences(&timeline.heap_bytes),
            allocations: self.allocations(intervals),
            intervals: intervals.allocations.iter().enumerate().flat_map(|(i, a)| [i, a.from, a.until]).collect(),
        };
        self.allocators.push(data);
    }

    fn allocations(&mut self, intervals: &'r AllocationIntervals) -> Vec<AllocationData> {
        let described = |a: &'r LiveAllocation| {
            AllocationData::Described(
                self.string(&a.made_by),
                a.row.allocation_bytes,
                a.row.requested_bytes,
                self.string(&a.row.region_type),
                self.string(a.row.recorded_data_type()),
                self.string(&a.row.shape),
            )
        };
        largest_described(&intervals.allocations, |a| a.row.allocation_bytes, described, AllocationData::Size)
    }

    /// The data as an inert `<script type="application/json">` element: the
    /// page's script reads it, and a browser without script ignores it.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let json = serde_json::to_string(self).map_err(io::Error::other)?;
        // `</script>` or `<!--` inside a string would end or change the element;
        // `\/` and `\u0021` are the same characters to JSON.
        let json = json.replace("</", "<\\/").replace("<!--", "<\\u0021--");
        writeln!(out, "<script type=\"application/json\" id=\"xmem-data\">{json}</script>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_add_up_to_the_series() {
        let series = [5, 9, 9, 2, 0, i64::MAX];
        let mut total = 0i64;
        let summed: Vec<i64> = differences(&series)
            .iter()
            .map(|d| {
                total += d;
                total
            })
            .collect();
        assert_eq!(summed, series);
    }

    #[test]
    fn sizes_past_what_a_browser_holds_exactly_are_found() {
        assert!(exact([0, -5, (1 << 53) - 1, -((1 << 53) - 1)]));
        assert!(!exact([1, 1 << 53]));
        assert!(!exact([i64::MIN]));
    }

    #[test]
    fn only_the_largest_are_described() {
        let mut sizes = vec![1; MAX_DESCRIBED + 2];
        sizes[3] = 0;
        sizes[7] = 0;
        let described = described(&sizes);
        assert_eq!(described.iter().filter(|&&d| d).count(), MAX_DESCRIBED);
        assert!(!described[3] && !described[7] && described[0]);
    }
}

//! What the charts draw, taken from the report: series thinned to a number of
//! points a chart can hold, and buffers placed in chart coordinates. Only the
//! drawing is thinned; the report's figures keep every point.

use super::allocator_timeline::AllocatorReport;
use super::torch_snapshot::{Allocation, FrameGroup, TorchSnapshotReport};
use super::{Lifetime, MemorySpaceReport};
use crate::units::{human_bytes, milliseconds};

/// What the x values of a chart count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Heap-simulator events, in program order.
    ProgramOrder,
    /// Picoseconds, as profiles time their events.
    Picoseconds,
    /// Entries of an allocator's trace, in order.
    TraceEntries,
}

/// Bytes over an ordered x axis: stacked bands, lines over them and the peak.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub x_axis: XAxis,
    /// The x of every drawn point, increasing.
    pub x: Vec<i64>,
    /// Stacked areas, bottom first; each series holds the band's upper edge,
    /// and its lower edge is the previous band's upper edge (0 for the first).
    pub bands: Vec<Series>,
    /// Lines drawn over the bands.
    pub lines: Vec<Series>,
    /// Fractions from 0 to 1, drawn as lines against a second y axis.
    pub fractions: Vec<Series<f64>>,
    pub peak: PeakMark,
    /// Top of the y axis: the highest value of any band or line, unless a
    /// band is cut off there (its name then says so).
    pub y_max: i64,
    /// Each value holds until the next point (an allocator's state after an
    /// event): drawn as steps, not ramps.
    pub holds_until_next: bool,
    /// Where a training step starts, with its name.
    pub boundaries: Vec<(i64, String)>,
}

/// One named series aligned with [`Timeline::x`]: bytes, or fractions.
#[derive(Debug, Clone)]
pub struct Series<T = i64> {
    pub name: String,
    pub values: Vec<T>,
}

#[derive(Debug, Clone)]
pub struct PeakMark {
    pub x: i64,
    pub bytes: i64,
    /// What happened there, e.g. the instruction whose allocation made the
    /// peak, or when it happened.
    pub what: Option<String>,
    /// Where that is in the user's terms, e.g. `event 1277` or `step 15`.
    pub position: String,
}

/// Indices of the points to draw from `values`: all of them when they fit in
/// `max_points`, otherwise the first and last points and, per window of
/// consecutive points, the first minimum and the first maximum. Every window
/// keeps its maximum, so the first maximum of the series (the peak, as XProf
/// picks it) is always drawn, and dips stay visible.
pub fn drawing_indices(values: &[i64], max_points: usize) -> Vec<usize> {
    let n = values.len();
    if n <= max_points.max(4) {
        return (0..n).collect();
    }
    let windows = (max_points.max(4) - 2) / 2;
    let mut kept = Vec::with_capacity(2 * windows + 2);
    kept.push(0);
    for w in 0..windows {
        let (start, end) = (w * n / windows, (w + 1) * n / windows);
        let mut low = start;
        let mut high = start;
        for (i, &v) in values.iter().enumerate().take(end).skip(start) {
            if v < values[low] {
                low = i;
            }
            if v > values[high] {
                high = i;
            }
        }
        kept.push(low.min(high));
        kept.push(low.max(high));
    }
    kept.push(n - 1);
    kept.dedup();
    kept
}

/// The heap of a memory space over program order: the always-live baseline
/// with the temporaries stacked on it, the unpadded heap as a line, and the
/// peak. `None` when the memory space has no heap-simulator events to draw.
pub fn program_timeline(space: &MemorySpaceReport, max_points: usize) -> Option<Timeline> {
    if space.heap_bytes.len() < 2 {
        return None;
    }
    let kept = drawing_indices(&space.heap_bytes, max_points);
    let pick = |series: &[i64]| -> Vec<i64> { kept.iter().map(|&i| series.get(i).copied().unwrap_or(0)).collect() };
    let heap = pick(&space.heap_bytes);
    let unpadded = pick(&space.unpadded_heap_bytes);
    let y_max = heap.iter().chain(&unpadded).copied().max().unwrap_or(0);
    Some(Timeline {
        x_axis: XAxis::ProgramOrder,
        x: kept.iter().map(|&i| i as i64).collect(),
        bands: vec![
            Series { name: "always-live".to_string(), values: vec![space.always_live_bytes(); kept.len()] },
            Series { name: "temporaries".to_string(), values: heap },
        ],
        lines: vec![Series { name: "unpadded".to_string(), values: unpadded }],
        fractions: Vec::new(),
        peak: program_peak(space),
        y_max,
        holds_until_next: false,
        boundaries: Vec::new(),
    })
}

/// The peak where XProf draws it: after the event that made it.
fn program_peak(space: &MemorySpaceReport) -> PeakMark {
    PeakMark {
        x: space.peak_position as i64 + 1,
        bytes: space.peak_bytes,
        what: space.peak_instruction.as_deref().map(str::to_string),
        position: format!("event {}", space.peak_position),
    }
}

/// How far above the peak in use an allocator's y axis may reach before its
/// free band is cut off: a quarter of the peak, enough to show there is
/// free memory above it without giving the chart to it.
const FREE_ABOVE_PEAK_DIVISOR: i64 = 4;

/// Where an allocator's free band is cut off: a quarter above its peak in use.
pub fn free_cut(peak_bytes: i64) -> i64 {
    peak_bytes.saturating_add(peak_bytes / FREE_ABOVE_PEAK_DIVISOR)
}

/// An allocator's memory over time: heap, stack and free stacked, the
/// fragmentation against a second axis, and the peak (heap plus stack).
///
/// An allocator can have far more free memory than it ever used (TensorFlow's
/// host BFC allocator is limited at 64 GiB), which would flatten everything
/// else into a pixel: the axis then stops a quarter above the peak in use and
/// the free band's name says where it was cut. `None` when there are no events.
pub fn allocator_timeline(allocator: &AllocatorReport, max_points: usize) -> Option<Timeline> {
    let series = &allocator.timeline;
    let in_use: Vec<i64> =
        series.heap_bytes.iter().zip(&series.stack_bytes).map(|(heap, stack)| heap.saturating_add(*stack)).collect();
    // The last maximum, as the analysis (and XProf) picks the peak; the
    // reduction keeps the first, so the peak is added when it is not drawn.
    let (peak_index, _) = in_use.iter().enumerate().max_by_key(|&(_, bytes)| *bytes)?;
    let mut kept = drawing_indices(&in_use, max_points);
    if let Err(at) = kept.binary_search(&peak_index) {
        kept.insert(at, peak_index);
    }
    let pick = |values: &[i64]| -> Vec<i64> { kept.iter().map(|&i| values.get(i).copied().unwrap_or(0)).collect() };
    let heap = pick(&series.heap_bytes);
    let heap_and_stack = pick(&in_use);
    let with_free: Vec<i64> =
        heap_and_stack.iter().zip(pick(&series.free_bytes)).map(|(used, free)| used.saturating_add(free)).collect();
    let highest = with_free.iter().chain(&heap_and_stack).copied().max().unwrap_or(0);
    let cut = free_cut(allocator.peak_bytes);
    let (y_max, free_name) = if allocator.peak_bytes > 0 && highest > cut {
        let name = format!(
            "free, cut off at {} ({} at the peak)",
            human_bytes(cut as u64),
            human_bytes(allocator.peak_free_bytes.max(0) as u64)
        );
        (cut, name)
    } else {
        (highest, "free".to_string())
    };
    Some(Timeline {
        x_axis: XAxis::Picoseconds,
        x: pick(&series.time_ps),
        bands: vec![
            Series { name: "heap".to_string(), values: heap },
            Series { name: "stack".to_string(), values: heap_and_stack.clone() },
            Series { name: free_name, values: with_free.into_iter().map(|bytes| bytes.min(y_max)).collect() },
        ],
        // The peak in use often lasts less than a pixel's worth of time: a
        // line shows such a spike where a filled band does not.
        lines: vec![Series { name: "in use (heap + stack)".to_string(), values: heap_and_stack }],
        fractions: vec![Series {
            name: "fragmentation".to_string(),
            values: kept.iter().map(|&i| series.fragmentation.get(i).copied().unwrap_or(0.0)).collect(),
        }],
        peak: PeakMark {
            x: allocator.peak_time_ps,
            bytes: allocator.peak_bytes,
            what: Some(milliseconds(allocator.peak_time_ps)),
            position: match allocator.peak_step {
                Some(step) => format!("step {step}"),
                None => format!("event {peak_index}"),
            },
        },
        y_max,
        holds_until_next: true,
        boundaries: allocator.steps.iter().skip(1).map(|s| (s.first_time_ps, format!("step {}", s.step))).collect(),
    })
}

/// A PyTorch snapshot's active memory over its trace: the largest user
/// frames at the peak stacked as bands (the rest on top), the reserved
/// memory as a line, and the peak. `None` when there is no trace.
pub fn torch_timeline(report: &TorchSnapshotReport) -> Option<Timeline> {
    let series = &report.timeline;
    if series.entry.is_empty() {
        return None;
    }
    let mut lower = vec![0i64; series.entry.len()];
    let bands = series
        .bands
        .iter()
        .map(|band| {
            for (edge, bytes) in lower.iter_mut().zip(&band.bytes) {
                *edge = edge.saturating_add(*bytes);
            }
            Series { name: band.label.clone(), values: lower.clone() }
        })
        .collect();
    let y_max = series.reserved_bytes.iter().chain(&series.active_bytes).copied().max().unwrap_or(0);
    Some(Timeline {
        x_axis: XAxis::TraceEntries,
        x: series.entry.iter().map(|&entry| entry as i64).collect(),
        bands,
        lines: vec![Series { name: "reserved".to_string(), values: series.reserved_bytes.clone() }],
        fractions: Vec::new(),
        peak: PeakMark {
            x: report.peak_entry.map_or(0, |entry| entry as i64),
            bytes: report.peak_bytes,
            what: report.peak_owner.as_ref().map(|owner| owner.label()),
            position: report.peak_entry.map_or_else(|| "the start".to_string(), |entry| format!("entry {entry}")),
        },
        y_max,
        holds_until_next: true,
        boundaries: Vec::new(),
    })
}

/// One owner of a PyTorch snapshot's peak with its largest blocks, as a bar draws them.
#[derive(Debug)]
pub struct OwnerBlocks<'a> {
    pub group: &'a FrameGroup,
    /// Largest first.
    pub blocks: Vec<&'a Allocation>,
    /// The owner's other blocks, summed.
    pub rest_bytes: i64,
}

/// The `top` largest owners of a snapshot's peak, each with its `max_blocks` largest blocks.
pub fn torch_peak_owners(report: &TorchSnapshotReport, top: usize, max_blocks: usize) -> Vec<OwnerBlocks<'_>> {
    let mut owners: Vec<OwnerBlocks> = report
        .at_peak_by_user_frame
        .iter()
        .take(top)
        .map(|group| OwnerBlocks { group, blocks: Vec::new(), rest_bytes: 0 })
        .collect();
    // `at_peak` is largest first, so each owner's first blocks are its largest.
    for allocation in &report.at_peak {
        if let Some(owner) = owners.iter_mut().find(|o| o.group.owner == allocation.owner) {
            if owner.blocks.len() < max_blocks {
                owner.blocks.push(allocation);
            } else {
                owner.rest_bytes = owner.rest_bytes.saturating_add(allocation.size_bytes);
            }
        }
    }
    owners
}

/// Every simulated buffer of a memory space as a box: x from the heap point
/// after its allocation to the one after its free (the x of
/// [`program_timeline`]), y its place in its allocation.
#[derive(Debug, Clone)]
pub struct LifetimeBoxes<'a> {
    pub boxes: Vec<LifetimeBox<'a>>,
    pub x_end: i64,
    pub y_end: i64,
    /// The peak, at the x of [`Timeline::peak`].
    pub peak: PeakMark,
}

#[derive(Debug, Clone)]
pub struct LifetimeBox<'a> {
    pub x0: i64,
    pub x1: i64,
    pub y0: i64,
    pub y1: i64,
    pub lifetime: &'a Lifetime,
}

/// `None` when the memory space has no simulated buffers.
pub fn lifetime_boxes(space: &MemorySpaceReport) -> Option<LifetimeBoxes<'_>> {
    if space.lifetimes.is_empty() {
        return None;
    }
    let boxes: Vec<LifetimeBox> = space
        .lifetimes
        .iter()
        .map(|lifetime| LifetimeBox {
            x0: lifetime.start as i64 + 1,
            x1: lifetime.end as i64 + 1,
            y0: lifetime.offset,
            y1: lifetime.offset.saturating_add(lifetime.size_bytes),
            lifetime,
        })
        .collect();
    Some(LifetimeBoxes {
        x_end: boxes.iter().map(|b| b.x1).max().unwrap_or(0).max(space.heap_bytes.len().saturating_sub(1) as i64),
        y_end: boxes.iter().map(|b| b.y1).max().unwrap_or(0),
        peak: program_peak(space),
        boxes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory_hungry_attention() -> MemorySpaceReport {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles/memory_hungry");
        let options = crate::ingest::ReadOptions::default();
        let capture = crate::ingest::load(&root.join("profile"), &options).unwrap();
        let report = crate::analysis::analyze(&[capture]);
        let module = report.modules.into_iter().find(|m| m.name == "jit_naive_attention_grad").unwrap();
        module.memory_spaces.into_iter().next().unwrap()
    }

    /// XProf's figures for jit_naive_attention_grad(16): peak bytes, its event
    /// position, and the always-live bytes under it.
    fn oracle_peak() -> (i64, i64, i64) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "fixtures/profiles/memory_hungry/oracle/memory_viewer/jit_naive_attention_grad(16).memory_space_0.json",
        );
        let oracle: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let bytes = |key: &str| (oracle[key].as_f64().unwrap() * 1_048_576.0).round() as i64;
        (bytes("peakHeapMib"), oracle["peakHeapSizePosition"].as_i64().unwrap(), bytes("indefiniteBufferAllocationMib"))
    }

    #[test]
    fn a_thinned_timeline_still_reaches_xprofs_peak_where_xprof_draws_it() {
        let space = memory_hungry_attention();
        let (peak_bytes, peak_position, _) = oracle_peak();
        let timeline = program_timeline(&space, 6).unwrap();
        assert!(timeline.x.len() <= 6);
        assert_eq!(timeline.peak.x, peak_position + 1);
        assert_eq!(timeline.peak.bytes, peak_bytes);
        let at_peak = timeline.x.iter().position(|&x| x == timeline.peak.x).expect("the peak point is drawn");
        assert_eq!(timeline.bands[1].values[at_peak], peak_bytes);
        assert_eq!(timeline.y_max, peak_bytes);
    }

    #[test]
    fn lifetime_boxes_cross_the_peak_line_for_the_temporaries_live_there() {
        let space = memory_hungry_attention();
        let (peak_bytes, _, always_live_bytes) = oracle_peak();
        let boxes = lifetime_boxes(&space).unwrap();
        let crossing: i64 =
            boxes.boxes.iter().filter(|b| b.x0 <= boxes.peak.x && boxes.peak.x < b.x1).map(|b| b.y1 - b.y0).sum();
        assert_eq!(crossing, peak_bytes - always_live_bytes);
    }

    fn tf_keras_fit_allocator() -> AllocatorReport {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles/tf_keras_fit");
        let options = crate::ingest::ReadOptions::default();
        let capture = crate::ingest::load(&root.join("profile"), &options).unwrap();
        crate::analysis::analyze(&[capture]).allocators.into_iter().next().unwrap()
    }

    /// XProf's Memory Profile of tf_keras_fit at its peak: heap plus stack,
    /// free bytes, and the step of the peak step's snapshots.
    fn oracle_allocator_peak() -> (i64, i64, i64) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/profiles/tf_keras_fit/oracle/memory_profile.json");
        let oracle: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let allocator = &oracle["memoryProfilePerAllocator"]["bfc_cpu_allocator_for_gpu"];
        let stats = &allocator["profileSummary"]["peakStats"];
        let int = |value: &serde_json::Value| value.as_str().unwrap().parse::<i64>().unwrap();
        let step = int(&allocator["memoryProfileSnapshots"][0]["activityMetadata"]["stepId"]);
        (int(&stats["heapAllocatedBytes"]) + int(&stats["stackReservedBytes"]), int(&stats["freeMemoryBytes"]), step)
    }

    #[test]
    fn an_allocator_timeline_thinned_to_a_few_points_still_draws_xprofs_peak() {
        let allocator = tf_keras_fit_allocator();
        let (peak_bytes, _, step) = oracle_allocator_peak();
        let timeline = allocator_timeline(&allocator, 8).unwrap();
        assert!(timeline.x.len() <= 9, "{} points", timeline.x.len());
        assert_eq!(timeline.x_axis, XAxis::Picoseconds);
        assert_eq!(timeline.peak.bytes, peak_bytes);
        assert_eq!(timeline.peak.x, allocator.peak_time_ps);
        assert_eq!(timeline.peak.what.as_deref(), Some(milliseconds(allocator.peak_time_ps).as_str()));
        assert_eq!(timeline.peak.position, format!("step {step}"));
        let at_peak = timeline.x.iter().rposition(|&x| x == timeline.peak.x).expect("the peak point is drawn");
        assert_eq!(timeline.lines[0].values[at_peak], peak_bytes, "in use at the peak");
        assert_eq!(timeline.bands[1].values[at_peak], peak_bytes, "heap and stack bands at the peak");
        assert_eq!(timeline.x.first(), allocator.timeline.time_ps.first());
        assert_eq!(timeline.x.last(), allocator.timeline.time_ps.last());
        assert!(timeline.x.windows(2).all(|w| w[0] <= w[1]), "time order");
    }

    #[test]
    fn a_peak_reached_twice_is_drawn_at_the_later_time_as_the_analysis_reports_it() {
        let mut allocator = tf_keras_fit_allocator();
        let later = allocator.timeline.time_ps.iter().position(|&t| t == allocator.peak_time_ps).unwrap();
        // Shortly before: in the same window of the reduction, which keeps that window's first maximum.
        let earlier = later - 10;
        allocator.timeline.heap_bytes[earlier] = allocator.timeline.heap_bytes[later];
        let timeline = allocator_timeline(&allocator, 8).unwrap();
        assert!(timeline.x.contains(&allocator.timeline.time_ps[earlier]), "the first maximum is drawn too");
        let at_peak = timeline.x.iter().rposition(|&x| x == allocator.peak_time_ps).expect("the later peak is drawn");
        assert_eq!(timeline.lines[0].values[at_peak], allocator.peak_bytes);
        assert_eq!(timeline.peak.x, allocator.peak_time_ps);
    }

    #[test]
    fn free_memory_far_above_the_peak_is_cut_off_and_says_so() {
        let allocator = tf_keras_fit_allocator();
        let (peak_bytes, free_bytes, _) = oracle_allocator_peak();
        let timeline = allocator_timeline(&allocator, 2000).unwrap();
        assert_eq!(timeline.y_max, peak_bytes + peak_bytes / 4);
        let free = &timeline.bands[2];
        assert_eq!(
            free.name,
            format!(
                "free, cut off at {} ({} at the peak)",
                human_bytes((peak_bytes + peak_bytes / 4) as u64),
                human_bytes(free_bytes as u64)
            )
        );
        assert!(free.values.iter().all(|&v| v == timeline.y_max), "64 GiB free is above the cut everywhere");
        let fragmentation = &timeline.fractions[0];
        assert_eq!(fragmentation.values.len(), timeline.x.len());
        assert!(fragmentation.values.iter().all(|f| (0.0..=1.0).contains(f)));
    }

    #[test]
    fn short_series_are_drawn_whole() {
        assert_eq!(drawing_indices(&[3, 1, 4, 1, 5], 100), vec![0, 1, 2, 3, 4]);
        assert_eq!(drawing_indices(&[], 100), Vec::<usize>::new());
    }

    #[test]
    fn a_long_series_keeps_its_first_maximum_and_its_dips() {
        // A saw tooth with one spike and one dip far from any window edge.
        let mut values: Vec<i64> = (0..100_000).map(|i| (i % 7) as i64 * 10).collect();
        values[51_234] = 1_000;
        values[51_240] = 1_000; // a later equal maximum: XProf's peak is the first one
        values[77_777] = -5;
        let kept = drawing_indices(&values, 500);
        assert!(kept.len() <= 500, "{} points", kept.len());
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "indices increase");
        assert_eq!(kept.first(), Some(&0));
        assert_eq!(kept.last(), Some(&99_999));
        assert!(kept.contains(&51_234));
        assert!(!kept.contains(&51_240));
        assert!(kept.contains(&77_777));
        let drawn_max = kept.iter().map(|&i| values[i]).max();
        assert_eq!(drawn_max, values.iter().copied().max());
    }

    #[test]
    fn a_tiny_budget_still_draws_the_ends_and_the_peak() {
        let values: Vec<i64> = (0..1000).map(|i| if i == 600 { 99 } else { 1 }).collect();
        let kept = drawing_indices(&values, 1);
        assert!(kept.contains(&0) && kept.contains(&999) && kept.contains(&600), "{kept:?}");
        assert!(kept.len() <= 4);
    }
}

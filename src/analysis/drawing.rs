//! What the charts draw, taken from the report: series thinned to a number of
//! points a chart can hold, and buffers placed in chart coordinates. Only the
//! drawing is thinned; the report's figures keep every point.

use super::{Lifetime, MemorySpaceReport};

/// Bytes over an ordered x axis: stacked bands, lines over them and the peak.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// What the x values count, with their unit.
    pub x_description: &'static str,
    /// The x of every drawn point, increasing.
    pub x: Vec<u64>,
    /// Stacked areas, bottom first; each series holds the band's upper edge,
    /// and its lower edge is the previous band's upper edge (0 for the first).
    pub bands: Vec<Series>,
    /// Lines drawn over the bands.
    pub lines: Vec<Series>,
    pub peak: PeakMark,
    /// Top of the y axis: the highest value of any band or line.
    pub y_max: i64,
}

/// One named series of byte values aligned with [`Timeline::x`].
#[derive(Debug, Clone)]
pub struct Series {
    pub name: &'static str,
    pub values: Vec<i64>,
}

#[derive(Debug, Clone)]
pub struct PeakMark {
    pub x: u64,
    pub bytes: i64,
    /// What happened there, e.g. the instruction whose allocation made the peak.
    pub what: Option<String>,
    /// Where that is in the user's terms, e.g. `event 1277`.
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
        x_description: "program order (heap-simulator event)",
        x: kept.iter().map(|&i| i as u64).collect(),
        bands: vec![
            Series { name: "always-live", values: vec![space.always_live_bytes(); kept.len()] },
            Series { name: "temporaries", values: heap },
        ],
        lines: vec![Series { name: "unpadded", values: unpadded }],
        peak: program_peak(space),
        y_max,
    })
}

/// The peak where XProf draws it: after the event that made it.
fn program_peak(space: &MemorySpaceReport) -> PeakMark {
    PeakMark {
        x: space.peak_position as u64 + 1,
        bytes: space.peak_bytes,
        what: space.peak_instruction.clone(),
        position: format!("event {}", space.peak_position),
    }
}

/// Every simulated buffer of a memory space as a box: x from the heap point
/// after its allocation to the one after its free (the x of
/// [`program_timeline`]), y its place in its allocation.
#[derive(Debug, Clone)]
pub struct LifetimeBoxes<'a> {
    pub boxes: Vec<LifetimeBox<'a>>,
    pub x_end: u64,
    pub y_end: i64,
    /// The peak, at the x of [`Timeline::peak`].
    pub peak: PeakMark,
}

#[derive(Debug, Clone)]
pub struct LifetimeBox<'a> {
    pub x0: u64,
    pub x1: u64,
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
            x0: lifetime.start as u64 + 1,
            x1: lifetime.end as u64 + 1,
            y0: lifetime.offset,
            y1: lifetime.offset.saturating_add(lifetime.size_bytes),
            lifetime,
        })
        .collect();
    Some(LifetimeBoxes {
        x_end: boxes.iter().map(|b| b.x1).max().unwrap_or(0).max(space.heap_bytes.len().saturating_sub(1) as u64),
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
    fn oracle_peak() -> (i64, u64, i64) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "fixtures/profiles/memory_hungry/oracle/memory_viewer/jit_naive_attention_grad(16).memory_space_0.json",
        );
        let oracle: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let bytes = |key: &str| (oracle[key].as_f64().unwrap() * 1_048_576.0).round() as i64;
        (bytes("peakHeapMib"), oracle["peakHeapSizePosition"].as_u64().unwrap(), bytes("indefiniteBufferAllocationMib"))
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

//! Bytes over program order or over time: stacked bands, lines, fractions
//! against a second axis in percent, and the peak, marked and labelled.

use std::io;

use plotters::prelude::*;

use super::{
    count_label, mark_peak, number_label, palette, peak_label, peak_on_left, render, ByteScale, Frame, SecondaryAxis,
    TickLabel, PROGRAM_ORDER, WIDTH,
};
use crate::analysis::drawing::{self, Timeline, XAxis};
use crate::analysis::torch_snapshot::TorchSnapshotReport;
use crate::analysis::{AllocatorReport, MemorySpaceReport};
use crate::units::milliseconds;

const HEIGHT: u32 = 440;
/// Two points per pixel column: a window's minimum and its maximum.
pub const MAX_POINTS: usize = 2 * WIDTH as usize;

const BAND_COLORS: [RGBColor; 3] = [palette::SKY, palette::ORANGE, palette::GREEN];
/// For more bands than [`BAND_COLORS`] (the largest owners of a PyTorch
/// snapshot's peak): the palette's colours, then grey for the sum of the rest on top.
const MANY_BAND_COLORS: [RGBColor; 7] =
    [palette::BLUE, palette::ORANGE, palette::GREEN, palette::PURPLE, palette::SKY, palette::VERMILION, palette::GREY];
const LINE_COLORS: [RGBColor; 2] = [palette::INK, palette::PURPLE];
const FRACTION_COLORS: [RGBColor; 2] = [palette::PURPLE, palette::INK];

/// The heap of a memory space over program order; `None` when it has no
/// heap-simulator events.
pub fn program(caption: &str, space: &MemorySpaceReport) -> io::Result<Option<String>> {
    drawing::program_timeline(space, MAX_POINTS).map(|timeline| draw(caption, &timeline)).transpose()
}

/// An allocator's heap, stack and free memory over time, with its
/// fragmentation; `None` when it has no events.
pub fn allocator(caption: &str, allocator: &AllocatorReport) -> io::Result<Option<String>> {
    drawing::allocator_timeline(allocator, MAX_POINTS).map(|timeline| draw(caption, &timeline)).transpose()
}

/// A PyTorch snapshot's active memory by user frame, with the reserved
/// memory; `None` when the snapshot has no trace.
pub fn torch_snapshot(caption: &str, report: &TorchSnapshotReport) -> io::Result<Option<String>> {
    drawing::torch_timeline(report).map(|timeline| draw(caption, &timeline)).transpose()
}

/// The heaps of one memory space in two runs over program order, the new
/// run shaded orange and the baseline a grey line over it, each with its
/// peak marked; `None` when neither run has heap-simulator events.
pub fn overlay(
    caption: &str,
    base: Option<&MemorySpaceReport>,
    new: Option<&MemorySpaceReport>,
) -> io::Result<Option<String>> {
    let timeline = |space: Option<&MemorySpaceReport>| space.and_then(|s| drawing::program_timeline(s, MAX_POINTS));
    let runs: Vec<(&str, RGBColor, Timeline)> =
        [("base", palette::GREY, timeline(base)), ("new", palette::ORANGE, timeline(new))]
            .into_iter()
            .filter_map(|(name, color, timeline)| timeline.map(|t| (name, color, t)))
            .collect();
    let Some(y_max) = runs.iter().map(|(_, _, t)| t.y_max).max() else { return Ok(None) };
    let scale = ByteScale::for_max(y_max);
    let last = runs.iter().filter_map(|(_, _, t)| t.x.last().copied()).max().unwrap_or(0).max(1);
    let y_description = format!("heap ({})", scale.unit());
    let y_top = scale.of(y_max).max(1.0) * 1.15;
    let frame = Frame {
        caption,
        x_description: PROGRAM_ORDER,
        y_description: &y_description,
        x: 0.0..last as f64,
        y: 0.0..y_top,
        y_ticks: true,
        x_label: &count_label,
        y_label: &number_label,
        legend: Some(SeriesLabelPosition::UpperLeft),
        secondary: None,
    };
    render(frame, HEIGHT, |chart, marks| {
        marks.plot_area(chart.backend_coord(&(0.0, 0.0)), chart.backend_coord(&(last as f64, y_top)), 0..last);
        // The new run first, so the baseline's line stays visible over it.
        for (name, color, timeline) in runs.iter().rev() {
            // The heap is the top band: always-live plus temporaries.
            let Some(heap) = timeline.bands.last() else { continue };
            let points: Vec<(f64, f64)> =
                timeline.x.iter().zip(&heap.values).map(|(&x, &v)| (x as f64, scale.of(v))).collect();
            let label = format!("{name}: peak {}", crate::render::table::bytes(timeline.peak.bytes));
            if *name == "new" {
                let fill = color.mix(0.6).filled();
                let outline =
                    points.iter().copied().chain(points.iter().rev().map(|&(x, _)| (x, 0.0))).collect::<Vec<_>>();
                chart
                    .draw_series(std::iter::once(Polygon::new(outline, fill)))?
                    .label(label)
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], fill));
            } else {
                let style = color.stroke_width(2);
                chart
                    .draw_series(LineSeries::new(points, style))?
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style));
            }
            let peak = chart.backend_coord(&(timeline.peak.x as f64, scale.of(timeline.peak.bytes)));
            marks.circle(peak, 4, *color, &format!("{name} peak {}", peak_label(&timeline.peak)));
        }
        Ok(())
    })
    .map(Some)
}

/// How an x axis reads: its description and how many x values make one unit
/// of the axis.
fn x_unit(axis: XAxis) -> (&'static str, f64) {
    match axis {
        XAxis::ProgramOrder => (PROGRAM_ORDER, 1.0),
        XAxis::Picoseconds => ("time (ms)", 1e9),
        XAxis::TraceEntries => ("allocator trace entry", 1.0),
    }
}

/// Tick labels with the decimals that ten ticks over `span` units need, so
/// that a capture of a few microseconds does not read `1, 1, 1` in ms.
fn decimal_label(span: f64) -> impl Fn(&f64) -> String {
    let decimals = ((10.0 / span).log10().ceil().max(0.0) as usize).min(9);
    move |value: &f64| format!("{value:.decimals$}")
}

/// Pixels of the plot area: the chart less its caption, x axis and margins.
const PLOT_HEIGHT: f64 = HEIGHT as f64 - 110.0;
/// Pixels a legend takes per entry, and for its frame.
const LEGEND_ROW: f64 = 19.0;
const LEGEND_FRAME: f64 = 16.0;
/// Room for the peak label above the highest value.
const PEAK_LABEL: f64 = 24.0;
/// Room for a row of step names under the legend.
const STEP_LABELS: f64 = 16.0;
/// Step names closer than this many pixels to the previous one are left out.
const STEP_LABEL_SPACING: i32 = 56;

fn legend_height(entries: usize) -> f64 {
    entries as f64 * LEGEND_ROW + LEGEND_FRAME
}

/// How far above the highest value the y axis reaches, so that the legend
/// (in a top corner), the step names under it and the peak label sit above
/// every value, never on one.
fn headroom(legend_entries: usize, step_labels: bool) -> f64 {
    let steps = if step_labels { STEP_LABELS } else { 0.0 };
    let reserved = legend_height(legend_entries) + steps + PEAK_LABEL;
    PLOT_HEIGHT / (PLOT_HEIGHT - reserved).max(PLOT_HEIGHT / 4.0)
}

/// Percent ticks up to 100%; the axis runs higher only to make room for the legend.
fn percent_label(value: &f64) -> String {
    if *value > 100.0 + 1e-9 {
        String::new()
    } else {
        number_label(value)
    }
}

pub fn draw(caption: &str, timeline: &Timeline) -> io::Result<String> {
    let scale = ByteScale::for_max(timeline.y_max);
    let (x_description, x_per_unit) = x_unit(timeline.x_axis);
    let first = timeline.x.first().copied().unwrap_or(0);
    let last = timeline.x.last().copied().unwrap_or(0).max(first.saturating_add(1));
    let x_span = first as f64..last as f64;
    let to_axis = |x: i64| x as f64 / x_per_unit;
    let decimals = decimal_label(to_axis(last) - to_axis(first));
    let x_label: &TickLabel = match timeline.x_axis {
        XAxis::ProgramOrder | XAxis::TraceEntries => &count_label,
        XAxis::Picoseconds => &decimals,
    };
    let y_description = format!("bytes ({})", scale.unit());
    let fraction_names: Vec<&str> = timeline.fractions.iter().map(|f| f.name.as_str()).collect();
    let fraction_description = format!("{} (%)", fraction_names.join(", "));
    let entries = timeline.bands.len() + timeline.lines.len() + timeline.fractions.len();
    let headroom = headroom(entries, !timeline.boundaries.is_empty());
    let frame = Frame {
        caption,
        x_description,
        y_description: &y_description,
        x: to_axis(first)..to_axis(last),
        y: 0.0..scale.of(timeline.y_max).max(1.0) * headroom,
        y_ticks: true,
        x_label,
        y_label: &number_label,
        legend: Some(if peak_on_left(&timeline.peak, &x_span) {
            SeriesLabelPosition::UpperRight
        } else {
            SeriesLabelPosition::UpperLeft
        }),
        secondary: (!timeline.fractions.is_empty()).then_some(SecondaryAxis {
            description: &fraction_description,
            y: 0.0..100.0 * headroom,
            label: &percent_label,
        }),
    };
    let xs: Vec<f64> = timeline.x.iter().map(|&x| to_axis(x)).collect();
    // A value that holds until the next point is a step, drawn as a
    // horizontal run and a vertical rise at the next point.
    let points = |values: &[f64]| -> Vec<(f64, f64)> {
        if !timeline.holds_until_next {
            return xs.iter().copied().zip(values.iter().copied()).collect();
        }
        let mut steps = Vec::with_capacity(2 * xs.len());
        for (i, (&x, &y)) in xs.iter().zip(values).enumerate() {
            steps.push((x, y));
            if let Some(&next) = xs.get(i + 1) {
                steps.push((next, y));
            }
        }
        steps
    };
    render(frame, HEIGHT, |chart, marks| {
        let mut lower = vec![0.0; xs.len()];
        let colors: &[RGBColor] =
            if timeline.bands.len() > BAND_COLORS.len() { &MANY_BAND_COLORS } else { &BAND_COLORS };
        for (band, color) in timeline.bands.iter().zip(colors.iter().cycle()) {
            let upper: Vec<f64> = band.values.iter().map(|&v| scale.of(v)).collect();
            let outline: Vec<(f64, f64)> = points(&upper).into_iter().chain(points(&lower).into_iter().rev()).collect();
            let fill = color.mix(0.6).filled();
            chart
                .draw_series(std::iter::once(Polygon::new(outline, fill)))?
                .label(band.name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], fill));
            lower = upper;
        }
        for (line, color) in timeline.lines.iter().zip(LINE_COLORS.iter().cycle()) {
            let style = color.stroke_width(1);
            let values: Vec<f64> = line.values.iter().map(|&v| scale.of(v)).collect();
            chart
                .draw_series(LineSeries::new(points(&values), style))?
                .label(line.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style));
        }
        for (fraction, color) in timeline.fractions.iter().zip(FRACTION_COLORS.iter().cycle()) {
            let style = color.stroke_width(1);
            let percent: Vec<f64> = fraction.values.iter().map(|&v| v * 100.0).collect();
            chart
                .draw_secondary_series(LineSeries::new(points(&percent), style))?
                .label(format!("{} (right axis)", fraction.name))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style));
        }
        let y_top = scale.of(timeline.y_max).max(1.0) * headroom;
        let (left_bottom, right_top) =
            (chart.backend_coord(&(to_axis(first), 0.0)), chart.backend_coord(&(to_axis(last), y_top)));
        marks.plot_area(left_bottom, right_top, first..last);
        // Step names in their row under the legend, where there is room for them.
        let mut last_named: Option<i32> = None;
        for (x, name) in &timeline.boundaries {
            let (bottom, top) = (chart.backend_coord(&(to_axis(*x), 0.0)), chart.backend_coord(&(to_axis(*x), y_top)));
            marks.boundary(bottom, top, &format!("{name} starts at {}", milliseconds(*x)));
            if last_named.is_none_or(|last| top.0 - last >= STEP_LABEL_SPACING) {
                let row = top.1 + (legend_height(entries) + STEP_LABELS) as i32 - 2;
                marks.text((top.0 + 3, row), name, 11, "start", "step-label");
                last_named = Some(top.0);
            }
        }
        let peak = &timeline.peak;
        let top = chart.backend_coord(&(to_axis(peak.x), scale.of(peak.bytes)));
        mark_peak(marks, peak, chart.backend_coord(&(to_axis(peak.x), 0.0)), top, &x_span);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::{decimal_label, draw};
    use crate::analysis::drawing::{PeakMark, Series, Timeline, XAxis};

    fn one_point_at(time_ps: i64, bytes: i64) -> Timeline {
        let series = |values: Vec<i64>| Series { name: "heap".to_string(), values };
        Timeline {
            x_axis: XAxis::Picoseconds,
            x: vec![time_ps, time_ps],
            bands: vec![series(vec![bytes, bytes])],
            lines: vec![series(vec![bytes, bytes])],
            fractions: vec![Series { name: "fragmentation".to_string(), values: vec![f64::NAN, 2.0] }],
            peak: PeakMark { x: time_ps, bytes, what: None, position: "event 1".to_string() },
            y_max: bytes,
            holds_until_next: true,
            boundaries: vec![(time_ps, "step 2".to_string())],
        }
    }

    #[test]
    fn timelines_from_corrupt_events_are_still_drawn() {
        for (time_ps, bytes) in [(i64::MAX, 1 << 20), (i64::MIN, -5), (0, 0), (7, i64::MAX)] {
            let svg = draw("corrupt", &one_point_at(time_ps, bytes)).unwrap();
            assert!(svg.contains("class=\"peak-label\""), "{time_ps} ps, {bytes} bytes");
        }
    }

    #[test]
    fn time_ticks_have_the_decimals_their_spacing_needs() {
        // A Keras fit of 783 ms: whole milliseconds.
        assert_eq!(decimal_label(782.6)(&700.0), "700");
        // Five microseconds of events: ticks 0.5 µs apart stay apart.
        let label = decimal_label(0.005);
        assert_eq!([label(&1.0005), label(&1.001)], ["1.0005", "1.0010"]);
        assert_eq!(decimal_label(1e-12)(&1.0), "1.000000000");
    }
}

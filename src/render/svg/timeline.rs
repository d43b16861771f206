//! Bytes over time: stacked bands, lines and the peak, marked and labelled.

use std::io;

use plotters::prelude::*;

use super::{count_label, mark_peak, number_label, palette, peak_on_left, render, ByteScale, Frame, WIDTH};
use crate::analysis::drawing::{self, Timeline};
use crate::analysis::MemorySpaceReport;

const HEIGHT: u32 = 440;
/// Two points per pixel column: a window's minimum and its maximum.
pub const MAX_POINTS: usize = 2 * WIDTH as usize;

const BAND_COLORS: [RGBColor; 3] = [palette::SKY, palette::ORANGE, palette::GREEN];
const LINE_COLORS: [RGBColor; 2] = [palette::INK, palette::PURPLE];

/// The heap of a memory space over program order; `None` when it has no
/// heap-simulator events.
pub fn program(caption: &str, space: &MemorySpaceReport) -> io::Result<Option<String>> {
    drawing::program_timeline(space, MAX_POINTS).map(|timeline| draw(caption, &timeline)).transpose()
}

pub fn draw(caption: &str, timeline: &Timeline) -> io::Result<String> {
    let scale = ByteScale::for_max(timeline.y_max);
    let x_end = timeline.x.last().copied().unwrap_or(0).max(1) as f64;
    let y_description = format!("bytes ({})", scale.unit());
    let frame = Frame {
        caption,
        x_description: timeline.x_description,
        y_description: &y_description,
        x: 0.0..x_end,
        // Headroom above the peak for its label.
        y: 0.0..scale.of(timeline.y_max).max(1.0) * 1.15,
        y_ticks: true,
        x_label: &count_label,
        y_label: &number_label,
        legend: Some(if peak_on_left(&timeline.peak, x_end) {
            SeriesLabelPosition::UpperRight
        } else {
            SeriesLabelPosition::UpperLeft
        }),
    };
    let xs: Vec<f64> = timeline.x.iter().map(|&x| x as f64).collect();
    render(frame, HEIGHT, |chart, marks| {
        let mut lower = vec![0.0; xs.len()];
        for (band, color) in timeline.bands.iter().zip(BAND_COLORS.iter().cycle()) {
            let upper: Vec<f64> = band.values.iter().map(|&v| scale.of(v)).collect();
            let outline: Vec<(f64, f64)> =
                xs.iter().copied().zip(upper.iter().copied()).chain(xs.iter().copied().zip(lower).rev()).collect();
            let fill = color.mix(0.6).filled();
            chart
                .draw_series(std::iter::once(Polygon::new(outline, fill)))?
                .label(band.name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], fill));
            lower = upper;
        }
        for (line, color) in timeline.lines.iter().zip(LINE_COLORS.iter().cycle()) {
            let style = color.stroke_width(1);
            chart
                .draw_series(LineSeries::new(xs.iter().copied().zip(line.values.iter().map(|&v| scale.of(v))), style))?
                .label(line.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style));
        }
        let peak = &timeline.peak;
        let top = chart.backend_coord(&(peak.x as f64, scale.of(peak.bytes)));
        mark_peak(marks, peak, chart.backend_coord(&(peak.x as f64, 0.0)), top, x_end);
        Ok(())
    })
}

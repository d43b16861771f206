//! Every simulated buffer as a box from its allocation to its free, at its
//! offset in its allocation, with the peak drawn across: how the compiler
//! packed the heap and what overlaps at the peak.

use std::io;

use super::{count_label, mark_peak, number_label, palette, render, ByteScale, Frame, PROGRAM_ORDER};
use crate::analysis::drawing::{self, LifetimeBox};
use crate::analysis::MemorySpaceReport;
use crate::render::table::bytes;

const HEIGHT: u32 = 520;

fn tooltip(b: &LifetimeBox) -> String {
    let l = b.lifetime;
    format!(
        "{}\n{} ({} bytes) at offset {}\nevents {}–{} (buffer {})",
        l.instruction,
        bytes(l.size_bytes),
        l.size_bytes,
        l.offset,
        l.start,
        l.end,
        l.logical_buffer_id
    )
}

/// `None` when the memory space has no simulated buffers.
pub fn draw(caption: &str, space: &MemorySpaceReport) -> io::Result<Option<String>> {
    let Some(layout) = drawing::lifetime_boxes(space) else { return Ok(None) };
    let scale = ByteScale::for_max(layout.y_end);
    let x_end = layout.x_end.max(1) as f64;
    let y_description = format!("offset in allocation ({})", scale.unit());
    let frame = Frame {
        caption,
        x_description: PROGRAM_ORDER,
        y_description: &y_description,
        x: 0.0..x_end,
        // Headroom above the boxes for the peak label.
        y: 0.0..scale.of(layout.y_end).max(1.0) * 1.1,
        y_ticks: true,
        x_label: &count_label,
        y_label: &number_label,
        legend: None,
        secondary: None,
    };
    render(frame, HEIGHT, |chart, marks| {
        for (i, b) in layout.boxes.iter().enumerate() {
            let corner = chart.backend_coord(&(b.x0 as f64, scale.of(b.y0)));
            let opposite = chart.backend_coord(&(b.x1 as f64, scale.of(b.y1)));
            marks.rect(corner, opposite, palette::CYCLE[i % palette::CYCLE.len()], &tooltip(b));
        }
        let peak_x = layout.peak.x as f64;
        let top = chart.backend_coord(&(peak_x, scale.of(layout.y_end)));
        mark_peak(marks, &layout.peak, chart.backend_coord(&(peak_x, 0.0)), top, &(0.0..x_end));
        Ok(())
    })
    .map(Some)
}

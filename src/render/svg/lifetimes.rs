//! Every simulated buffer as a box from its allocation to its free, at its
//! offset in its allocation, with the peak drawn across: how the compiler
//! packed the heap and what overlaps at the peak.

use std::io;

use plotters::style::RGBColor;

use super::peak::{category_color, category_color_name};
use super::{count_label, mark_level, number_label, render, shorten, ByteScale, Frame, PROGRAM_ORDER};
use crate::analysis::drawing::{self, LifetimeBox};
use crate::analysis::{Category, MemorySpaceReport};
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

/// How many of the largest boxes get their instruction written on them.
const LABELLED_BOXES: usize = 8;
/// Below this many pixels a box has no room for a label.
const LABEL_MIN_WIDTH: i32 = 60;
const LABEL_MIN_HEIGHT: i32 = 14;

/// What the peak line of this chart names: the temporaries live at the
/// peak, which the boxes show, and the always-live bytes, which they do not.
pub fn peak_level_label(space: &MemorySpaceReport) -> String {
    format!(
        "temporaries at the peak {} (event {}) · always-live {} not drawn",
        bytes(space.breakdown.temporaries),
        space.peak_position,
        bytes(space.always_live_bytes())
    )
}

/// A category's colour, lighter for every other box so neighbours stay apart.
fn box_color(category: Category, alternate: bool) -> RGBColor {
    let RGBColor(r, g, b) = category_color(category);
    let lighten = |c: u8| if alternate { ((u16::from(c) + 255) / 2) as u8 } else { c };
    RGBColor(lighten(r), lighten(g), lighten(b))
}

/// A box with its two corners in pixels.
type Placed<'a> = ((i32, i32), (i32, i32), &'a LifetimeBox<'a>);

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
        // Headroom above the boxes for the notes and the peak label.
        y: 0.0..scale.of(layout.y_end).max(1.0) * 1.25,
        y_ticks: true,
        x_label: &count_label,
        y_label: &number_label,
        legend: None,
        secondary: None,
    };
    render(frame, HEIGHT, |chart, marks| {
        let top = scale.of(layout.y_end).max(1.0) * 1.25;
        marks.plot_area(chart.backend_coord(&(0.0, 0.0)), chart.backend_coord(&(x_end, top)), 0..layout.x_end.max(1));
        let mut placed: Vec<Placed> = Vec::new();
        for (i, b) in layout.boxes.iter().enumerate() {
            let corner = chart.backend_coord(&(b.x0 as f64, scale.of(b.y0)));
            let opposite = chart.backend_coord(&(b.x1 as f64, scale.of(b.y1)));
            let fill = box_color(b.lifetime.category, i % 2 == 1);
            marks.buffer_rect(corner, opposite, fill, &tooltip(b), b.lifetime.logical_buffer_id);
            placed.push((corner, opposite, b));
        }
        // The largest boxes by area that have room get their instruction written on them.
        let area = |(a, b): ((i32, i32), (i32, i32))| i64::from((a.0 - b.0).abs()) * i64::from((a.1 - b.1).abs());
        placed.sort_by_key(|&(a, b, _)| std::cmp::Reverse(area((a, b))));
        for (corner, opposite, b) in placed.iter().take(LABELLED_BOXES) {
            let (width, height) = ((corner.0 - opposite.0).abs(), (corner.1 - opposite.1).abs());
            if width >= LABEL_MIN_WIDTH && height >= LABEL_MIN_HEIGHT {
                let left_top = (corner.0.min(opposite.0) + 3, corner.1.min(opposite.1) + 12);
                let chars = usize::try_from(width / 7).unwrap_or(0);
                marks.text(left_top, &shorten(&b.lifetime.instruction, chars), 11, "start", "box-label");
            }
        }
        let mut categories: Vec<Category> = Vec::new();
        for b in &layout.boxes {
            if !categories.contains(&b.lifetime.category) {
                categories.push(b.lifetime.category);
            }
        }
        let note_at = chart.backend_coord(&(0.0, scale.of(layout.y_end).max(1.0) * 1.25));
        let colours: Vec<String> =
            categories.iter().map(|&c| format!("{} ({})", c.label(), category_color_name(c))).collect();
        marks.text(
            (note_at.0 + 8, note_at.1 + 16),
            &format!("boxes: {}", colours.join(", ")),
            12,
            "start",
            "category-note",
        );
        marks.text(
            (note_at.0 + 8, note_at.1 + 32),
            &format!(
                "not drawn: {} of always-live buffers (parameters, outputs, constants), live the whole program",
                bytes(space.always_live_bytes())
            ),
            12,
            "start",
            "always-live-note",
        );
        let peak = &layout.peak;
        let level = layout.boxes.iter().filter(|b| b.x0 <= peak.x && peak.x < b.x1).map(|b| b.y1).max().unwrap_or(0);
        let peak_x = peak.x as f64;
        let label = peak_level_label(space);
        let tooltip = format!("{label}: {} bytes of temporaries", space.breakdown.temporaries);
        let (floor, top) = (chart.backend_coord(&(peak_x, 0.0)), chart.backend_coord(&(peak_x, scale.of(level))));
        mark_level(marks, &label, &tooltip, floor, top, peak_x < x_end / 2.0);
        Ok(())
    })
    .map(Some)
}

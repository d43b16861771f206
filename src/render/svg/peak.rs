//! The buffers live at the peak as horizontal bars, largest first: each bar
//! is the buffer's data in its category's colour followed by its layout
//! padding in grey; the buffers past the top N and the small ones are summed
//! into one bar each.

use std::io;

use plotters::style::RGBColor;

use super::{number_label, palette, render, shorten, ByteScale, Frame, Marks};
use crate::analysis::{BufferAtPeak, Category, MemorySpaceReport};
use crate::render::escape::printable;
use crate::render::table::{bytes, file_name_and_line};
use crate::render::text::{rest_label, small_label};

/// Pixels per bar and its label.
const ROW_HEIGHT: u32 = 44;
/// Caption, axis and margins.
const FRAME_HEIGHT: u32 = 120;
/// Characters of a label that fit across the plot at 12 px.
const LABEL_CHARS: usize = 135;

pub fn category_color(category: Category) -> RGBColor {
    match category {
        Category::Parameter => palette::BLUE,
        Category::Output => palette::GREEN,
        Category::ThreadLocal => palette::PURPLE,
        Category::Constant => palette::YELLOW,
        Category::Temporary => palette::ORANGE,
    }
}

/// How a legend names [`category_color`].
pub fn category_color_name(category: Category) -> &'static str {
    match category {
        Category::Parameter => "blue",
        Category::Output => "green",
        Category::ThreadLocal => "purple",
        Category::Constant => "yellow",
        Category::Temporary => "orange",
    }
}

/// One row of a horizontal bar chart.
pub(super) struct Bar {
    pub label: String,
    /// Consecutive segments from 0: bytes, colour and hover text.
    pub segments: Vec<(i64, RGBColor, String)>,
}

fn buffer_bar(buffer: &BufferAtPeak) -> Bar {
    let size = bytes(buffer.size_bytes);
    let mut details = format!(
        "{} ({})\n{size} ({} bytes), unpadded {}\n{}\n{}",
        printable(&buffer.instruction),
        buffer.category.label(),
        buffer.size_bytes,
        bytes(buffer.unpadded_bytes),
        printable(&buffer.shape),
        printable(&buffer.op_name)
    );
    if let Some(source) = &buffer.source {
        details.push('\n');
        details.push_str(&printable(source));
    }
    let mut segments = vec![(buffer.unpadded_bytes, category_color(buffer.category), details.clone())];
    if buffer.padding_bytes() > 0 {
        segments.push((
            buffer.padding_bytes(),
            palette::LIGHT_GREY,
            format!("padding {} of {}", bytes(buffer.padding_bytes()), printable(&buffer.instruction)),
        ));
    }
    // Fields a buffer lacks (no op name, no source) leave no empty `· ·`.
    let source = buffer.source.as_deref().map(file_name_and_line).unwrap_or_default();
    // The source line before the long fields, so shortening a label keeps it.
    let fields = [&*buffer.instruction, &size, buffer.category.label(), &source, &buffer.shape, &buffer.op_name];
    Bar { label: fields.iter().filter(|f| !f.is_empty()).copied().collect::<Vec<_>>().join(" · "), segments }
}

/// A grey bar for what the chart does not show one by one.
pub(super) fn summed_bar(label: String, total: i64) -> Bar {
    let text = format!("{label} · {}", bytes(total));
    Bar { segments: vec![(total, palette::GREY, text.clone())], label: text }
}

/// `None` when nothing is live at the peak.
pub fn draw(caption: &str, space: &MemorySpaceReport, top: usize) -> io::Result<Option<String>> {
    if space.at_peak.is_empty() {
        return Ok(None);
    }
    let table = space.largest_buffers(top);
    let mut bars: Vec<Bar> = table.rows.iter().map(|b| buffer_bar(b)).collect();
    if table.rest_count > 0 {
        bars.push(summed_bar(rest_label(&table), table.rest_bytes));
    }
    if table.small_count > 0 {
        bars.push(summed_bar(small_label(&table), table.small_bytes));
    }
    draw_bars(caption, "bytes at the peak", &bars).map(Some)
}

/// Draws `bars` top to bottom, each labelled above its segments, on an axis
/// of `what` in the unit that suits the widest bar.
pub(super) fn draw_bars(caption: &str, what: &str, bars: &[Bar]) -> io::Result<String> {
    let widest = bars.iter().map(|bar| bar.segments.iter().map(|s| s.0).sum::<i64>()).max().unwrap_or(0);
    let scale = ByteScale::for_max(widest);
    let x_description = format!("{what} ({})", scale.unit());
    let rows = bars.len() as f64;
    let frame = Frame {
        caption,
        x_description: &x_description,
        y_description: "",
        x: 0.0..scale.of(widest).max(1.0) * 1.02,
        y: 0.0..rows,
        y_ticks: false,
        x_label: &number_label,
        y_label: &number_label,
        legend: None,
        secondary: None,
    };
    let height = FRAME_HEIGHT + ROW_HEIGHT * bars.len() as u32;
    render(frame, height, |chart, marks| {
        for (i, bar) in bars.iter().enumerate() {
            let row_top = rows - i as f64;
            draw_bar(marks, bar, |bytes, y| chart.backend_coord(&(scale.of(bytes), row_top - y)));
        }
        Ok(())
    })
}

/// Draws one bar; `at(bytes, depth)` places a point `depth` rows below the row's top.
fn draw_bar(marks: &mut Marks, bar: &Bar, at: impl Fn(i64, f64) -> (i32, i32)) {
    marks.text(at(0, 0.38), &shorten(&bar.label, LABEL_CHARS), 12, "start", "bar-label");
    let mut start = 0;
    for (length, color, tooltip) in &bar.segments {
        let end = start + length;
        marks.rect(at(start, 0.48), at(end, 0.9), *color, tooltip);
        start = end;
    }
}

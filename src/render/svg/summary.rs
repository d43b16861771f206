//! The one chart of what the [`ChartPlan`] does not chart one by one: a bar
//! per memory space, allocator or device memory profile past the caps, by
//! peak, the smallest summed into one bar.

use std::io;

use super::palette;
use super::peak::{draw_bars, summed_bar, Bar};
use crate::analysis::chart_plan::{ChartPlan, NotCharted, Subject, MAX_CHARTED};
use crate::analysis::Report;
use crate::render::device_memory::snapshot_heading;
use crate::render::escape::printable;
use crate::render::table::{bytes, plural};
use crate::render::text::{allocator_heading, space_heading};
use crate::render::torch_snapshot;

/// What `subject` is, as its own charts would be captioned.
fn heading(report: &Report, subject: Subject) -> String {
    match subject {
        Subject::MemorySpace { module, space } => {
            let module = &report.modules[module];
            space_heading(module, &module.memory_spaces[space])
        }
        Subject::Allocator(i) => allocator_heading(&report.allocators[i]),
        Subject::DeviceMemory(i) => snapshot_heading(&report.device_memory[i]),
        Subject::TorchSnapshot(i) => torch_snapshot::snapshot_heading(&report.torch_snapshots[i]),
    }
}

pub fn draw(report: &Report, not_charted: &NotCharted) -> io::Result<String> {
    let mut bars: Vec<Bar> = not_charted
        .largest
        .iter()
        .map(|&(subject, peak)| {
            let label = format!("{} · {}", printable(&heading(report, subject)), bytes(peak));
            Bar { segments: vec![(peak, palette::BLUE, format!("{label} ({peak} bytes)"))], label }
        })
        .collect();
    if not_charted.rest_count > 0 {
        bars.push(summed_bar(plural(not_charted.rest_count, "more"), not_charted.rest_bytes));
    }
    let caption = format!("Not charted one by one: {}, by peak", what(not_charted));
    draw_bars(&caption, "peak", &bars)
}

/// `3,968 memory spaces and 2 allocators`.
fn what(not_charted: &NotCharted) -> String {
    let parts: Vec<String> = [
        (not_charted.memory_spaces, "memory space"),
        (not_charted.allocators, "allocator"),
        (not_charted.device_memory, "device memory profile"),
        (not_charted.torch_snapshots, "PyTorch snapshot device"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, noun)| plural(n, noun))
    .collect();
    parts.join(" and ")
}

/// What the plan left out, in one line, for `plot` to say on standard error
/// and the HTML page under its summary; `None` when nothing was left out.
pub fn not_charted_line(plan: &ChartPlan) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(not_charted) = &plan.not_charted {
        parts.push(format!(
            "{} not charted one by one (only the {MAX_CHARTED} with the largest peaks of each kind are); \
             one chart shows their peaks",
            what(not_charted)
        ));
    }
    if plan.empty_spaces > 0 {
        parts.push(format!("{} with nothing live at the peak: no chart", plural(plan.empty_spaces, "memory space")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

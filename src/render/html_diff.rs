//! `xmem diff --format html`: the page a CI job attaches to a pull request.
//! The verdict first, the peaks that changed, then for each changed memory
//! space its heap in both runs drawn over each other, the change by source
//! line, op name and category, and the buffers behind it, and the
//! allocators. Self-contained, like the report page, with the same script:
//! the live set of either run at any point of the shared timeline.

use std::io::{self, Write};

use html_escape::encode_text;

use super::attribution::{group_change_tables, CHANGE_NUMBERS};
use super::diff::{
    self as text_diff, ALLOCATOR_HEADER, ALLOCATOR_NUMBERS, BUFFER_HEADER, BUFFER_NUMBERS, PEAK_HEADER, PEAK_NUMBERS,
};
use super::html::{figure, foot, head, script, table, SectionIds};
use super::page_data::PageData;
use super::svg::{timeline, ChartKind};
use super::table::Cell;
use super::torch_snapshot;
use crate::analysis::{MemorySpaceReport, Report};
use crate::diff::{Change, Diff, MemorySpaceDiff, PeakDiff, Verdict};

pub fn write<'r>(out: &mut dyn Write, diff: &Diff, base: &'r Report, new: &'r Report, top: usize) -> io::Result<()> {
    let title = format!("xmem diff: {} → {}", diff.base_inputs.join(", "), diff.new_inputs.join(", "));
    head(out, &title, &diff.warnings)?;
    let class = if diff.verdict == Verdict::Pass { "pass" } else { "fail" };
    writeln!(out, "<p class=\"{class}\"><strong>Verdict: {}</strong></p>", encode_text(&text_diff::verdict(diff)))?;
    if !diff.violations.is_empty() {
        writeln!(out, "<ul>")?;
        for violation in &diff.violations {
            writeln!(out, "<li>{}</li>", encode_text(&text_diff::violation_text(violation)))?;
        }
        writeln!(out, "</ul>")?;
    }
    let (rows, unchanged) = text_diff::peak_rows(diff);
    if !rows.is_empty() {
        writeln!(out, "<h2>Peaks that changed</h2>")?;
        table(out, &PEAK_HEADER, &plain(rows.clone()), &PEAK_NUMBERS)?;
    }
    writeln!(out, "<p>{}</p>", encode_text(&text_diff::unchanged_text(rows.len(), unchanged)))?;
    let changed = diff.modules.iter().filter(|s| s.peak.delta.change != Change::Unchanged);
    let (mut ids, mut data) = (SectionIds::default(), PageData::new(top));
    for space in changed.take(top) {
        let heading = text_diff::space_change_heading(space);
        let id = ids.give(&format!("change-{heading}"));
        writeln!(out, "<section>\n<h2 id=\"{id}\">{}</h2>", encode_text(&heading))?;
        let (base_space, new_space) = (find(base, &space.peak, Side::Base), find(new, &space.peak, Side::New));
        match timeline::overlay(&heading, base_space, new_space)? {
            Some(chart) => figure(out, ChartKind::Overlay, &chart)?,
            None => writeln!(out, "<p>No heap-simulator events in either run: no timeline to draw.</p>")?,
        }
        for (run, side) in [("base", base_space), ("new", new_space)] {
            if let Some(side) = side {
                data.add_space(&id, Some(run), side);
            }
        }
        write_group_changes(out, space, top)?;
        if !space.buffers.is_empty() {
            writeln!(out, "<h3>{}</h3>", encode_text(&text_diff::buffers_title(space, top)))?;
            table(out, &BUFFER_HEADER, &plain(text_diff::buffer_rows(space, top, " → ")), &BUFFER_NUMBERS)?;
            if let Some(matched) = text_diff::matched_text(space) {
                writeln!(out, "<p>{}</p>", encode_text(&matched))?;
            }
        }
        writeln!(out, "</section>")?;
    }
    if !diff.allocators.is_empty() {
        writeln!(out, "<h2>Allocators</h2>")?;
        table(out, &ALLOCATOR_HEADER, &plain(text_diff::allocator_rows(&diff.allocators)), &ALLOCATOR_NUMBERS)?;
    }
    for device in &diff.torch_snapshots {
        writeln!(out, "<section>\n<h2>{}</h2>", encode_text(&torch_snapshot::diff_heading(device)))?;
        writeln!(out, "<dl>")?;
        for (label, value) in torch_snapshot::diff_facts(device) {
            writeln!(out, "<dt>{}</dt><dd>{}</dd>", encode_text(label), encode_text(&value))?;
        }
        writeln!(out, "</dl>")?;
        if !device.owners.is_empty() {
            writeln!(out, "<h3>{}</h3>", encode_text(&torch_snapshot::owners_title(device, top)))?;
            let rows = torch_snapshot::owner_rows(device, top);
            table(out, &torch_snapshot::OWNER_HEADER, &rows, &torch_snapshot::OWNER_NUMBERS)?;
        }
        writeln!(out, "</section>")?;
    }
    if !diff.device_memory.is_empty() {
        writeln!(out, "<p>Device memory profiles are compared in the text, Markdown and JSON output.</p>")?;
    }
    script(out, &data)?;
    foot(out)
}

/// The change by source line, op name and category, as the text and Markdown lead with it.
fn write_group_changes(out: &mut dyn Write, space: &MemorySpaceDiff, top: usize) -> io::Result<()> {
    let tables = group_change_tables(&space.groups, top);
    if !tables.headlines.is_empty() {
        writeln!(out, "<ul class=\"headlines\">")?;
        for line in &tables.headlines {
            writeln!(out, "<li>{}</li>", encode_text(line))?;
        }
        writeln!(out, "</ul>")?;
    }
    for change_table in tables.tables {
        writeln!(out, "<h3>{}</h3>", encode_text(change_table.title))?;
        table(out, &change_table.header, &change_table.rows, &CHANGE_NUMBERS)?;
        if let Some(more) = change_table.more {
            writeln!(out, "<p>{}</p>", encode_text(&more))?;
        }
    }
    Ok(())
}

enum Side {
    Base,
    New,
}

/// The memory space a peak of the diff was taken from, in one run.
fn find<'r>(report: &'r Report, peak: &PeakDiff, side: Side) -> Option<&'r MemorySpaceReport> {
    let (name, program_id) = match side {
        Side::Base => (peak.base_name.as_ref()?, peak.base_program_id),
        Side::New => (peak.new_name.as_ref()?, peak.new_program_id),
    };
    let spaces = &report.modules.iter().find(|m| &m.name == name && Some(m.program_id) == program_id)?.memory_spaces;
    // A colour with a heap trace in one run only pairs by colour alone.
    spaces
        .iter()
        .find(|s| s.color == peak.color && s.trace_index == peak.trace_index)
        .or_else(|| spaces.iter().find(|s| s.color == peak.color))
}

fn plain(rows: Vec<Vec<Cell>>) -> Vec<Vec<String>> {
    rows.into_iter().map(|row| row.into_iter().map(Cell::into_text).collect()).collect()
}

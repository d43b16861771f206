//! The report as one self-contained HTML page: inline CSS, inline SVG charts
//! and an inline script, no font and no network, so it opens anywhere and can
//! be attached to a bug. It shows the same tables as the text report, and the
//! charts of every module and memory space, device memory profile and
//! allocator. With script off that is all; the script ([`SCRIPT`]) adds a
//! module and memory-space selector, the live set at any point of a
//! timeline (from [`PageData`]), sorting and filtering, and zoomable flame graphs.

use std::collections::HashSet;
use std::io::{self, Write};

use html_escape::{encode_double_quoted_attribute, encode_text};

use super::page_data::PageData;
use super::svg::{self, ChartKind};
use super::table::{bytes, Flavor};
use super::text::{
    allocation_header, allocation_rows, allocation_table_title, allocator_facts, allocator_heading, buffer_header,
    buffer_rows, buffer_table_title, is_unused, space_facts, space_heading, step_rows, summary_header, summary_rows,
    unused_footnote, ALLOCATION_NUMBERS, BUFFER_NUMBERS, MISSING_TRACE_FOOTNOTE, STEP_HEADER, STEP_NUMBERS,
    SUMMARY_NUMBERS,
};
use super::{attribution, device_memory, torch_snapshot};
use crate::analysis::attribution::Groups;
use crate::analysis::device_memory::DeviceMemoryReport;
use crate::analysis::torch_snapshot::TorchSnapshotReport;
use crate::analysis::{AllocatorReport, BufferTable, MemorySpaceReport, ModuleReport, Report};

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 1040px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; }
h2 { font-size: 1.2em; margin-top: 2.5em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; vertical-align: top; overflow-wrap: break-word; }
th { background: #f3f3f3; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: bold; }
dd { margin: 0; }
figure { margin: 1em 0; }
figure > svg { display: block; max-width: 100%; height: auto; border: 1px solid #eee; }
.warning, .fail { color: #a00; }
.pass { color: #070; }
footer { margin-top: 3em; font-size: 0.8em; color: #666; }
nav.explorer { position: sticky; top: 0; z-index: 2; background: #fff; border-bottom: 1px solid #ccc; padding: 0.5em 0; font-size: 0.9em; }
nav.explorer select.module { max-width: 28em; }
nav.explorer .every { color: #555; }
.live-panel { border: 1px solid #ddd; padding: 0.25em 0.75em 0.75em; margin: 1em 0; background: #fcfcfc; }
.live-panel h3 { margin: 0.5em 0 0.25em; }
.live-help { color: #555; font-size: 0.85em; margin: 0.2em 0; }
.live-controls { display: flex; gap: 0.5em; align-items: center; }
.live-controls input.point { flex: 1; }
.live-title { font-weight: bold; }
.live-panel td.wrap { overflow-wrap: anywhere; }
.table-tools { display: flex; gap: 0.5em; margin-top: 0.5em; }
.table-tools input { min-width: 20em; }
th.sortable { cursor: pointer; }
th[data-sorted=descending]::after { content: \" ▼\"; }
th[data-sorted=ascending]::after { content: \" ▲\"; }
tr.hl td { background: #fff1b8; }
tr.rest td, tr.summary td { color: #555; }
svg.pointable { cursor: crosshair; }
svg line.cursor { stroke: #c80000; stroke-width: 1.5; pointer-events: none; }
svg.picking rect[data-buffer] { opacity: 0.25; }
svg.picking rect[data-buffer].live { opacity: 1; }
svg rect[data-buffer].hl { opacity: 1; stroke: #000; stroke-width: 2; }
.flame-tools { display: flex; gap: 0.5em; align-items: center; margin-bottom: 0.25em; font-size: 0.9em; }
";

/// The page up to its heading, and the warnings.
pub(super) fn head(out: &mut dyn Write, title: &str, warnings: &[String]) -> io::Result<()> {
    writeln!(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">")?;
    writeln!(out, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")?;
    writeln!(out, "<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>", encode_text(title))?;
    writeln!(out, "<h1>{}</h1>", encode_text(title))?;
    for warning in warnings {
        writeln!(out, "<p class=\"warning\">warning: {}</p>", encode_text(warning))?;
    }
    Ok(())
}

pub(super) fn foot(out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<footer>Written by xmem {}.</footer>\n</body>\n</html>", env!("CARGO_PKG_VERSION"))
}

/// The page's script; see the module's documentation.
const SCRIPT: &str = include_str!("page.js");

/// The data for the page's script, then the script: last, so that the page
/// reads whole before it runs.
pub(super) fn script(out: &mut dyn Write, data: &PageData) -> io::Result<()> {
    data.write(out)?;
    // The script holds no `</script`; the test of the page checks it.
    writeln!(out, "<script>\n{SCRIPT}</script>")
}

/// Section ids, each given once: two inputs can hold modules of the same name and id.
#[derive(Debug, Default)]
pub(super) struct SectionIds {
    given: HashSet<String>,
}

impl SectionIds {
    /// `name` made fit for an id (and a link), with `-2`, `-3`… when already given.
    pub(super) fn give(&mut self, name: &str) -> String {
        let base: String =
            name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        let mut id = base.clone();
        let mut n = 1;
        while !self.given.insert(id.clone()) {
            n += 1;
            id = format!("{base}-{n}");
        }
        id
    }
}

pub fn write(out: &mut dyn Write, report: &Report, top: usize) -> io::Result<()> {
    head(out, &format!("xmem report: {}", report.inputs.join(", ")), &report.warnings)?;
    let mut ids = SectionIds::default();
    // Per module, the ids of its sections: one per memory space, or one for a module that has none.
    let module_ids: Vec<Vec<String>> = report
        .modules
        .iter()
        .map(|m| match m.problem {
            Some(_) => vec![ids.give(&section_name(m, None))],
            None => m.memory_spaces.iter().map(|s| ids.give(&section_name(m, Some(s)))).collect(),
        })
        .collect();
    let mut data = PageData::new(top);
    for note in &report.notes {
        writeln!(out, "<p>{}</p>", encode_text(note))?;
    }
    if report.modules.is_empty()
        && report.device_memory.is_empty()
        && report.allocators.is_empty()
        && report.torch_snapshots.is_empty()
    {
        writeln!(out, "<p>No compiled XLA modules in this input.</p>")?;
    } else if !report.modules.is_empty() {
        writeln!(out, "<h2>Summary</h2>")?;
        let (rows, missing_trace, unused) = summary_rows(report);
        let anchors: Vec<String> = report
            .modules
            .iter()
            .zip(&module_ids)
            .flat_map(|(m, ids)| match m.problem {
                Some(_) => ids.clone(),
                None => {
                    m.memory_spaces.iter().zip(ids).filter(|(s, _)| !is_unused(s)).map(|(_, id)| id.clone()).collect()
                }
            })
            .collect();
        linked_table(out, &summary_header(report), &rows, &anchors, &SUMMARY_NUMBERS)?;
        if missing_trace {
            writeln!(out, "<p>{}</p>", encode_text(MISSING_TRACE_FOOTNOTE))?;
        }
        if unused > 0 {
            writeln!(out, "<p>{}</p>", encode_text(&unused_footnote(unused)))?;
        }
    }
    for (module, ids) in report.modules.iter().zip(&module_ids) {
        write_module(out, module, ids, top, &mut data)?;
    }
    for snapshot in &report.device_memory {
        write_device_memory(out, snapshot, top)?;
    }
    for allocator in &report.allocators {
        let id = ids.give(&format!("allocator-{}-{}", allocator.host, allocator.name));
        write_allocator(out, allocator, &id, top, &mut data)?;
    }
    for snapshot in &report.torch_snapshots {
        let id = ids.give(&format!("torch-{}-{}", snapshot.input, snapshot.device));
        write_torch_snapshot(out, snapshot, &id, top)?;
    }
    script(out, &data)?;
    foot(out)
}

/// A PyTorch snapshot's device: its facts, the OOM, its charts, and who
/// owned the peak by user frame, by stack and by block.
fn write_torch_snapshot(out: &mut dyn Write, report: &TorchSnapshotReport, id: &str, top: usize) -> io::Result<()> {
    writeln!(out, "<section>\n<h2 id=\"{id}\">{}</h2>", encode_text(&torch_snapshot::snapshot_heading(report)))?;
    let notes = report.notes.iter().map(|note| ("Note", note.clone()));
    facts(out, torch_snapshot::facts(report).into_iter().chain(notes))?;
    if let Some(oom) = &report.oom {
        writeln!(out, "<h3>{}</h3>", encode_text(&torch_snapshot::oom_heading(report, oom)))?;
        facts(out, torch_snapshot::oom_facts(oom))?;
        for line in &oom.explanation {
            writeln!(out, "<p>{}</p>", encode_text(line))?;
        }
        writeln!(out, "<h4>{}</h4>", encode_text(&torch_snapshot::oom_groups_title(oom)))?;
        let rows = torch_snapshot::group_rows(&oom.at_oom, oom.live_bytes, top);
        table(out, &torch_snapshot::GROUP_HEADER, &rows, &torch_snapshot::GROUP_NUMBERS)?;
    }
    for (kind, chart) in svg::torch_snapshot_charts(report, top)? {
        figure(out, kind, &chart)?;
    }
    if !report.at_peak.is_empty() {
        writeln!(out, "<h3>{}</h3>", encode_text(&torch_snapshot::peak_groups_title(report)))?;
        let rows = torch_snapshot::group_rows(&report.at_peak_by_user_frame, report.peak_bytes, top);
        table(out, &torch_snapshot::GROUP_HEADER, &rows, &torch_snapshot::GROUP_NUMBERS)?;
        writeln!(out, "<h3>{}</h3>\n<ol>", encode_text(&torch_snapshot::stacks_title(report, top)))?;
        for stack in report.at_peak_by_stack.iter().take(top) {
            let lines = torch_snapshot::stack_lines(&stack.frames).join("\n");
            writeln!(
                out,
                "<li>{}<pre>{}</pre></li>",
                encode_text(&torch_snapshot::stack_total(stack)),
                encode_text(&lines)
            )?;
        }
        writeln!(out, "</ol>")?;
        writeln!(out, "<h3>{}</h3>", encode_text(&torch_snapshot::allocations_title(report, top)))?;
        let rows = torch_snapshot::allocation_rows(report, top);
        table(out, &torch_snapshot::ALLOCATION_HEADER, &rows, &torch_snapshot::ALLOCATION_NUMBERS)?;
    }
    writeln!(out, "</section>")
}

/// Labelled facts as a definition list.
fn facts(out: &mut dyn Write, facts: impl IntoIterator<Item = (&'static str, String)>) -> io::Result<()> {
    writeln!(out, "<dl>")?;
    for (label, value) in facts {
        writeln!(out, "<dt>{}</dt><dd>{}</dd>", encode_text(label), encode_text(&value))?;
    }
    writeln!(out, "</dl>")
}

fn write_module<'r>(
    out: &mut dyn Write,
    module: &'r ModuleReport,
    ids: &[String],
    top: usize,
    data: &mut PageData<'r>,
) -> io::Result<()> {
    if let Some(problem) = &module.problem {
        let id = ids.first().map_or("", String::as_str);
        writeln!(
            out,
            "<section>\n<h2 id=\"{id}\"{}>{}</h2>",
            module_attributes(module, None),
            encode_text(&module.display_name())
        )?;
        return writeln!(out, "<p>{}</p>\n</section>", encode_text(problem));
    }
    for (space, id) in module.memory_spaces.iter().zip(ids) {
        write_space(out, module, space, id, top)?;
        data.add_space(id, None, space);
    }
    write_module_hints(out, module)
}

/// What a module's section is named after, before it is made an id.
fn section_name(module: &ModuleReport, space: Option<&MemorySpaceReport>) -> String {
    let mut name = format!("module-{}", module.display_name());
    if let Some(space) = space {
        name.push_str(&format!("-color-{}-trace-{}", space.color, space.trace_index.map_or(-1, |t| t as i64)));
    }
    name
}

/// The attributes by which the page's script lists a section in its
/// selector: the module, the memory space, and its peak.
fn module_attributes(module: &ModuleReport, space: Option<&MemorySpaceReport>) -> String {
    let mut attributes = format!(" data-module=\"{}\"", encode_double_quoted_attribute(&module.display_name()));
    if let Some(space) = space {
        attributes.push_str(&format!(
            " data-space=\"{}\" data-peak=\"{}\"",
            encode_double_quoted_attribute(&space.name),
            space.peak_bytes
        ));
    }
    attributes
}

/// A table whose first column links to the section of each row.
fn linked_table(
    out: &mut dyn Write,
    header: &[&str],
    rows: &[Vec<String>],
    anchors: &[String],
    numeric: &[usize],
) -> io::Result<()> {
    let linked: Vec<Vec<String>> = rows
        .iter()
        .zip(anchors)
        .map(|(row, anchor)| {
            row.iter()
                .enumerate()
                .map(|(i, cell)| match i {
                    0 => format!("<a href=\"#{anchor}\">{}</a>", encode_text(cell)),
                    _ => breakable(cell),
                })
                .collect()
        })
        .collect();
    raw_table(out, header, &linked, numeric)
}

/// The groupings of a live set, then its buffers.
fn write_groups(out: &mut dyn Write, groups: &Groups, total: i64, top: usize) -> io::Result<()> {
    for grouping in attribution::group_tables(groups, total, top) {
        group_table(out, "h4", grouping)?;
    }
    Ok(())
}

/// A grouping under a heading of the given level.
fn group_table(out: &mut dyn Write, heading: &str, grouping: attribution::GroupTable) -> io::Result<()> {
    writeln!(out, "<{heading}>{}</{heading}>", encode_text(grouping.title))?;
    table(out, &grouping.header, &grouping.rows, &attribution::GROUP_NUMBERS)
}

fn write_space_extras(out: &mut dyn Write, space: &MemorySpaceReport, top: usize) -> io::Result<()> {
    if let Some(live) = &space.attribution.at {
        writeln!(out, "<h3>{}</h3>", encode_text(&attribution::at_title(live)))?;
        write_groups(out, &live.groups, live.heap_bytes, top)?;
        let columns = Flavor::Markdown;
        let buffers = BufferTable::of(&live.buffers, top);
        table(out, buffer_header(columns), &buffer_rows(columns, &buffers), &BUFFER_NUMBERS)?;
    }
    if !space.attribution.peaks.is_empty() {
        writeln!(out, "<h3>{}</h3>", encode_text(attribution::PEAKS_TITLE))?;
        table(out, &attribution::PEAK_HEADER, &attribution::peak_rows(space), &attribution::PEAK_NUMBERS)?;
    }
    if let Some(hint) = &space.attribution.padding {
        list(out, &attribution::padding_title(hint), &attribution::padding_lines(hint))?;
    }
    Ok(())
}

/// A module's notes and hints, after its sections; marked with the module,
/// so that the script shows them with the module.
fn write_module_hints(out: &mut dyn Write, module: &ModuleReport) -> io::Result<()> {
    let of = encode_double_quoted_attribute(&module.display_name()).to_string();
    for note in &module.notes {
        writeln!(out, "<p data-notes-of=\"{of}\">Note: {}</p>", encode_text(note))?;
    }
    if module.donation_hints().is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = module.donation_hints().iter().map(attribution::donation_line).collect();
    writeln!(
        out,
        "<div class=\"hints\" data-notes-of=\"{of}\">\n<h3>{}: what to change</h3>",
        encode_text(&module.display_name())
    )?;
    list(out, &attribution::donation_title(module), &lines)?;
    writeln!(out, "</div>")
}

fn list(out: &mut dyn Write, title: &str, lines: &[String]) -> io::Result<()> {
    writeln!(out, "<p>{}</p>\n<ul>", encode_text(title))?;
    for line in lines {
        writeln!(out, "<li>{}</li>", encode_text(line))?;
    }
    writeln!(out, "</ul>")
}

fn write_space(
    out: &mut dyn Write,
    module: &ModuleReport,
    space: &MemorySpaceReport,
    id: &str,
    top: usize,
) -> io::Result<()> {
    let (attributes, heading) = (module_attributes(module, Some(space)), space_heading(module, space));
    writeln!(out, "<section>\n<h2 id=\"{id}\"{attributes}>{}</h2>\n<dl>", encode_text(&heading))?;
    for (label, value) in space_facts(space) {
        writeln!(out, "<dt>{}</dt><dd>{}</dd>", encode_text(label), encode_text(&value))?;
    }
    writeln!(out, "</dl>")?;
    for (kind, chart) in svg::space_charts(module, space, top)? {
        figure(out, kind, &chart)?;
    }
    if !space.at_peak.is_empty() {
        writeln!(out, "<h3>Who owns the peak ({})</h3>", encode_text(&bytes(space.peak_bytes)))?;
        write_groups(out, &space.attribution.at_peak_groups, space.peak_bytes, top)?;
        let buffers = space.largest_buffers(top);
        writeln!(out, "<h3>{}</h3>", encode_text(&buffer_table_title(space, &buffers)))?;
        // A page, like Markdown, has room for one column per field.
        let columns = Flavor::Markdown;
        table(out, buffer_header(columns), &buffer_rows(columns, &buffers), &BUFFER_NUMBERS)?;
    }
    write_space_extras(out, space, top)?;
    writeln!(out, "</section>")
}

fn write_device_memory(out: &mut dyn Write, report: &DeviceMemoryReport, top: usize) -> io::Result<()> {
    let heading = device_memory::snapshot_heading(report);
    writeln!(out, "<section>\n<h2>{}</h2>", encode_text(&heading))?;
    writeln!(out, "<dl>\n<dt>Live</dt><dd>{}</dd>\n</dl>", encode_text(&device_memory::live(report)))?;
    table(out, &device_memory::DEVICE_HEADER, &device_memory::device_rows(report), &device_memory::DEVICE_NUMBERS)?;
    group_table(out, "h3", attribution::device_memory_group_table(report, top))?;
    if let Some(chart) = svg::sites::draw(&format!("{heading}: allocation sites by function"), report, top)? {
        figure(out, ChartKind::Sites, &chart)?;
    }
    if let Some(chart) = svg::flame::device_memory(&format!("{heading}: live memory by stack"), report)? {
        figure(out, ChartKind::Flame, &chart)?;
    }
    writeln!(out, "<h3>{}</h3>", encode_text(&device_memory::sites_title(report, top)))?;
    table(out, &device_memory::SITE_HEADER, &device_memory::site_rows(report, top), &device_memory::SITE_NUMBERS)?;
    let stacks = report.heaviest_stacks(top);
    if !stacks.rows.is_empty() {
        writeln!(out, "<h3>{}</h3>\n<ol>", encode_text(device_memory::STACKS_TITLE))?;
        for stack in stacks.rows {
            let frames: Vec<String> = stack.frames.iter().map(device_memory::frame_line).collect();
            writeln!(
                out,
                "<li>{}<pre>{}</pre></li>",
                encode_text(&device_memory::stack_total(stack)),
                encode_text(&frames.join("\n"))
            )?;
        }
        writeln!(out, "</ol>")?;
        if let Some(rest) = device_memory::rest_of_stacks(&stacks) {
            writeln!(out, "<p>{}</p>", encode_text(&rest))?;
        }
    }
    writeln!(out, "</section>")
}

fn write_allocator<'r>(
    out: &mut dyn Write,
    allocator: &'r AllocatorReport,
    id: &str,
    top: usize,
    data: &mut PageData<'r>,
) -> io::Result<()> {
    data.add_allocator(id, allocator);
    writeln!(out, "<section>\n<h2 id=\"{id}\">{}</h2>\n<dl>", encode_text(&allocator_heading(allocator)))?;
    for (label, value) in allocator_facts(allocator) {
        writeln!(out, "<dt>{}</dt><dd>{}</dd>", encode_text(label), encode_text(&value))?;
    }
    writeln!(out, "</dl>")?;
    if let Some(chart) = svg::timeline::allocator(&svg::allocator_chart_caption(allocator), allocator)? {
        figure(out, ChartKind::Timeline, &chart)?;
    }
    if !allocator.at_peak.is_empty() || allocator.unattributed_at_peak_bytes != 0 {
        group_table(out, "h3", attribution::allocator_group_table(allocator, top))?;
        let rows = allocator.largest_rows(top);
        writeln!(out, "<h3>{}</h3>", encode_text(&allocation_table_title(allocator, &rows)))?;
        let columns = Flavor::Markdown;
        table(out, allocation_header(columns), &allocation_rows(columns, allocator, &rows), &ALLOCATION_NUMBERS)?;
    }
    if !allocator.steps.is_empty() {
        writeln!(out, "<h3>Peak by step</h3>")?;
        let (rows, rest) = step_rows(allocator, top);
        table(out, &STEP_HEADER, &rows, &STEP_NUMBERS)?;
        if let Some(rest) = rest {
            writeln!(out, "<p>{}</p>", encode_text(&rest))?;
        }
    }
    writeln!(out, "</section>")
}

/// An inline chart, classed by its kind.
pub(super) fn figure(out: &mut dyn Write, kind: ChartKind, chart: &str) -> io::Result<()> {
    writeln!(out, "<figure class=\"chart {}\">\n{chart}</figure>", kind.name())
}

/// A table with the given columns right-aligned, as numbers read best.
pub(super) fn table(out: &mut dyn Write, header: &[&str], rows: &[Vec<String>], numeric: &[usize]) -> io::Result<()> {
    let escaped: Vec<Vec<String>> = rows.iter().map(|row| row.iter().map(|cell| breakable(cell)).collect()).collect();
    raw_table(out, header, &escaped, numeric)
}

/// A cell's text, escaped, that may wrap after `/` and `,` so long op
/// names, shapes and paths fit the page without breaking short words.
fn breakable(cell: &str) -> String {
    let mut out = String::with_capacity(cell.len() + 16);
    for c in cell.chars() {
        out.push_str(&encode_text(c.encode_utf8(&mut [0; 4])));
        if matches!(c, '/' | ',') {
            out.push_str("<wbr>");
        }
    }
    out
}

/// [`table`] for cells that are HTML already.
fn raw_table(out: &mut dyn Write, header: &[&str], rows: &[Vec<String>], numeric: &[usize]) -> io::Result<()> {
    writeln!(out, "<table>\n<tr>")?;
    for cell in header {
        write!(out, "<th>{}</th>", encode_text(cell))?;
    }
    writeln!(out, "</tr>")?;
    for row in rows {
        write!(out, "<tr>")?;
        for (i, cell) in row.iter().enumerate() {
            let class = if numeric.contains(&i) { " class=\"num\"" } else { "" };
            write!(out, "<td{class}>{cell}</td>")?;
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</table>")
}

#[cfg(test)]
mod tests {
    use super::SectionIds;

    #[test]
    fn section_ids_are_given_once_and_fit_a_link() {
        let mut ids = SectionIds::default();
        assert_eq!(ids.give("module-jit_step(22)"), "module-jit_step_22_");
        // The same module from a second input, and a name that only differs in what an id cannot hold.
        assert_eq!(ids.give("module-jit_step(22)"), "module-jit_step_22_-2");
        assert_eq!(ids.give("module-jit_step[22]"), "module-jit_step_22_-3");
        assert_eq!(ids.give("allocator-vm-GPU_0_bfc"), "allocator-vm-GPU_0_bfc");
    }
}

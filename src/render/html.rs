//! The report as one self-contained HTML page: inline CSS and inline SVG
//! charts, no script, no font and no network, so it opens anywhere and can be
//! attached to a bug. It shows the same tables as the text report, and the
//! charts of every module and memory space, device memory profile and allocator.

use std::io::{self, Write};

use html_escape::encode_text;

use super::svg::{self, ChartKind};
use super::table::{bytes, Flavor};
use super::text::{
    allocation_header, allocation_rows, allocation_table_title, allocator_facts, allocator_heading, buffer_header,
    buffer_rows, buffer_table_title, is_unused, space_facts, space_heading, step_rows, summary_header, summary_rows,
    unused_footnote, ALLOCATION_NUMBERS, BUFFER_NUMBERS, MISSING_TRACE_FOOTNOTE, STEP_HEADER, STEP_NUMBERS,
    SUMMARY_NUMBERS,
};
use super::{attribution, device_memory};
use crate::analysis::attribution::Groups;
use crate::analysis::device_memory::DeviceMemoryReport;
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

pub fn write(out: &mut dyn Write, report: &Report, top: usize) -> io::Result<()> {
    head(out, &format!("xmem report: {}", report.inputs.join(", ")), &report.warnings)?;
    for note in &report.notes {
        writeln!(out, "<p>{}</p>", encode_text(note))?;
    }
    if report.modules.is_empty() && report.device_memory.is_empty() && report.allocators.is_empty() {
        writeln!(out, "<p>No compiled XLA modules in this input.</p>")?;
    } else if !report.modules.is_empty() {
        writeln!(out, "<h2>Summary</h2>")?;
        let (rows, missing_trace, unused) = summary_rows(report);
        let anchors: Vec<String> = report
            .modules
            .iter()
            .flat_map(|m| match m.problem {
                Some(_) => vec![section_id(m, None)],
                None => m.memory_spaces.iter().filter(|s| !is_unused(s)).map(|s| section_id(m, Some(s))).collect(),
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
    for module in &report.modules {
        write_module(out, module, top)?;
    }
    for snapshot in &report.device_memory {
        write_device_memory(out, snapshot, top)?;
    }
    for allocator in &report.allocators {
        write_allocator(out, allocator, top)?;
    }
    foot(out)
}

fn write_module(out: &mut dyn Write, module: &ModuleReport, top: usize) -> io::Result<()> {
    if let Some(problem) = &module.problem {
        writeln!(
            out,
            "<section>\n<h2 id=\"{}\">{}</h2>",
            section_id(module, None),
            encode_text(&module.display_name())
        )?;
        return writeln!(out, "<p>{}</p>\n</section>", encode_text(problem));
    }
    for space in &module.memory_spaces {
        write_space(out, module, space, top)?;
    }
    write_module_hints(out, module)
}

/// The id of a module's section (its memory space's, when given), for the summary's links.
fn section_id(module: &ModuleReport, space: Option<&MemorySpaceReport>) -> String {
    let mut id = format!("module-{}", module.display_name());
    if let Some(space) = space {
        id.push_str(&format!("-color-{}-trace-{}", space.color, space.trace_index.map_or(-1, |t| t as i64)));
    }
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
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

fn write_module_hints(out: &mut dyn Write, module: &ModuleReport) -> io::Result<()> {
    for note in &module.notes {
        writeln!(out, "<p>Note: {}</p>", encode_text(note))?;
    }
    if module.donation_hints().is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = module.donation_hints().iter().map(attribution::donation_line).collect();
    writeln!(out, "<div class=\"hints\">\n<h3>{}: what to change</h3>", encode_text(&module.display_name()))?;
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

fn write_space(out: &mut dyn Write, module: &ModuleReport, space: &MemorySpaceReport, top: usize) -> io::Result<()> {
    let (id, heading) = (section_id(module, Some(space)), space_heading(module, space));
    writeln!(out, "<section>\n<h2 id=\"{id}\">{}</h2>\n<dl>", encode_text(&heading))?;
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

fn write_allocator(out: &mut dyn Write, allocator: &AllocatorReport, top: usize) -> io::Result<()> {
    writeln!(out, "<section>\n<h2>{}</h2>\n<dl>", encode_text(&allocator_heading(allocator)))?;
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

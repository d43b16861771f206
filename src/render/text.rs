//! The terminal report and its Markdown twin: the same content, laid out as
//! aligned tables for a 100-column terminal or as GitHub tables.

use std::io::{self, Write};

use comfy_table::{presets, Cell, CellAlignment, ContentArrangement, Table};

use crate::analysis::heap_simulation::SMALL_BUFFER_BYTES;
use crate::analysis::{MemorySpaceReport, ModuleReport, Report, TraceStatus};
use crate::units::human_bytes;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Text,
    Markdown,
}

/// What to show in detail.
#[derive(Debug, Clone, Copy)]
pub struct Detail {
    /// Rows per buffer table.
    pub top: usize,
    /// Every module in detail, not only the first (largest) one.
    pub all: bool,
}

pub const WIDTH: u16 = 100;

pub fn table(flavor: Flavor, header: &[&str]) -> Table {
    let mut table = Table::new();
    match flavor {
        Flavor::Text => {
            table.load_style(presets::NOTHING);
            table.set_content_arrangement(ContentArrangement::Dynamic).set_width(WIDTH);
        }
        Flavor::Markdown => {
            table.load_style(presets::ASCII_MARKDOWN);
        }
    }
    table.force_no_tty().set_header(header.iter().map(Cell::new));
    table
}

/// Right-aligns the given columns (numbers read better that way).
pub fn align_right(table: &mut Table, columns: &[usize]) {
    for &c in columns {
        if let Some(column) = table.column_mut(c) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
}

pub fn bytes(n: i64) -> String {
    if n < 0 {
        format!("-{}", human_bytes(n.unsigned_abs()))
    } else {
        human_bytes(n as u64)
    }
}

pub fn heading(out: &mut dyn Write, flavor: Flavor, level: usize, text: &str) -> io::Result<()> {
    match flavor {
        Flavor::Text => {
            writeln!(out, "{text}")?;
            writeln!(out, "{}", if level == 1 { "=" } else { "-" }.repeat(text.chars().count().min(WIDTH as usize)))
        }
        Flavor::Markdown => writeln!(out, "{} {text}\n", "#".repeat(level + 1)),
    }
}

fn fact(out: &mut dyn Write, flavor: Flavor, label: &str, value: &str) -> io::Result<()> {
    match flavor {
        Flavor::Text => writeln!(out, "  {label:<22}{value}"),
        Flavor::Markdown => writeln!(out, "- **{label}**: {value}"),
    }
}

pub fn write_report(out: &mut dyn Write, flavor: Flavor, report: &Report, detail: Detail) -> io::Result<()> {
    heading(out, flavor, 1, &format!("xmem report: {}", report.inputs.join(", ")))?;
    for warning in &report.warnings {
        writeln!(out, "warning: {warning}")?;
    }
    if report.modules.is_empty() {
        writeln!(out, "No compiled XLA modules in this input.")?;
        return Ok(());
    }
    write_summary(out, flavor, report)?;
    for module in report.modules.iter().take(if detail.all { usize::MAX } else { 1 }) {
        writeln!(out)?;
        write_module(out, flavor, module, detail)?;
    }
    if !detail.all && report.modules.len() > 1 {
        writeln!(out, "\nOnly the largest module is shown in detail; use --module NAME or --all for others.")?;
    }
    Ok(())
}

fn write_summary(out: &mut dyn Write, flavor: Flavor, report: &Report) -> io::Result<()> {
    let mut t = table(flavor, &["Module", "Id", "Space", "Peak", "Unpadded", "Always-live", "Temp at peak"]);
    for module in &report.modules {
        let id = module.program_id.map(|i| i.to_string()).unwrap_or_default();
        if let Some(problem) = &module.problem {
            let short = problem.split(';').next().unwrap_or(problem);
            t.add_row(vec![module.name.clone(), id, "-".into(), short.to_string()]);
            continue;
        }
        for space in &module.memory_spaces {
            let marker = if space.heap_simulation == TraceStatus::Missing { " *" } else { "" };
            t.add_row(vec![
                module.name.clone(),
                id.clone(),
                space.name.clone(),
                format!("{}{marker}", bytes(space.peak_bytes)),
                bytes(space.peak_unpadded_bytes),
                bytes(space.always_live_bytes()),
                bytes(space.breakdown.temporaries),
            ]);
        }
    }
    align_right(&mut t, &[1, 3, 4, 5, 6]);
    writeln!(out, "{t}")?;
    if report.modules.iter().flat_map(|m| &m.memory_spaces).any(|s| s.heap_simulation == TraceStatus::Missing) {
        writeln!(out, "* no heap-simulator trace: the peak counts only always-live buffers (see the module's notes)")?;
    }
    Ok(())
}

fn write_module(out: &mut dyn Write, flavor: Flavor, module: &ModuleReport, detail: Detail) -> io::Result<()> {
    if let Some(problem) = &module.problem {
        heading(out, flavor, 2, &module.display_name())?;
        return writeln!(out, "{problem}");
    }
    for (i, space) in module.memory_spaces.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let trace = space
            .trace_index
            .filter(|_| space.notes.iter().any(|n| n.starts_with("trace ")))
            .map(|t| format!(", trace {t}"));
        heading(
            out,
            flavor,
            2,
            &format!("{} · {} (color {}{})", module.display_name(), space.name, space.color, trace.unwrap_or_default()),
        )?;
        write_space(out, flavor, space, detail)?;
    }
    Ok(())
}

fn write_space(out: &mut dyn Write, flavor: Flavor, space: &MemorySpaceReport, detail: Detail) -> io::Result<()> {
    let at = match &space.peak_instruction {
        Some(instruction) => format!(" at event {} ({instruction})", space.peak_position),
        None => String::new(),
    };
    fact(out, flavor, "Peak heap", &format!("{} ({} bytes){at}", bytes(space.peak_bytes), space.peak_bytes))?;
    fact(
        out,
        flavor,
        "Unpadded peak",
        &format!("{}, padding overhead {}", bytes(space.peak_unpadded_bytes), bytes(space.padding_bytes())),
    )?;
    let b = &space.breakdown;
    fact(
        out,
        flavor,
        "Always-live",
        &format!(
            "{}: parameters {}, outputs {}, constants {}",
            bytes(space.always_live_bytes()),
            bytes(b.parameters),
            bytes(b.outputs),
            bytes(b.constants)
        ),
    )?;
    fact(out, flavor, "Temporaries at peak", &bytes(b.temporaries))?;
    if b.thread_local > 0 {
        fact(
            out,
            flavor,
            "Thread-local",
            &format!("{} (not counted in the peak, as in XProf)", bytes(b.thread_local)),
        )?;
    }
    fact(
        out,
        flavor,
        "Total allocation",
        &format!("{} with fragmentation {:.1}%", bytes(space.total_allocation_bytes), space.fragmentation * 100.0),
    )?;
    for note in &space.notes {
        fact(out, flavor, "Note", note)?;
    }
    if space.at_peak.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let buffers = space.largest_buffers(detail.top);
    let shown = if buffers.rest_count > 0 { format!(" (top {})", detail.top) } else { String::new() };
    writeln!(out, "Buffers live at the peak: {}, largest first{shown}", space.at_peak.len())?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    // A terminal has no room for long op names in their own column: the
    // instruction and shape share a cell with the op name and source below them.
    let mut t = match flavor {
        Flavor::Text => table(flavor, &["Size", "Unpadded", "Category", "Instruction, shape / op name, source"]),
        Flavor::Markdown => {
            table(flavor, &["Size", "Unpadded", "Category", "Instruction", "Shape", "Op name", "Source"])
        }
    };
    for buffer in &buffers.rows {
        let source = buffer.source.as_deref().map(file_name_and_line).unwrap_or_default();
        let mut row = vec![bytes(buffer.size_bytes), bytes(buffer.unpadded_bytes), buffer.category.label().to_string()];
        match flavor {
            Flavor::Text => {
                let origin = [buffer.op_name.as_str(), source.as_str()]
                    .iter()
                    .filter(|s| !s.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join("  ");
                row.push(format!("{}  {}\n{origin}", buffer.instruction, buffer.shape).trim_end().to_string());
            }
            Flavor::Markdown => {
                row.extend([buffer.instruction.clone(), buffer.shape.clone(), buffer.op_name.clone(), source]);
            }
        }
        t.add_row(row);
    }
    if buffers.rest_count > 0 {
        t.add_row(vec![
            bytes(buffers.rest_bytes),
            String::new(),
            String::new(),
            format!("{} more buffers", buffers.rest_count),
        ]);
    }
    if buffers.small_count > 0 {
        t.add_row(vec![
            bytes(buffers.small_bytes),
            String::new(),
            String::new(),
            format!("small (<{} each): {} buffers", bytes(SMALL_BUFFER_BYTES), buffers.small_count),
        ]);
    }
    align_right(&mut t, &[0, 1]);
    writeln!(out, "{t}")
}

/// `file.py:36` from `/long/path/to/file.py:36`: the directory rarely fits in
/// a terminal; JSON carries the full path.
fn file_name_and_line(source: &str) -> String {
    source.rsplit('/').next().unwrap_or(source).to_string()
}

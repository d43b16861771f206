//! The terminal report and its Markdown twin: the same content, laid out as
//! aligned tables for a terminal or as GitHub tables.

use std::io::{self, Write};

use super::escape::printable;
use super::table::{
    align_right, bytes, fact, file_name_and_line, heading, percent, plural, table, unwrapped, Cell, Flavor, ID_COLUMN,
};
use super::{attribution, device_memory, torch_snapshot};
use crate::analysis::allocator_timeline::RowTable;
use crate::analysis::heap_simulation::SMALL_BUFFER_BYTES;
use crate::analysis::{AllocatorReport, BufferTable, MemorySpaceReport, ModuleReport, Report, TraceStatus};
use crate::units::milliseconds;

/// What to show in detail.
#[derive(Debug, Clone, Copy)]
pub struct Detail {
    /// Rows per buffer table.
    pub top: usize,
    /// Every module in detail, not only the first (largest) one.
    pub all: bool,
}

pub fn write_report(out: &mut dyn Write, flavor: Flavor, report: &Report, detail: Detail) -> io::Result<()> {
    heading(out, flavor, 1, &format!("xmem report: {}", report.inputs.join(", ")))?;
    for warning in &report.warnings {
        writeln!(out, "warning: {}", printable(warning))?;
    }
    for note in &report.notes {
        writeln!(out, "{}", printable(note))?;
    }
    if report.modules.is_empty()
        && report.device_memory.is_empty()
        && report.allocators.is_empty()
        && report.torch_snapshots.is_empty()
    {
        writeln!(out, "No compiled XLA modules in this input.")?;
        return Ok(());
    }
    if !report.modules.is_empty() {
        write_modules(out, flavor, report, detail)?;
    }
    for snapshot in &report.device_memory {
        writeln!(out)?;
        device_memory::write(out, flavor, snapshot, detail.top)?;
    }
    for allocator in &report.allocators {
        writeln!(out)?;
        write_allocator(out, flavor, allocator, detail)?;
    }
    for snapshot in &report.torch_snapshots {
        writeln!(out)?;
        torch_snapshot::write(out, flavor, snapshot, detail.top)?;
    }
    Ok(())
}

fn write_modules(out: &mut dyn Write, flavor: Flavor, report: &Report, detail: Detail) -> io::Result<()> {
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

/// `Allocator GPU_0_bfc on vm`.
pub fn allocator_heading(allocator: &AllocatorReport) -> String {
    format!("Allocator {} on {}", allocator.name, allocator.host)
}

/// The figures of an allocator as label and value, in reading order.
pub fn allocator_facts(allocator: &AllocatorReport) -> Vec<(&'static str, String)> {
    let step = allocator.peak_step.map(|s| format!(", step {s}")).unwrap_or_default();
    let mut facts = vec![
        (
            "Peak in use",
            format!(
                "{} ({} bytes) at {}{step}",
                bytes(allocator.peak_bytes),
                allocator.peak_bytes,
                milliseconds(allocator.peak_time_ps)
            ),
        ),
        (
            "Heap / stack / free",
            format!(
                "{} / {} / {}",
                bytes(allocator.peak_heap_bytes),
                bytes(allocator.peak_stack_bytes),
                bytes(allocator.peak_free_bytes)
            ),
        ),
        ("Capacity", bytes(allocator.capacity_bytes)),
        ("Fragmentation at peak", percent(allocator.fragmentation_at_peak)),
        ("Lifetime peak", bytes(allocator.lifetime_peak_bytes)),
        ("Events", format!("{} allocations, {} deallocations", allocator.num_allocations, allocator.num_deallocations)),
    ];
    facts.extend(allocator.notes.iter().map(|note| ("Note", note.clone())));
    mark_inconsistent(&mut facts, allocator.inconsistencies.iter().map(String::as_str));
    facts
}

/// Puts what in the input contradicts itself before the figures made from
/// it, so none of them reads as sound.
fn mark_inconsistent<'a>(facts: &mut Vec<(&'static str, String)>, inconsistencies: impl Iterator<Item = &'a str>) {
    let found: Vec<(&'static str, String)> =
        inconsistencies.map(|what| (INCONSISTENT_LABEL, format!("{what}; the figures here are not sound"))).collect();
    facts.splice(0..0, found);
}

/// The label of a fact that says the input contradicts itself.
pub const INCONSISTENT_LABEL: &str = "Inconsistent input";

/// As for buffers, a terminal puts the type, shape and op name in one cell.
pub fn allocation_header(flavor: Flavor) -> &'static [&'static str] {
    match flavor {
        Flavor::Text => &["Size", "Requested", "Count", "Total", "Region", "Type, shape / made by"],
        Flavor::Markdown => &["Size", "Requested", "Count", "Total", "Region", "Data type", "Shape", "Made by"],
    }
}

/// The columns of [`allocation_header`] that hold numbers.
pub const ALLOCATION_NUMBERS: [usize; 4] = [0, 1, 2, 3];

/// What the table of allocations at the peak is about.
pub fn allocation_table_title(allocator: &AllocatorReport, rows: &RowTable) -> String {
    let shown = if rows.rest_count > 0 { format!(" (top {})", rows.rows.len()) } else { String::new() };
    format!(
        "Live at the peak: {} allocations in {} rows, largest first{shown}",
        rows.allocations,
        allocator.at_peak.len()
    )
}

/// The rows under [`allocation_header`], then the rows past the top N and
/// the bytes allocated before the capture, each as a total with a label.
pub fn allocation_rows(flavor: Flavor, allocator: &AllocatorReport, rows: &RowTable) -> Vec<Vec<Cell>> {
    let mut lines: Vec<Vec<Cell>> = rows
        .rows
        .iter()
        .map(|row| {
            let mut cells: Vec<Cell> = vec![
                bytes(row.allocation_bytes).into(),
                bytes(row.requested_bytes).into(),
                row.occurrences.to_string().into(),
                bytes(row.total_bytes()).into(),
                row.region_type.as_str().into(),
            ];
            let made_by = row.made_by();
            match flavor {
                Flavor::Text => cells.push(match row.type_and_shape() {
                    Some(type_and_shape) => Cell::lines([type_and_shape.as_str(), made_by.as_str()]),
                    None => made_by.into(),
                }),
                Flavor::Markdown => {
                    cells.extend([row.recorded_data_type().into(), row.shape.as_str().into(), made_by.into()])
                }
            }
            cells
        })
        .collect();
    let columns = allocation_header(flavor).len();
    let mut total_line = |total: i64, label: String| {
        let mut cells = vec![Cell::default(); columns];
        cells[3] = bytes(total).into();
        cells[columns - 1] = label.into();
        lines.push(cells);
    };
    if rows.rest_count > 0 {
        total_line(rows.rest_bytes, plural(rows.rest_count, "more row"));
    }
    if allocator.unattributed_at_peak_bytes != 0 {
        total_line(allocator.unattributed_at_peak_bytes, "allocated before the capture started".to_string());
    }
    lines
}

pub const STEP_HEADER: [&str; 4] = ["Step", "Peak", "At", "Events"];
/// The columns of [`STEP_HEADER`] that hold numbers.
pub const STEP_NUMBERS: [usize; 4] = [0, 1, 2, 3];

/// The first `top` steps with their peaks, and a line for the rest if any.
pub fn step_rows(allocator: &AllocatorReport, top: usize) -> (Vec<Vec<String>>, Option<String>) {
    let rows = allocator
        .steps
        .iter()
        .take(top)
        .map(|step| {
            vec![
                step.step.to_string(),
                bytes(step.peak_bytes),
                milliseconds(step.peak_time_ps),
                step.num_events.to_string(),
            ]
        })
        .collect();
    let rest = allocator.steps.len().checked_sub(top).filter(|&n| n > 0);
    (rows, rest.map(|n| format!("{} (see --format json)", plural(n, "more step"))))
}

fn write_allocator(out: &mut dyn Write, flavor: Flavor, allocator: &AllocatorReport, detail: Detail) -> io::Result<()> {
    heading(out, flavor, 2, &allocator_heading(allocator))?;
    for (label, value) in allocator_facts(allocator) {
        fact(out, flavor, label, &value)?;
    }
    if !allocator.at_peak.is_empty() || allocator.unattributed_at_peak_bytes != 0 {
        attribution::write_allocator_groups(out, flavor, allocator, detail.top)?;
        let rows = allocator.largest_rows(detail.top);
        writeln!(out, "\n{}", allocation_table_title(allocator, &rows))?;
        if flavor == Flavor::Markdown {
            writeln!(out)?;
        }
        let mut t = table(flavor, allocation_header(flavor));
        for line in allocation_rows(flavor, allocator, &rows) {
            t.add_row(line);
        }
        align_right(&mut t, &ALLOCATION_NUMBERS);
        writeln!(out, "{t}")?;
    }
    if !allocator.steps.is_empty() {
        writeln!(out, "\nPeak by step:")?;
        if flavor == Flavor::Markdown {
            writeln!(out)?;
        }
        let (rows, rest) = step_rows(allocator, detail.top);
        let mut t = table(flavor, &STEP_HEADER);
        for row in rows {
            t.add_row(row);
        }
        align_right(&mut t, &STEP_NUMBERS);
        writeln!(out, "{t}")?;
        if let Some(rest) = rest {
            writeln!(out, "{rest}")?;
        }
    }
    Ok(())
}

pub const SUMMARY_HEADER: [&str; 7] = ["Module", "Id", "Space", "Peak", "Unpadded", "Always-live", "Temp at peak"];
/// The columns of [`SUMMARY_HEADER`] that hold numbers.
pub const SUMMARY_NUMBERS: [usize; 5] = [1, 3, 4, 5, 6];

/// Said under the summary when a row's peak is marked `*`.
pub const MISSING_TRACE_FOOTNOTE: &str =
    "* no heap-simulator trace: the peak counts only always-live buffers (see the module's notes)";

/// One row per module and memory space, as the summary table shows them,
/// and whether any peak needs [`MISSING_TRACE_FOOTNOTE`].
/// With several inputs, the summary's last column says which one each row comes from.
pub fn summary_header(report: &Report) -> Vec<&'static str> {
    let mut header = SUMMARY_HEADER.to_vec();
    if report.inputs.len() > 1 {
        header.push("Input");
    }
    header
}

/// Said under the summary when memory spaces are left out of it.
pub fn unused_footnote(spaces: usize) -> String {
    format!("{} with nothing allocated (named only in layouts) not listed.", plural(spaces, "memory space"))
}

/// The summary's rows, whether any peak needs [`MISSING_TRACE_FOOTNOTE`],
/// and how many unused memory spaces ([`MemorySpaceReport::is_unused`]) were left out.
pub fn summary_rows(report: &Report) -> (Vec<Vec<String>>, bool, usize) {
    let mut rows = Vec::new();
    let mut missing_trace = false;
    let mut unused = 0;
    let columns = summary_header(report).len();
    for module in &report.modules {
        let id = module.program_id.to_string();
        let mut row = |mut cells: Vec<String>| {
            if report.inputs.len() > 1 {
                cells.resize(columns - 1, String::new());
                cells.push(module.input.clone());
            }
            rows.push(cells);
        };
        if let Some(problem) = &module.problem {
            let short = problem.split(';').next().unwrap_or(problem);
            row(vec![module.name.clone(), id, "-".into(), short.to_string()]);
            continue;
        }
        for space in &module.memory_spaces {
            if space.is_unused() {
                unused += 1;
                continue;
            }
            let missing = space.heap_simulation == TraceStatus::Missing;
            missing_trace |= missing;
            row(vec![
                module.name.clone(),
                id.clone(),
                space.name.clone(),
                format!(
                    "{}{}{}",
                    bytes(space.peak_bytes),
                    if missing { " *" } else { "" },
                    if space.inconsistencies.is_empty() { "" } else { " (inconsistent input)" }
                ),
                bytes(space.peak_unpadded_bytes),
                bytes(space.always_live_bytes()),
                bytes(space.breakdown.temporaries),
            ]);
        }
    }
    (rows, missing_trace, unused)
}

fn write_summary(out: &mut dyn Write, flavor: Flavor, report: &Report) -> io::Result<()> {
    let mut t = table(flavor, &summary_header(report));
    let (rows, missing_trace, unused) = summary_rows(report);
    for row in rows {
        t.add_row(row);
    }
    align_right(&mut t, &SUMMARY_NUMBERS);
    unwrapped(&mut t, ID_COLUMN);
    writeln!(out, "{t}")?;
    if missing_trace {
        writeln!(out, "{MISSING_TRACE_FOOTNOTE}")?;
    }
    if unused > 0 {
        writeln!(out, "{}", unused_footnote(unused))?;
    }
    Ok(())
}

fn write_module(out: &mut dyn Write, flavor: Flavor, module: &ModuleReport, detail: Detail) -> io::Result<()> {
    if let Some(problem) = &module.problem {
        heading(out, flavor, 2, &module.display_name())?;
        return writeln!(out, "{}", printable(problem));
    }
    for (i, space) in module.memory_spaces.iter().filter(|s| !s.is_unused()).enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        heading(out, flavor, 2, &space_heading(module, space))?;
        write_space(out, flavor, space, detail)?;
        attribution::write_space_extras(out, flavor, space, detail.top)?;
    }
    attribution::write_module_hints(out, flavor, module)
}

/// `jit_step(22) · hbm (color 0)`, with the trace when a colour has several.
pub fn space_heading(module: &ModuleReport, space: &MemorySpaceReport) -> String {
    let trace = space.trace_index.filter(|_| !space.shown_by_xprof).map(|t| format!(", trace {t}"));
    format!("{} · {} (color {}{})", module.display_name(), space.name, space.color, trace.unwrap_or_default())
}

/// The figures of a memory space as label and value, in reading order.
pub fn space_facts(space: &MemorySpaceReport) -> Vec<(&'static str, String)> {
    let at = match &space.peak_instruction {
        Some(instruction) => format!(" at event {} ({instruction})", space.peak_position),
        None => String::new(),
    };
    let b = &space.breakdown;
    let mut facts = vec![
        ("Peak heap", format!("{} ({} bytes){at}", bytes(space.peak_bytes), space.peak_bytes)),
        (
            "Unpadded peak",
            format!("{}, padding overhead {}", bytes(space.peak_unpadded_bytes), bytes(space.padding_bytes())),
        ),
        (
            "Always-live",
            format!(
                "{}: parameters {}, outputs {}, constants {}",
                bytes(space.always_live_bytes()),
                bytes(b.parameters),
                bytes(b.outputs),
                bytes(b.constants)
            ),
        ),
        ("Temporaries at peak", bytes(b.temporaries)),
    ];
    if let Some(scoped) = space.max_scoped_vmem_bytes {
        let instruction = space.max_scoped_vmem_instruction.as_deref().unwrap_or_default();
        facts.push((
            "Scoped VMEM",
            format!(
                "{} ({scoped} bytes) in {instruction}: the largest any instruction reserves for itself, not part of the peak",
                bytes(scoped)
            ),
        ));
    }
    if b.thread_local > 0 {
        facts.push(("Thread-local", format!("{} (not counted in the peak, as in XProf)", bytes(b.thread_local))));
    }
    // Without a trace there are no offsets, so fragmentation would read 100%.
    let fragmentation = match space.heap_simulation {
        TraceStatus::Missing => "fragmentation unknown without a heap-simulator trace".to_string(),
        _ => format!("with fragmentation {}", percent(space.fragmentation)),
    };
    facts.push(("Total allocation", format!("{} {fragmentation}", bytes(space.total_allocation_bytes))));
    facts.extend(space.notes.iter().map(|note| ("Note", note.to_string())));
    mark_inconsistent(&mut facts, space.inconsistencies.iter().map(|found| found.as_ref()));
    facts
}

/// A terminal has no room for long op names in their own column: there the
/// instruction and shape share a cell with the op name and source below them.
/// Markdown (and HTML) give each its own column.
pub fn buffer_header(flavor: Flavor) -> &'static [&'static str] {
    match flavor {
        Flavor::Text => &["Size", "Unpadded", "Category", "Instruction, shape / op name, source"],
        Flavor::Markdown => &["Size", "Unpadded", "Category", "Instruction", "Shape", "Op name", "Source"],
    }
}

/// The columns of [`buffer_header`] that hold numbers.
pub const BUFFER_NUMBERS: [usize; 2] = [0, 1];

/// What the table of buffers at the peak is about, e.g. `Buffers live at the peak: 20, largest first (top 5)`.
pub fn buffer_table_title(space: &MemorySpaceReport, buffers: &BufferTable) -> String {
    let shown = if buffers.rest_count > 0 { format!(" (top {})", buffers.rows.len()) } else { String::new() };
    format!("Buffers live at the peak: {}, largest first{shown}", space.at_peak.len())
}

/// The line for the buffers past the top N.
pub fn rest_label(buffers: &BufferTable) -> String {
    plural(buffers.rest_count, "more buffer")
}

/// The line for the buffers under 16 KiB, folded as XProf folds them.
pub fn small_label(buffers: &BufferTable) -> String {
    format!("small (<{} each): {}", bytes(SMALL_BUFFER_BYTES), plural(buffers.small_count, "buffer"))
}

/// The rows under [`buffer_header`], with the folded lines last.
pub fn buffer_rows(flavor: Flavor, buffers: &BufferTable) -> Vec<Vec<Cell>> {
    let mut rows: Vec<Vec<Cell>> = buffers
        .rows
        .iter()
        .map(|buffer| {
            let source = buffer.source.as_deref().map(file_name_and_line).unwrap_or_default();
            let mut row: Vec<Cell> = vec![
                bytes(buffer.size_bytes).into(),
                bytes(buffer.unpadded_bytes).into(),
                buffer.category.label().into(),
            ];
            match flavor {
                Flavor::Text => {
                    let origin = [&*buffer.op_name, source.as_str()]
                        .iter()
                        .filter(|s| !s.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join("  ");
                    let first = format!("{}  {}", buffer.instruction, buffer.shape);
                    let first = first.trim_end();
                    row.push(if origin.is_empty() { first.into() } else { Cell::lines([first, origin.as_str()]) });
                }
                Flavor::Markdown => {
                    row.extend([
                        (*buffer.instruction).into(),
                        (*buffer.shape).into(),
                        (*buffer.op_name).into(),
                        source.into(),
                    ]);
                }
            }
            row
        })
        .collect();
    if buffers.rest_count > 0 {
        rows.push(vec![bytes(buffers.rest_bytes).into(), Cell::default(), Cell::default(), rest_label(buffers).into()]);
    }
    if buffers.small_count > 0 {
        rows.push(vec![
            bytes(buffers.small_bytes).into(),
            Cell::default(),
            Cell::default(),
            small_label(buffers).into(),
        ]);
    }
    rows
}

fn write_space(out: &mut dyn Write, flavor: Flavor, space: &MemorySpaceReport, detail: Detail) -> io::Result<()> {
    for (label, value) in space_facts(space) {
        fact(out, flavor, label, &value)?;
    }
    if space.at_peak.is_empty() {
        return Ok(());
    }
    attribution::write_space_groups(out, flavor, space, detail.top)?;
    let buffers = space.largest_buffers(detail.top);
    write_buffer_table(out, flavor, &buffer_table_title(space, &buffers), &buffers)
}

/// A table of buffers under its title, after a blank line.
pub fn write_buffer_table(out: &mut dyn Write, flavor: Flavor, title: &str, buffers: &BufferTable) -> io::Result<()> {
    writeln!(out, "\n{}", printable(title))?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    let mut t = table(flavor, buffer_header(flavor));
    for row in buffer_rows(flavor, buffers) {
        t.add_row(row);
    }
    align_right(&mut t, &BUFFER_NUMBERS);
    writeln!(out, "{t}")
}

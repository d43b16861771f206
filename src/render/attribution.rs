//! Who owns the memory, as tables: a live set grouped by source line, op
//! name and category before its buffers; the live sets `--at` and `--peaks`
//! asked for; donation and padding hints. Shared by the text, Markdown and
//! HTML reports.

use std::io::{self, Write};

use super::table::{align_right, bytes, file_name_and_line, percent, plural, table, Flavor};
use super::text::write_buffer_table;
use crate::analysis::attribution::{allocator_groups, device_memory_groups, Group, Groups, LiveSet};
use crate::analysis::device_memory::DeviceMemoryReport;
use crate::analysis::hints::{DonationCandidate, PaddingHint};
use crate::analysis::{AllocatorReport, BufferTable, MemorySpaceReport, ModuleReport};
use crate::diff::groups::GroupChanges;
use crate::units::human_delta;

/// One grouping of a live set, as a table shows it.
pub struct GroupTable {
    pub title: &'static str,
    pub header: [&'static str; 4],
    pub rows: Vec<Vec<String>>,
}

/// The columns of a [`GroupTable`] that hold numbers.
pub const GROUP_NUMBERS: [usize; 3] = [0, 1, 2];

/// The groupings of a live set of `total` bytes, the `top` largest groups of
/// each and the rest summed; categories only when there are several.
pub fn group_tables(groups: &Groups, total: i64, top: usize) -> Vec<GroupTable> {
    let mut tables = vec![
        GroupTable {
            title: "By source line",
            header: ["Bytes", "Share", "Buffers", "Source line"],
            rows: group_rows(&groups.by_source, total, top, file_name_and_line),
        },
        GroupTable {
            title: "By op name",
            header: ["Bytes", "Share", "Buffers", "Op name"],
            rows: group_rows(&groups.by_op_name, total, top, str::to_string),
        },
    ];
    if groups.by_category.len() > 1 {
        tables.push(GroupTable {
            title: "By category",
            header: ["Bytes", "Share", "Buffers", "Category"],
            rows: group_rows(&groups.by_category, total, top, str::to_string),
        });
    }
    tables
}

fn group_rows(groups: &[Group], total: i64, top: usize, key: impl Fn(&str) -> String) -> Vec<Vec<String>> {
    let share = |b: i64| if total > 0 { percent(b as f64 / total as f64) } else { String::new() };
    let mut rows: Vec<Vec<String>> = groups
        .iter()
        .take(top)
        .map(|g| vec![bytes(g.bytes), share(g.bytes), g.count.to_string(), key(&g.key)])
        .collect();
    let rest = groups.get(top..).unwrap_or_default();
    if !rest.is_empty() {
        let rest_bytes = rest.iter().map(|g| g.bytes).fold(0, i64::saturating_add);
        let count: usize = rest.iter().map(|g| g.count).sum();
        rows.push(vec![
            bytes(rest_bytes),
            share(rest_bytes),
            count.to_string(),
            format!("{} more {}", rest.len(), if rest.len() == 1 { "group" } else { "groups" }),
        ]);
    }
    rows
}

/// The groupings of a live set, each as a small table.
pub fn write_groups(out: &mut dyn Write, flavor: Flavor, groups: &Groups, total: i64, top: usize) -> io::Result<()> {
    for group_table in group_tables(groups, total, top) {
        write_group_table(out, flavor, group_table)?;
    }
    Ok(())
}

pub fn write_group_table(out: &mut dyn Write, flavor: Flavor, group_table: GroupTable) -> io::Result<()> {
    writeln!(out, "\n{}:", group_table.title)?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    let mut t = table(flavor, &group_table.header);
    for row in group_table.rows {
        t.add_row(row);
    }
    align_right(&mut t, &GROUP_NUMBERS);
    writeln!(out, "{t}")
}

/// `Live after event 41 (fusion.3): 12.0 MiB`.
pub fn live_set_title(label: &str, live: &LiveSet) -> String {
    let instruction = live.instruction.as_deref().map(|i| format!(" ({i})")).unwrap_or_default();
    format!(
        "{label} after event {}{instruction}: {} ({} bytes)",
        live.position,
        bytes(live.heap_bytes),
        live.heap_bytes
    )
}

/// The title of the live set `--at` asked for.
pub fn at_title(live: &LiveSet) -> String {
    live_set_title("Live", live)
}

pub const PEAKS_TITLE: &str = "Distinct peaks, largest first (--peaks):";
pub const PEAK_HEADER: [&str; 6] = ["Peak", "Bytes", "Event", "Instruction", "Largest source line", "Its share"];
pub const PEAK_NUMBERS: [usize; 3] = [0, 1, 2];

/// One row per distinct peak: where it is and which source line owns most of it.
pub fn peak_rows(space: &MemorySpaceReport) -> Vec<Vec<String>> {
    (1..)
        .zip(&space.attribution.peaks)
        .map(|(n, live)| {
            let largest = live.groups.by_source.first();
            let share = match largest {
                Some(g) if live.heap_bytes > 0 => percent(g.bytes as f64 / live.heap_bytes as f64),
                _ => String::new(),
            };
            vec![
                n.to_string(),
                bytes(live.heap_bytes),
                live.position.to_string(),
                live.instruction.clone().unwrap_or_default(),
                largest.map(|g| file_name_and_line(&g.key)).unwrap_or_default(),
                share,
            ]
        })
        .collect()
}

pub fn write_live_set(out: &mut dyn Write, flavor: Flavor, title: &str, live: &LiveSet, top: usize) -> io::Result<()> {
    writeln!(out, "\n{title}")?;
    write_groups(out, flavor, &live.groups, live.heap_bytes, top)?;
    let buffers = BufferTable::of(&live.buffers, top);
    write_buffer_table(out, flavor, &format!("Buffers: {}, largest first", live.buffers.len()), &buffers)
}

/// `params[0] (f32[1024,4096]{1,0}) → output {0}: up to 16.0 MiB`.
pub fn donation_line(candidate: &DonationCandidate) -> String {
    let index: Vec<String> = candidate.output_index.iter().map(i64::to_string).collect();
    format!(
        "{} (parameter {}, {}) could become output {{{}}}: saves up to {}",
        candidate.parameter,
        candidate.parameter_number,
        candidate.shape,
        index.join(","),
        bytes(candidate.bytes_at_most)
    )
}

/// What to say above the donation lines ([`ModuleReport::donation_hints`]),
/// and how many smaller candidates are left out.
pub fn donation_title(module: &ModuleReport) -> String {
    let hints = module.donation_hints();
    let total = hints.iter().map(|c| c.bytes_at_most).fold(0, i64::saturating_add);
    let smaller = match module.donation_candidates.len() - hints.len() {
        0 => String::new(),
        n => format!("; {n} more, each saving less than 1 MiB or 0.1% of the peak, left out"),
    };
    format!(
        "Donation: {} not donated but shaped like an output (jax.jit(donate_argnums=...) saves up to {}{smaller}):",
        plural(hints.len(), "parameter"),
        bytes(total)
    )
}

pub fn padding_title(hint: &PaddingHint) -> String {
    format!(
        "Padding: {} of the peak ({}) is layout padding; most padded buffers:",
        bytes(hint.padding_bytes),
        percent(hint.share)
    )
}

/// `fusion.3 bf16[8,130]{1,0:T(8,128)}: 8.0 KiB padded to 16.0 KiB`.
pub fn padding_lines(hint: &PaddingHint) -> Vec<String> {
    hint.buffers
        .iter()
        .map(|b| {
            format!("{} {}: {} padded to {}", b.instruction, b.shape, bytes(b.unpadded_bytes), bytes(b.size_bytes))
        })
        .collect()
}

/// Groups before the buffers of a memory space's peak; extra live sets and
/// the padding hint after them.
pub fn write_space_groups(
    out: &mut dyn Write,
    flavor: Flavor,
    space: &MemorySpaceReport,
    top: usize,
) -> io::Result<()> {
    if space.attribution.at_peak_groups.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nWho owns the peak ({}):", bytes(space.peak_bytes))?;
    write_groups(out, flavor, &space.attribution.at_peak_groups, space.peak_bytes, top)
}

pub fn write_space_extras(
    out: &mut dyn Write,
    flavor: Flavor,
    space: &MemorySpaceReport,
    top: usize,
) -> io::Result<()> {
    if let Some(live) = &space.attribution.at {
        write_live_set(out, flavor, &at_title(live), live, top)?;
    }
    if !space.attribution.peaks.is_empty() {
        writeln!(out, "\n{PEAKS_TITLE}")?;
        if flavor == Flavor::Markdown {
            writeln!(out)?;
        }
        let mut t = table(flavor, &PEAK_HEADER);
        for row in peak_rows(space) {
            t.add_row(row);
        }
        align_right(&mut t, &PEAK_NUMBERS);
        writeln!(out, "{t}")?;
    }
    if let Some(hint) = &space.attribution.padding {
        writeln!(out, "\n{}", padding_title(hint))?;
        for line in padding_lines(hint) {
            list_item(out, flavor, &line)?;
        }
    }
    Ok(())
}

pub fn write_module_hints(out: &mut dyn Write, flavor: Flavor, module: &ModuleReport) -> io::Result<()> {
    for note in &module.notes {
        writeln!(out, "\nNote: {note}")?;
    }
    if module.donation_hints().is_empty() {
        return Ok(());
    }
    writeln!(out, "\n{}", donation_title(module))?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    for candidate in module.donation_hints() {
        list_item(out, flavor, &donation_line(candidate))?;
    }
    Ok(())
}

fn list_item(out: &mut dyn Write, flavor: Flavor, text: &str) -> io::Result<()> {
    match flavor {
        Flavor::Text => writeln!(out, "  {text}"),
        Flavor::Markdown => writeln!(out, "- {text}"),
    }
}

/// How many source lines the summary of a change names.
const HEADLINES: usize = 3;

/// A peak's change as every format shows it: a line for each of the
/// largest changes by source line, then a table per grouping.
pub struct GroupChangeTables {
    /// `+44.6 MiB from model.py:40 (dot_general)`.
    pub headlines: Vec<String>,
    pub tables: Vec<ChangeTable>,
}

/// One grouping of a peak's change: the `top` largest changes, and how many more there are.
pub struct ChangeTable {
    pub title: &'static str,
    pub header: [&'static str; 4],
    pub rows: Vec<Vec<String>>,
    pub more: Option<String>,
}

/// The columns of a [`ChangeTable`] that hold numbers.
pub const CHANGE_NUMBERS: [usize; 3] = [0, 1, 2];

pub fn group_change_tables(changes: &GroupChanges, top: usize) -> GroupChangeTables {
    let headlines = changes
        .by_source
        .iter()
        .take(HEADLINES)
        .map(|delta| {
            let op = delta.op_name.as_deref().map(|op| format!(" ({op})")).unwrap_or_default();
            format!("{} from {}{op}", human_delta(delta.delta_bytes), file_name_and_line(&delta.key))
        })
        .collect();
    let groupings = [
        ("By source line", "Source line", &changes.by_source),
        ("By op name", "Op name", &changes.by_op_name),
        ("By category", "Category", &changes.by_category),
    ];
    let tables = groupings
        .into_iter()
        .filter(|(_, _, deltas)| !deltas.is_empty())
        .map(|(title, column, deltas)| ChangeTable {
            title,
            header: ["Delta", "Base", "New", column],
            rows: deltas
                .iter()
                .take(top)
                .map(|delta| {
                    let key = if column == "Source line" { file_name_and_line(&delta.key) } else { delta.key.clone() };
                    vec![human_delta(delta.delta_bytes), bytes(delta.base_bytes), bytes(delta.new_bytes), key]
                })
                .collect(),
            more: (deltas.len() > top).then(|| {
                let more = deltas.len() - top;
                format!("{more} more changed {}.", if more == 1 { "group" } else { "groups" })
            }),
        })
        .collect();
    GroupChangeTables { headlines, tables }
}

/// A peak's change by source line, op name and category, before its buffers:
/// `+44.6 MiB from model.py:40`.
pub fn write_group_changes(out: &mut dyn Write, flavor: Flavor, changes: &GroupChanges, top: usize) -> io::Result<()> {
    let GroupChangeTables { headlines, tables } = group_change_tables(changes, top);
    for line in &headlines {
        match flavor {
            Flavor::Text => writeln!(out, "{line}")?,
            Flavor::Markdown => writeln!(out, "- {line}")?,
        }
    }
    if !headlines.is_empty() {
        writeln!(out)?;
    }
    for change_table in tables {
        writeln!(out, "{}:", change_table.title)?;
        if flavor == Flavor::Markdown {
            writeln!(out)?;
        }
        let mut t = table(flavor, &change_table.header);
        t.add_rows(change_table.rows);
        align_right(&mut t, &CHANGE_NUMBERS);
        writeln!(out, "{t}")?;
        if let Some(more) = change_table.more {
            // A line right under a Markdown table would be read as one of its rows.
            if flavor == Flavor::Markdown {
                writeln!(out)?;
            }
            writeln!(out, "{more}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// An allocator's heap at the peak by what made it, as a [`GroupTable`].
pub fn allocator_group_table(allocator: &AllocatorReport, top: usize) -> GroupTable {
    GroupTable {
        title: "Heap at the peak by what made it",
        header: ["Bytes", "Share", "Allocations", "Made by"],
        rows: group_rows(&allocator_groups(allocator), allocator.peak_heap_bytes, top, str::to_string),
    }
}

pub fn write_allocator_groups(
    out: &mut dyn Write,
    flavor: Flavor,
    allocator: &AllocatorReport,
    top: usize,
) -> io::Result<()> {
    write_group_table(out, flavor, allocator_group_table(allocator, top))
}

/// A device memory profile's live bytes by source line, as a [`GroupTable`].
pub fn device_memory_group_table(report: &DeviceMemoryReport, top: usize) -> GroupTable {
    GroupTable {
        title: "Live memory by source line (innermost frame of your code)",
        header: ["Bytes", "Share", "Count", "Source line"],
        rows: group_rows(&device_memory_groups(report), report.total_bytes, top, file_name_and_line),
    }
}

pub fn write_device_memory_groups(
    out: &mut dyn Write,
    flavor: Flavor,
    report: &DeviceMemoryReport,
    top: usize,
) -> io::Result<()> {
    write_group_table(out, flavor, device_memory_group_table(report, top))
}

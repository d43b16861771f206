//! The PyTorch memory snapshot sections of a report (text and Markdown; the
//! HTML page uses the same facts, rows and lines): per device the peak, the
//! reserved memory, the out-of-memory failure, and who owned the peak by
//! user frame, by stack and by allocation.

use std::io::{self, Write};

use super::table::{align_right, bytes, fact, file_name_and_line, heading, percent, plural, ratio_text, table, Flavor};
use crate::analysis::device_memory::StackFrame;
use crate::analysis::torch_snapshot::user_frame::{is_library, is_python};
use crate::analysis::torch_snapshot::{Allocation, FrameGroup, StackGroup, TorchOom, TorchSnapshotReport};
use crate::diff::TorchSnapshotDiff;
use crate::units::human_delta;

pub const GROUP_HEADER: [&str; 4] = ["Bytes", "Share", "Blocks", "User frame"];
pub const GROUP_NUMBERS: [usize; 3] = [0, 1, 2];
pub const ALLOCATION_HEADER: [&str; 4] = ["Size", "Requested", "Allocated", "User frame"];
pub const ALLOCATION_NUMBERS: [usize; 3] = [0, 1, 2];

pub fn write(out: &mut dyn Write, flavor: Flavor, report: &TorchSnapshotReport, top: usize) -> io::Result<()> {
    heading(out, flavor, 2, &snapshot_heading(report))?;
    for (label, value) in facts(report) {
        fact(out, flavor, label, &value)?;
    }
    for note in &report.notes {
        fact(out, flavor, "Note", note)?;
    }
    if let Some(oom) = &report.oom {
        writeln!(out)?;
        heading(out, flavor, 3, &oom_heading(report, oom))?;
        for (label, value) in oom_facts(oom) {
            fact(out, flavor, label, &value)?;
        }
        writeln!(out)?;
        for line in &oom.explanation {
            writeln!(out, "{line}")?;
        }
        write_groups(out, flavor, &oom_groups_title(oom), &oom.at_oom, oom.live_bytes, top)?;
    }
    if report.at_peak.is_empty() {
        return Ok(());
    }
    write_groups(out, flavor, &peak_groups_title(report), &report.at_peak_by_user_frame, report.peak_bytes, top)?;
    writeln!(out, "\n{}", stacks_title(report, top))?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    for (rank, stack) in report.at_peak_by_stack.iter().take(top).enumerate() {
        writeln!(out, "{}. {}", rank + 1, stack_total(stack))?;
        for line in stack_lines(&stack.frames) {
            match flavor {
                Flavor::Text => writeln!(out, "     {line}")?,
                Flavor::Markdown => writeln!(out, "   - `{line}`")?,
            }
        }
    }
    writeln!(out)?;
    let rows = allocation_rows(report, top);
    titled_table(out, flavor, &allocations_title(report, top), (&ALLOCATION_HEADER, &ALLOCATION_NUMBERS), rows)
}

fn write_groups(
    out: &mut dyn Write,
    flavor: Flavor,
    title: &str,
    groups: &[FrameGroup],
    total: i64,
    top: usize,
) -> io::Result<()> {
    writeln!(out)?;
    titled_table(out, flavor, title, (&GROUP_HEADER, &GROUP_NUMBERS), group_rows(groups, total, top))
}

/// A line saying what the table holds, then the table, its `columns`'
/// header and the numbers among them.
fn titled_table(
    out: &mut dyn Write,
    flavor: Flavor,
    title: &str,
    columns: (&[&str], &[usize]),
    rows: Vec<Vec<String>>,
) -> io::Result<()> {
    writeln!(out, "{title}")?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    let mut t = table(flavor, columns.0);
    t.add_rows(rows);
    align_right(&mut t, columns.1);
    writeln!(out, "{t}")
}

/// `PyTorch memory snapshot: snapshot.pickle, cuda:0`.
pub fn snapshot_heading(report: &TorchSnapshotReport) -> String {
    format!("PyTorch memory snapshot: {}, {}", report.input, report.device)
}

/// `+1.234 s` into the trace, or the entry when the trace has no times.
fn when(report: &TorchSnapshotReport, time_us: Option<i64>, entry: Option<usize>) -> String {
    match (time_us, report.trace_start_us, entry) {
        (Some(time), Some(start), Some(entry)) => format!("{} into the trace (entry {entry})", seconds(time - start)),
        (Some(time), Some(start), None) => format!("{} into the trace", seconds(time - start)),
        (_, _, Some(entry)) => format!("entry {entry}"),
        _ => "the start of the trace".to_string(),
    }
}

fn seconds(us: i64) -> String {
    format!("{:.3} s", us as f64 / 1e6)
}

/// The figures of a device as label and value, in reading order.
pub fn facts(report: &TorchSnapshotReport) -> Vec<(&'static str, String)> {
    let by = report.peak_owner.as_ref().map(|owner| format!(", allocating at {}", owner.label())).unwrap_or_default();
    let mut facts = vec![(
        "Peak (active)",
        format!(
            "{} ({} bytes) at {}{by}",
            bytes(report.peak_bytes),
            report.peak_bytes,
            when(report, report.peak_time_us, report.peak_entry)
        ),
    )];
    if report.peak_requested_bytes != report.peak_bytes {
        facts.push((
            "Requested at peak",
            format!(
                "{}: the allocator rounds requests up to blocks, adding {}",
                bytes(report.peak_requested_bytes),
                bytes(report.peak_bytes - report.peak_requested_bytes)
            ),
        ));
    }
    let end = if report.live_at_end_bytes == report.segments_active_bytes {
        "the segments' active_size".to_string()
    } else {
        format!("the segments hold {}", bytes(report.segments_active_bytes))
    };
    facts.push((
        "Live at the snapshot",
        format!("{} ({} bytes; {end})", bytes(report.live_at_end_bytes), report.live_at_end_bytes),
    ));
    let segments = &report.segments;
    facts.push((
        "Reserved",
        format!(
            "{} in {} at the snapshot, {} at the peak, {} at most",
            bytes(report.reserved_bytes),
            plural(segments.count, "segment"),
            bytes(report.reserved_at_peak_bytes),
            bytes(report.reserved_peak_bytes)
        ),
    ));
    if segments.free_bytes > 0 {
        facts.push((
            "Cached",
            format!(
                "{} reserved but free; largest free block {} (fragmentation {})",
                bytes(segments.free_bytes),
                bytes(segments.largest_free_block_bytes),
                percent(segments.fragmentation)
            ),
        ));
    }
    if segments.expandable {
        facts.push((
            "Expandable segments",
            format!(
                "{}; {} mapped and {} unmapped during the trace",
                plural(segments.expandable_segments, "segment"),
                bytes(segments.mapped_bytes),
                bytes(segments.unmapped_bytes)
            ),
        ));
    }
    facts.push(("Trace", trace_summary(report)));
    facts
}

/// `7294 entries over 3.210 s: 2511 allocations, 2359 frees, 65 segments reserved`.
fn trace_summary(report: &TorchSnapshotReport) -> String {
    let a = &report.actions;
    let span = match (report.trace_start_us, report.trace_end_us) {
        (Some(start), Some(end)) => format!(" over {}", seconds(end - start)),
        _ => String::new(),
    };
    let mut parts = vec![plural(a.alloc, "allocation"), plural(a.free_completed, "free")];
    for (count, one, many) in [
        (a.segment_alloc, "segment reserved", "segments reserved"),
        (a.segment_free, "segment released", "segments released"),
        (a.segment_map, "segment map", "segment maps"),
        (a.segment_unmap, "segment unmap", "segment unmaps"),
        (a.oom, "out-of-memory failure", "out-of-memory failures"),
    ] {
        match count {
            0 => {}
            1 => parts.push(format!("1 {one}")),
            n => parts.push(format!("{n} {many}")),
        }
    }
    let entries = if report.trace_entries == 1 { "entry" } else { "entries" };
    format!("{} {entries}{span}: {}", report.trace_entries, parts.join(", "))
}

pub fn oom_heading(report: &TorchSnapshotReport, oom: &TorchOom) -> String {
    format!("Out of memory at {}", when(report, oom.time_us, Some(oom.entry)))
}

pub fn oom_facts(oom: &TorchOom) -> Vec<(&'static str, String)> {
    let mut facts = vec![
        ("Requested", format!("{} ({} bytes)", bytes(oom.requested_bytes), oom.requested_bytes)),
        ("Free on the device", format!("{} ({} bytes)", bytes(oom.device_free_bytes), oom.device_free_bytes)),
        ("Active then", bytes(oom.live_bytes)),
        ("Reserved then", bytes(oom.reserved_bytes)),
    ];
    if let Some(largest) = oom.largest_free_block_bytes {
        facts.push(("Largest free block", bytes(largest)));
    }
    facts.push(("Failing allocation", oom.owner.label()));
    facts
}

pub fn oom_groups_title(oom: &TorchOom) -> String {
    format!("Live at the failure ({}), by user frame:", bytes(oom.live_bytes))
}

pub fn peak_groups_title(report: &TorchSnapshotReport) -> String {
    format!("Who owns the peak ({}), by user frame:", bytes(report.peak_bytes))
}

/// The `top` largest groups and the rest summed.
pub fn group_rows(groups: &[FrameGroup], total: i64, top: usize) -> Vec<Vec<String>> {
    let share = |b: i64| if total > 0 { percent(b as f64 / total as f64) } else { String::new() };
    let mut rows: Vec<Vec<String>> = groups
        .iter()
        .take(top)
        .map(|g| vec![bytes(g.bytes), share(g.bytes), g.count.to_string(), g.owner.label()])
        .collect();
    let rest = groups.get(top..).unwrap_or_default();
    if !rest.is_empty() {
        let rest_bytes = rest.iter().map(|g| g.bytes).fold(0, i64::saturating_add);
        let count: i64 = rest.iter().map(|g| g.count).sum();
        rows.push(vec![bytes(rest_bytes), share(rest_bytes), count.to_string(), plural(rest.len(), "more user frame")]);
    }
    rows
}

pub fn stacks_title(report: &TorchSnapshotReport, top: usize) -> String {
    let shown = report.at_peak_by_stack.len().min(top);
    format!(
        "Largest stacks at the peak ({shown} of {}), innermost first: the Python frames outside libraries (--format json has every frame):",
        report.at_peak_by_stack.len()
    )
}

/// `1.0 GiB in 12 blocks`.
pub fn stack_total(stack: &StackGroup) -> String {
    format!("{} in {}", bytes(stack.bytes), plural(stack.count as usize, "block"))
}

/// A stack as lines: its innermost Python frame and the user's frames,
/// with the library frames between them counted; when it has no Python
/// frame, why.
pub fn stack_lines(frames: &[StackFrame]) -> Vec<String> {
    let Some(innermost) = frames.first() else {
        return vec!["allocated before recording began (no stack)".to_string()];
    };
    let python: Vec<&StackFrame> = frames.iter().filter(|f| is_python(&f.function, &f.file)).collect();
    if python.is_empty() {
        return vec![format!(
            "no Python frame ({}; innermost: {})",
            plural(frames.len(), "C++ frame"),
            innermost.function
        )];
    }
    let mut lines = Vec::new();
    let mut hidden = 0;
    for (depth, frame) in python.iter().enumerate() {
        if depth > 0 && is_library(&frame.file) {
            hidden += 1;
            continue;
        }
        if hidden > 0 {
            lines.push(format!("… {} in libraries", plural(hidden, "frame")));
            hidden = 0;
        }
        lines.push(format!("{:<32} {}", frame.function, file_name_and_line(&format!("{}:{}", frame.file, frame.line))));
    }
    if hidden > 0 {
        lines.push(format!("… {} in libraries", plural(hidden, "frame")));
    }
    lines
}

pub fn allocations_title(report: &TorchSnapshotReport, top: usize) -> String {
    let shown = if report.at_peak.len() > top { format!(" (top {top})") } else { String::new() };
    format!("Blocks live at the peak: {}, largest first{shown}", report.at_peak.len())
}

pub fn allocation_rows(report: &TorchSnapshotReport, top: usize) -> Vec<Vec<String>> {
    let allocated = |a: &Allocation| match (a.allocated_at_us, report.trace_start_us) {
        (Some(time), Some(start)) => format!("+{}", seconds(time - start)),
        (None, _) => "before the trace".to_string(),
        (Some(_), None) => String::new(),
    };
    let mut rows: Vec<Vec<String>> = report
        .at_peak
        .iter()
        .take(top)
        .map(|a| vec![bytes(a.size_bytes), bytes(a.requested_bytes), allocated(a), a.owner.label()])
        .collect();
    let rest = report.at_peak.get(top..).unwrap_or_default();
    if !rest.is_empty() {
        let rest_bytes = rest.iter().map(|a| a.size_bytes).fold(0, i64::saturating_add);
        rows.push(vec![bytes(rest_bytes), String::new(), String::new(), plural(rest.len(), "more block")]);
    }
    rows
}

/// `PyTorch snapshot cuda:0: base.pickle → new.pickle`.
pub fn diff_heading(diff: &TorchSnapshotDiff) -> String {
    let peak = &diff.peak;
    let side = |input: &Option<String>| input.clone().unwrap_or_else(|| "(no such device)".to_string());
    format!("PyTorch snapshot {}: {} → {}", peak.device, side(&peak.base_input), side(&peak.new_input))
}

/// The peak, reserved and live bytes of the two runs, and their OOMs.
pub fn diff_facts(diff: &TorchSnapshotDiff) -> Vec<(&'static str, String)> {
    let side = |bytes_: Option<i64>| bytes_.map(bytes).unwrap_or_else(|| "none".to_string());
    let delta = &diff.peak.delta;
    let change = |base: Option<i64>, new: Option<i64>| {
        let difference = new.unwrap_or(0).saturating_sub(base.unwrap_or(0));
        format!("{} → {} ({})", side(base), side(new), human_delta(difference))
    };
    let mut facts = vec![
        (
            "Peak (active)",
            format!(
                "{} → {} ({}, {})",
                side(delta.base_peak_bytes),
                side(delta.new_peak_bytes),
                human_delta(delta.delta_bytes),
                ratio_text(delta.delta_ratio)
            ),
        ),
        ("Reserved", change(diff.base_reserved_bytes, diff.new_reserved_bytes)),
        ("Live at the snapshot", change(diff.base_live_at_end_bytes, diff.new_live_at_end_bytes)),
    ];
    if diff.base_oom || diff.new_oom {
        let ends = |oom: bool| if oom { "out of memory" } else { "no failure" };
        facts.push(("Trace ends in", format!("{} → {}", ends(diff.base_oom), ends(diff.new_oom))));
    }
    facts
}

pub const OWNER_HEADER: [&str; 5] = ["Delta", "Base", "New", "Blocks", "Owner"];
pub const OWNER_NUMBERS: [usize; 4] = [0, 1, 2, 3];

/// `Owners at the peak that changed: 4, largest growth first (top 2); 6 unchanged.`
pub fn owners_title(diff: &TorchSnapshotDiff, top: usize) -> String {
    let shown = if diff.owners.len() > top { format!(" (top {top})") } else { String::new() };
    format!(
        "Owners at the peak that changed: {}, largest growth first{shown}; {} unchanged.",
        diff.owners.len(),
        diff.unchanged_owners
    )
}

pub fn owner_rows(diff: &TorchSnapshotDiff, top: usize) -> Vec<Vec<String>> {
    diff.owners
        .iter()
        .take(top)
        .map(|row| {
            vec![
                human_delta(row.delta_bytes),
                bytes(row.base_bytes),
                bytes(row.new_bytes),
                format!("{} → {}", row.base_count, row.new_count),
                row.owner.label(),
            ]
        })
        .collect()
}

/// One device of `xmem diff` of two snapshots: the figures, then the owners that changed.
pub fn write_diff(out: &mut dyn Write, flavor: Flavor, diff: &TorchSnapshotDiff, top: usize) -> io::Result<()> {
    heading(out, flavor, 2, &diff_heading(diff))?;
    for (label, value) in diff_facts(diff) {
        fact(out, flavor, label, &value)?;
    }
    writeln!(out)?;
    if diff.owners.is_empty() {
        return writeln!(out, "No owner changed at the peak: every user frame holds the same bytes in both.\n");
    }
    titled_table(out, flavor, &owners_title(diff, top), (&OWNER_HEADER, &OWNER_NUMBERS), owner_rows(diff, top))?;
    writeln!(out)
}

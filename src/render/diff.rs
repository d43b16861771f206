//! `xmem diff` for a terminal, or as GitHub Markdown for `$GITHUB_STEP_SUMMARY`
//! and pull-request comments: the peaks that changed, the buffers behind the
//! change, the allocators, then the verdict.

use std::io::{self, Write};

use super::table::{
    align_right, bytes, change_style, heading, percent, plural, ratio_text, styled, table, unwrapped, Cell, Flavor,
    GROWTH, ID_COLUMN, SHRINK,
};
use super::text::Detail;
use super::{device_memory, torch_snapshot};
use crate::diff::device_memory::LiveDiff;
use crate::diff::{
    AllocatorDiff, BufferMatch, Change, Crossed, Diff, Limit, MemorySpaceDiff, Pairing, PeakDelta, PeakDiff, Verdict,
    Violation,
};
use crate::units::{human_bytes, human_delta, Growth};

pub fn write(out: &mut dyn Write, flavor: Flavor, diff: &Diff, detail: Detail) -> io::Result<()> {
    heading(out, flavor, 1, &format!("xmem diff: {} → {}", diff.base_inputs.join(", "), diff.new_inputs.join(", ")))?;
    // A pull request reads the verdict first; a terminal shows its last lines.
    if flavor == Flavor::Markdown {
        write_verdict(out, flavor, diff)?;
    }
    for warning in &diff.warnings {
        writeln!(out, "warning: {warning}")?;
    }
    if !diff.modules.is_empty()
        || (diff.allocators.is_empty() && diff.device_memory.is_empty() && diff.torch_snapshots.is_empty())
    {
        write_peaks(out, flavor, diff)?;
        write_pairs_by_role(out, flavor, diff)?;
    }
    for snapshots in &diff.device_memory {
        writeln!(out)?;
        device_memory::write_diff(out, flavor, snapshots, detail.top)?;
    }
    for device in &diff.torch_snapshots {
        writeln!(out)?;
        torch_snapshot::write_diff(out, flavor, device, detail.top)?;
    }
    let detailed: Vec<&MemorySpaceDiff> = diff.modules.iter().filter(|s| !s.buffers.is_empty()).collect();
    for space in detailed.iter().take(if detail.all { usize::MAX } else { 1 }) {
        write_buffers(out, flavor, space, detail.top)?;
    }
    if !detail.all && detailed.len() > 1 {
        writeln!(out, "Only the largest change is shown in detail; use --module NAME or --all for the others.\n")?;
    }
    if !diff.allocators.is_empty() {
        write_allocators(out, flavor, &diff.allocators)?;
    }
    match flavor {
        Flavor::Text => write_verdict(out, flavor, diff),
        Flavor::Markdown => Ok(()),
    }
}

/// Characters GitHub takes in a pull-request comment.
pub const COMMENT_LIMIT: usize = 65_536;

/// Markdown cut at a line to stay under `limit` characters, with a last
/// line saying how many table rows were left out.
pub fn fit_comment(markdown: &str, limit: usize) -> String {
    if markdown.chars().count() <= limit {
        return markdown.to_string();
    }
    // Room for the note, whose row count has at most 20 digits.
    let budget = limit - cut_note(u64::MAX).chars().count();
    let (mut kept, mut used) = (String::new(), 0);
    let mut lines = markdown.split_inclusive('\n');
    for line in lines.by_ref() {
        let length = line.chars().count();
        if used + length > budget {
            let is_row = |l: &str| l.starts_with('|') && !l.starts_with("|-");
            let left_out = std::iter::once(line).chain(lines).filter(|l| is_row(l)).count();
            kept.push_str(&cut_note(left_out as u64));
            return kept;
        }
        kept.push_str(line);
        used += length;
    }
    kept
}

fn cut_note(rows: u64) -> String {
    format!("\n_Cut to fit a GitHub comment ({COMMENT_LIMIT} characters): {rows} more table rows; --format json has all._\n")
}

pub const PEAK_HEADER: [&str; 7] = ["Module", "Id", "Space", "Base peak", "New peak", "Delta", "Change"];
/// The columns of [`PEAK_HEADER`] that hold numbers.
pub const PEAK_NUMBERS: [usize; 5] = [1, 3, 4, 5, 6];

/// One row per peak that changed, and the count of those that did not.
pub fn peak_rows(diff: &Diff) -> (Vec<Vec<Cell>>, usize) {
    let changed: Vec<&PeakDiff> =
        diff.modules.iter().map(|s| &s.peak).filter(|p| p.delta.change != Change::Unchanged).collect();
    let unchanged = diff.modules.len() - changed.len();
    let rows = changed
        .iter()
        .map(|peak| {
            let mut row: Vec<Cell> = vec![
                both_sides(peak.base_name.as_deref(), peak.new_name.as_deref(), " → ").into(),
                both_sides(peak.base_program_id, peak.new_program_id, " → ").into(),
                space_name(peak).into(),
            ];
            row.extend(peak_cells(&peak.delta));
            row
        })
        .collect();
    (rows, unchanged)
}

/// Said under the table of changed peaks.
pub fn unchanged_text(changed: usize, unchanged: usize) -> String {
    if changed == 0 {
        format!("No peak changed: {} the same peak in both runs.", have(unchanged))
    } else {
        format!(
            "{} more memory space{} the same peak in both runs.",
            unchanged,
            if unchanged == 1 { " has" } else { "s have" }
        )
    }
}

/// `1 memory space has`, `3 memory spaces have`.
fn have(spaces: usize) -> String {
    if spaces == 1 {
        "1 memory space has".to_string()
    } else {
        format!("{spaces} memory spaces have")
    }
}

fn write_peaks(out: &mut dyn Write, flavor: Flavor, diff: &Diff) -> io::Result<()> {
    let (rows, unchanged) = peak_rows(diff);
    if rows.is_empty() {
        return writeln!(out, "{}\n", unchanged_text(0, unchanged));
    }
    let mut t = table(flavor, &PEAK_HEADER);
    let changed = rows.len();
    t.add_rows(rows);
    align_right(&mut t, &PEAK_NUMBERS);
    unwrapped(&mut t, ID_COLUMN);
    writeln!(out, "{t}\n")?;
    if unchanged > 0 {
        writeln!(out, "{}\n", unchanged_text(changed, unchanged))?;
    }
    Ok(())
}

/// One line per pair of modules whose names differ, saying how they were paired.
fn write_pairs_by_role(out: &mut dyn Write, flavor: Flavor, diff: &Diff) -> io::Result<()> {
    let by_role: Vec<_> = diff
        .module_pairs
        .iter()
        .filter(|p| matches!(p.paired_by, Pairing::SuffixEntrySignature | Pairing::SuffixCompileOrder))
        .collect();
    if by_role.is_empty() {
        return Ok(());
    }
    writeln!(out, "Paired by role:")?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    for pair in by_role {
        writeln!(out, "- {} → {}: {}", pair.base, pair.new, pair.paired_by.describe())?;
    }
    writeln!(out)
}

/// `jit_step(40) · hbm: 41.8 MiB → 86.4 MiB (+44.6 MiB, +106.8%)`.
pub fn space_change_heading(space: &MemorySpaceDiff) -> String {
    let (peak, delta) = (&space.peak, &space.peak.delta);
    format!(
        "{} · {}: {} → {} ({}, {})",
        module_name(peak),
        space_name(peak),
        delta.base_peak_bytes.map(bytes).unwrap_or_else(|| "none".into()),
        delta.new_peak_bytes.map(bytes).unwrap_or_else(|| "none".into()),
        human_delta(delta.delta_bytes),
        relative_change(delta)
    )
}

/// `Buffers at the peak that changed: 29, largest change first (top 5); 10 unchanged.`
pub fn buffers_title(space: &MemorySpaceDiff, top: usize) -> String {
    let shown = if space.buffers.len() > top { format!(" (top {top})") } else { String::new() };
    format!(
        "Buffers at the peak that changed: {}, largest change first{shown}; {} unchanged.",
        space.buffers.len(),
        space.unchanged_buffers
    )
}

/// `Matched 124 of 126 buffers: 98 by instruction, 9 by op, source line and kind (renumbered); 1 new, 1 gone.`,
/// unless every buffer was found under its own instruction name.
pub fn matched_text(space: &MemorySpaceDiff) -> Option<String> {
    let counts = &space.matched_by;
    let ways = [
        (counts.instruction, BufferMatch::Instruction),
        (counts.role, BufferMatch::Role),
        (counts.op_name_and_shape, BufferMatch::OpNameAndShape),
        (counts.kind, BufferMatch::Kind),
        (counts.scope, BufferMatch::Scope),
        (counts.instruction_name, BufferMatch::InstructionName),
    ];
    // Said when some buffer was renamed, or is in one run only, of a memory space in both.
    if counts.matched() == 0 || (counts.instruction == counts.matched() && counts.new + counts.gone == 0) {
        return None;
    }
    let ways: Vec<String> =
        ways.iter().filter(|(n, _)| *n > 0).map(|(n, how)| format!("{n} {}", how.describe())).collect();
    let total = counts.matched() + counts.new + counts.gone;
    Some(format!(
        "Matched {} of {total} buffers: {}; {} new, {} gone.",
        counts.matched(),
        ways.join(", "),
        counts.new,
        counts.gone
    ))
}

pub const BUFFER_HEADER: [&str; 7] = ["Change", "Delta", "Base", "New", "Instruction", "Shape", "Op name"];
/// The columns of [`BUFFER_HEADER`] that hold numbers.
pub const BUFFER_NUMBERS: [usize; 3] = [1, 2, 3];

/// The first `top` buffers that changed; `arrow` joins a value that differs.
pub fn buffer_rows(space: &MemorySpaceDiff, top: usize, arrow: &str) -> Vec<Vec<Cell>> {
    space
        .buffers
        .iter()
        .take(top)
        .map(|buffer| {
            let (base, new) = (buffer.base.as_ref(), buffer.new.as_ref());
            let style = change_style(buffer.delta_bytes);
            vec![
                Cell::styled(buffer.change.label(), style),
                Cell::styled(human_delta(buffer.delta_bytes), style),
                buffer.base_bytes.map(bytes).unwrap_or_default().into(),
                buffer.new_bytes.map(bytes).unwrap_or_default().into(),
                both_sides(base.map(|b| &b.instruction), new.map(|n| &n.instruction), arrow).into(),
                both_sides(base.map(|b| &b.shape), new.map(|n| &n.shape), arrow).into(),
                both_sides(base.map(|b| &b.op_name), new.map(|n| &n.op_name), arrow).into(),
            ]
        })
        .collect()
}

fn write_buffers(out: &mut dyn Write, flavor: Flavor, space: &MemorySpaceDiff, top: usize) -> io::Result<()> {
    heading(out, flavor, 2, &space_change_heading(space))?;
    super::attribution::write_group_changes(out, flavor, &space.groups, top)?;
    writeln!(out, "{}", buffers_title(space, top))?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    // A terminal cell has room for one shape per line; a Markdown cell has one line.
    let arrow = if flavor == Flavor::Text { " →\n" } else { " → " };
    let mut t = table(flavor, &BUFFER_HEADER);
    t.add_rows(buffer_rows(space, top, arrow));
    align_right(&mut t, &BUFFER_NUMBERS);
    writeln!(out, "{t}\n")?;
    if space.buffers.len() > top {
        let more = plural(space.buffers.len() - top, "more changed buffer");
        writeln!(out, "{more}: --top N shows more, --format json all.\n")?;
    }
    if let Some(matched) = matched_text(space) {
        writeln!(out, "{matched}\n")?;
    }
    Ok(())
}

/// Every allocator, changed or not: there are few, and capacity and
/// fragmentation may change while the peak does not.
fn write_allocators(out: &mut dyn Write, flavor: Flavor, allocators: &[AllocatorDiff]) -> io::Result<()> {
    heading(out, flavor, 2, "Allocators")?;
    let mut t = table(flavor, &ALLOCATOR_HEADER);
    t.add_rows(allocator_rows(allocators));
    align_right(&mut t, &ALLOCATOR_NUMBERS);
    writeln!(out, "{t}\n")
}

pub const ALLOCATOR_HEADER: [&str; 8] =
    ["Allocator", "Host", "Base peak", "New peak", "Delta", "Change", "Capacity", "Fragmentation at peak"];
/// The columns of [`ALLOCATOR_HEADER`] that hold numbers.
pub const ALLOCATOR_NUMBERS: [usize; 6] = [2, 3, 4, 5, 6, 7];

pub fn allocator_rows(allocators: &[AllocatorDiff]) -> Vec<Vec<Cell>> {
    allocators
        .iter()
        .map(|allocator| {
            let mut row: Vec<Cell> = vec![
                allocator.name.clone().into(),
                both_sides(allocator.base_host.as_deref(), Some(&allocator.host), " → ").into(),
            ];
            row.extend(peak_cells(&allocator.delta));
            let capacity =
                both_sides(allocator.base_capacity_bytes.map(bytes), allocator.new_capacity_bytes.map(bytes), " → ");
            let fragmentation = both_sides(
                allocator.base_fragmentation_at_peak.map(percent),
                allocator.new_fragmentation_at_peak.map(percent),
                " → ",
            );
            row.extend([capacity.into(), fragmentation.into()]);
            row
        })
        .collect()
}

/// Base peak, new peak, delta and relative change, as the tables show them.
fn peak_cells(delta: &PeakDelta) -> [Cell; 4] {
    let style = change_style(delta.delta_bytes);
    [
        delta.base_peak_bytes.map(bytes).unwrap_or_else(|| "-".into()).into(),
        delta.new_peak_bytes.map(bytes).unwrap_or_else(|| "-".into()).into(),
        Cell::styled(human_delta(delta.delta_bytes), style),
        Cell::styled(relative_change(delta), style),
    ]
}

fn write_verdict(out: &mut dyn Write, flavor: Flavor, diff: &Diff) -> io::Result<()> {
    match flavor {
        Flavor::Text => {
            let style = if diff.verdict == Verdict::Pass { SHRINK } else { GROWTH };
            writeln!(out, "Verdict: {}", styled(flavor, &verdict(diff), style.bold()))?
        }
        Flavor::Markdown => writeln!(out, "**Verdict: {}**\n", verdict(diff))?,
    }
    let bullet = if flavor == Flavor::Text { "  - " } else { "- " };
    for violation in &diff.violations {
        writeln!(out, "{bullet}{}", violation_text(violation))?;
    }
    if flavor == Flavor::Markdown && !diff.violations.is_empty() {
        writeln!(out)?;
    }
    Ok(())
}

/// `PASS (no limit set)`, `FAIL, 3 limits crossed (--fail-if-peak-grows 5%)`.
pub fn verdict(diff: &Diff) -> String {
    let limits: Vec<String> = diff.limits.iter().map(|&l| limit_flag(l)).collect();
    let limits = if limits.is_empty() {
        "no limit set".to_string()
    } else {
        let min_peak = &diff.min_peak;
        let unjudged = match (min_peak.not_judged, min_peak.default) {
            (0, _) => String::new(),
            (n, true) => format!(
                "; {} under {} in both runs not judged, the default --min-peak: 1% of the largest peak, at least 1 MiB",
                plural(n, "peak"),
                bytes(min_peak.bytes)
            ),
            (n, false) => {
                format!("; {} under --min-peak {} in both runs not judged", plural(n, "peak"), bytes(min_peak.bytes))
            }
        };
        format!("{}{unjudged}", limits.join(", "))
    };
    match diff.verdict {
        Verdict::Pass => format!("PASS ({limits})"),
        Verdict::Fail => format!("FAIL, {} crossed ({limits})", plural(diff.violations.len(), "limit")),
    }
}

/// One line saying which memory space, allocator or device memory profile
/// crossed which limit, and by how much.
pub fn violation_text(violation: &Violation) -> String {
    let (what, delta) = match &violation.crossed {
        Crossed::Peak(peak) => (format!("{} · {}", module_name(peak), space_name(peak)), &peak.delta),
        Crossed::AllocatorPeak(allocator) => {
            (format!("allocator {} on {}", allocator.name, allocator.host), &allocator.delta)
        }
        Crossed::LiveBytes(live) => return live_violation_text(violation.limit, live),
        Crossed::SnapshotPeak(peak) => {
            let input = peak.new_input.as_deref().or(peak.base_input.as_deref()).unwrap_or_default();
            (format!("PyTorch snapshot {input} {}", peak.device), &peak.delta)
        }
    };
    let new_peak = delta.new_peak_bytes.map(bytes).unwrap_or_default();
    let how = match (violation.limit, delta.base_peak_bytes) {
        (Limit::PeakOver { .. }, _) => format!("peak {new_peak}"),
        (_, Some(base)) => {
            format!(
                "peak grew {} → {new_peak} ({}, {})",
                bytes(base),
                human_delta(delta.delta_bytes),
                relative_change(delta)
            )
        }
        (_, None) => format!("peak {new_peak} with no baseline (new in this run)"),
    };
    format!("{what}: {how} crosses {}", limit_flag(violation.limit))
}

fn live_violation_text(limit: Limit, live: &LiveDiff) -> String {
    let delta = &live.delta;
    let what = match limit {
        Limit::PeakOver { .. } => format!("live bytes {}", bytes(delta.new_bytes)),
        Limit::PeakGrowthRatio { .. } | Limit::PeakGrowthBytes { .. } => format!(
            "live bytes grew {} → {} ({}, {})",
            bytes(delta.base_bytes),
            bytes(delta.new_bytes),
            human_delta(delta.delta_bytes),
            ratio_text(live.delta_ratio)
        ),
    };
    format!("device memory {}: {what} crosses {}", live.new_input, limit_flag(limit))
}

fn limit_flag(limit: Limit) -> String {
    match limit {
        Limit::PeakGrowthRatio { ratio } => format!("--fail-if-peak-grows {}", Growth::Ratio(ratio)),
        Limit::PeakGrowthBytes { bytes } => format!("--fail-if-peak-grows {}", human_bytes(bytes)),
        Limit::PeakOver { bytes } => format!("--fail-if-over {}", human_bytes(bytes)),
    }
}

/// `jit_step(22)`, `jit_step(22 → 31)` when the program id changed, or
/// `SyncTensorsGraph.3422(0) → SyncTensorsGraph.4394(0)` when the name did.
fn module_name(peak: &PeakDiff) -> String {
    match (&peak.base_name, &peak.new_name, peak.base_program_id, peak.new_program_id) {
        (Some(base), Some(new), Some(base_id), Some(new_id)) if base != new => {
            format!("{base}({base_id}) → {new}({new_id})")
        }
        _ => match both_sides(peak.base_program_id, peak.new_program_id, " → ") {
            ids if ids.is_empty() => peak.name.clone(),
            ids => format!("{}({ids})", peak.name),
        },
    }
}

fn space_name(peak: &PeakDiff) -> String {
    match peak.trace_index {
        Some(trace) if trace > 0 => format!("{} (trace {trace})", peak.memory_space),
        _ => peak.memory_space.clone(),
    }
}

fn relative_change(delta: &PeakDelta) -> String {
    match delta.change {
        Change::New | Change::Gone => delta.change.label().to_string(),
        _ => ratio_text(delta.delta_ratio),
    }
}

/// A value the two runs share once, `base → new` when they differ.
fn both_sides<T: ToString + PartialEq>(base: Option<T>, new: Option<T>, arrow: &str) -> String {
    match (base, new) {
        (Some(base), Some(new)) if base != new => format!("{}{arrow}{}", base.to_string(), new.to_string()),
        (base, new) => new.or(base).map(|v| v.to_string()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::{fit_comment, COMMENT_LIMIT};

    #[test]
    fn a_long_comment_is_cut_at_a_line_with_the_rows_left_out() {
        let rows: String = (0..5000).map(|i| format!("| row {i:>5} | {} |\n", "x".repeat(20))).collect();
        let markdown = format!("**Verdict: PASS**\n\n| A | B |\n|---|---|\n{rows}");
        let cut = fit_comment(&markdown, COMMENT_LIMIT);
        assert!(cut.chars().count() <= COMMENT_LIMIT);
        let kept = cut.lines().filter(|l| l.starts_with("| row")).count();
        assert!(cut.ends_with(&format!(": {} more table rows; --format json has all._\n", 5000 - kept)), "{cut}");
        assert!(cut.starts_with("**Verdict: PASS**"));
        assert_eq!(fit_comment("short", 10), "short");
    }
}

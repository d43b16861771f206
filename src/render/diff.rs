//! `xmem diff` for a terminal, or as GitHub Markdown for `$GITHUB_STEP_SUMMARY`
//! and pull-request comments: the peaks that changed, the buffers behind the
//! change, the allocators, then the verdict.

use std::io::{self, Write};

use comfy_table::{ColumnConstraint, Width};

use super::device_memory;
use super::text::{align_right, bytes, heading, percent, plural, table, unwrapped, Detail, Flavor, ID_COLUMN};
use crate::diff::device_memory::LiveDiff;
use crate::diff::{
    AllocatorDiff, Change, Crossed, Diff, Limit, MemorySpaceDiff, Pairing, PeakDelta, PeakDiff, Verdict, Violation,
};
use crate::units::{human_bytes, human_delta, Growth};

pub fn write(out: &mut dyn Write, flavor: Flavor, diff: &Diff, detail: Detail) -> io::Result<()> {
    heading(out, flavor, 1, &format!("xmem diff: {} → {}", diff.base_inputs.join(", "), diff.new_inputs.join(", ")))?;
    for warning in &diff.warnings {
        writeln!(out, "warning: {warning}")?;
    }
    if !diff.modules.is_empty() || (diff.allocators.is_empty() && diff.device_memory.is_empty()) {
        write_peaks(out, flavor, diff)?;
        write_pairs_by_role(out, flavor, diff)?;
    }
    for snapshots in &diff.device_memory {
        writeln!(out)?;
        device_memory::write_diff(out, flavor, snapshots, detail.top)?;
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
    write_verdict(out, flavor, diff)
}

fn write_peaks(out: &mut dyn Write, flavor: Flavor, diff: &Diff) -> io::Result<()> {
    let changed: Vec<&PeakDiff> =
        diff.modules.iter().map(|s| &s.peak).filter(|p| p.delta.change != Change::Unchanged).collect();
    let unchanged = diff.modules.len() - changed.len();
    if changed.is_empty() {
        return writeln!(out, "No peak changed: {unchanged} memory spaces have the same peak in both runs.\n");
    }
    let mut t = table(flavor, &["Module", "Id", "Space", "Base peak", "New peak", "Delta", "Change"]);
    for peak in &changed {
        let mut row = vec![
            both_sides(peak.base_name.as_deref(), peak.new_name.as_deref(), " → "),
            both_sides(peak.base_program_id, peak.new_program_id, " → "),
            space_name(peak),
        ];
        row.extend(peak_cells(&peak.delta));
        t.add_row(row);
    }
    align_right(&mut t, &[1, 3, 4, 5, 6]);
    unwrapped(&mut t, ID_COLUMN);
    writeln!(out, "{t}\n")?;
    if unchanged > 0 {
        writeln!(out, "{unchanged} more memory spaces have the same peak in both runs.\n")?;
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

fn write_buffers(out: &mut dyn Write, flavor: Flavor, space: &MemorySpaceDiff, top: usize) -> io::Result<()> {
    let (peak, delta) = (&space.peak, &space.peak.delta);
    heading(
        out,
        flavor,
        2,
        &format!(
            "{} · {}: {} → {} ({}, {})",
            module_name(peak),
            space_name(peak),
            delta.base_peak_bytes.map(bytes).unwrap_or_else(|| "none".into()),
            delta.new_peak_bytes.map(bytes).unwrap_or_else(|| "none".into()),
            human_delta(delta.delta_bytes),
            relative_change(delta)
        ),
    )?;
    super::attribution::write_group_changes(out, flavor, &space.groups, top)?;
    let shown = if space.buffers.len() > top { format!(" (top {top})") } else { String::new() };
    writeln!(
        out,
        "Buffers at the peak that changed: {}, largest change first{shown}; {} unchanged.",
        space.buffers.len(),
        space.unchanged_buffers
    )?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    // A terminal cell has room for one shape per line; a Markdown cell has one line.
    let arrow = if flavor == Flavor::Text { " →\n" } else { " → " };
    let mut t = table(flavor, &["Change", "Delta", "Base", "New", "Instruction", "Shape", "Op name"]);
    for buffer in space.buffers.iter().take(top) {
        let (base, new) = (buffer.base.as_ref(), buffer.new.as_ref());
        t.add_row(vec![
            buffer.change.label().to_string(),
            human_delta(buffer.delta_bytes),
            buffer.base_bytes.map(bytes).unwrap_or_default(),
            buffer.new_bytes.map(bytes).unwrap_or_default(),
            both_sides(base.map(|b| &b.instruction), new.map(|n| &n.instruction), arrow),
            both_sides(base.map(|b| &b.shape), new.map(|n| &n.shape), arrow),
            both_sides(base.map(|b| &b.op_name), new.map(|n| &n.op_name), arrow),
        ]);
    }
    align_right(&mut t, &[1, 2, 3]);
    if let Some(shape) = t.column_mut(5) {
        // Room for `f32[1024,1024]{1,0} →` and its padding on one line.
        shape.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(23)));
    }
    writeln!(out, "{t}\n")?;
    if space.buffers.len() > top {
        writeln!(out, "{} more changed buffers: --top N shows more, --format json all.\n", space.buffers.len() - top)?;
    }
    Ok(())
}

/// Every allocator, changed or not: there are few, and capacity and
/// fragmentation may change while the peak does not.
fn write_allocators(out: &mut dyn Write, flavor: Flavor, allocators: &[AllocatorDiff]) -> io::Result<()> {
    heading(out, flavor, 2, "Allocators")?;
    // A terminal has 100 columns, and `Fragmentation` would not fit in the last one unbroken.
    let fragmentation = if flavor == Flavor::Text { "Frag. at peak" } else { "Fragmentation at peak" };
    let mut t =
        table(flavor, &["Allocator", "Host", "Base peak", "New peak", "Delta", "Change", "Capacity", fragmentation]);
    for allocator in allocators {
        let mut row =
            vec![allocator.name.clone(), both_sides(allocator.base_host.as_deref(), Some(&allocator.host), " → ")];
        row.extend(peak_cells(&allocator.delta));
        row.push(both_sides(allocator.base_capacity_bytes.map(bytes), allocator.new_capacity_bytes.map(bytes), " → "));
        row.push(both_sides(
            allocator.base_fragmentation_at_peak.map(percent),
            allocator.new_fragmentation_at_peak.map(percent),
            " → ",
        ));
        t.add_row(row);
    }
    align_right(&mut t, &[2, 3, 4, 5, 6, 7]);
    // Names like `bfc_cpu_allocator_for_gpu` read badly broken; the headers wrap instead.
    let longest = allocators.iter().map(|a| a.name.chars().count()).max().unwrap_or(0);
    if let Some(name) = t.column_mut(0) {
        name.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed((longest.min(40) + 2) as u16)));
    }
    writeln!(out, "{t}\n")
}

/// Base peak, new peak, delta and relative change, as the tables show them.
fn peak_cells(delta: &PeakDelta) -> [String; 4] {
    [
        delta.base_peak_bytes.map(bytes).unwrap_or_else(|| "-".into()),
        delta.new_peak_bytes.map(bytes).unwrap_or_else(|| "-".into()),
        human_delta(delta.delta_bytes),
        relative_change(delta),
    ]
}

fn write_verdict(out: &mut dyn Write, flavor: Flavor, diff: &Diff) -> io::Result<()> {
    match flavor {
        Flavor::Text => writeln!(out, "Verdict: {}", verdict(diff))?,
        Flavor::Markdown => writeln!(out, "**Verdict: {}**\n", verdict(diff))?,
    }
    let bullet = if flavor == Flavor::Text { "  - " } else { "- " };
    for violation in &diff.violations {
        writeln!(out, "{bullet}{}", violation_text(violation))?;
    }
    Ok(())
}

/// `PASS (no limit set)`, `FAIL, 3 limits crossed (--fail-if-peak-grows 5%)`.
pub fn verdict(diff: &Diff) -> String {
    let limits: Vec<String> = diff.limits.iter().map(|&l| limit_flag(l)).collect();
    let limits = if limits.is_empty() { "no limit set".to_string() } else { limits.join(", ") };
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

/// `+106.8%`, or `from 0 B` when the baseline was empty.
pub fn ratio_text(delta_ratio: Option<f64>) -> String {
    match delta_ratio {
        Some(ratio) => format!("{:+.1}%", ratio * 100.0),
        None => "from 0 B".to_string(),
    }
}

/// A value the two runs share once, `base → new` when they differ.
fn both_sides<T: ToString + PartialEq>(base: Option<T>, new: Option<T>, arrow: &str) -> String {
    match (base, new) {
        (Some(base), Some(new)) if base != new => format!("{}{arrow}{}", base.to_string(), new.to_string()),
        (base, new) => new.or(base).map(|v| v.to_string()).unwrap_or_default(),
    }
}

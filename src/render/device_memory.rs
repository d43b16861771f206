//! The device memory sections of a report and of a diff (text and Markdown):
//! live bytes per device and kind, the allocation sites as `pprof -top` lists
//! them, the heaviest Python stacks, and the stacks that grew.

use std::io::{self, Write};

use super::diff::ratio_text;
use super::text::{align_right, bytes, fact, file_name_and_line, heading, table, Flavor};
use crate::analysis::device_memory::{DeviceMemoryReport, DeviceUsage, StackFrame};
use crate::diff::device_memory::{Delta, DeviceMemoryDiff};
use crate::units::human_delta;

pub fn write(out: &mut dyn Write, flavor: Flavor, report: &DeviceMemoryReport, top: usize) -> io::Result<()> {
    heading(out, flavor, 2, &format!("Device memory: {}", report.input))?;
    fact(
        out,
        flavor,
        "Live",
        &format!("{} ({} bytes) in {}", bytes(report.total_bytes), report.total_bytes, allocations(report.total_count)),
    )?;
    writeln!(out)?;
    let mut devices = table(flavor, &["Device", "Bytes", "Count", "By kind"]);
    for device in &report.devices {
        devices.add_row(vec![
            device_name(&device.device),
            bytes(device.bytes),
            device.count.to_string(),
            kinds(device),
        ]);
    }
    align_right(&mut devices, &[1, 2]);
    writeln!(out, "{devices}")?;

    writeln!(out)?;
    let shown = report.top_sites.len().min(top);
    writeln!(out, "Allocation sites by function ({shown} of {}), as in pprof -top:", report.top_sites.len())?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    let mut sites = table(flavor, &["Flat", "Cum", "Count", "Cum count", "Function", "Defined at"]);
    for site in report.top_sites.iter().take(top) {
        sites.add_row(vec![
            bytes(site.flat_bytes),
            bytes(site.cum_bytes),
            site.count.to_string(),
            site.cum_count.to_string(),
            site.function.clone(),
            file_name_and_line(&format!("{}:{}", site.file, site.line)),
        ]);
    }
    align_right(&mut sites, &[0, 1, 2, 3]);
    writeln!(out, "{sites}")?;

    let stacks = report.heaviest_stacks(top);
    if stacks.rows.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "Heaviest stacks, innermost frame first:")?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    for (rank, stack) in stacks.rows.iter().enumerate() {
        writeln!(out, "{}. {} in {}", rank + 1, bytes(stack.bytes), allocations(stack.count))?;
        write_frames(out, flavor, &stack.frames)?;
    }
    if stacks.rest_count > 0 {
        writeln!(out, "\n{} more stacks hold {}.", stacks.rest_count, bytes(stacks.rest_bytes))?;
    }
    Ok(())
}

/// The device memory part of `xmem diff`: live bytes of both snapshots, per
/// device, and the stacks that changed, largest growth first.
pub fn write_diff(out: &mut dyn Write, flavor: Flavor, diff: &DeviceMemoryDiff, top: usize) -> io::Result<()> {
    let total = &diff.total;
    heading(out, flavor, 2, &format!("Device memory: {} → {}", total.base_input, total.new_input))?;
    let growth = format!("{}, {}", human_delta(total.delta.delta_bytes), ratio_text(total.delta_ratio));
    fact(out, flavor, "Live", &change(&total.delta, &growth))?;
    writeln!(out)?;
    let mut devices = table(flavor, &["Device", "Base", "New", "Delta", "Allocations"]);
    for device in &diff.devices {
        let delta = &device.delta;
        devices.add_row(vec![
            device_name(&device.device),
            bytes(delta.base_bytes),
            bytes(delta.new_bytes),
            human_delta(delta.delta_bytes),
            format!("{} → {}", delta.base_count, delta.new_count),
        ]);
    }
    align_right(&mut devices, &[1, 2, 3, 4]);
    writeln!(
        out,
        "{devices}
"
    )?;
    if diff.stacks.is_empty() {
        return writeln!(out, "No stack changed: every stack holds the same bytes and allocations in both.\n");
    }
    let shown = if diff.stacks.len() > top { format!(" (top {top})") } else { String::new() };
    writeln!(out, "Stacks that changed: {}, largest growth first{shown}; innermost frame first:", diff.stacks.len())?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    for (rank, stack) in diff.stacks.iter().take(top).enumerate() {
        writeln!(out, "{}. {}", rank + 1, change(&stack.delta, &human_delta(stack.delta.delta_bytes)))?;
        write_frames(out, flavor, &stack.frames)?;
    }
    writeln!(out)
}

/// `20.6 MiB → 42.7 MiB (+22.1 MiB), 42 → 42 allocations`, with `growth` in the brackets.
fn change(delta: &Delta, growth: &str) -> String {
    format!(
        "{} → {} ({growth}), {} → {}",
        bytes(delta.base_bytes),
        bytes(delta.new_bytes),
        delta.base_count,
        allocations(delta.new_count)
    )
}

fn write_frames(out: &mut dyn Write, flavor: Flavor, frames: &[StackFrame]) -> io::Result<()> {
    for frame in frames {
        match flavor {
            Flavor::Text => writeln!(out, "     {:<32} {}", frame.function, frame_source(frame))?,
            Flavor::Markdown => writeln!(out, "   - `{}` {}", frame.function, frame_source(frame))?,
        }
    }
    Ok(())
}

fn device_name(device: &Option<String>) -> String {
    device.clone().unwrap_or_else(|| "(no device)".to_string())
}

/// `buffer 92.1 MiB in 30`: the kinds present on the device (the JSON lists every kind).
fn kinds(device: &DeviceUsage) -> String {
    device
        .by_kind
        .iter()
        .filter_map(|(kind, kind_bytes)| {
            let count = device.count_by_kind.get(kind).copied().filter(|&count| count > 0)?;
            Some(format!("{kind} {} in {count}", bytes(*kind_bytes)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn allocations(count: i64) -> String {
    format!("{count} allocation{}", if count == 1 { "" } else { "s" })
}

fn frame_source(frame: &StackFrame) -> String {
    file_name_and_line(&format!("{}:{}", frame.file, frame.line))
}

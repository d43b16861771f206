//! The device memory sections of a report and of a diff (text and Markdown):
//! live bytes per device and kind, the allocation sites as `pprof -top` lists
//! them, the heaviest Python stacks, and the stacks that grew.

use std::io::{self, Write};

use super::escape::printable;
use super::table::{align_right, bytes, fact, file_name_and_line, heading, ratio_text, table, Flavor};
use crate::analysis::device_memory::{DeviceMemoryReport, DeviceUsage, Largest, StackFrame, StackFrames, StackUsage};
use crate::diff::device_memory::{Delta, DeviceMemoryDiff};
use crate::units::human_delta;

pub const DEVICE_HEADER: [&str; 4] = ["Device", "Bytes", "Count", "By kind"];
pub const DEVICE_NUMBERS: [usize; 2] = [1, 2];
pub const SITE_HEADER: [&str; 6] = ["Flat", "Cum", "Count", "Cum count", "Function", "Defined at"];
pub const SITE_NUMBERS: [usize; 4] = [0, 1, 2, 3];
pub const STACKS_TITLE: &str = "Heaviest stacks, innermost frame first:";

pub fn write(out: &mut dyn Write, flavor: Flavor, report: &DeviceMemoryReport, top: usize) -> io::Result<()> {
    heading(out, flavor, 2, &snapshot_heading(report))?;
    fact(out, flavor, "Live", &live(report))?;
    writeln!(out)?;
    let mut devices = table(flavor, &DEVICE_HEADER);
    devices.add_rows(device_rows(report));
    align_right(&mut devices, &DEVICE_NUMBERS);
    writeln!(out, "{devices}")?;
    super::attribution::write_device_memory_groups(out, flavor, report, top)?;

    writeln!(out)?;
    writeln!(out, "{}", sites_title(report, top))?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    let mut sites = table(flavor, &SITE_HEADER);
    sites.add_rows(site_rows(report, top));
    align_right(&mut sites, &SITE_NUMBERS);
    writeln!(out, "{sites}")?;

    let stacks = report.heaviest_stacks(top);
    if stacks.rows.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "{STACKS_TITLE}")?;
    if flavor == Flavor::Markdown {
        writeln!(out)?;
    }
    for (rank, stack) in stacks.rows.iter().enumerate() {
        writeln!(out, "{}. {}", rank + 1, stack_total(stack))?;
        write_frames(out, flavor, &stack.frames)?;
    }
    if let Some(rest) = rest_of_stacks(&stacks) {
        writeln!(out, "\n{rest}")?;
    }
    Ok(())
}

pub fn snapshot_heading(report: &DeviceMemoryReport) -> String {
    format!("Device memory: {}", report.input)
}

/// `92.1 MiB (96557204 bytes) in 53 allocations`, and how many of them have
/// no size in the profile, when some have none.
pub fn live(report: &DeviceMemoryReport) -> String {
    let unknown = match report.size_unknown_count {
        0 => String::new(),
        n => format!("; {n} of them of unknown size (recorded as -1, as old jaxlib on TPU does for executables), not in the bytes"),
    };
    format!(
        "{} ({} bytes) in {}{unknown}",
        bytes(report.total_bytes),
        report.total_bytes,
        allocations(report.total_count)
    )
}

pub fn device_rows(report: &DeviceMemoryReport) -> Vec<Vec<String>> {
    report
        .devices
        .iter()
        .map(|device| vec![device_name(&device.device), bytes(device.bytes), device.count.to_string(), kinds(device)])
        .collect()
}

pub fn sites_title(report: &DeviceMemoryReport, top: usize) -> String {
    let shown = report.top_sites.len().min(top);
    format!(
        "Allocation sites by function ({shown} of {}), as in pprof -top with library frames hidden:",
        report.top_sites.len()
    )
}

pub fn site_rows(report: &DeviceMemoryReport, top: usize) -> Vec<Vec<String>> {
    report
        .top_sites
        .iter()
        .take(top)
        .map(|site| {
            vec![
                bytes(site.flat_bytes),
                bytes(site.cum_bytes),
                site.count.to_string(),
                site.cum_count.to_string(),
                site.function.to_string(),
                file_name_and_line(&format!("{}:{}", site.file, site.line)),
            ]
        })
        .collect()
}

/// `72.0 MiB in 9 allocations`.
pub fn stack_total(stack: &StackUsage) -> String {
    format!("{} in {}", bytes(stack.bytes), allocations(stack.count))
}

/// `12 more stacks hold 0 B.`, when some are not shown.
pub fn rest_of_stacks(stacks: &Largest<StackUsage>) -> Option<String> {
    (stacks.rest_count > 0).then(|| {
        format!(
            "{} more {} {}.",
            stacks.rest_count,
            if stacks.rest_count == 1 { "stack holds" } else { "stacks hold" },
            bytes(stacks.rest_bytes)
        )
    })
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
    for device in diff.devices.iter().filter(|device| !device.delta.holds_no_bytes()) {
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

fn write_frames(out: &mut dyn Write, flavor: Flavor, frames: &StackFrames) -> io::Result<()> {
    for frame in frames.iter() {
        match flavor {
            Flavor::Text => writeln!(out, "     {}", printable(&frame_line(frame)))?,
            Flavor::Markdown => {
                writeln!(out, "   - `{}` {}", printable(&frame.function), printable(&frame_source(frame)))?
            }
        }
    }
    Ok(())
}

/// `__call__                         stages.py:890`: one frame, aligned for a monospace column.
pub fn frame_line(frame: &StackFrame) -> String {
    format!("{:<32} {}", frame.function, frame_source(frame))
}

/// Samples without a `device` label (executables) are "(no device)"; a label
/// whose value is empty is a device all the same.
pub fn device_name(device: &Option<String>) -> String {
    match device.as_deref() {
        None => "(no device)".to_string(),
        Some("") => "\"\" (empty device label)".to_string(),
        Some(name) => name.to_string(),
    }
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

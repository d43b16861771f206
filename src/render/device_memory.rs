//! The device memory section of a report (text and Markdown): live bytes per
//! device and kind, the allocation sites as `pprof -top` lists them, and the
//! heaviest Python stacks.

use std::io::{self, Write};

use super::text::{align_right, bytes, fact, file_name_and_line, heading, table, Flavor};
use crate::analysis::device_memory::{DeviceMemoryReport, DeviceUsage, StackFrame};

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
            device.device.clone().unwrap_or_else(|| "(no device)".to_string()),
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
        for frame in &stack.frames {
            match flavor {
                Flavor::Text => writeln!(out, "     {:<32} {}", frame.function, frame_source(frame))?,
                Flavor::Markdown => writeln!(out, "   - `{}` {}", frame.function, frame_source(frame))?,
            }
        }
    }
    if stacks.rest_count > 0 {
        writeln!(out, "\n{} more stacks hold {}.", stacks.rest_count, bytes(stacks.rest_bytes))?;
    }
    Ok(())
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

//! `xmem list`: one row per module and memory space, then one per allocator.

use std::io::{self, Write};

use super::table::{align_right, bytes, heading, plural, table, unwrapped, Flavor, ID_COLUMN};
use crate::analysis::{AllocatorListing, Contents, ModuleListing};

pub fn write(out: &mut dyn Write, flavor: Flavor, contents: &Contents) -> io::Result<()> {
    heading(
        out,
        flavor,
        1,
        &format!(
            "{}: {}, {}",
            contents.inputs.join(", "),
            plural(contents.modules.len(), "module"),
            plural(contents.allocators.len(), "allocator")
        ),
    )?;
    for warning in &contents.warnings {
        writeln!(out, "warning: {warning}")?;
    }
    for note in &contents.notes {
        writeln!(out, "{note}")?;
    }
    // An input with nothing else still shows the (empty) module table.
    let nothing_else =
        contents.device_memory.is_empty() && contents.allocators.is_empty() && contents.torch_snapshots.is_empty();
    if !contents.modules.is_empty() || nothing_else {
        write_modules(out, flavor, &contents.modules)?;
    }
    for snapshot in &contents.device_memory {
        let devices: Vec<String> =
            snapshot.devices.iter().filter(|d| d.is_some()).map(super::device_memory::device_name).collect();
        writeln!(
            out,
            "Device memory profile: {} in {} allocations{} from {} stacks, on {}",
            bytes(snapshot.total_bytes),
            snapshot.total_count,
            match snapshot.size_unknown_count {
                0 => String::new(),
                n => format!(" ({n} of unknown size)"),
            },
            snapshot.stacks,
            if devices.is_empty() { "no device".to_string() } else { devices.join(", ") }
        )?;
    }
    if !contents.allocators.is_empty() {
        if !contents.modules.is_empty() {
            writeln!(out)?;
        }
        write_allocators(out, flavor, &contents.allocators)?;
    }
    if !contents.torch_snapshots.is_empty() {
        let mut t =
            table(flavor, &["PyTorch snapshot", "Device", "Segments", "Reserved", "Trace entries", "Peak", "OOMs"]);
        for snapshot in &contents.torch_snapshots {
            t.add_row(vec![
                snapshot.input.clone(),
                snapshot.device.clone(),
                snapshot.segments.to_string(),
                bytes(snapshot.reserved_bytes),
                snapshot.trace_entries.to_string(),
                bytes(snapshot.peak_bytes),
                snapshot.ooms.to_string(),
            ]);
        }
        align_right(&mut t, &[2, 3, 4, 5, 6]);
        writeln!(out, "{t}")?;
    }
    Ok(())
}

fn write_modules(out: &mut dyn Write, flavor: Flavor, modules: &[ModuleListing]) -> io::Result<()> {
    let mut t = table(flavor, &["Module", "Id", "Space", "Peak", "Total allocation", "Heap events", "Buffers at peak"]);
    for module in modules {
        let id = module.program_id.to_string();
        if let Some(problem) = &module.problem {
            t.add_row(vec![
                module.name.clone(),
                id.clone(),
                "-".into(),
                problem.split(';').next().unwrap_or(problem).into(),
            ]);
        }
        for space in &module.memory_spaces {
            t.add_row(vec![
                module.name.clone(),
                id.clone(),
                space.name.clone(),
                bytes(space.peak_bytes),
                bytes(space.total_allocation_bytes),
                space.heap_events.to_string(),
                space.buffers_at_peak.to_string(),
            ]);
        }
    }
    align_right(&mut t, &[1, 3, 4, 5, 6]);
    unwrapped(&mut t, ID_COLUMN);
    writeln!(out, "{t}")
}

fn write_allocators(out: &mut dyn Write, flavor: Flavor, allocators: &[AllocatorListing]) -> io::Result<()> {
    let mut t = table(flavor, &["Allocator", "Host", "Allocations", "Deallocations", "Peak", "Capacity"]);
    for allocator in allocators {
        t.add_row(vec![
            allocator.name.clone(),
            allocator.host.clone(),
            allocator.num_allocations.to_string(),
            allocator.num_deallocations.to_string(),
            bytes(allocator.peak_bytes),
            bytes(allocator.capacity_bytes),
        ]);
    }
    align_right(&mut t, &[2, 3, 4, 5]);
    writeln!(out, "{t}")
}

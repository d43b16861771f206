//! `xmem list`: one row per module and memory space.

use std::io::{self, Write};

use super::text::{align_right, bytes, heading, table, Flavor};
use crate::analysis::Contents;

pub fn write(out: &mut dyn Write, flavor: Flavor, contents: &Contents) -> io::Result<()> {
    heading(out, flavor, 1, &format!("{}: {} modules", contents.inputs.join(", "), contents.modules.len()))?;
    let mut t = table(flavor, &["Module", "Id", "Space", "Peak", "Total allocation", "Heap events", "Buffers at peak"]);
    for module in &contents.modules {
        let id = module.program_id.map(|i| i.to_string()).unwrap_or_default();
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
    if !contents.modules.is_empty() || contents.device_memory.is_empty() {
        writeln!(out, "{t}")?;
    }
    for snapshot in &contents.device_memory {
        let devices: Vec<&str> = snapshot.devices.iter().flatten().map(String::as_str).collect();
        writeln!(
            out,
            "Device memory profile: {} in {} allocations from {} stacks, on {}",
            bytes(snapshot.total_bytes),
            snapshot.total_count,
            snapshot.stacks,
            if devices.is_empty() { "no device".to_string() } else { devices.join(", ") }
        )?;
    }
    Ok(())
}

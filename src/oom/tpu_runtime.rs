//! TPU runtime allocation failures: a device buffer that does not fit (E0100),
//! a program that cannot reserve its memory (E0101), and the allocation
//! descriptor (`Allocation (size=…) would exceed memory (size=…) :: #allocationN […]`).

use super::block::Detected;
use super::event::{Allocation, Kind, OomEvent};
use super::line::Line;
use super::size::{self, SIZE};
use super::tpu_report::Report;

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    if let Some(found) = regex!(&format!(
        r"Attempting to allocate ({SIZE})\. That was not possible\. There are ({SIZE}) free\.(?:;?\s*\(([^)]+)\))?"
    ))
    .captures(text)
    {
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.error_code = Some("E0100".to_string());
        event.requested_bytes = size::unsigned(size::parse(&found[1]));
        event.free_bytes = size::unsigned(size::parse(&found[2]));
        if let Some(largest) = regex!(&format!(r"largest contiguous region of free memory is ({SIZE})")).captures(text)
        {
            event.fact("Device buffer", "largest contiguous free", size::parse(&largest[1]), None);
        }
        // After the figures, or after the fragmentation sentence that newer libtpu puts between.
        let location = found.get(3).or_else(|| regex!(r"\((0x\w+_[A-Za-z]+\d*)\)").captures(text)?.get(1));
        if let Some(location) = location {
            // `0x3x0_HBM1`: chip and core coordinates, then the memory.
            event.memory_space =
                regex!(r"(?i)_([a-z]+)\d*$").captures(location.as_str()).map(|space| space[1].to_lowercase());
            event.fact("Device buffer", "location", None, Some(location.as_str().to_string()));
        }
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) = regex!(&format!(
        r"Attempting to reserve ({SIZE}) at the bottom of memory\. That was not possible\.(?: There are ({SIZE}) free, ({SIZE}) reserved, and ({SIZE}) reservable\.)?"
    ))
    .captures(text)
    {
        // Some runtimes stop after `That was not possible.`: the figures after it are then not in the log.
        let figure = |at: usize| found.get(at).and_then(|m| size::parse(m.as_str()));
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.error_code = Some("E0101".to_string());
        event.requested_bytes = size::unsigned(size::parse(&found[1]));
        event.free_bytes = size::unsigned(figure(2));
        if found.get(2).is_some() {
            event.fact("Program reservation", "reserved", figure(3), None);
            event.fact("Program reservation", "reservable", figure(4), None);
        }
        event.op = regex!(r"Error loading program '([^']+)'").captures(text).map(|program| program[1].to_string());
        event.program = event.op.clone();
        if let Some(replica) = regex!(r"while running replica (\d+) and partition (\d+)").captures(text) {
            let note = format!("replica {}, partition {}", &replica[1], &replica[2]);
            event.fact("Program reservation", "failed on", None, Some(note));
        }
        return Some(Detected::at(event, text, &found).with_block(Report::default()));
    }
    if let Some(found) = regex!(r"Out of memory allocating (\d+) bytes").captures(text) {
        // PJRT's allocators (TPU, CPU) when a buffer does not fit, with the exact count.
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.requested_bytes = found[1].parse().ok();
        event.device_unnamed = true;
        return Some(Detected::at(event, text, &found));
    }
    let found = regex!(
        r"Allocation \(size=(\d+)\) would exceed memory \(size=(\d+)\) :: (#allocation\d+) \[shape = '([^']*)', space=(\w+), size = (0x[0-9a-fA-F]+), tag = '([^']*)'\](?: :: (.*))?"
    )
    .captures(text)?;
    let space = found[5].to_lowercase();
    let tag = &found[7];
    // The scoped-VMEM form is E1001's legacy wording, a compile-time failure.
    let kind = if space == "vmem" && tag.starts_with("scoped memory for") {
        Kind::CompileTimeOom
    } else {
        Kind::RuntimeAllocationFailure
    };
    let mut event = OomEvent::new(kind, line);
    event.requested_bytes = size::unsigned(size::parse_exact(&found[1]));
    event.capacity_bytes = size::unsigned(size::parse_exact(&found[2]));
    event.memory_space = Some(space);
    event.op = found.get(8).map(|op| op.as_str().trim().to_string());
    event.shape = Some(found[4].to_string());
    event.fact("Allocation", "size field", None, Some(found[6].to_string()));
    event.push_allocation(Allocation {
        size_bytes: event.requested_bytes,
        shape: Some(found[4].to_string()),
        xla_label: Some(tag.to_string()),
        instruction: Some(found[3].to_string()),
        count: 1,
        ..Allocation::default()
    });
    Some(Detected::at(event, text, &found))
}

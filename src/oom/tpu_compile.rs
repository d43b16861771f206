//! XLA:TPU compile-time OOMs (E1000 in HBM, E1001 in scoped VMEM, and the
//! same message for smem and other spaces), including a report pasted without
//! its first line.

use super::block::{Block, Detected};
use super::event::{Kind, OomEvent};
use super::line::Line;
use super::size;
use super::tpu_report::{Report, TPU_SIZE};

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    if let Some(found) = regex!(r"Ran out of memory in memory space (\w+)").captures(text) {
        let mut event = OomEvent::new(Kind::CompileTimeOom, line);
        event.memory_space = Some(found[1].to_lowercase());
        if let Some(used) = regex!(&format!(r"Used ({TPU_SIZE}) of ({TPU_SIZE}) \w+")).captures(text) {
            event.used_bytes = size::unsigned(size::parse(&used[1]));
            event.capacity_bytes = size::unsigned(size::parse(&used[2]));
        }
        if let Some(by) = regex!(&format!(r"Exceeded \w+ capacity by ({TPU_SIZE})")).captures(text) {
            event.exceeded_by_bytes = size::unsigned(size::parse(&by[1]));
        }
        if let Some(stack) = regex!(r"while allocating on stack for (\S+) = (.*)$").captures(text) {
            event.op = Some(stack[1].to_string());
            event.shape = Some(stack[2].trim_end().to_string());
        }
        return Some(Detected::at(event, text, &found).with_block(Report::default()));
    }
    if let Some(found) = regex!(&format!(
        r"TPU TensorCore Hbm usage: ({TPU_SIZE}), SparseCore Hbm usage ({TPU_SIZE}), exceeding available bytes: ({TPU_SIZE})"
    ))
    .captures(text)
    {
        let mut event = OomEvent::new(Kind::CompileTimeOom, line);
        event.memory_space = Some("hbm".to_string());
        event.capacity_bytes = size::unsigned(size::parse(&found[3]));
        event.fact("HBM usage", "TensorCore", size::parse(&found[1]), None);
        event.fact("HBM usage", "SparseCore", size::parse(&found[2]), None);
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) = regex!(&format!(
        r"Scoped allocation with size ({TPU_SIZE}) and limit ({TPU_SIZE}) exceeded scoped vmem limit(?: by ({TPU_SIZE}))?"
    ))
    .captures(text)
    {
        let mut event = OomEvent::new(Kind::CompileTimeOom, line);
        event.memory_space = Some("vmem".to_string());
        // The scoped allocation's size is what the kernel asked for.
        event.requested_bytes = size::unsigned(size::parse(&found[1]));
        event.capacity_bytes = size::unsigned(size::parse(&found[2]));
        event.exceeded_by_bytes = found.get(3).and_then(|by| size::unsigned(size::parse(by.as_str())));
        return Some(Detected::at(event, text, &found).with_block(Report::default()));
    }
    if let Some(found) = regex!(&format!(
        r"total memory required for HLO temporaries \(({TPU_SIZE})\) exceeds available HBM \(({TPU_SIZE})\)|Aborting compilation early because it's unlikely to have enough memory\. Requires ({TPU_SIZE}), has ({TPU_SIZE}) available"
    ))
    .captures(text)
    {
        // Two wordings of the compiler's HBM estimate against the capacity, before it tries to fit the program.
        let bytes = |at: usize| found.get(at).or(found.get(at + 2)).and_then(|m| size::unsigned(size::parse(m.as_str())));
        let mut event = OomEvent::new(Kind::CompileTimeOom, line);
        event.memory_space = Some("hbm".to_string());
        event.used_bytes = bytes(1);
        event.capacity_bytes = bytes(2);
        return Some(Detected::at(event, text, &found).with_block(Report::default()));
    }
    report_without_header(line)
}

/// A report whose first line was not pasted: its headings, the tail of an
/// allocation entry (`XLA label: …`, `Allocation type: HLO temp`), or a bare
/// allocation entry (kept only if the lines after it are entry fields).
fn report_without_header(line: &Line) -> Option<Detected> {
    let t = line.text.trim();
    let heading = regex!(&format!(
        r"^(?:Total \w+ usage >= ({TPU_SIZE}):|Program \w+ requirement ({TPU_SIZE}):|Largest program allocations in \w+:)$"
    ));
    let bare_entry = regex!(&format!(r"^(?:\d+\.\s+)?Size: ({TPU_SIZE})$"));
    let tentative = if heading.is_match(t) || super::listing::is_entry_tail(t) {
        false
    } else if bare_entry.is_match(t) {
        true
    } else {
        return None;
    };
    let mut event = OomEvent::new(Kind::CompileTimeOom, line);
    event.truncated = true;
    let mut report = Report::default();
    report.feed(&mut event, line);
    let mut detected = Detected::new(event, t).with_block(report);
    detected.tentative = tentative;
    Some(detected)
}

//! `xmem oom` as text or Markdown: per error, its verdict, the figures the
//! log gives, the allocations it lists, and the advice. Sizes are printed with
//! two decimals, the precision of the logs themselves, so they can be found there.

use std::io::{self, Write};

use super::attribution::{donation_line, group_tables, write_group_table};
use super::escape::printable;
use super::table::{align_right, fact, heading, table, Flavor};
use crate::oom::join::ProgramReport;
use crate::oom::{Allocation, Holder, Incident, OomEvent, OomReport, UserFrame};
use crate::units::human_bytes_precise as size;

/// Columns of the allocation table's op name in a terminal.
const OP_NAME_WIDTH: usize = 28;

/// One incident, as soon as it is over; the log's title comes before the first.
pub fn write_incident(
    out: &mut dyn Write,
    flavor: Flavor,
    input: &str,
    number: usize,
    incident: &Incident,
    events: &[OomEvent],
) -> io::Result<()> {
    if number == 1 {
        heading(out, flavor, 1, &format!("xmem oom: {input}"))?;
    }
    // A Markdown heading ends with its own blank line.
    if flavor == Flavor::Text || number > 1 {
        writeln!(out)?;
    }
    heading(out, flavor, 2, &format!("Incident {number}: {}", incident.title))?;
    if let Some(program) = &incident.program {
        fact(out, flavor, "Program", program)?;
    }
    if let Some(frame) = &incident.user_frame {
        fact(out, flavor, "Your code", &frame_text(frame))?;
    }
    if !incident.advice.is_empty() {
        // A Markdown heading ends with its own blank line; facts under it do not.
        if flavor == Flavor::Text || incident.program.is_some() || incident.user_frame.is_some() {
            writeln!(out)?;
        }
        paragraph(out, flavor, "Advice")?;
        for advice in &incident.advice {
            writeln!(out, "- {}", printable(advice))?;
        }
    }
    if let Some(joined) = &incident.program_report {
        writeln!(out)?;
        write_program(out, flavor, joined, incident.is_failure())?;
    }
    let members: Vec<&OomEvent> = incident.events.iter().filter_map(|&at| events.get(at)).collect();
    writeln!(out)?;
    if members.len() > 1 {
        let lines: Vec<String> = members.iter().map(|event| event.line.to_string()).collect();
        let of = if incident.is_failure() { "of one failure" } else { "of one incident" };
        writeln!(out, "{} messages {of}, at lines {}.", members.len(), lines.join(", "))?;
    }
    if let [event] = members.as_slice() {
        // The incident's title is the event's verdict, or says more: it is not repeated.
        return write_event(out, flavor, None, event);
    }
    for (i, event) in members.into_iter().enumerate() {
        writeln!(out)?;
        write_event(out, flavor, Some(&format!("{number}.{}. {}", i + 1, event.summary)), event)?;
    }
    Ok(())
}

/// `train.py:14 in <module>`.
fn frame_text(frame: &UserFrame) -> String {
    match &frame.function {
        Some(function) => format!("{}:{} in {function}", frame.file, frame.line),
        None => format!("{}:{}", frame.file, frame.line),
    }
}

/// The program from `--with` (`failed`: the incident is a failure, not
/// warnings): its peak against the log's limit, who owns it by source line,
/// what is not donated, and the change that saves most.
fn write_program(out: &mut dyn Write, flavor: Flavor, joined: &ProgramReport, failed: bool) -> io::Result<()> {
    let (Some(module), Some(space)) = (&joined.module, &joined.memory_space) else {
        let reason = joined.reason.as_deref().unwrap_or("no program matched");
        return fact(out, flavor, "Program report", &format!("none: {reason}"));
    };
    let how = joined.matched_how.as_deref().unwrap_or_default();
    let input = joined.input.as_deref().map(|i| format!(" in {i}")).unwrap_or_default();
    let program = if failed { "The failed program" } else { "The program" };
    paragraph(out, flavor, &format!("{program}: {module}{input} ({how})"))?;
    let mut peak = format!("{} ({} bytes) in {}", size(space.peak_bytes), space.peak_bytes, space.name);
    if let (Some(limit), Some(over)) = (joined.limit_bytes, joined.over_limit_bytes) {
        let relation = if over > 0 { format!("{} over", size(over)) } else { format!("{} under", size(-over)) };
        peak.push_str(&format!(" against the {} limit the log gives: {relation}", size(limit)));
    }
    fact(out, flavor, "Peak", &peak)?;
    if let Some(finding) = &joined.finding {
        fact(out, flavor, "Finding", finding)?;
    }
    let b = &space.breakdown;
    fact(
        out,
        flavor,
        "At the peak",
        &format!(
            "parameters {}, outputs {}, temporaries {}, constants {}",
            size(b.parameters),
            size(b.outputs),
            size(b.temporaries),
            size(b.constants)
        ),
    )?;
    if let Some(table) =
        group_tables(&space.attribution.at_peak_groups, space.peak_bytes, joined.top).into_iter().next()
    {
        write_group_table(out, flavor, table)?;
    }
    if !joined.donation_candidates.is_empty() {
        writeln!(out)?;
        let total: i64 = joined.donation_candidates.iter().map(|c| c.bytes_at_most).fold(0, i64::saturating_add);
        paragraph(
            out,
            flavor,
            &format!(
                "Parameters not donated but shaped like an output: {} ({} at most)",
                joined.donation_candidates.len(),
                size(total)
            ),
        )?;
        for candidate in joined.donation_candidates.iter().take(joined.top) {
            writeln!(out, "- {}", printable(&donation_line(candidate)))?;
        }
        if joined.donation_candidates.len() > joined.top {
            writeln!(out, "- and {} more", joined.donation_candidates.len() - joined.top)?;
        }
    }
    if let Some(change) = &joined.top_change {
        writeln!(out)?;
        fact(out, flavor, "Top change", &change.text)?;
    }
    Ok(())
}

/// What `xmem run` says when the job exited 0 after memory trouble, instead
/// of a post-mortem: each incident's verdict, its program (when the dump was
/// joined), and what it means, with the change that gives headroom: the
/// program's top change when there is one, else the advice.
pub fn write_survived(out: &mut dyn Write, flavor: Flavor, report: &OomReport) -> io::Result<()> {
    for incident in &report.incidents {
        writeln!(out, "- {}", printable(&incident.title))?;
        let joined = incident.program_report.as_ref();
        if let Some(joined) = joined {
            if let (Some(module), Some(how)) = (&joined.module, &joined.matched_how) {
                let input = joined.input.as_deref().map(|i| format!(" in {i}")).unwrap_or_default();
                fact(out, flavor, "Program", &format!("{module}{input} ({how})"))?;
            }
            if let Some(finding) = &joined.finding {
                fact(out, flavor, "Finding", finding)?;
            }
        }
        let advice: Vec<&str> = match joined.and_then(|joined| joined.top_change.as_ref()) {
            Some(change) => incident.advice.iter().take(1).map(AsRef::as_ref).chain([change.text.as_str()]).collect(),
            None => incident.advice.iter().map(AsRef::as_ref).collect(),
        };
        for (i, advice) in advice.into_iter().enumerate() {
            fact(out, flavor, if i == 0 { "Advice" } else { "" }, advice)?;
        }
    }
    Ok(())
}

/// What the whole log held, once it is read.
pub fn write_end(out: &mut dyn Write, flavor: Flavor, report: &OomReport) -> io::Result<()> {
    let lines = if report.lines == 1 { "line" } else { "lines" };
    if report.events.is_empty() {
        return writeln!(out, "No memory error found in {} ({} {lines} read).", printable(&report.input), report.lines);
    }
    let errors = if report.events.len() == 1 { "memory error" } else { "memory errors" };
    let incidents = if report.incidents.len() == 1 { "incident" } else { "incidents" };
    writeln!(out)?;
    let total = format!(
        "{} {errors} in {} {incidents}, in {} {lines}.",
        report.events.len(),
        report.incidents.len(),
        report.lines
    );
    match flavor {
        Flavor::Text => writeln!(out, "{total}"),
        Flavor::Markdown => writeln!(out, "_{total}_"),
    }
}

fn write_event(out: &mut dyn Write, flavor: Flavor, title: Option<&str>, event: &OomEvent) -> io::Result<()> {
    if let Some(title) = title {
        heading(out, flavor, 3, title)?;
    }
    fact(out, flavor, &format!("Line {}", event.line), &event.message)?;
    if event.occurrences > 1 {
        fact(out, flavor, "Occurrences", &format!("{} (repeats of the same message)", event.occurrences))?;
    }
    let named = [
        ("Exception", &event.exception),
        ("Program", &event.program),
        ("Allocator", &event.allocator),
        ("Op", &event.op),
        ("Shape", &event.shape),
    ];
    for (label, value) in named {
        match value.as_deref() {
            Some("") => fact(out, flavor, label, "(empty in the log)")?,
            Some(value) => fact(out, flavor, label, value)?,
            None => {}
        }
    }
    let limits = [("Limit", event.limit_bytes), ("Device", event.device_bytes)];
    for (label, bytes) in limits {
        if let Some(bytes) = bytes {
            fact(out, flavor, label, &size(bytes))?;
        }
    }
    if event.by_general_reader && !event.failure_words.is_empty() {
        // No family parser knows the message: say which words made it a memory error.
        fact(out, flavor, "Failure words", &event.failure_words.join(", "))?;
    }
    if event.non_fatal {
        fact(out, flavor, "Not fatal", "the log says the program carries on")?;
    }
    if event.truncated {
        fact(out, flavor, "Truncated", "only part of this report is in the log (it is cut, or starts without its header): what is missing is not counted")?;
    }
    if !event.breakdown.is_empty() {
        writeln!(out)?;
        write_breakdown(out, flavor, event)?;
    }
    if !event.bins.is_empty() {
        writeln!(out)?;
        write_bins(out, flavor, event)?;
    }
    if !event.held_by.is_empty() {
        writeln!(out)?;
        write_holders(out, flavor, &event.held_by)?;
    }
    if !event.allocations.is_empty() {
        writeln!(out)?;
        write_allocations(out, flavor, &event.allocations)?;
    }
    Ok(())
}

fn write_holders(out: &mut dyn Write, flavor: Flavor, holders: &[Holder]) -> io::Result<()> {
    paragraph(out, flavor, "Memory in use by program (chunk annotations)")?;
    let mut t = table(flavor, &["Bytes", "Chunks", "Largest", "Program"]);
    for holder in holders {
        t.add_row(vec![
            size(holder.bytes),
            holder.count.to_string(),
            size(holder.largest_bytes),
            holder.program.clone().unwrap_or_else(|| "(not annotated)".to_string()),
        ]);
    }
    align_right(&mut t, &[0, 1, 2]);
    writeln!(out, "{t}")
}

fn write_breakdown(out: &mut dyn Write, flavor: Flavor, event: &OomEvent) -> io::Result<()> {
    paragraph(out, flavor, "What the log reports")?;
    let mut t = table(flavor, &["Section", "Item", "Size", "Detail"]);
    for section in &event.breakdown {
        let mut label = section.name.clone();
        if section.bytes.is_some() || section.note.is_some() {
            t.add_row(vec![
                std::mem::take(&mut label),
                String::new(),
                section.bytes.map(size).unwrap_or_default(),
                section.note.clone().unwrap_or_default(),
            ]);
        }
        for item in &section.items {
            let detail = [item.count.map(|c| c.to_string()), item.note.clone()].into_iter().flatten();
            t.add_row(vec![
                std::mem::take(&mut label),
                item.name.clone(),
                item.bytes.map(size).unwrap_or_default(),
                detail.collect::<Vec<_>>().join(", "),
            ]);
        }
    }
    align_right(&mut t, &[2]);
    writeln!(out, "{t}")
}

fn write_bins(out: &mut dyn Write, flavor: Flavor, event: &OomEvent) -> io::Result<()> {
    paragraph(out, flavor, "Allocator bins")?;
    let mut t = table(flavor, &["Bin", "Chunks", "In use", "Allocated", "In use (bytes)", "Requested in use"]);
    for bin in &event.bins {
        t.add_row(vec![
            size(bin.bin_bytes),
            bin.total_chunks.to_string(),
            bin.chunks_in_use.to_string(),
            bin.allocated_bytes.map(size).unwrap_or_default(),
            bin.in_use_bytes.map(size).unwrap_or_default(),
            bin.requested_in_use_bytes.map(size).unwrap_or_default(),
        ]);
    }
    align_right(&mut t, &[0, 1, 2, 3, 4, 5]);
    writeln!(out, "{t}")
}

fn write_allocations(out: &mut dyn Write, flavor: Flavor, allocations: &[Allocation]) -> io::Result<()> {
    paragraph(out, flavor, &format!("Largest allocations ({})", allocations.len()))?;
    const HEADER: [&str; 8] = ["Size", "Unpadded", "Padding", "Op name", "Shape", "XLA label", "Type", "Source"];
    let rows: Vec<[String; 8]> = allocations
        .iter()
        .map(|a| {
            let bytes = a.size_bytes.map(size).unwrap_or_default();
            [
                if a.count > 1 { format!("{} × {bytes}", a.count) } else { bytes },
                a.unpadded_bytes.map(size).unwrap_or_default(),
                a.expansion.map(|x| format!("{x:.1}x")).unwrap_or_default(),
                a.op_name.clone().or_else(|| a.op_type.clone()).unwrap_or_default(),
                a.shape.clone().unwrap_or_default(),
                a.instruction.clone().or_else(|| a.xla_label.clone()).unwrap_or_default(),
                a.allocation_type.clone().unwrap_or_default(),
                a.source.clone().unwrap_or_default(),
            ]
        })
        .collect();
    // Each kind of log fills different columns; the ones it never fills are left out.
    let shown: Vec<usize> = (0..HEADER.len()).filter(|&c| rows.iter().any(|row| !row[c].is_empty())).collect();
    let mut t = table(flavor, &shown.iter().map(|&c| HEADER[c]).collect::<Vec<_>>());
    for row in &rows {
        t.add_row(shown.iter().map(|&c| row[c].clone()).collect::<Vec<_>>());
    }
    let position = |column: usize| shown.iter().position(|&c| c == column);
    let sizes: Vec<usize> = [0, 1, 2].into_iter().filter_map(position).collect();
    align_right(&mut t, &sizes);
    // JAX op names run to hundreds of characters: their column is kept wide
    // enough to wrap them over few lines.
    if let Some(c) = position(3) {
        t.set_min_width(c, OP_NAME_WIDTH);
    }
    writeln!(out, "{t}")
}

/// A label above a table or a list.
fn paragraph(out: &mut dyn Write, flavor: Flavor, label: &str) -> io::Result<()> {
    let label = printable(label);
    match flavor {
        Flavor::Text => writeln!(out, "{label}:"),
        Flavor::Markdown => writeln!(out, "**{label}**\n"),
    }
}

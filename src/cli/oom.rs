use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::args::{Format, OomArgs};
use super::{output, progress, Outcome};
use crate::ingest::{glob, source};
use crate::oom::{self, OomReport, OOM_SCHEMA};
use crate::render::escape::printable;
use crate::render::{json, oom as render_oom, table::Flavor};

/// Every log is read as a stream; text and Markdown print each incident as
/// soon as the log has moved past it, JSON prints once every log is read.
pub fn run(args: OomArgs) -> anyhow::Result<Outcome> {
    let flavor = flavor(args.output.format)?;
    let logs = expand(&args.logs)?;
    let mut out = output::open(args.output.output.as_deref(), args.output.format)?;
    let mut reports = Vec::new();
    let mut unreadable = 0;
    for (i, log) in logs.iter().enumerate() {
        let report = match flavor {
            Some(flavor) => open(log, args.max_input_size)
                .and_then(|(name, reader)| stream_text(&mut *out, flavor, &name, reader, i > 0)),
            None => open(log, args.max_input_size).and_then(|(name, reader)| Ok(oom::scan(&name, reader)?)),
        };
        match report {
            Ok(report) => reports.push(report),
            // One log alone fails the way every command fails; among several, the others are still read.
            Err(e) if logs.len() == 1 => return Err(e),
            Err(e) => {
                eprintln!("xmem: {}", super::one_line(&e));
                unreadable += 1;
            }
        }
    }
    if flavor.is_none() {
        let written = match reports.as_slice() {
            [report] => json::write(&mut out, report),
            _ => json::write(&mut out, &Reports { schema: OOM_SCHEMA, reports: &reports }),
        };
        output::finish(written, &mut out)?;
    } else {
        output::finish(Ok(()), &mut out)?;
    }
    if unreadable > 0 {
        anyhow::bail!("{unreadable} of {} logs could not be read", logs.len());
    }
    Ok(if reports.iter().any(OomReport::found_errors) { Outcome::MemoryErrorsFound } else { Outcome::Success })
}

/// Several logs in JSON: one report per log, in the order given.
#[derive(serde::Serialize)]
struct Reports<'a> {
    schema: &'static str,
    reports: &'a [OomReport],
}

/// The logs named, with glob patterns expanded (for shells that do not, or
/// patterns quoted to reach xmem; each file once, whatever links lead to it);
/// `-` is standard input.
fn expand(patterns: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut logs = Vec::new();
    for pattern in patterns {
        let text = pattern.to_string_lossy();
        if pattern.exists() || text == "-" || !text.contains(['*', '?', '[']) {
            logs.push(pattern.clone());
            continue;
        }
        let matches = glob::matching_files(&text).with_context(|| format!("{text}: not a valid glob pattern"))?;
        for skipped in &matches.skipped {
            eprintln!("xmem: warning: {}", printable(&format!("skipped {skipped}")));
        }
        if matches.files.is_empty() {
            anyhow::bail!("{text}: no file matches");
        }
        logs.extend(matches.files);
    }
    Ok(logs)
}

/// The log as a stream, with the name it has in the report.
fn open(log: &Path, limit: u64) -> anyhow::Result<(String, Box<dyn BufRead>)> {
    if log == Path::new("-") {
        return Ok(("<stdin>".to_string(), source::open_stdin(limit)?));
    }
    Ok((log.display().to_string(), source::open(log, limit, &progress::bar())?))
}

/// Scans one log, writing each incident when it is over and flushing it, so
/// a pipe from a running job shows it at once; `separate` puts a blank line
/// before it. A reader that goes away (`| head`) stops the output, never the
/// scan: the exit code still says whether the log holds a memory error.
fn stream_text(
    out: &mut dyn Write,
    flavor: Flavor,
    name: &str,
    reader: Box<dyn BufRead>,
    separate: bool,
) -> anyhow::Result<OomReport> {
    let mut written = if separate { writeln!(out) } else { Ok(()) };
    let mut count = 0;
    let report = oom::scan_each(name, reader, |incident, events| {
        count += 1;
        if written.is_ok() {
            written = render_oom::write_incident(out, flavor, name, count, incident, events).and_then(|()| out.flush());
        }
    })?;
    output::finish(written.and_then(|()| render_oom::write_end(out, flavor, &report)), out)?;
    Ok(report)
}

/// The errors found in the one log the arguments name, read whole before
/// anything is written: the Python API's `xmem.oom`.
pub fn build(args: &OomArgs) -> anyhow::Result<OomReport> {
    let [log] = args.logs.as_slice() else {
        anyhow::bail!("one log at a time: {} given", args.logs.len());
    };
    let (name, reader) = open(log, args.max_input_size)?;
    Ok(oom::scan(&name, reader)?)
}

/// The text flavour a format asks for; `None` is JSON.
pub fn flavor(format: Format) -> anyhow::Result<Option<Flavor>> {
    match format {
        Format::Text => Ok(Some(Flavor::Text)),
        Format::Markdown => Ok(Some(Flavor::Markdown)),
        Format::Json => Ok(None),
        Format::Html | Format::Pprof => {
            anyhow::bail!("--format {} is not available for oom; use text, markdown or json", format.name())
        }
    }
}

/// A whole report, written as `run` streams it.
pub fn write(out: &mut dyn Write, flavor: Option<Flavor>, report: &OomReport) -> io::Result<()> {
    let Some(flavor) = flavor else {
        return json::write(out, report);
    };
    for (number, incident) in report.incidents.iter().enumerate() {
        render_oom::write_incident(out, flavor, &report.input, number + 1, incident, &report.events)?;
    }
    render_oom::write_end(out, flavor, report)
}

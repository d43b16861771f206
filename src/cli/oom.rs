use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::args::{Format, InputOptions, OomArgs};
use super::{output, progress, Outcome};
use crate::analysis::Report;
use crate::ingest::source;
use crate::oom::join::{self, ProgramReport};
use crate::oom::{self, Incident, OomEvent, OomReport, OOM_SCHEMA};
use crate::render::{json, oom as render_oom, table::Flavor};

/// Every log is read as a stream; text and Markdown print each incident as
/// soon as the log has moved past it, JSON prints once every log is read.
pub fn run(args: OomArgs) -> anyhow::Result<Outcome> {
    let flavor = flavor(args.output.format)?;
    let logs = expand(&args.logs)?;
    let programs = Programs::load(&args.with, args.top);
    let mut out = output::open(args.output.output.as_deref(), args.output.format)?;
    let mut reports = Vec::new();
    let mut unreadable = 0;
    for (i, log) in logs.iter().enumerate() {
        let report = match flavor {
            Some(flavor) => open(log, args.max_input_size)
                .and_then(|(name, reader)| stream_text(&mut *out, flavor, &name, reader, i > 0, &programs)),
            None => open(log, args.max_input_size).and_then(|(name, reader)| {
                let mut report = oom::scan(&name, reader)?;
                programs.join_all(&mut report);
                Ok(report)
            }),
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

/// A run's folder, as a job leaves it (`output.log`, `xla_dump/`, `profile/`),
/// stands for the XLA dump in it, else for its profile; any other input for itself.
fn beside(input: &Path) -> Vec<PathBuf> {
    if !input.is_dir() || is_dump_or_profile(input) {
        return vec![input.to_path_buf()];
    }
    let mut folders: Vec<PathBuf> = std::fs::read_dir(input)
        .map(|entries| entries.flatten().map(|entry| entry.path()).filter(|path| path.is_dir()).collect())
        .unwrap_or_default();
    folders.sort();
    let dumps: Vec<PathBuf> = folders.iter().filter(|folder| holds_dump(folder)).cloned().collect();
    let found = if dumps.is_empty() { folders.into_iter().filter(|f| is_dump_or_profile(f)).collect() } else { dumps };
    if found.is_empty() {
        vec![input.to_path_buf()]
    } else {
        found
    }
}

/// An XLA dump directory: programs after optimization, as protos.
fn holds_dump(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|entry| entry.file_name().to_string_lossy().ends_with("after_optimizations.hlo.pb"))
    })
}

/// What `xmem report` reads as a folder: a dump, a log dir, a run dir.
fn is_dump_or_profile(dir: &Path) -> bool {
    holds_dump(dir)
        || dir.join("plugins").is_dir()
        || std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|entry| {
                let name = entry.file_name().to_string_lossy().to_string();
                name.ends_with(".xplane.pb") || name.ends_with(".xplane.pb.gz")
            })
        })
}

/// The logs named, with glob patterns expanded (for shells that do not, or
/// patterns quoted to reach xmem) and a directory read as the files in it
/// (not those in its subdirectories, nor hidden ones), in name order; `-`
/// is standard input.
fn expand(patterns: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut logs = Vec::new();
    for pattern in patterns {
        let text = pattern.to_string_lossy();
        if pattern.is_dir() {
            let files = files_in(pattern)?;
            if files.is_empty() {
                anyhow::bail!("{text}: the directory holds no log file");
            }
            logs.extend(files);
            continue;
        }
        if pattern.exists() || text == "-" || !text.contains(['*', '?', '[']) {
            logs.push(pattern.clone());
            continue;
        }
        let matches = glob::glob(&text).with_context(|| format!("{text}: not a valid glob pattern"))?;
        let before = logs.len();
        for path in matches {
            logs.push(path.with_context(|| format!("{text}: cannot read a match"))?);
        }
        if logs.len() == before {
            anyhow::bail!("{text}: no file matches");
        }
    }
    Ok(logs)
}

/// The files directly in `dir`, hidden ones left out, in name order.
fn files_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}: cannot list the directory", dir.display()))? {
        let entry = entry.with_context(|| format!("{}: cannot list the directory", dir.display()))?;
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && entry.path().is_file() {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
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
    programs: &Programs,
) -> anyhow::Result<OomReport> {
    let mut written = if separate { writeln!(out) } else { Ok(()) };
    let mut joined = Vec::new();
    let mut report = oom::scan_each(name, reader, |incident, events| {
        let mut incident = incident.clone();
        programs.join(&mut incident, events);
        if written.is_ok() {
            written = render_oom::write_incident(out, flavor, name, joined.len() + 1, &incident, events)
                .and_then(|()| out.flush());
        }
        joined.push(incident);
    })?;
    if joined.len() == report.incidents.len() {
        report.incidents = joined;
    }
    output::finish(written.and_then(|()| render_oom::write_end(out, flavor, &report)), out)?;
    Ok(report)
}

/// The programs `--with` names, analysed once for every incident of every log.
pub enum Programs {
    /// No `--with`.
    NotAsked,
    Loaded(Report, usize),
    /// The inputs hold nothing to join with: why, said once on stderr and in each incident.
    Unusable(String),
}

impl Programs {
    /// Loads and analyses the inputs; one that cannot be used is reported
    /// (not fatal: the log alone is still explained).
    pub fn load(inputs: &[PathBuf], top: usize) -> Programs {
        if inputs.is_empty() {
            return Programs::NotAsked;
        }
        let options = InputOptions { run: None, max_input_size: None, strict: false };
        let inputs: Vec<PathBuf> = inputs.iter().flat_map(|input| beside(input)).collect();
        match output::usable_report(&inputs, &options, &Default::default()) {
            Ok(report) => Programs::Loaded(report, top),
            Err(e) => {
                let reason = super::one_line(&e);
                eprintln!("xmem: {reason}; the log alone is explained");
                Programs::Unusable(reason)
            }
        }
    }

    /// Joins one incident with its program, if `--with` was given.
    pub fn join(&self, incident: &mut Incident, events: &[OomEvent]) {
        let joined = match self {
            Programs::NotAsked => return,
            Programs::Unusable(reason) => ProgramReport::unmatched(reason.clone()),
            Programs::Loaded(report, top) => {
                let mut joined = join::program_report(incident, events, report);
                joined.top = *top;
                joined
            }
        };
        join::attach(incident, joined);
    }

    /// Joins every incident of a report read whole.
    pub fn join_all(&self, report: &mut OomReport) {
        for incident in &mut report.incidents {
            self.join(incident, &report.events);
        }
    }
}

/// The errors found in the one log the arguments name, read whole before
/// anything is written: the Python API's `xmem.oom`.
pub fn build(args: &OomArgs) -> anyhow::Result<OomReport> {
    let [log] = args.logs.as_slice() else {
        anyhow::bail!("one log at a time: {} given", args.logs.len());
    };
    let (name, reader) = open(log, args.max_input_size)?;
    let mut report = oom::scan(&name, reader)?;
    Programs::load(&args.with, args.top).join_all(&mut report);
    Ok(report)
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

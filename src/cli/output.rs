//! Where output goes (a file or stdout) and how inputs are loaded, shared by
//! the command handlers.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::args::{InputOptions, Selection};
use super::progress;
use crate::analysis::{self, attribution, select, Report};
use crate::ingest::{self, ReadOptions};
use crate::model::Capture;

pub fn open(path: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    Ok(match path {
        Some(path) => {
            Box::new(BufWriter::new(File::create(path).with_context(|| format!("cannot write {}", path.display()))?))
        }
        None => Box::new(BufWriter::new(io::stdout().lock())),
    })
}

pub fn read_options(input: &InputOptions) -> ReadOptions {
    ReadOptions {
        run: input.run.clone(),
        max_input_size: input.max_input_size.unwrap_or_else(ingest::source::default_max_input_size),
        progress: progress::bar(),
    }
}

/// Loads one input; with `--strict`, any warning is an error.
pub fn load(path: &Path, input: &InputOptions) -> anyhow::Result<Capture> {
    let capture = ingest::load(path, &read_options(input))?;
    if input.strict {
        if let Some(first) = capture.warnings.first() {
            anyhow::bail!("{} (--strict)", first);
        }
    }
    for warning in &capture.warnings {
        eprintln!("xmem: warning: {warning}");
    }
    Ok(capture)
}

/// Finishes a write, treating a closed pipe (`xmem report … | head`) as success.
pub fn finish(result: io::Result<()>, out: &mut dyn Write) -> anyhow::Result<()> {
    match result.and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing output"),
    }
}

/// Loads and analyses the inputs, keeping the modules and memory spaces that
/// `--module` and `--memory-space` select and the allocator `--allocator`
/// selects; an input with nothing to analyse is an error that says why.
pub fn selected_report(
    paths: &[PathBuf],
    selection: &Selection,
    input: &InputOptions,
    options: &attribution::Options,
) -> anyhow::Result<Report> {
    let filter = module_filter(selection)?;
    let mut report = usable_report(paths, input, options)?;
    select(std::slice::from_mut(&mut report), &filter, selection.allocator.as_deref())?;
    Ok(report)
}

/// `--module` and `--memory-space`, checked before any input is read.
pub fn module_filter(selection: &Selection) -> anyhow::Result<select::Filter> {
    select::Filter::parse(selection.module.as_deref(), selection.memory_space.as_deref()).map_err(anyhow::Error::msg)
}

/// Loads and analyses the inputs as one report. An input with nothing to
/// analyse is an error rather than a report (or a side of a diff) that is
/// empty: that would hide a wrong path.
pub fn usable_report(
    paths: &[PathBuf],
    input: &InputOptions,
    options: &attribution::Options,
) -> anyhow::Result<Report> {
    let captures = paths.iter().map(|path| load(path, input)).collect::<anyhow::Result<Vec<_>>>()?;
    let report = analysis::analyze_with(&captures, options);
    match report.nothing_usable() {
        Some(reason) => anyhow::bail!("{}: {reason}", report.inputs.join(", ")),
        None => Ok(report),
    }
}

/// Narrows every report to the selection; it is an error when none of them
/// has what was selected. Selecting modules or an allocator shows what was
/// selected and nothing else.
pub fn select(reports: &mut [Report], filter: &select::Filter, allocator: Option<&str>) -> anyhow::Result<()> {
    for report in reports.iter_mut() {
        filter.apply(report);
    }
    if filter.is_set() && reports.iter().all(|r| r.modules.is_empty()) {
        anyhow::bail!("no module matches the given --module / --memory-space");
    }
    match allocator {
        Some(name) => {
            select::narrow_allocators(reports, name).map_err(anyhow::Error::msg)?;
            if !filter.is_set() {
                reports.iter_mut().for_each(|r| r.modules.clear());
            }
        }
        None if filter.is_set() => reports.iter_mut().for_each(|r| r.allocators.clear()),
        None => {}
    }
    Ok(())
}

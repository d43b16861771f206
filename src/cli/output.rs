//! Where output goes (a file or stdout) and how inputs are loaded, shared by
//! the command handlers.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::args::{InputOptions, Selection};
use crate::analysis::{self, select, Report};
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
    ReadOptions { run: input.run.clone(), max_input_size: input.max_input_size }
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
pub fn selected_report(paths: &[PathBuf], selection: &Selection, input: &InputOptions) -> anyhow::Result<Report> {
    let filter = select::Filter::parse(selection.module.as_deref(), selection.memory_space.as_deref())
        .map_err(anyhow::Error::msg)?;
    let captures = paths.iter().map(|path| load(path, input)).collect::<anyhow::Result<Vec<_>>>()?;
    let mut report = analysis::analyze(&captures);
    // A profile with allocator events has something to report even without a module.
    if let Some(reason) = report.nothing_usable().filter(|_| report.allocators.is_empty()) {
        anyhow::bail!("{}: {reason}", report.inputs.join(", "));
    }
    filter.apply(&mut report);
    if report.modules.is_empty() && filter.is_set() {
        anyhow::bail!("no module matches the given --module / --memory-space");
    }
    // Selecting modules or an allocator shows what was selected and nothing else.
    match &selection.allocator {
        Some(name) => {
            select::narrow_allocators(&mut report, name).map_err(anyhow::Error::msg)?;
            if !filter.is_set() {
                report.modules.clear();
            }
        }
        None if filter.is_set() => report.allocators.clear(),
        None => {}
    }
    Ok(report)
}

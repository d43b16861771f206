//! Where output goes (a file or stdout) and how inputs are loaded, shared by
//! the command handlers.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::Context;

use super::args::InputOptions;
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

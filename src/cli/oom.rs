use std::io::{self, Write};
use std::path::Path;

use super::args::{Format, OomArgs};
use super::{output, progress, Outcome};
use crate::ingest::{source, ReadOptions};
use crate::oom::{self, OomReport};
use crate::render::{json, oom as render_oom, text::Flavor};

pub fn run(args: OomArgs) -> anyhow::Result<Outcome> {
    let flavor = flavor(args.output.format)?;
    let report = build(&args)?;
    let mut out = output::open(args.output.output.as_deref())?;
    output::finish(write(&mut out, flavor, &report), &mut out)?;
    Ok(Outcome::Success)
}

/// The errors found in the log the arguments name, before they are written.
pub fn build(args: &OomArgs) -> anyhow::Result<OomReport> {
    let limit = ReadOptions::default().max_input_size;
    Ok(if args.log == Path::new("-") {
        oom::scan("<stdin>", &source::read_stdin(limit)?[..])?
    } else {
        oom::scan(&args.log.display().to_string(), source::open(&args.log, limit, &progress::bar())?)?
    })
}

/// The text flavour a format asks for; `None` is JSON.
pub fn flavor(format: Format) -> anyhow::Result<Option<Flavor>> {
    match format {
        Format::Text => Ok(Some(Flavor::Text)),
        Format::Markdown => Ok(Some(Flavor::Markdown)),
        Format::Json => Ok(None),
        Format::Html => anyhow::bail!("--format html is not available for oom; use text, markdown or json"),
    }
}

pub fn write(out: &mut dyn Write, flavor: Option<Flavor>, report: &OomReport) -> io::Result<()> {
    match flavor {
        Some(flavor) => render_oom::write(out, flavor, report),
        None => json::write(out, report),
    }
}

use std::path::Path;

use super::args::{Format, OomArgs};
use super::{output, progress, Outcome};
use crate::ingest::{source, ReadOptions};
use crate::oom;
use crate::render::{json, oom as render_oom, table::Flavor};

pub fn run(args: OomArgs) -> anyhow::Result<Outcome> {
    let flavor = match args.output.format {
        Format::Text => Some(Flavor::Text),
        Format::Markdown => Some(Flavor::Markdown),
        Format::Json => None,
        Format::Html => anyhow::bail!("--format html is not available for oom; use text, markdown or json"),
    };
    let limit = ReadOptions::default().max_input_size;
    let report = if args.log == Path::new("-") {
        oom::scan("<stdin>", &source::read_stdin(limit)?[..])?
    } else {
        oom::scan(&args.log.display().to_string(), source::open(&args.log, limit, &progress::bar())?)?
    };
    let mut out = output::open(args.output.output.as_deref(), args.output.format)?;
    let written = match flavor {
        Some(flavor) => render_oom::write(&mut out, flavor, &report),
        None => json::write(&mut out, &report),
    };
    output::finish(written, &mut out)?;
    Ok(Outcome::Success)
}

use anyhow::Context;

use super::args::{Format, ReportArgs};
use super::{output, Outcome};
use crate::analysis::{self, select};
use crate::render::{json, text};

pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let filter = select::Filter::parse(args.selection.module.as_deref(), args.selection.memory_space.as_deref())
        .map_err(anyhow::Error::msg)?;
    let captures =
        args.inputs.iter().map(|path| output::load(path, &args.input)).collect::<anyhow::Result<Vec<_>>>()?;
    let mut report = analysis::analyze(&captures);
    if let Some(reason) = report.nothing_usable() {
        anyhow::bail!("{}: {reason}", report.inputs.join(", "));
    }
    filter.apply(&mut report);
    if report.modules.is_empty() && filter.is_set() {
        anyhow::bail!("no module matches the given --module / --memory-space");
    }
    let detail = text::Detail { top: args.selection.top, all: args.selection.all || filter.module.is_some() };
    let mut out = output::open(args.output.as_deref())?;
    let written = match args.format {
        Format::Text => text::write_report(&mut out, text::Flavor::Text, &report, detail),
        Format::Markdown => text::write_report(&mut out, text::Flavor::Markdown, &report, detail),
        Format::Json => json::write(&mut out, &report),
        Format::Html => return Err(anyhow::anyhow!("--format html is not built yet")).context("report"),
    };
    output::finish(written, &mut out)?;
    Ok(Outcome::Success)
}

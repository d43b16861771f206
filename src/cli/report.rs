use std::io::{self, Write};

use super::args::{Format, ReportArgs};
use super::{output, Outcome};
use crate::analysis::Report;
use crate::render::{html, json, text};

pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let report = build(&args)?;
    let mut out = output::open(args.output.output.as_deref())?;
    output::finish(write(&mut out, args.output.format, &report, args.selection.detail()), &mut out)?;
    Ok(Outcome::Success)
}

/// The report the arguments ask for, before it is written.
pub fn build(args: &ReportArgs) -> anyhow::Result<Report> {
    output::selected_report(&args.inputs, &args.selection, &args.input)
}

pub fn write(out: &mut dyn Write, format: Format, report: &Report, detail: text::Detail) -> io::Result<()> {
    match format {
        Format::Text => text::write_report(out, text::Flavor::Text, report, detail),
        Format::Markdown => text::write_report(out, text::Flavor::Markdown, report, detail),
        Format::Json => json::write(out, report),
        Format::Html => html::write(out, report, detail.top),
    }
}

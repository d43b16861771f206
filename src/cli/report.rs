use super::args::{Format, ReportArgs};
use super::{output, Outcome};
use crate::render::table::Flavor;
use crate::render::{html, json, text};

pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let report = output::selected_report(&args.inputs, &args.selection, &args.input)?;
    let detail = text::Detail { top: args.selection.top, all: args.selection.all || args.selection.module.is_some() };
    let mut out = output::open(args.output.output.as_deref(), args.output.format)?;
    let written = match args.output.format {
        Format::Text => text::write_report(&mut out, Flavor::Text, &report, detail),
        Format::Markdown => text::write_report(&mut out, Flavor::Markdown, &report, detail),
        Format::Json => json::write(&mut out, &report),
        Format::Html => html::write(&mut out, &report, detail.top),
    };
    output::finish(written, &mut out)?;
    Ok(Outcome::Success)
}

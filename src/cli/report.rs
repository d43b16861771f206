use super::args::{AttributionOptions, Format, ReportArgs};
use super::{output, Outcome};
use crate::analysis::attribution::{Options, PeakSearch, ProgramPoint};
use crate::render::{html, json, pprof_export, text};

pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    if args.output.format == Format::Pprof && args.output.output.is_none() {
        anyhow::bail!("--format pprof writes a binary profile: name the file with -o (e.g. -o peak.pb.gz)");
    }
    let options = attribution_options(&args.attribution);
    let report = output::selected_report(&args.inputs, &args.selection, &args.input, &options)?;
    let detail = text::Detail { top: args.selection.top, all: args.selection.all || args.selection.module.is_some() };
    let mut out = output::open(args.output.output.as_deref())?;
    let written = match args.output.format {
        Format::Text => text::write_report(&mut out, text::Flavor::Text, &report, detail),
        Format::Markdown => text::write_report(&mut out, text::Flavor::Markdown, &report, detail),
        Format::Json => json::write(&mut out, &report),
        Format::Html => html::write(&mut out, &report, detail.top),
        Format::Pprof => pprof_export::write(&mut out, &report),
    };
    output::finish(written, &mut out)?;
    Ok(Outcome::Success)
}

fn attribution_options(args: &AttributionOptions) -> Options {
    Options {
        op_name_depth: args.op_depth.and_then(|d| usize::try_from(d).ok()),
        at: args.at.as_deref().map(ProgramPoint::parse),
        peaks: args.peaks.map(|count| PeakSearch { count, drop: args.peak_drop }),
    }
}

use std::io::{self, Write};

use super::args::{AttributionOptions, Format, ReportArgs};
use super::{output, Outcome};
use crate::analysis::attribution::{Options, PeakSearch, ProgramPoint};
use crate::analysis::Report;
use crate::model::Capture;
use crate::render::table::Flavor;
use crate::render::{html, json, pprof_export, text};

pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    if args.output.format == Format::Pprof && args.output.output.is_none() {
        anyhow::bail!("--format pprof writes a binary profile: name the file with -o (e.g. -o peak.pb.gz)");
    }
    let report = build(&args)?;
    let mut out = output::open(args.output.output.as_deref(), args.output.format)?;
    output::finish(write(&mut out, args.output.format, &report, args.selection.detail()), &mut out)?;
    Ok(Outcome::Success)
}

/// The report the arguments ask for, before it is written.
pub fn build(args: &ReportArgs) -> anyhow::Result<Report> {
    build_for(args, args.output.format)
}

/// [`build`], for writing in `format` (a report kept to be written in
/// several formats is built for HTML, which needs the most).
pub fn build_for(args: &ReportArgs, format: Format) -> anyhow::Result<Report> {
    let options = attribution_options(&args.attribution, format);
    output::selected_report(&args.inputs, &args.selection, &args.input, &options)
}

/// [`build_for`] of inputs already loaded (the Python module's protos of a
/// compiled JAX program); `args.inputs` only name them.
pub fn build_of(args: &ReportArgs, captures: &[Capture], format: Format) -> anyhow::Result<Report> {
    output::selected_report_of(captures, &args.selection, &args.input, &attribution_options(&args.attribution, format))
}

pub fn write(out: &mut dyn Write, format: Format, report: &Report, detail: text::Detail) -> io::Result<()> {
    match format {
        Format::Text => text::write_report(out, Flavor::Text, report, detail),
        Format::Markdown => text::write_report(out, Flavor::Markdown, report, detail),
        Format::Json => json::write(out, report),
        Format::Html => html::write(out, report, detail.top),
        Format::Pprof => pprof_export::write(out, report),
    }
}

fn attribution_options(args: &AttributionOptions, format: Format) -> Options {
    Options {
        // The page lets its reader move along the timeline.
        intervals: format == Format::Html,
        op_name_depth: args.op_depth.and_then(|d| usize::try_from(d).ok()),
        at: args.at.as_deref().map(ProgramPoint::parse),
        peaks: args.peaks.map(|count| PeakSearch { count, drop: args.peak_drop }),
    }
}

use std::io::{self, Write};

use super::args::{DiffArgs, Format};
use super::{output, Outcome};
use crate::analysis::attribution::Options;
use crate::analysis::Report;
use crate::diff::{self, Diff, Limit, Verdict};
use crate::render::table::Flavor;
use crate::render::{self, json, text};

pub fn run(args: DiffArgs) -> anyhow::Result<Outcome> {
    let comparison = build(&args)?;
    let mut out = output::open(args.output.output.as_deref(), args.output.format)?;
    output::finish(write(&mut out, args.output.format, &comparison, args.selection.detail()), &mut out)?;
    let diff = &comparison.diff;
    // The output may have gone to a file or a step summary: the CI log still says why the job failed.
    if let Some(first) = diff.violations.first() {
        eprintln!("xmem: {}; first: {}", render::diff::verdict(diff), render::diff::violation_text(first));
    }
    Ok(match diff.verdict {
        Verdict::Pass => Outcome::Success,
        Verdict::Fail => Outcome::LimitCrossed,
    })
}

/// A comparison with its verdict, and the two reports it compares (the
/// HTML page draws their heaps over each other).
pub struct Comparison {
    pub diff: Diff,
    base: Report,
    new: Report,
}

/// The comparison the arguments ask for, with its verdict, before it is written.
pub fn build(args: &DiffArgs) -> anyhow::Result<Comparison> {
    build_for(args, args.output.format)
}

/// [`build`], for writing in `format` (a comparison kept to be written in
/// several formats is built for HTML, which needs the most).
pub fn build_for(args: &DiffArgs, format: Format) -> anyhow::Result<Comparison> {
    let filter = output::module_filter(&args.selection)?;
    if args.base == args.new && args.base.as_os_str() == "-" {
        anyhow::bail!("diff: standard input (-) can be only one of the two inputs");
    }
    // The page lets its reader move along either run's timeline.
    let options = Options { intervals: format == Format::Html, ..Options::default() };
    let base = output::usable_report(std::slice::from_ref(&args.base), &args.input, &options)?;
    let new = output::usable_report(std::slice::from_ref(&args.new), &args.input, &options)?;
    for (kind, holds) in [
        ("a device memory profile", (|r: &Report| !r.device_memory.is_empty()) as fn(&Report) -> bool),
        ("a PyTorch memory snapshot", |r: &Report| !r.torch_snapshots.is_empty()),
    ] {
        if holds(&base) != holds(&new) {
            let (this, other) = if holds(&base) { (&args.base, &args.new) } else { (&args.new, &args.base) };
            anyhow::bail!(
                "{} is {kind} and {} is not; diff compares two inputs of the same kind",
                this.display(),
                other.display()
            );
        }
    }
    let mut sides = [base, new];
    output::select(&mut sides, &filter, args.selection.allocator.as_deref())?;
    let [base, new] = sides;
    let limits: Vec<Limit> = args
        .fail_if_peak_grows
        .map(Limit::from)
        .into_iter()
        .chain(args.fail_if_over.map(|bytes| Limit::PeakOver { bytes }))
        .collect();
    let diff = diff::compare(&base, &new, &limits, args.min_peak);
    Ok(Comparison { diff, base, new })
}

pub fn write(out: &mut dyn Write, format: Format, comparison: &Comparison, detail: text::Detail) -> io::Result<()> {
    match format {
        Format::Json => return json::write(out, &comparison.diff),
        Format::Pprof => {
            let message = "--format pprof is not available for diff; use text, markdown, json or html";
            return Err(io::Error::new(io::ErrorKind::Unsupported, message));
        }
        Format::Text | Format::Markdown | Format::Html => {}
    }
    // Read in a pull request, from wherever the job checked out.
    let mut diff = comparison.diff.clone();
    for input in diff.base_inputs.iter_mut().chain(&mut diff.new_inputs) {
        *input = output::relative_to_working_directory(input);
    }
    match format {
        Format::Markdown => {
            let mut markdown = Vec::new();
            render::diff::write(&mut markdown, Flavor::Markdown, &diff, detail)?;
            let markdown = render::diff::fit_comment(&String::from_utf8_lossy(&markdown), render::diff::COMMENT_LIMIT);
            out.write_all(markdown.as_bytes())
        }
        Format::Html => render::html_diff::write(out, &diff, &comparison.base, &comparison.new, detail.top),
        _ => render::diff::write(out, Flavor::Text, &diff, detail),
    }
}

use std::io::{self, Write};

use super::args::{DiffArgs, Format};
use super::{output, Outcome};
use crate::diff::{self, Diff, Limit, Verdict};
use crate::render::{self, json, text};

pub fn run(args: DiffArgs) -> anyhow::Result<Outcome> {
    if matches!(args.output.format, Format::Html | Format::Pprof) {
        anyhow::bail!("diff: --format {} is not available; use text, markdown or json", args.output.format.name());
    }
    let diff = build(&args)?;
    let mut out = output::open(args.output.output.as_deref())?;
    output::finish(write(&mut out, args.output.format, &diff, args.selection.detail()), &mut out)?;
    // The output may have gone to a file or a step summary: the CI log still says why the job failed.
    if let Some(first) = diff.violations.first() {
        eprintln!("xmem: {}; first: {}", render::diff::verdict(&diff), render::diff::violation_text(first));
    }
    Ok(match diff.verdict {
        Verdict::Pass => Outcome::Success,
        Verdict::Fail => Outcome::LimitCrossed,
    })
}

/// The comparison the arguments ask for, with its verdict, before it is written.
pub fn build(args: &DiffArgs) -> anyhow::Result<Diff> {
    let filter = output::module_filter(&args.selection)?;
    let options = Default::default();
    let base = output::usable_report(std::slice::from_ref(&args.base), &args.input, &options)?;
    let new = output::usable_report(std::slice::from_ref(&args.new), &args.input, &options)?;
    if base.device_memory.is_empty() != new.device_memory.is_empty() {
        let (profile, other) =
            if base.device_memory.is_empty() { (&args.new, &args.base) } else { (&args.base, &args.new) };
        anyhow::bail!(
            "{} is a device memory profile and {} is not; diff compares two inputs of the same kind",
            profile.display(),
            other.display()
        );
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
    Ok(diff::compare(&base, &new, &limits))
}

/// HTML and pprof have no diff form: they are written as text.
pub fn write(out: &mut dyn Write, format: Format, diff: &Diff, detail: text::Detail) -> io::Result<()> {
    match format {
        Format::Json => json::write(out, diff),
        Format::Markdown => render::diff::write(out, text::Flavor::Markdown, diff, detail),
        Format::Text | Format::Html | Format::Pprof => render::diff::write(out, text::Flavor::Text, diff, detail),
    }
}

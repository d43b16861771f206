use std::path::Path;

use super::args::{DiffArgs, Format, InputOptions};
use super::{output, Outcome};
use crate::analysis::{self, select, Report};
use crate::diff::{self, Limit, Verdict};
use crate::render::{self, json, text};

pub fn run(args: DiffArgs) -> anyhow::Result<Outcome> {
    let filter = select::Filter::parse(args.selection.module.as_deref(), args.selection.memory_space.as_deref())
        .map_err(anyhow::Error::msg)?;
    if args.format == Format::Html {
        anyhow::bail!("diff: --format html is not available; use text, markdown or json");
    }
    let mut base = usable_report(&args.base, &args.input)?;
    let mut new = usable_report(&args.new, &args.input)?;
    if base.device_memory.is_empty() != new.device_memory.is_empty() {
        let (profile, other) =
            if base.device_memory.is_empty() { (&args.new, &args.base) } else { (&args.base, &args.new) };
        anyhow::bail!(
            "{} is a device memory profile and {} is not; diff compares two inputs of the same kind",
            profile.display(),
            other.display()
        );
    }
    filter.apply(&mut base);
    filter.apply(&mut new);
    if filter.is_set() && base.modules.is_empty() && new.modules.is_empty() {
        anyhow::bail!("no module matches the given --module / --memory-space in either input");
    }
    let limits: Vec<Limit> = args
        .fail_if_peak_grows
        .map(Limit::from)
        .into_iter()
        .chain(args.fail_if_over.map(|bytes| Limit::PeakOver { bytes }))
        .collect();
    let diff = diff::compare(&base, &new, &limits);

    let detail = text::Detail { top: args.selection.top, all: args.selection.all || filter.module.is_some() };
    let mut out = output::open(args.output.as_deref())?;
    let written = match args.format {
        Format::Json => json::write(&mut out, &diff),
        Format::Markdown => render::diff::write(&mut out, text::Flavor::Markdown, &diff, detail),
        Format::Text | Format::Html => render::diff::write(&mut out, text::Flavor::Text, &diff, detail),
    };
    output::finish(written, &mut out)?;
    // The output may have gone to a file or a step summary: the CI log still says why the job failed.
    if let Some(first) = diff.violations.first() {
        eprintln!("xmem: {}; first: {}", render::diff::verdict(&diff), render::diff::violation_text(first));
    }
    Ok(match diff.verdict {
        Verdict::Pass => Outcome::Success,
        Verdict::Fail => Outcome::LimitCrossed,
    })
}

/// An input with nothing to analyse is an error rather than a side whose every
/// module is "gone" or "new": that would hide a wrong path behind a verdict.
fn usable_report(path: &Path, input: &InputOptions) -> anyhow::Result<Report> {
    let report = analysis::analyze(&[output::load(path, input)?]);
    match report.nothing_usable() {
        Some(reason) => anyhow::bail!("{}: {reason}", path.display()),
        None => Ok(report),
    }
}

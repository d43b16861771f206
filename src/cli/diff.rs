use std::path::Path;

use super::args::{DiffArgs, Format};
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
    let mut base = analysis::analyze(&[output::load(&args.base, &args.input)?]);
    let mut new = analysis::analyze(&[output::load(&args.new, &args.input)?]);
    ensure_comparable(&args.base, &base, &args.new, &new)?;
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

/// Two inputs compare only when both hold compiled XLA modules: an empty side
/// would turn every module into "new" or "gone" and hide a wrong path.
fn ensure_comparable(base_path: &Path, base: &Report, new_path: &Path, new: &Report) -> anyhow::Result<()> {
    match (base.modules.is_empty(), new.modules.is_empty()) {
        (false, false) => Ok(()),
        (true, true) => anyhow::bail!(
            "{} and {}: neither holds a compiled XLA module, nothing to compare",
            base_path.display(),
            new_path.display()
        ),
        (base_empty, _) => {
            let (empty, full) = if base_empty { (base_path, new_path) } else { (new_path, base_path) };
            anyhow::bail!(
                "{}: holds no compiled XLA module while {} does; diff compares two inputs of the same kind",
                empty.display(),
                full.display()
            )
        }
    }
}

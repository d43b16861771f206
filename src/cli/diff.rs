use std::io::Write;

use super::args::{DiffArgs, Format};
use super::{output, Outcome};
use crate::diff::{self, Limit, Verdict};
use crate::render::table::Flavor;
use crate::render::{self, json, text};

pub fn run(args: DiffArgs) -> anyhow::Result<Outcome> {
    let filter = output::module_filter(&args.selection)?;
    if args.base == args.new && args.base.as_os_str() == "-" {
        anyhow::bail!("diff: standard input (-) can be only one of the two inputs");
    }
    let base = output::usable_report(std::slice::from_ref(&args.base), &args.input)?;
    let new = output::usable_report(std::slice::from_ref(&args.new), &args.input)?;
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
    let mut diff = diff::compare(&base, &new, &limits, args.min_peak);
    if args.output.format != Format::Json {
        // Read in a pull request, from wherever the job checked out.
        for input in diff.base_inputs.iter_mut().chain(&mut diff.new_inputs) {
            *input = output::relative_to_working_directory(input);
        }
    }

    let detail = text::Detail { top: args.selection.top, all: args.selection.all || filter.module.is_some() };
    let mut out = output::open(args.output.output.as_deref(), args.output.format)?;
    let written = match args.output.format {
        Format::Json => json::write(&mut out, &diff),
        Format::Markdown => {
            let mut markdown = Vec::new();
            render::diff::write(&mut markdown, Flavor::Markdown, &diff, detail)?;
            let markdown = render::diff::fit_comment(&String::from_utf8_lossy(&markdown), render::diff::COMMENT_LIMIT);
            out.write_all(markdown.as_bytes())
        }
        Format::Text => render::diff::write(&mut out, Flavor::Text, &diff, detail),
        Format::Html => render::html_diff::write(&mut out, &diff, &base, &new, detail.top),
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

use super::args::{Format, ListArgs};
use super::{output, Outcome};
use crate::analysis;
use crate::render::table::Flavor;
use crate::render::{json, list};

pub fn run(args: ListArgs) -> anyhow::Result<Outcome> {
    let capture = output::load(&args.input, &args.input_options)?;
    let report = output::analyzed(std::slice::from_ref(&capture), &args.input_options, &Default::default())?;
    let contents = analysis::contents(&report);
    let mut out = output::open(None, args.format)?;
    let written = match args.format {
        Format::Json => json::write(&mut out, &contents),
        Format::Markdown => list::write(&mut out, Flavor::Markdown, &contents),
        Format::Text | Format::Html | Format::Pprof => list::write(&mut out, Flavor::Text, &contents),
    };
    output::finish(written, &mut out)?;
    Ok(Outcome::Success)
}

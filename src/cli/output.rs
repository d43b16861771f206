//! Where output goes (a file or stdout) and how inputs are loaded, shared by
//! the command handlers.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anstream::{AutoStream, ColorChoice};
use anyhow::Context;

use super::args::{Format, InputOptions, Selection, TerminalOptions};
use super::progress;
use crate::analysis::{self, attribution, select, Report};
use crate::ingest::{self, source, ReadOptions};
use crate::model::Capture;
use crate::render::escape::printable;
use crate::render::table::{self, FitLines};

/// `--width` and `--color`, given once for the whole command line.
static TERMINAL: OnceLock<TerminalOptions> = OnceLock::new();

pub fn set_terminal(options: TerminalOptions) {
    let _ = TERMINAL.set(options);
}

/// Where the output goes. Text is laid out for it: to the terminal's width
/// (or `--width`), in colour on a terminal (or `--color always`), and
/// unwrapped and plain into a pipe or a file. Other formats go out as written.
pub fn open(path: Option<&Path>, format: Format) -> anyhow::Result<Box<dyn Write>> {
    let terminal = TERMINAL.get().copied();
    let explicit_width = terminal.and_then(|t| t.width).map(usize::from);
    let (raw, on_terminal): (Box<dyn Write>, bool) = match path {
        Some(path) => (
            Box::new(BufWriter::new(File::create(path).with_context(|| format!("cannot write {}", path.display()))?)),
            false,
        ),
        None => (Box::new(BufWriter::new(io::stdout().lock())), io::stdout().is_terminal()),
    };
    if format != Format::Text {
        return Ok(raw);
    }
    let width = explicit_width
        .or_else(|| on_terminal.then(terminal_size::terminal_size).flatten().map(|(width, _)| usize::from(width.0)));
    table::set_width(width);
    let color = match terminal.map(|t| t.color) {
        Some(clap::ColorChoice::Always) => ColorChoice::Always,
        Some(clap::ColorChoice::Never) => ColorChoice::Never,
        _ if on_terminal => AutoStream::choice(&io::stdout()),
        _ => ColorChoice::Never,
    };
    Ok(Box::new(FitLines::new(AutoStream::new(raw, color), width)))
}

/// Output into `out` as a pipe gets it: text unwrapped, without colour and
/// with no line ending in a space; other formats as written. For the Python
/// module, which renders into a string.
pub fn piped(out: &mut Vec<u8>, format: Format) -> Box<dyn Write + '_> {
    if format != Format::Text {
        return Box::new(out);
    }
    table::set_width(None);
    Box::new(FitLines::new(anstream::StripStream::new(out), None))
}

pub fn read_options(input: &InputOptions) -> ReadOptions {
    ReadOptions {
        run: input.run.clone(),
        max_input_size: input.max_input_size.unwrap_or_else(ingest::source::default_max_input_size),
        progress: progress::bar(),
    }
}

/// Loads one input; with `--strict`, any warning is an error. A file that
/// shrank while it was read is the error, whatever else its reading found.
pub fn load(path: &Path, input: &InputOptions) -> anyhow::Result<Capture> {
    let capture = ingest::load(path, &read_options(input));
    source::unchanged()?;
    checked(capture?, input)
}

/// A capture as loaded: with `--strict`, any warning is an error; else the
/// warnings go to standard error.
pub fn checked(capture: Capture, input: &InputOptions) -> anyhow::Result<Capture> {
    if input.strict {
        if let Some(first) = capture.warnings.first() {
            anyhow::bail!("{} (--strict)", first);
        }
    }
    for warning in &capture.warnings {
        eprintln!("xmem: warning: {}", printable(warning));
    }
    Ok(capture)
}

/// Analyses what was loaded. Inconsistent input (a memory space or
/// allocator whose figures come from data that contradicts itself) is found
/// as the input is read and replayed: a warning per module or allocator,
/// and with `--strict`, an error.
pub fn analyzed(captures: &[Capture], input: &InputOptions, options: &attribution::Options) -> anyhow::Result<Report> {
    let report = analysis::analyze_with(captures, options);
    // Modules are decoded as they are analysed: their files are checked again.
    source::unchanged()?;
    let inconsistent = report.inconsistency_warnings();
    if input.strict {
        if let Some(first) = inconsistent.first() {
            anyhow::bail!("{first} (--strict)");
        }
    }
    for warning in &inconsistent {
        eprintln!("xmem: warning: {}", printable(warning));
    }
    Ok(report)
}

/// What `--module` asked for, to rank the names that exist against it.
fn selection_text(filter: &select::Filter) -> String {
    match &filter.module {
        Some(select::ModuleFilter::Name(name)) => name.clone(),
        _ => String::new(),
    }
}

/// `path` relative to the working directory when it lies under it.
pub fn relative_to_working_directory(path: &str) -> String {
    let relative = std::env::current_dir().ok().and_then(|dir| {
        Path::new(path).strip_prefix(&dir).ok().map(|p| p.display().to_string()).filter(|p| !p.is_empty())
    });
    relative.unwrap_or_else(|| path.to_string())
}

/// Finishes a write, treating a closed pipe (`xmem report … | head`) as success.
pub fn finish(result: io::Result<()>, out: &mut dyn Write) -> anyhow::Result<()> {
    match result.and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing output"),
    }
}

/// Loads and analyses the inputs, keeping the modules and memory spaces that
/// `--module` and `--memory-space` select and the allocator `--allocator`
/// selects; an input with nothing to analyse is an error that says why.
pub fn selected_report(
    paths: &[PathBuf],
    selection: &Selection,
    input: &InputOptions,
    options: &attribution::Options,
) -> anyhow::Result<Report> {
    // The selection is checked before any input is read.
    module_filter(selection)?;
    selected_report_of(&load_all(paths, input)?, selection, input, options)
}

/// [`selected_report`] of inputs already loaded.
pub fn selected_report_of(
    captures: &[Capture],
    selection: &Selection,
    input: &InputOptions,
    options: &attribution::Options,
) -> anyhow::Result<Report> {
    let filter = module_filter(selection)?;
    let mut report = report_of(captures, input, options)?;
    select(std::slice::from_mut(&mut report), &filter, selection.allocator.as_deref())?;
    Ok(report)
}

/// `--module` and `--memory-space`, checked before any input is read.
pub fn module_filter(selection: &Selection) -> anyhow::Result<select::Filter> {
    select::Filter::parse(selection.module.as_deref(), selection.memory_space.as_deref()).map_err(anyhow::Error::msg)
}

/// Loads and analyses the inputs as one report. An input with nothing to
/// analyse is an error rather than a report (or a side of a diff) that is
/// empty: that would hide a wrong path.
pub fn usable_report(
    paths: &[PathBuf],
    input: &InputOptions,
    options: &attribution::Options,
) -> anyhow::Result<Report> {
    report_of(&load_all(paths, input)?, input, options)
}

/// Loads the inputs, pairing bare HLO modules with their buffer assignments
/// (see [`ingest::load_inputs`]), each checked as [`load`] checks one.
fn load_all(paths: &[PathBuf], input: &InputOptions) -> anyhow::Result<Vec<Capture>> {
    let captures = ingest::load_inputs(paths, &read_options(input));
    source::unchanged()?;
    captures?.into_iter().map(|capture| checked(capture, input)).collect()
}

/// The analysis of loaded inputs ([`analyzed`]); an error when nothing in
/// them could be analysed.
pub fn report_of(captures: &[Capture], input: &InputOptions, options: &attribution::Options) -> anyhow::Result<Report> {
    let report = analyzed(captures, input, options)?;
    match report.nothing_usable() {
        Some(reason) => anyhow::bail!("{}: {reason}", report.inputs.join(", ")),
        None => Ok(report),
    }
}

/// Narrows every report to the selection; it is an error when none of them
/// has what was selected. Selecting modules or an allocator shows what was
/// selected and nothing else.
pub fn select(reports: &mut [Report], filter: &select::Filter, allocator: Option<&str>) -> anyhow::Result<()> {
    let names: Vec<String> = reports.iter().flat_map(|r| &r.modules).map(|m| m.name.clone()).collect();
    for report in reports.iter_mut() {
        filter.apply(report);
    }
    if filter.is_set() && reports.iter().all(|r| r.modules.is_empty()) {
        let wanted = selection_text(filter);
        let known = crate::suggest::closest_first(&wanted, names.iter().map(String::as_str));
        anyhow::bail!("no module matches the given --module / --memory-space; modules here: {known}");
    }
    match allocator {
        Some(name) => {
            select::narrow_allocators(reports, name).map_err(anyhow::Error::msg)?;
            if !filter.is_set() {
                reports.iter_mut().for_each(|r| r.modules.clear());
            }
        }
        None if filter.is_set() => reports.iter_mut().for_each(|r| r.allocators.clear()),
        None => {}
    }
    Ok(())
}

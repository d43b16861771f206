//! `xmem._native`, the compiled half of the Python package `xmem`: the
//! command line, and the `report`, `diff`, `oom` and `plot` commands as calls
//! that return what the command computed instead of printing it. Arguments
//! arrive as the command line's own flags (built by `xmem/__init__.py`), so
//! the defaults, the checks and the error messages are the command line's.
//! The GIL is released while xmem reads, analyses and renders.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use bytes::Bytes;
use clap::{Args, FromArgMatches, ValueEnum};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use xmem::analysis::Report;
use xmem::cli::args::{DiffArgs, Format, OomArgs, PlotArgs, ReportArgs};
use xmem::cli::diff::Comparison;
use xmem::oom::OomReport;
use xmem::render::text::Detail;

create_exception!(
    xmem,
    XmemError,
    PyException,
    "An xmem command failed; the message is the line the command line prints after `xmem: `."
);

fn xmem_error(error: anyhow::Error) -> PyErr {
    XmemError::new_err(xmem::cli::one_line(&error))
}

/// Parses one command's flags as the command line does. A clap error keeps
/// its first line, without clap's `error: ` and usage hints.
fn parse<A: Args + FromArgMatches>(command: &'static str, args: Vec<OsString>) -> PyResult<A> {
    A::augment_args(clap::Command::new(command).no_binary_name(true))
        .try_get_matches_from(args)
        .and_then(|matches| A::from_arg_matches(&matches))
        .map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            XmemError::new_err(first.strip_prefix("error: ").unwrap_or(first).to_string())
        })
}

/// What a command computed, kept so that it can be rendered as the command
/// line would print it.
enum Computed {
    Report(Report, Detail),
    Diff(Box<Comparison>, Detail),
    Oom(OomReport),
}

#[pyclass(frozen, module = "xmem._native")]
struct Output(Computed);

#[pymethods]
impl Output {
    /// The JSON the command prints with `--format json`, as Python objects
    /// built from the same structs by the same serde derive, keys in the same order.
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match &self.0 {
            Computed::Report(report, _) => pythonize::pythonize(py, report),
            Computed::Diff(comparison, _) => pythonize::pythonize(py, &comparison.diff),
            Computed::Oom(report) => pythonize::pythonize(py, report),
        }?)
    }

    /// What the command prints with `--format FORMAT` (text, markdown, json or html).
    fn render(&self, py: Python<'_>, format: &str) -> PyResult<String> {
        let bytes = self.rendered(py, format)?;
        String::from_utf8(bytes).map_err(|e| XmemError::new_err(e.to_string()))
    }

    /// Writes what the command writes with `--format FORMAT -o PATH` (pprof included).
    fn write(&self, py: Python<'_>, path: std::path::PathBuf, format: &str) -> PyResult<()> {
        let bytes = self.rendered(py, format)?;
        std::fs::write(&path, bytes).map_err(|e| XmemError::new_err(format!("cannot write {}: {e}", path.display())))
    }
}

impl Output {
    fn rendered(&self, py: Python<'_>, format: &str) -> PyResult<Vec<u8>> {
        let format = Format::from_str(format, true).map_err(PyValueError::new_err)?;
        py.detach(|| -> anyhow::Result<Vec<u8>> {
            let mut bytes = Vec::new();
            let mut out = xmem::cli::piped(&mut bytes, format);
            match &self.0 {
                Computed::Report(report, detail) => xmem::cli::report::write(&mut out, format, report, *detail)?,
                Computed::Diff(comparison, detail) => xmem::cli::diff::write(&mut out, format, comparison, *detail)?,
                Computed::Oom(report) => xmem::cli::oom::write(&mut out, xmem::cli::oom::flavor(format)?, report)?,
            }
            out.flush()?;
            drop(out);
            Ok(bytes)
        })
        .map_err(xmem_error)
    }
}

/// The options (not the positional inputs) of a command, as its flags
/// define them: `(long name, default, whether it takes a value)`, so the
/// Python functions take every option as a keyword, with the same default.
#[pyfunction]
fn options(command: &str) -> PyResult<Vec<(String, Option<String>, bool)>> {
    let command = match command {
        "report" => ReportArgs::augment_args(clap::Command::new("report")),
        "diff" => DiffArgs::augment_args(clap::Command::new("diff")),
        "oom" => OomArgs::augment_args(clap::Command::new("oom")),
        "plot" => PlotArgs::augment_args(clap::Command::new("plot")),
        other => return Err(PyValueError::new_err(format!("no command {other}"))),
    };
    Ok(command
        .get_arguments()
        .filter(|arg| !arg.is_positional())
        .filter_map(|arg| {
            let default = arg.get_default_values().first().map(|value| value.to_string_lossy().into_owned());
            Some((arg.get_long()?.to_string(), default, arg.get_action().takes_values()))
        })
        .collect())
}

/// Runs the `xmem` command line on `argv` (the first item is the program's name) and returns its exit code.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    let code = py.detach(|| xmem::cli::run_from(argv));
    // Rust's stdout is flushed at exit only when Rust owns the process.
    let _ = std::io::stdout().flush();
    code
}

/// `xmem report ARGS`.
#[pyfunction]
fn report(py: Python<'_>, args: Vec<OsString>) -> PyResult<Output> {
    let args: ReportArgs = parse("report", args)?;
    // Built for HTML, the format that needs the most: the object may be shown as any.
    let report = py.detach(|| xmem::cli::report::build_for(&args, Format::Html)).map_err(xmem_error)?;
    Ok(Output(Computed::Report(report, args.selection.detail())))
}

/// `xmem report ARGS` of protos given as bytes, each with the name errors
/// give it (HloProtos, or HloModuleProtos with their BufferAssignmentProtos:
/// what a compiled JAX program holds), read as one input named by the
/// positional argument in `args`.
/// `warnings` join the input's own (what the protos could not tell).
#[pyfunction]
fn report_protos(
    py: Python<'_>,
    args: Vec<OsString>,
    protos: Vec<(String, Bound<'_, PyBytes>)>,
    warnings: Vec<String>,
) -> PyResult<Output> {
    let args: ReportArgs = parse("report", args)?;
    let input = args.inputs.first().map(|p| p.display().to_string()).unwrap_or_default();
    let protos: Vec<(PathBuf, Bytes)> = protos
        .into_iter()
        .map(|(name, bytes)| (PathBuf::from(name), Bytes::copy_from_slice(bytes.as_bytes())))
        .collect();
    let report = py
        .detach(|| {
            let mut capture = xmem::ingest::load_protos(&input, protos)?;
            capture.warnings.extend(warnings);
            xmem::cli::report::build_of(&args, std::slice::from_ref(&capture), Format::Html)
        })
        .map_err(xmem_error)?;
    Ok(Output(Computed::Report(report, args.selection.detail())))
}

/// A size as the command line reads one (`16GiB`, `512M`, bytes): binary units throughout.
#[pyfunction]
fn parse_size(text: &str) -> PyResult<u64> {
    xmem::units::parse_size(text).map_err(XmemError::new_err)
}

/// Bytes as the command line prints them (`16.0 GiB`).
#[pyfunction]
fn human_bytes(bytes: u64) -> String {
    xmem::units::human_bytes(bytes)
}

/// `xmem diff ARGS`.
#[pyfunction]
fn diff(py: Python<'_>, args: Vec<OsString>) -> PyResult<Output> {
    let args: DiffArgs = parse("diff", args)?;
    let comparison = py.detach(|| xmem::cli::diff::build_for(&args, Format::Html)).map_err(xmem_error)?;
    Ok(Output(Computed::Diff(Box::new(comparison), args.selection.detail())))
}

/// `xmem oom ARGS`.
#[pyfunction]
fn oom(py: Python<'_>, args: Vec<OsString>) -> PyResult<Output> {
    let args: OomArgs = parse("oom", args)?;
    let report = py.detach(|| xmem::cli::oom::build(&args)).map_err(xmem_error)?;
    Ok(Output(Computed::Oom(report)))
}

/// The errors in a log given as its text; `name` stands for the file name in
/// the result; `args` are `oom`'s other flags (`--with INPUT`).
#[pyfunction]
#[pyo3(signature = (name, text, args = Vec::new()))]
fn oom_text(py: Python<'_>, name: &str, text: &[u8], args: Vec<OsString>) -> PyResult<Output> {
    let args: OomArgs = parse("oom", [args, vec!["-".into()]].concat())?;
    let report = py
        .detach(|| -> anyhow::Result<OomReport> {
            let mut report = xmem::oom::scan(name, text)?;
            xmem::cli::oom::Programs::load(&args.with, args.top).join_all(&mut report);
            Ok(report)
        })
        .map_err(xmem_error)?;
    Ok(Output(Computed::Oom(report)))
}

/// `xmem plot ARGS`: the paths of the charts written.
#[pyfunction]
fn plot(py: Python<'_>, args: Vec<OsString>) -> PyResult<Vec<String>> {
    let args: PlotArgs = parse("plot", args)?;
    py.detach(|| {
        let mut written = Vec::new();
        xmem::cli::plot::write_charts(&args, |path| {
            written.push(path.display().to_string());
            Ok(())
        })?;
        Ok(written)
    })
    .map_err(xmem_error)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("XmemError", m.py().get_type::<XmemError>())?;
    m.add_class::<Output>()?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(report_protos, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(human_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(oom, m)?)?;
    m.add_function(wrap_pyfunction!(oom_text, m)?)?;
    m.add_function(wrap_pyfunction!(plot, m)?)?;
    m.add_function(wrap_pyfunction!(options, m)?)?;
    Ok(())
}

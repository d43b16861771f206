//! The command line: argument definitions in [`args`], one handler per
//! command. Errors become one line on stderr and exit code 2.
//!
//! The handlers of `report`, `diff`, `oom` and `plot` are public, split into
//! what the command computes and how it is written, so that the Python module
//! (`python/`) goes through the same code as the command line.

pub mod args;
pub mod diff;
mod list;
pub mod oom;
mod output;
pub mod plot;
mod progress;
pub mod report;
mod run;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use args::{Cli, Command};
pub use output::piped;

/// What a command decided the exit code should be when it did not fail.
pub enum Outcome {
    Success,
    /// A `diff` limit was crossed.
    LimitCrossed,
    /// `oom` found at least one memory error.
    MemoryErrorsFound,
    /// `run` exits with its job's code.
    Exit(u8),
}

pub fn main() -> ExitCode {
    ExitCode::from(run_from(std::env::args_os()))
}

/// Runs xmem on these arguments (the first is the program's name) and
/// returns its exit code: the `xmem` binary and the `xmem` command the
/// Python wheel installs both come here.
pub fn run_from<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with exit 0, usage errors with exit 2.
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    output::set_terminal(cli.terminal);
    match run(cli) {
        Ok(Outcome::Success) => 0,
        Ok(Outcome::LimitCrossed | Outcome::MemoryErrorsFound) => 1,
        Ok(Outcome::Exit(code)) => code,
        Err(e) => {
            eprintln!("xmem: {}", one_line(&e));
            2
        }
    }
}

/// The error and its causes on one line, so CI logs can grep it.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ").replace('\n', " ")
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Report(args) => report::run(args),
        Command::Plot(args) => plot::run(args),
        Command::List(args) => list::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "xmem", &mut script);
            let mut out = std::io::stdout().lock();
            output::finish(out.write_all(&script), &mut out)?;
            Ok(Outcome::Success)
        }
        Command::Oom(args) => oom::run(args),
        Command::Run(args) => run::run(args),
    }
}

//! The command line: argument definitions in [`args`], one handler per
//! command. Errors become one line on stderr and exit code 2.

pub mod args;
mod diff;
mod list;
mod oom;
mod output;
mod plot;
mod progress;
mod report;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use args::{Cli, Command};

/// What a command decided the exit code should be when it did not fail.
pub enum Outcome {
    Success,
    /// A `diff` limit was crossed.
    LimitCrossed,
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with exit 0, usage errors with exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    output::set_terminal(cli.terminal);
    match run(cli) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::LimitCrossed) => ExitCode::from(1),
        Err(e) => {
            eprintln!("xmem: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, so CI logs can grep it.
fn one_line(error: &anyhow::Error) -> String {
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
    }
}

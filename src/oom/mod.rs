//! OOM post-mortem from the log alone: find every out-of-memory error in a
//! job's output, say what kind it is, pull out the figures the log gives, and
//! say what to change.
//!
//! The log is read once, line by line ([`scan`]); memory grows with the
//! errors found, not with the log. Each family of messages has its module:
//! `tpu_compile` and `tpu_runtime` (libtpu, sharing the report parser in
//! `tpu_report`), `sparsecore`, `gpu` (XLA GPU with its BufferAssignment
//! report), `bfc` (the TensorFlow/TSL allocator), `triton` and `pytorch`.
//! Beneath them all, `general` reads any line that states a memory failure
//! in the words of `vocabulary` (a table: a new wording is one row), so a
//! stack no family knows still gives an event with its sizes; a family
//! refines that reading and never loses what it found.
//! `explain` and `advice` turn the facts of an event into a verdict and advice.
//!
//! Never invented: a figure the log does not give is `None` (`null` in JSON),
//! and a report the log ends in the middle of is marked `truncated`.

/// A regex written in this source, compiled on first use (`bytes` for one
/// that matches raw bytes). Only literals reach it, never text from a log.
macro_rules! regex {
    ($pattern:expr) => {
        regex!(regex::Regex, $pattern)
    };
    (bytes $pattern:expr) => {
        regex!(regex::bytes::Regex, $pattern)
    };
    ($kind:ty, $pattern:expr) => {{
        static RE: std::sync::LazyLock<$kind> =
            std::sync::LazyLock::new(|| <$kind>::new($pattern).expect("regex literal in xmem's source"));
        &*RE
    }};
}

mod advice;
mod bfc;
mod block;
mod code_table;
mod context;
mod cupy;
mod event;
mod explain;
mod general;
mod gpu;
mod host;
mod incident;
pub mod join;
mod line;
mod listing;
mod pytorch;
mod quotes;
mod scanner;
mod size;
mod sparsecore;
mod tpu_compile;
mod tpu_report;
mod tpu_runtime;
mod triton;
mod verdict;
mod vocabulary;

use std::io::BufRead;

pub use line::read_lines;

pub use event::{
    Allocation, BfcBin, Cause, Framework, Holder, Incident, Item, Kind, OomEvent, OomReport, Phase, Section, UserFrame,
    OOM_SCHEMA,
};

use crate::error::Error;

/// How the line `xmem run` writes after the job's own output starts: a log
/// saved from `xmem run` is read up to it, since what follows is xmem's
/// report, which quotes the job's lines again.
pub const AFTER_THE_JOB: &str = "xmem: the job";

/// Reads a log once, front to back, and explains every memory error in it.
/// `input` names the log in the report and in errors; `log` is its text in any
/// encoding (invalid UTF-8 is replaced).
pub fn scan(input: &str, log: impl BufRead) -> crate::Result<OomReport> {
    scan_each(input, log, |_, _| {})
}

/// [`scan`], calling `on_incident` with each incident (and the events it
/// indexes) as soon as the log has moved past it, so a log that is still
/// being written (`kubectl logs -f`) is explained as it goes.
pub fn scan_each(
    input: &str,
    log: impl BufRead,
    mut on_incident: impl FnMut(&Incident, &[OomEvent]),
) -> crate::Result<OomReport> {
    let mut scanner = scanner::Scanner::default();
    let lines = line::read_lines(log, |number, raw| {
        scanner.feed(number, raw);
        for (incident, events) in scanner.take_completed() {
            on_incident(incident, events);
        }
    })
    .map_err(|e| Error::io(input, e))?;
    scanner.finish();
    for (incident, events) in scanner.take_completed() {
        on_incident(incident, events);
    }
    let (events, incidents) = scanner.into_parts();
    Ok(OomReport { schema: OOM_SCHEMA, input: input.to_string(), lines, events, incidents, exit_code: None })
}

/// A log handed over one line at a time, as a running program prints it
/// (`xmem run` reads its child's stdout and stderr): like [`scan`], memory
/// grows with the errors found, not with the log.
pub struct Stream {
    scanner: scanner::Scanner,
    input: String,
    lines: u64,
}

impl Stream {
    pub fn new(input: &str) -> Stream {
        Stream { scanner: scanner::Scanner::default(), input: input.to_string(), lines: 0 }
    }

    /// One line, without its newline; a longer one than [`line::MAX_LINE_BYTES`] is read up to there.
    pub fn line(&mut self, raw: &[u8]) {
        self.lines += 1;
        self.scanner.feed(self.lines, raw.get(..line::MAX_LINE_BYTES).unwrap_or(raw));
    }

    /// The log ended: every error in it, explained.
    pub fn finish(mut self) -> OomReport {
        self.scanner.finish();
        let (events, incidents) = self.scanner.into_parts();
        OomReport { schema: OOM_SCHEMA, input: self.input, lines: self.lines, events, incidents, exit_code: None }
    }
}

impl OomReport {
    /// The job ended with `exit_code` (`xmem run` knows it): each incident is
    /// judged again with it, so one the job survived (exit 0) says so instead
    /// of reading as the failure. Before any join: it replaces the incidents' verdicts.
    pub fn job_exited(&mut self, exit_code: u8) {
        self.exit_code = Some(exit_code);
        for incident in &mut self.incidents {
            *incident = incident::judged(std::mem::take(&mut incident.events), &self.events, Some(exit_code));
        }
    }
}

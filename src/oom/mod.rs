//! OOM post-mortem from the log alone: find every out-of-memory error in a
//! job's output, say what kind it is, pull out the figures the log gives, and
//! say what to change.
//!
//! The log is read once, line by line ([`scan`]); memory grows with the
//! errors found, not with the log. Each family of messages has its module:
//! `tpu_compile` and `tpu_runtime` (libtpu, sharing the report parser in
//! `tpu_report`), `sparsecore`, `gpu` (XLA GPU with its BufferAssignment
//! report), `bfc` (the TensorFlow/TSL allocator), `triton` and `pytorch`.
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
mod explain;
mod gpu;
mod line;
mod listing;
mod pytorch;
mod scanner;
mod size;
mod sparsecore;
mod tpu_compile;
mod tpu_report;
mod tpu_runtime;
mod triton;

use std::io::BufRead;

use serde::Serialize;

use crate::error::Error;

pub const OOM_SCHEMA: &str = "xmem.oom/1";

/// Everything found in one log, serialised as `xmem.oom/1`.
#[derive(Debug, Clone, Serialize)]
pub struct OomReport {
    pub schema: &'static str,
    /// The log as the user named it (`<stdin>` for `-`).
    pub input: String,
    /// Lines read.
    pub lines: u64,
    /// In the order they first appear in the log.
    pub events: Vec<OomEvent>,
}

/// What kind of memory error a message reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// XLA:TPU ran out of a memory space (hbm, vmem, smem, …) while compiling.
    CompileTimeOom,
    /// The SparseCore compiler could not place a buffer (E3000, E3001).
    SparsecoreAllocation,
    /// XLA GPU could not allocate and printed its BufferAssignment report.
    BufferAssignmentOom,
    /// The TensorFlow/TSL best-fit-with-coalescing allocator ran out.
    BfcAllocatorOom,
    /// A runtime allocation failed: a device buffer, a program reservation, a driver call.
    RuntimeAllocationFailure,
    /// A Triton kernel needs more shared (or tensor) memory than the device has.
    TritonOutOfResources,
    /// PyTorch's CUDA caching allocator ran out.
    PytorchCudaOom,
    /// A memory error xmem has no parser for; the line is shown as it is.
    Unrecognised,
}

/// One memory error, with every figure the log gives for it.
#[derive(Debug, Clone, Serialize)]
pub struct OomEvent {
    pub kind: Kind,
    /// The XLA error code (`E1000`, …) the log states, or the one its kind implies.
    pub error_code: Option<String>,
    /// The memory that ran out, lower-case as the log names it (`hbm`, `vmem`, `shared memory`, `GPU 0`).
    pub memory_space: Option<String>,
    /// What the program needed or had in use.
    pub used_bytes: Option<u64>,
    pub capacity_bytes: Option<u64>,
    /// As the log states it, or `used − capacity` when the log gives both and says one exceeds the other.
    pub exceeded_by_bytes: Option<u64>,
    /// The allocation that failed.
    pub requested_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// The allocations the log lists, in its order (largest first; BFC chunk sizes sorted so).
    pub allocations: Vec<Allocation>,
    /// The log ends inside this error's report, or cuts its last line: what
    /// would have followed (more allocations, the rest of a dump) is missing.
    pub truncated: bool,
    /// What to try, most specific first, with the exact flags and parameters.
    pub advice: Vec<String>,
    /// One sentence: what ran out, how much was needed and how much there was.
    pub summary: String,
    /// Line where the error first appears (1-based).
    pub line: u64,
    /// How many times the message appears; identical repeats are folded into one event.
    pub occurrences: u64,
    /// The line that reports the error, as printed (without log prefixes).
    pub message: String,
    /// The exception that carried the message (`torch.OutOfMemoryError`, `jaxlib.xla_extension.XlaRuntimeError`).
    pub exception: Option<String>,
    /// The allocator that failed, for allocator errors (`GPU_0_bfc`).
    pub allocator: Option<String>,
    /// The op, instruction or program the failing request came from.
    pub op: Option<String>,
    /// The shape of the failing request, when the log gives it.
    pub shape: Option<String>,
    /// The log says this failure is not fatal (the caller can carry on, more slowly).
    pub non_fatal: bool,
    /// The figures the log groups under headings (usage totals, requirements, allocator stats).
    pub breakdown: Vec<Section>,
    /// The BFC allocator's bins, when the log dumps them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bins: Vec<BfcBin>,
}

impl OomEvent {
    fn new(kind: Kind, line: &line::Line) -> OomEvent {
        OomEvent {
            kind,
            error_code: None,
            memory_space: None,
            used_bytes: None,
            capacity_bytes: None,
            exceeded_by_bytes: None,
            requested_bytes: None,
            free_bytes: None,
            allocations: Vec::new(),
            truncated: false,
            advice: Vec::new(),
            summary: String::new(),
            line: line.number,
            occurrences: line.repeats,
            message: explain::shorten(line.text.trim(), MAX_MESSAGE_CHARS),
            exception: None,
            allocator: None,
            op: None,
            shape: None,
            non_fatal: false,
            breakdown: Vec::new(),
            bins: Vec::new(),
        }
    }

    /// The section named `name`, created at the end if the event has none yet.
    fn section(&mut self, name: &str) -> &mut Section {
        let at = match self.breakdown.iter().position(|s| s.name == name) {
            Some(at) => at,
            None => {
                self.breakdown.push(Section { name: name.to_string(), bytes: None, note: None, items: Vec::new() });
                self.breakdown.len() - 1
            }
        };
        &mut self.breakdown[at]
    }

    /// Adds one figure under `section`.
    fn fact(&mut self, section: &str, name: &str, bytes: Option<i64>, note: Option<String>) {
        self.push_item(section, Item { name: name.to_string(), bytes, count: None, note });
    }

    /// Adds a count (not bytes) under `section`.
    fn count(&mut self, section: &str, name: &str, count: u64) {
        self.push_item(section, Item { name: name.to_string(), bytes: None, count: Some(count), note: None });
    }

    fn push_item(&mut self, section: &str, item: Item) {
        let items = &mut self.section(section).items;
        if items.len() < MAX_ITEMS {
            items.push(item);
        }
    }

    fn push_allocation(&mut self, allocation: Allocation) {
        if self.allocations.len() < MAX_ITEMS {
            self.allocations.push(allocation);
        }
    }
}

/// The message is kept up to this many characters; JSON stays readable and a
/// pathological line cannot bloat the report.
const MAX_MESSAGE_CHARS: usize = 600;

/// Lists (allocations, breakdown items, bins) keep at most this many entries per event.
const MAX_ITEMS: usize = 10_000;

/// An allocation the log lists.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Allocation {
    pub size_bytes: Option<u64>,
    pub unpadded_bytes: Option<u64>,
    pub op_name: Option<String>,
    pub shape: Option<String>,
    /// The XLA label as printed: the HLO instruction (TPU) or its opcode (GPU).
    pub xla_label: Option<String>,
    /// `HLO temp`, `scoped`, `entry parameter`, `in use` (BFC chunks), …
    pub allocation_type: Option<String>,
    /// Extra bytes the TPU layout's padding adds.
    pub padding_bytes: Option<u64>,
    /// Padded size over unpadded size, as the log prints it (`2.0` for `2.0x expansion`).
    pub expansion: Option<f64>,
    pub op_type: Option<String>,
    /// `file:line` of the op's source.
    pub source: Option<String>,
    /// The instruction's name when the label or the log gives it (`fusion.1265.remat3`, `fusion.664`).
    pub instruction: Option<String>,
    /// How many allocations of this size the row stands for (BFC chunk summaries).
    pub count: u64,
}

/// Figures the log prints under one heading (`Total hbm usage >= 22.47G:`).
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub name: String,
    /// The heading's own figure, if it has one.
    pub bytes: Option<i64>,
    pub note: Option<String>,
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Item {
    pub name: String,
    /// Signed: the TPU runtime prints a negative "available after request".
    pub bytes: Option<i64>,
    pub count: Option<u64>,
    /// What the log says next to the figure (`24.2% utilization`, `unknown size`).
    pub note: Option<String>,
}

/// One line of a BFC allocator's bin dump.
#[derive(Debug, Clone, Serialize)]
pub struct BfcBin {
    /// The bin's lower size bound.
    pub bin_bytes: u64,
    pub total_chunks: u64,
    pub chunks_in_use: u64,
    pub allocated_bytes: Option<u64>,
    pub in_use_bytes: Option<u64>,
    pub requested_in_use_bytes: Option<u64>,
    /// Old TensorFlow builds also print what was requested for all chunks.
    pub requested_bytes: Option<u64>,
}

/// Reads a log once, front to back, and explains every memory error in it.
/// `input` names the log in the report and in errors; `log` is its text in any
/// encoding (invalid UTF-8 is replaced).
pub fn scan(input: &str, log: impl BufRead) -> crate::Result<OomReport> {
    let mut scanner = scanner::Scanner::default();
    let lines = line::read_lines(log, |number, raw| scanner.feed(number, raw)).map_err(|e| Error::io(input, e))?;
    let mut events = scanner.finish();
    for event in &mut events {
        explain::explain(event);
    }
    Ok(OomReport { schema: OOM_SCHEMA, input: input.to_string(), lines, events })
}

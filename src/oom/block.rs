//! What a family's `detect` hands the scanner: the event it found on a line,
//! and the reader for the report that follows it. Every kind file builds on
//! this module and on [`line`](super::line); the scanner builds on them all.

use super::event::{Kind, OomEvent};
use super::line::Line;

/// Lines worth a closer look; everything else is skipped without being
/// decoded or cleaned up, which keeps the pass over a large log cheap. Plain,
/// case-sensitive literals, so the regex engine can search for them all at once;
/// a row of the kernel's task table, which its last words single out cheaply; and V8's
/// stack mark, alone on its line.
pub(super) fn triggers(text: &[u8]) -> bool {
    regex!(bytes concat!(
        r"out of memory|Out of memory|Out Of Memory|OUT OF MEMORY|out-of-memory|OutOfMemory|OUT_OF_MEMORY",
        r"|RESOURCE_EXHAUSTED|Resource exhausted|resource exhausted|ResourceExhausted",
        r"|failed to allocate|Failed to allocate|failed to alloc |oom-kill|oom_kill|OOM killer|OOMKilled|MemoryError",
        r"|CompileTime|AllocationFailure|out of resource|Attempting to allocate|Attempting to reserve",
        r"|usage >=|Hbm usage|BufferAssignment OOM|BufferAssignment stats|Chunks of size|Bin \(|BFCAllocator dump|Sum Total of in-use",
        r"|memref\.alloca|would exceed memory|OOM when allocating|Scoped allocation with size|HLO temporaries",
        r"|No viable logical replica|Fixed size allocations|Largest program allocations|requirement \d|Size: \d",
        r"|Shared memory size limit exceeded|unlikely to have enough memory|Killed process|Kill process|invoked oom-killer|killed as a result of limit|DefaultCPUAllocator|can NOT allocate memory",
        // Report bodies an excerpt may start with, without the line that opened them.
        r"|InUse at |Chunk at |Free at |Free  at |in-use Chunks by size|Next region of size|XLA label: |XLA Label: |Allocation type: |Extra memory due to padding|Buffer \d+:",
        r"|by rematerialization|exceeds the base limit|Failed to get configs for|Limit: |Stats:|CUDA OOMs: |out_of_memory\+|oom_kill_process\+|(?i:MPS backend out of memory)",
        r"|oom_reaper: reaped|TaskOOM event|Last few GCs|Tasks state \(memory|oom_score_adj name| per-cpu:|kB min:",
    ))
    .is_match(text)
        || super::host::is_task_row(text)
        // (V8's stack mark, tested apart: one more literal among the others slows their search
        // of every line by half, BENCHMARKS.md.)
        || super::host::is_v8_stack_mark(text)
}

/// A continuation joins at most this many lines.
const MAX_CONTINUATION_LINES: usize = 8;

/// A physical line this long or longer that runs on into the next was most
/// likely cut by a terminal's width, so the two join without a space.
const WRAP_WIDTH: usize = 60;

/// What a family's `detect` found on a line.
pub(super) struct Detected {
    pub event: OomEvent,
    /// The reader for the lines that may follow, if the message has a report.
    pub block: Option<Box<dyn Block>>,
    /// The text that identifies the message, for folding repeats.
    pub key: String,
    /// Kept only if the next lines confirm it (a bare `Size: 12M` line could be anything).
    pub tentative: bool,
}

impl Detected {
    pub fn new(event: OomEvent, key: &str) -> Detected {
        Detected { event, block: None, key: key.to_string(), tentative: false }
    }

    /// Identified by the message from where the signature `found` starts, so the
    /// same error printed by two layers (`OP_REQUIRES failed … : RESOURCE_EXHAUSTED: …`
    /// and `(1) RESOURCE_EXHAUSTED: …`) is one event.
    pub fn at(event: OomEvent, text: &str, found: &regex::Captures) -> Detected {
        Detected::new(event, key_from(text, found.get(0).map_or(0, |m| m.start())))
    }

    /// A one-line message whose figures `fill` reads from where its signature
    /// starts, joined with the next lines if a wrap cut it.
    pub fn message(kind: Kind, line: &Line, start: usize, fill: Fill) -> Detected {
        let text = line.text.as_ref();
        let mut event = OomEvent::new(kind, line);
        let block = Continuation::after(&mut event, text, fill);
        Detected { event, block, key: key_from(text, start).to_string(), tentative: false }
    }

    pub fn with_block(mut self, block: impl Block + 'static) -> Detected {
        self.block = Some(Box::new(block));
        self
    }
}

/// The key for folding repeats: the message from where its signature starts.
fn key_from(text: &str, start: usize) -> &str {
    text.get(start..).unwrap_or(text).trim_end()
}

/// Whether a report reader took a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Feed {
    Consumed,
    /// The line is not part of the report: the report ends before it.
    Ended,
}

/// The reader of an error's report, fed the lines after its first line.
pub(super) trait Block {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed;

    /// Called once when the report ends, to keep what was read last.
    fn close(&mut self, _event: &mut OomEvent) {}

    /// The report reached its last line: a log that ends here is not cut.
    fn is_finished(&self) -> bool {
        false
    }
}

/// The rest of a one-line message that a terminal or a paste broke over
/// several lines: lines are joined until the family's parser has every field.
pub(super) struct Continuation {
    text: String,
    last_width: usize,
    lines: usize,
    /// Every field was found: the message is whole.
    complete: bool,
    fill: Fill,
}

/// Re-reads a joined message into the event; true when nothing is missing any more.
pub(super) type Fill = fn(&mut OomEvent, &str) -> bool;

impl Continuation {
    /// A continuation if `fill` finds fields missing in `text`, after filling what is there.
    fn after(event: &mut OomEvent, text: &str, fill: Fill) -> Option<Box<dyn Block>> {
        if fill(event, text) {
            return None;
        }
        Some(Box::new(Continuation { text: text.to_string(), last_width: text.len(), lines: 1, complete: false, fill }))
    }
}

impl Block for Continuation {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        if self.complete
            || line.is_blank()
            || line.prefixed
            || self.lines >= MAX_CONTINUATION_LINES
            || triggers(line.text.as_bytes())
        {
            return Feed::Ended;
        }
        let before = self.text.len();
        join_wrapped(&mut self.text, self.last_width, &line.text);
        self.last_width = line.text.len();
        self.lines += 1;
        self.complete = (self.fill)(event, &self.text);
        if !self.complete && self.text.len() == before + line.text.len() {
            // Joined without a space, as a terminal cuts a word; a console that
            // wraps at words (rich's boxes) dropped one instead.
            let mut spaced = self.text.clone();
            spaced.insert(before, ' ');
            if (self.fill)(event, &spaced) {
                self.text = spaced;
                self.complete = true;
            } else {
                (self.fill)(event, &self.text);
            }
        }
        Feed::Consumed
    }

    fn is_finished(&self) -> bool {
        self.complete
    }
}

/// Appends the next physical line of a wrapped message: a long line that
/// stops inside a word was cut at a terminal's width and runs on without a
/// space; one that a person broke, or that stops after punctuation, gets one.
pub(super) fn join_wrapped(text: &mut String, last_width: usize, next: &str) {
    // A logger that indents its next lines (`12:54:10-878543 ERROR    Exception: … 5.24` /
    // `                         GiB already allocated`) wrapped at a word.
    let indented = next.starts_with([' ', '\t']);
    let next = next.trim_start();
    let mid_word = !indented && last_width >= WRAP_WIDTH && text.ends_with(char::is_alphanumeric);
    if !mid_word && !text.ends_with(char::is_whitespace) {
        text.push(' ');
    }
    text.push_str(next);
}

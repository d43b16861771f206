//! The one pass over the log: finds where an error starts, hands the lines
//! after it to that error's report parser, folds repeats, and keeps lines that
//! speak of memory but match no parser as "unrecognised" events.

use std::collections::HashMap;

use super::line::{looks_cut, normalise, Line};
use super::{bfc, gpu, pytorch, sparsecore, tpu_compile, tpu_report, tpu_runtime, triton, Kind, OomEvent};

/// Lines worth a closer look; everything else is skipped without being
/// decoded or cleaned up, which keeps the pass over a large log cheap. Plain,
/// case-sensitive literals, so the regex engine can search for them all at once.
fn triggers(text: &[u8]) -> bool {
    regex!(bytes concat!(
        r"out of memory|Out of memory|Out Of Memory|OUT OF MEMORY|out-of-memory|OutOfMemory|OUT_OF_MEMORY",
        r"|RESOURCE_EXHAUSTED|Resource exhausted|resource exhausted|ResourceExhausted",
        r"|failed to allocate|Failed to allocate|oom-kill|oom_kill|OOM killer",
        r"|CompileTime|AllocationFailure|out of resource|Attempting to allocate|Attempting to reserve",
        r"|usage >=|Hbm usage|BufferAssignment OOM|Chunks of size|Bin \(|BFCAllocator dump|Sum Total of in-use",
        r"|memref\.alloca|would exceed memory|OOM when allocating|Scoped allocation with size|HLO temporaries",
        r"|No viable logical replica|Fixed size allocations|Largest program allocations|requirement \d|Size: \d",
    ))
    .is_match(text)
}

/// Words that make a line a memory error even when no parser knows it.
const MEMORY_WORDS: &str = concat!(
    r"(?i:out[ -]of[ -]memory|resource[ _]?exhausted|\boom[-_ ]?kill)|OutOfMemory|OUT_OF_MEMORY",
    r"|\bE(?:0100|0101|1000|1001|3000|3001): [A-Z]",
);

/// A memory-error line that no parser claimed may be the first line of an
/// error that the next lines spell out (`RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom:`
/// then the message): it is held this many lines before it becomes an event of its own.
const PREAMBLE_REACH: u64 = 3;

/// A continuation joins at most this many lines.
const MAX_CONTINUATION_LINES: usize = 8;

/// A physical line this long or longer that runs on into the next was most
/// likely cut by a terminal's width, so the two join without a space.
const WRAP_WIDTH: usize = 60;

/// What a family's `detect` found on a line.
pub(super) struct Detected {
    pub event: OomEvent,
    /// The parser for the lines that may follow, if the message has a report.
    pub block: Option<Block>,
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

    pub fn with_block(mut self, block: Block) -> Detected {
        self.block = Some(block);
        self
    }
}

/// Whether a report parser took a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Feed {
    Consumed,
    /// The line is not part of the report: the report ends before it.
    Ended,
}

/// The parser of an error's report, fed the lines after its first line.
pub(super) enum Block {
    Tpu(tpu_report::Report),
    Gpu(gpu::Report),
    Bfc(bfc::Dump),
    Continuation(Continuation),
}

impl Block {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        match self {
            Block::Tpu(report) => report.feed(event, line),
            Block::Gpu(report) => report.feed(event, line),
            Block::Bfc(dump) => dump.feed(event, line),
            Block::Continuation(continuation) => continuation.feed(event, line),
        }
    }

    /// Called once when the report ends, to keep what was read last.
    fn close(&mut self, event: &mut OomEvent) {
        match self {
            Block::Tpu(report) => report.close(event),
            Block::Gpu(report) => report.close(event),
            Block::Bfc(dump) => dump.close(event),
            Block::Continuation(_) => {}
        }
    }

    /// The report reached its last line: a log that ends here is not cut.
    fn is_finished(&self) -> bool {
        match self {
            Block::Bfc(dump) => dump.is_finished(),
            Block::Continuation(continuation) => continuation.complete,
            Block::Tpu(_) | Block::Gpu(_) => false,
        }
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
    fn after(event: &mut OomEvent, text: &str, fill: Fill) -> Option<Block> {
        if fill(event, text) {
            return None;
        }
        Some(Block::Continuation(Continuation {
            text: text.to_string(),
            last_width: text.len(),
            lines: 1,
            complete: false,
            fill,
        }))
    }

    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        if self.complete
            || line.is_blank()
            || line.prefixed
            || self.lines >= MAX_CONTINUATION_LINES
            || triggers(line.text.as_bytes())
        {
            return Feed::Ended;
        }
        if self.last_width < WRAP_WIDTH {
            self.text.push(' ');
        }
        self.text.push_str(&line.text);
        self.last_width = line.text.len();
        self.lines += 1;
        self.complete = (self.fill)(event, &self.text);
        Feed::Consumed
    }
}

/// Where the lines of an open report go.
enum Target {
    Event(usize),
    /// A repeat of an event that already has its report: read and dropped.
    Discard(Box<OomEvent>),
}

struct Open {
    target: Target,
    block: Block,
    /// Non-blank lines the report took.
    taken: u64,
    /// The last line of the event stops mid-way (unclosed bracket or quote).
    last_cut: bool,
    tentative: bool,
}

/// A line that speaks of a memory error but that no parser claimed (yet).
struct Preamble {
    number: u64,
    text: String,
    repeats: u64,
}

#[derive(Default)]
pub(super) struct Scanner {
    events: Vec<OomEvent>,
    by_key: HashMap<String, usize>,
    open: Option<Open>,
    preamble: Option<Preamble>,
}

impl Scanner {
    pub fn feed(&mut self, number: u64, raw: &[u8]) {
        if self.open.is_none() && !triggers(raw) {
            self.expire_preamble(number);
            return;
        }
        let line = normalise(number, raw);
        if let Some(open) = &mut self.open {
            let event = match &mut open.target {
                Target::Event(at) => &mut self.events[*at],
                Target::Discard(event) => event,
            };
            if open.block.feed(event, &line) == Feed::Consumed {
                if !line.is_blank() {
                    open.taken += 1;
                    open.last_cut = looks_cut(&line.text);
                }
                return;
            }
            self.close(false);
        }
        self.expire_preamble(number);
        if !triggers(line.text.as_bytes()) {
            return;
        }
        match detect(&line) {
            Some(detected) => self.start(detected, &line),
            None if regex!(MEMORY_WORDS).is_match(&line.text) => {
                self.flush_preamble();
                self.preamble =
                    Some(Preamble { number: line.number, text: line.text.trim().to_string(), repeats: line.repeats });
            }
            None => {}
        }
    }

    pub fn finish(mut self) -> Vec<OomEvent> {
        self.close(true);
        self.flush_preamble();
        self.events
    }

    fn start(&mut self, detected: Detected, line: &Line) {
        let Detected { mut event, block, key, tentative } = detected;
        // A code the log states wins over the one the parser implied.
        let preamble = self.preamble.take();
        let preamble = preamble.as_ref().map_or("", |p| p.text.as_str());
        if let Some(code) = error_code(&line.text).or_else(|| error_code(preamble)) {
            event.error_code = Some(code);
        }
        let before_message = line.text.trim_end().strip_suffix(key.as_str()).unwrap_or("");
        event.exception = exception(before_message).or_else(|| exception(preamble));
        if let Some(&at) = self.by_key.get(&key) {
            let first = &mut self.events[at];
            first.occurrences += line.repeats;
            if let Some(block) = block {
                let has_report = !first.allocations.is_empty() || !first.breakdown.is_empty() || !first.bins.is_empty();
                let target = if has_report { Target::Discard(Box::new(event)) } else { Target::Event(at) };
                self.open = Some(Open { target, block, taken: 0, last_cut: false, tentative: false });
            }
            return;
        }
        let at = self.events.len();
        if !tentative {
            self.by_key.insert(key, at);
        }
        self.events.push(event);
        let last_cut = looks_cut(&line.text);
        match block {
            Some(block) => self.open = Some(Open { target: Target::Event(at), block, taken: 0, last_cut, tentative }),
            None => self.open = None,
        }
    }

    /// Ends the open report. At the end of the log, a report that had begun
    /// and did not reach its last line, or whose last line is cut, is truncated.
    fn close(&mut self, at_end_of_log: bool) {
        let Some(mut open) = self.open.take() else { return };
        let Target::Event(at) = open.target else { return };
        let Some(event) = self.events.get_mut(at) else { return };
        open.block.close(event);
        if at_end_of_log && ((open.taken > 0 && !open.block.is_finished()) || open.last_cut) {
            event.truncated = true;
        }
        if open.tentative && open.taken == 0 && at + 1 == self.events.len() {
            self.events.pop();
        }
    }

    fn expire_preamble(&mut self, number: u64) {
        if self.preamble.as_ref().is_some_and(|p| number > p.number + PREAMBLE_REACH) {
            self.flush_preamble();
        }
    }

    /// A memory-error line that no error followed becomes an event of its own.
    fn flush_preamble(&mut self) {
        let Some(preamble) = self.preamble.take() else { return };
        if let Some(&at) = self.by_key.get(&preamble.text) {
            self.events[at].occurrences += preamble.repeats;
            return;
        }
        let line = Line {
            number: preamble.number,
            text: preamble.text.as_str().into(),
            repeats: preamble.repeats,
            prefixed: false,
        };
        let mut event = OomEvent::new(Kind::Unrecognised, &line);
        event.error_code = error_code(&preamble.text);
        self.by_key.insert(preamble.text, self.events.len());
        self.events.push(event);
    }
}

/// Asks every family, most specific first.
fn detect(line: &Line) -> Option<Detected> {
    sparsecore::detect(line)
        .or_else(|| tpu_compile::detect(line))
        .or_else(|| tpu_runtime::detect(line))
        .or_else(|| gpu::detect(line))
        .or_else(|| bfc::detect(line))
        .or_else(|| triton::detect(line))
        .or_else(|| pytorch::detect(line))
}

/// An XLA error code as the message states it (`E1000: CompileTimeHbmOom:`).
fn error_code(text: &str) -> Option<String> {
    regex!(r"\b(E\d{4}): [A-Z][A-Za-z0-9]+:").captures(text).map(|c| c[1].to_string())
}

/// The innermost exception class named before the message
/// (`UnfilteredStackTrace: RuntimeError: RESOURCE_EXHAUSTED: …` → `RuntimeError`).
fn exception(text: &str) -> Option<String> {
    regex!(r"((?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception)|OutOfResources)):")
        .captures_iter(text)
        .last()
        .map(|c| c[1].to_string())
}

/// The key for folding repeats: the message from where its signature starts.
fn key_from(text: &str, start: usize) -> &str {
    text.get(start..).unwrap_or(text).trim_end()
}

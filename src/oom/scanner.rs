//! The one pass over the log: finds where an error starts, hands the lines
//! after it to that error's report reader, folds repeats, makes the lines
//! that state a memory failure in words no family parser knows events of
//! the general reader, and groups the events of one failure into an
//! incident, handed out as soon as it is over.

use std::collections::HashMap;

use super::block::{join_wrapped, triggers, Block, Detected, Feed};
use super::code_table::CodeTable;
use super::context::Context;
use super::event::{Framework, Incident, Kind, OomEvent};
use super::general::{self, Reading};
use super::line::{looks_cut, normalise, Line, Numbering};
use super::quotes::{Quoted, Quotes};
use super::{bfc, cupy, explain, gpu, host, incident, pytorch, sparsecore, tpu_compile, tpu_runtime, triton};
use crate::interner::Interner;

/// A memory-error line that no parser claimed may be the first line of an
/// error that the next lines spell out (`RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom:`
/// then the message): it is held this many lines before it becomes an event of its own.
const PREAMBLE_REACH: u64 = 3;

/// A held message takes in at most this many lines after it as its own
/// (a wrapped sentence, `Memory on the node … 59.49GB / 62.58GB`).
const MAX_CONTINUATION_LINES: u32 = 8;

/// A terminal wraps lines at least this wide.
const WRAP_WIDTH: usize = 80;

/// Where the lines of an open report go.
enum Target {
    Event(usize),
    /// A repeat of an event that already has its report: read and dropped.
    Discard(Box<OomEvent>),
}

struct Open {
    target: Target,
    block: Box<dyn Block>,
    /// Non-blank lines the report took.
    taken: u64,
    /// The last line of the event stops mid-way (unclosed bracket or quote).
    last_cut: bool,
    /// The last line the report took stops inside a word at a terminal's
    /// width: the next line may be its tail.
    last_wrapped: bool,
    tentative: bool,
}

/// A line that states a memory failure but that no parser claimed (yet).
struct Preamble {
    number: u64,
    /// As cleaned up, with its trailing space: a wrap may join it with the next line.
    text: String,
    repeats: u64,
    /// What the general reader makes of it and of the lines it took in.
    reading: Reading,
    /// The last line it took in.
    last: u64,
    /// Lines taken in after its own.
    continued: u32,
    /// A line that is not its continuation came: it takes in no more.
    closed: bool,
    /// The second of the log's clock it was read in ([`Clock`]): it is flushed lines later.
    second: u64,
}

impl Preamble {
    fn message(&self) -> &str {
        self.text.trim()
    }
}

/// How much of the line before a failure the reader keeps, to read a
/// sentence wrapped by hand whole ([`Scanner::continues_talk`]).
const PROSE_TAIL: usize = 160;

/// The seconds a log's own timestamps count: each line that opens with an ISO date and time
/// (`2018-12-06 19:05:48 …`, maybe in a bracket) that names another second than the one before
/// starts the next. The same message in another second is another failure; lines without a
/// timestamp (a title, a traceback) stay in the second before them.
#[derive(Default)]
struct Clock {
    /// The date and time of the last timestamp, to the second.
    stamp: [u8; 19],
    /// How many times the timestamps' second changed.
    second: u64,
}

impl Clock {
    /// Reads the line's timestamp, if it opens with one; a byte test, since every line passes here.
    fn observe(&mut self, raw: &[u8]) {
        let raw = raw.strip_prefix(b"[").unwrap_or(raw);
        let Some(stamp) = raw.get(..19) else { return };
        let digit_at = |at: usize| stamp[at].is_ascii_digit();
        let is_stamp = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18].into_iter().all(digit_at)
            && matches!(stamp[4], b'-' | b'/')
            && stamp[7] == stamp[4]
            && matches!(stamp[10], b' ' | b'T')
            && stamp[13] == b':'
            && stamp[16] == b':';
        if is_stamp && stamp != self.stamp {
            self.stamp.copy_from_slice(stamp);
            self.second += 1;
        }
    }
}

#[derive(Default)]
pub(super) struct Scanner {
    events: Vec<OomEvent>,
    /// Events of the open incident by message, for folding repeats, each with the second of
    /// the log's clock it was read in ([`Clock`]).
    by_key: HashMap<String, (usize, u64)>,
    /// The log's own clock, as its lines' timestamps tell it.
    clock: Clock,
    open: Option<Open>,
    preamble: Option<Preamble>,
    numbering: Numbering,
    /// What the lines before an error said about it.
    context: Context,
    /// The framework the log has shown so far.
    framework: Option<Framework>,
    incident: Option<incident::Gathering>,
    incidents: Vec<Incident>,
    /// Incidents over since the caller last asked ([`Scanner::take_completed`]).
    completed: usize,
    /// The line being read stops inside a word at a terminal's width.
    last_raw_wrapped: bool,
    /// The line before it did.
    previous_raw_wrapped: bool,
    /// The log reached what `xmem run` added after the job's output ([`super::AFTER_THE_JOB`]).
    past_the_job: bool,
    /// The end of the line before the one being read ([`PROSE_TAIL`] bytes at most), and of
    /// the one being read: a person's sentence wrapped by hand may put its talk words
    /// (`this can result in the host running`) on the line before the failure words.
    previous_tail: Vec<u8>,
    tail: Vec<u8>,
    /// The end of the line before `previous_tail`'s: a program's status may take two lines
    /// before its failure (`Currently available amount of device memory: …`, `Total amount of …`).
    tail_before_previous: Vec<u8>,
    /// The advice given so far, shared by the events that get the same.
    advice_texts: Interner,
    /// How Markdown quotes the lines ([`Quotes`]).
    quotes: Quotes,
    /// A table of error codes that the lines may be in ([`CodeTable`]).
    code_table: CodeTable,
    /// The line being read is a program's output quoted in a fence.
    quoted_output: bool,
    /// The line being read is under an issue template's heading for what the writer expected
    /// ([`expectation_heading`]).
    expecting: bool,
    /// The line being read is in a list of what might have gone wrong ([`lists_guesses`]).
    in_guesses: bool,
    /// The line of the last failure read, a new one or a repeat.
    last_failure_line: u64,
}

impl Scanner {
    pub fn feed(&mut self, number: u64, raw: &[u8]) {
        let skip = self.numbering.prefix_len(raw);
        let raw = raw.get(skip..).unwrap_or(raw);
        std::mem::swap(&mut self.tail_before_previous, &mut self.previous_tail);
        std::mem::swap(&mut self.previous_tail, &mut self.tail);
        self.tail.clear();
        self.tail.extend_from_slice(&raw[raw.len().saturating_sub(PROSE_TAIL)..]);
        self.previous_raw_wrapped = std::mem::replace(&mut self.last_raw_wrapped, is_wrapped(raw));
        self.past_the_job |= raw.starts_with(super::AFTER_THE_JOB.as_bytes());
        self.clock.observe(raw);
        if self.past_the_job {
            return;
        }
        let quoted = self.quotes.observe(raw);
        if self.code_table.observe(number, raw) || quoted == Quoted::NotARecord {
            return;
        }
        self.quoted_output = quoted == Quoted::Output;
        self.expecting = expectation_heading(raw).unwrap_or(self.expecting);
        // (The list goes on over blank lines, indented lines and its items.)
        let in_list = raw.first().is_none_or(|b| b.is_ascii_whitespace() || b"-*".contains(b));
        self.in_guesses = lists_guesses(raw) || (self.in_guesses && in_list);
        self.context.observe(number, raw);
        let follows_preamble = self.preamble.as_ref().is_some_and(|p| !p.closed && p.last + 1 == number);
        let mut straddled = None;
        if self.open.is_none() && !follows_preamble && !triggers(raw) {
            straddled = self.straddled(raw);
            if straddled.is_none() && !general::mentions(raw) {
                self.expire(number);
                return;
            }
        }
        self.framework = framework(raw).or(self.framework);
        // (A message joined with the line before it starts there.)
        let line = match &straddled {
            Some(joined) => normalise(number - 1, joined.as_bytes()),
            None => normalise(number, raw),
        };
        if let Some(open) = &mut self.open {
            let event = match &mut open.target {
                Target::Event(at) => &mut self.events[*at],
                Target::Discard(event) => event,
            };
            let wrapped_tail = open.last_wrapped && !line.prefixed && line.text.starts_with(char::is_lowercase);
            // A poster's mark for lines left out (`...`, `[...]`): the report goes on after it.
            let elided = regex!(r"^\s*(?:\.{3,}|…|\[(?:\.{3}|…)\]|\((?:\.{3}|…)\))\s*$").is_match(&line.text);
            if elided || open.block.feed(event, &line) == Feed::Consumed || wrapped_tail {
                // A tail a terminal wrapped onto its own line belongs to the line before;
                // its figures are lost with the cut, the report goes on.
                if !line.is_blank() {
                    open.taken += 1;
                    open.last_cut = looks_cut(&line.text);
                    open.last_wrapped = is_wrapped(raw);
                    if let Some(incident) = &mut self.incident {
                        incident.last_line = number;
                    }
                }
                return;
            }
            self.close(false);
        }
        if follows_preamble && (self.wrapped_preamble(&line) || self.continued_preamble(&line)) {
            return;
        }
        if let Some(preamble) = &mut self.preamble {
            preamble.closed = true;
        }
        self.expire(number);
        // The families' words are all among the triggers: a line that holds
        // only the general reader's goes to it alone.
        let triggered = triggers(line.text.as_bytes());
        if (!triggered && !general::mentions(line.text.as_bytes()))
            || self.expected_by_an_assertion()
            || self.expects(&line.text)
        {
            return;
        }
        match triggered.then(|| detect(&line)).flatten() {
            Some(detected) => self.start_each(detected, line),
            None => {
                let Some(mut reading) = general::read(&line) else { return };
                reading.statement |=
                    (self.quoted_output || self.under_error_head()) && !reading.talk && !general::is_frame(&line.text);
                if !reading.statement || self.in_guesses {
                    return;
                }
                if self.continues_talk(&line) {
                    return;
                }
                if line.number > 1 {
                    let before = [(1, &self.previous_tail), (2, &self.tail_before_previous)];
                    let status = before
                        .into_iter()
                        .filter(|&(back, _)| back < line.number)
                        .map(|(back, tail)| normalise(line.number - back, tail));
                    reading.take_status_lines(status);
                }
                // The writer's introduction (`… I've got OutOfMemoryError:`) to the record quoted
                // under it, naming the same failure and no figure, is that record's, not a failure
                // of its own.
                let introduces = |preamble: &Preamble| {
                    preamble.text.trim_end().ends_with(':')
                        && preamble.reading.sizes.is_empty()
                        && preamble.reading.words.iter().all(|word| reading.words.contains(word))
                };
                if self.quoted_output && self.preamble.as_ref().is_some_and(introduces) {
                    self.preamble = None;
                }
                self.flush_preamble();
                self.preamble = Some(Preamble {
                    number: line.number,
                    text: line.text.to_string(),
                    repeats: line.repeats,
                    reading,
                    last: line.number,
                    continued: 0,
                    closed: false,
                    second: self.clock.second,
                });
            }
        }
    }

    /// The incidents over since the last call, each with the events it groups.
    pub fn take_completed(&mut self) -> impl Iterator<Item = (&Incident, &[OomEvent])> {
        let from = self.completed;
        self.completed = self.incidents.len();
        let events = &self.events;
        self.incidents[from..].iter().map(move |incident| (incident, events.as_slice()))
    }

    /// The log ended: whatever is open is over.
    pub fn finish(&mut self) {
        self.close(true);
        self.flush_preamble();
        self.end_incident();
    }

    pub fn into_parts(self) -> (Vec<OomEvent>, Vec<Incident>) {
        (self.events, self.incidents)
    }

    /// A memory-error line that a terminal or a person wrapped: the held
    /// line and this one, joined, are a message a parser knows
    /// (`Resource exhausted: Out` / `of memory while trying to allocate …`).
    fn wrapped_preamble(&mut self, line: &Line) -> bool {
        let Some(preamble) = self.preamble.as_ref().filter(|p| p.continued == 0 && !line.prefixed && !line.is_blank())
        else {
            return false;
        };
        if triggers(line.text.as_bytes()) && detect(line).is_some() {
            // A message of its own, not the rest of the held line.
            return false;
        }
        let next = line.text.trim_start();
        let mut joined = preamble.text.clone();
        join_wrapped(&mut joined, preamble.text.len(), next);
        let mut candidates = vec![joined];
        if !preamble.text.ends_with(char::is_whitespace) {
            // Whether a person's wrap replaced a space or a terminal cut a word, the other reading is tried too.
            let other = if candidates[0].len() == preamble.text.len() + next.len() { " " } else { "" };
            candidates.push(format!("{}{other}{next}", preamble.text));
        }
        let (number, repeats) = (preamble.number, preamble.repeats);
        for text in candidates {
            let joined = Line { number, text: text.into(), repeats, prefixed: true, quoted: false, section: false };
            if let Some(detected) = detect(&joined) {
                self.preamble = None;
                self.start(detected, &joined);
                return true;
            }
        }
        false
    }

    /// Whether the line before is an error's head that leaves its message to the next line
    /// (R's `Error in make_full_citation_graph(n = 44500) : ` over igraph's `At vector.pmt:446 :
    /// cannot reserve space for vector, Out of memory`), or an exception's (DIALS' `RuntimeError:
    /// Please report this error to …:` over `There was a problem allocating memory for
    /// shoeboxes.`): what follows is the program's record.
    fn under_error_head(&self) -> bool {
        regex!(bytes r"(?i)^\s*(?:error|fatal error|exception|[\w.]*[a-z](?-i:Error|Exception))\b[^\n]{0,200}:\s*$")
            .is_match(&self.previous_tail)
    }

    /// Whether the line is the value a test assertion expected, under its matcher's words
    /// (Gomega's `Expected` / `<string>: Error` / `to equal` / `<string>: OOMKilled`): what
    /// did not happen.
    fn expected_by_an_assertion(&self) -> bool {
        regex!(bytes r"^\s*(?:not )?to (?:equal|be equivalent to|contain(?: substring| element)?|match(?: regular expression)?)\s*$")
            .is_match(&self.previous_tail)
    }

    /// Whether `text` is what the writer expected, under an issue template's heading for it, in
    /// the words of an expectation (`the pod should switch to status "OOMKilled"`). A failure the
    /// writer reports meeting there is still met (`## Expected behavior` / `I got an error about
    /// OOM only in the backward step. `RuntimeError: CUDA out of memory. …``).
    fn expects(&self, text: &str) -> bool {
        self.expecting && regex!(r"(?i)\b(?:should|would|expect(?:s|ed)?|supposed to)\b").is_match(text)
    }

    /// Whether `line` goes on with a person's sentence that the line before
    /// began, and the sentence, read whole, is talk: a hand-wrapped paragraph
    /// (`… this can result in the host running` / `out of memory and require
    /// killing …`). Only a line without a log prefix that starts in lower
    /// case, after a line that ends inside a sentence, can go on with one.
    fn continues_talk(&self, line: &Line) -> bool {
        // (A `key=value` or `key: value` field opens a record, not a sentence's next words.)
        // (The wrap may indent it: Ardour's `This might cause Ardour to run out of memory
        // before your system runs` / `         out of memory. You can view …`.)
        let text = line.text.trim_start();
        // (Nor does an exception's dotted class after a frame's code: Ray's `raise
        // RayOutOfMemoryError(` / `ray.memory_monitor.RayOutOfMemoryError: More than 95% …`.)
        if line.prefixed
            || !text.starts_with(|c: char| c.is_ascii_lowercase())
            || regex!(r"^[\w.-]+[=:]\S|^(?:[A-Za-z_]\w*\.)+[A-Z]\w*(?:Error|Exception)\b").is_match(text)
        {
            return false;
        }
        let before = String::from_utf8_lossy(&self.previous_tail);
        let before = before.trim_end();
        // (A rule of `=` ends a header, not a sentence: Erlang's `=WARNING REPORT==== 6-May-2019::03:56:36
        // ===` before RabbitMQ's `memory resource limit alarm set on node …`.)
        if before.is_empty()
            || before.ends_with(['.', '!', '?', ':', ';', '`', '"', ')', ']', '}'])
            || before.ends_with("==")
        {
            return false;
        }
        // The sentence's start on the line before: after its last full stop.
        let start = regex!(r"[.;!?]\s+").find_iter(before).last().map_or(0, |m| m.end());
        let joined = format!("{} {}", &before[start..], text);
        let whole = Line {
            number: line.number,
            text: joined.into(),
            repeats: line.repeats,
            prefixed: false,
            quoted: false,
            section: line.section,
        };
        general::read(&whole).is_some_and(|reading| reading.talk)
    }

    /// The line before and this one, joined, where a person's wrap split a failure's words
    /// over the two (`… an error:"ERROR: Memory allocation` / `failed for WALL in the routine
    /// INIT"`, NVIDIA's `… requested more GPU memory than is` / `available in the system.`):
    /// neither holds them alone, though the second may hold an anchor. Only a line that starts in
    /// lower case, after one that ended inside a sentence, can go on with one; the sentence is
    /// taken from its start.
    fn straddled(&self, raw: &[u8]) -> Option<String> {
        /// How much of each side of the break the failure's words may take.
        const SIDE: usize = 40;
        if !raw.first().is_some_and(u8::is_ascii_lowercase) {
            return None;
        }
        let before = self.previous_tail.trim_ascii_end();
        if !before.last().is_some_and(u8::is_ascii_alphanumeric) {
            return None;
        }
        let end_before = &before[before.len().saturating_sub(SIDE)..];
        let mut window = end_before.to_vec();
        window.push(b' ');
        window.extend_from_slice(&raw[..raw.len().min(SIDE)]);
        if !general::mentions(&window)
            || general::has_failure_words(end_before)
            || general::has_failure_words(raw)
            || !general::has_failure_words(&window)
        {
            return None;
        }
        let before = String::from_utf8_lossy(before);
        let start = regex!(r"[.;!?]\s+").find_iter(&before).last().map_or(0, |m| m.end());
        let (before, raw) = (&before[start..], String::from_utf8_lossy(raw));
        let spaced = format!("{before} {raw}");
        // A line as wide as a terminal may have been cut inside a word: read joined, the words
        // give a figure more (a WordPress debug.log's `… Allowed memory size of 268435456 by` /
        // `tes exhausted (tried to allocate 262144 bytes) …`).
        if self.previous_raw_wrapped {
            let tight = format!("{before}{raw}");
            if general::count_sizes(&tight) > general::count_sizes(&spaced) {
                return Some(tight);
            }
        }
        Some(spaced)
    }

    /// The next physical line of a held message that no parser knows: a
    /// wrapped sentence or the message's own next line (not a new record,
    /// a traceback frame, or a failure with words of its own) adds its sizes.
    fn continued_preamble(&mut self, line: &Line) -> bool {
        let Some(preamble) = self.preamble.as_mut() else { return false };
        // (A fence opens a quote: what it holds is no more of the sentence before it. A Markdown
        // quote's mark alone is no record's prefix: FluidX3D's `> Error: Device … does not have
        // enough memory.` / `> |  Allocating another 8680 MB would use …`.)
        // (A prefixed line is a record of its own, unless the same program printed it in the
        // same second of the log's clock: the Android emulator's `emulator: The memory needed by
        // this AVD exceeds the max …` / `emulator: AVD      RAM size = 1536 MB`, each under the
        // Eclipse console's `[2016-01-05 00:22:11 - Emulator]`.)
        let same_record = preamble.second == self.clock.second && same_program(&preamble.text, &line.text);
        if (line.prefixed && !line.quoted && !same_record)
            || line.is_blank()
            || line.text.trim_start().starts_with("```")
            || preamble.continued >= MAX_CONTINUATION_LINES
            || general::is_frame(&line.text)
            || general::writer_speaks(&line.text)
        {
            return false;
        }
        if triggers(line.text.as_bytes()) && detect(line).is_some() {
            return false;
        }
        if let Some(next) = general::read(line).filter(|next| next.statement) {
            // The same message, whatever its figures, under another record's head (HTCondor's
            // `1051049.0 dbrown … put on hold … due to memory usage 3250000.`, after job
            // 1050981.0's; ESMFold's `Failed (CUDA out of memory) on sequence hipAB-900 of length
            // 918.`, then hipAB-1050's) is that record's own.
            // (And whatever ends it: bcc's `… loadavg: 1.58 0.79 0.58 1/506 13239.` after
            // `… 2/506 13238`.)
            let message = |text: &str, at: usize| {
                text.get(at..).map(|message| {
                    regex!(r"\d+").replace_all(message.trim_end().trim_end_matches(['.', ';', '!']), "#").into_owned()
                })
            };
            let again = message(&line.text, next.at) == message(&preamble.text, preamble.reading.at);
            // (So is the same program's next failure under its tag: PX4's `nsh: mount: mount
            // failed: Out of memory` / `nsh: mkfatfs: mkfatfs failed: Out of memory`.)
            if again
                || !preamble.reading.covers(&next)
                || same_table(&preamble.text, &line.text)
                || same_program(&preamble.text, &line.text)
            {
                return false;
            }
        }
        preamble.reading.continue_with(
            &String::from_utf8_lossy(&self.previous_tail),
            &line.text,
            self.previous_raw_wrapped,
        );
        preamble.continued += 1;
        preamble.last = line.number;
        if let Some(incident) = &mut self.incident {
            incident.last_line = line.number;
        }
        true
    }

    /// Starts the message a family detected, and each copy of its head glued after it on the
    /// same line: ranks that print at once run their messages together (CodeGen2's
    /// `… PYTORCH_HIP_ALLOC_CONFHIP out of memory. Tried to allocate 576.00 MiB (GPU 1; …`
    /// after GPU 3's), and each is a failure of its own. A line is split [`MAX_GLUED`] times at
    /// most, so that a line of a megabyte costs a bounded number of copies.
    fn start_each(&mut self, mut detected: Detected, mut line: Line) {
        for _ in 0..MAX_GLUED {
            let Some(at) = glued_at(&line.text, &detected.key) else { break };
            let text = std::mem::take(&mut line.text);
            line.text = text[..at].to_string().into();
            let rest = Line { text: text[at..].to_string().into(), ..line.clone() };
            if let Some(first) = detect(&line) {
                self.start(first, &line);
                self.close(false);
            }
            line = rest;
            let Some(next) = detect(&line) else { return };
            detected = next;
        }
        self.start(detected, &line);
    }

    fn start(&mut self, detected: Detected, line: &Line) {
        let Detected { mut event, block, key, tentative } = detected;
        let reading = general::read(line);
        // A person's sentence about a failure (`In case the process is being
        // killed by the OOM killer, …`), not a record of one: no event.
        if block.is_none()
            && !line.prefixed
            && (reading.as_ref().is_some_and(|reading| reading.talk) || self.continues_talk(line))
        {
            return;
        }
        // A family that knows the framework from the message itself (CuPy) is believed first.
        event.framework = event.framework.or(self.framework);
        // The family's reading first; what the general reader finds besides, it keeps.
        if let Some(reading) = &reading {
            general::refine(&mut event, reading);
        }
        // Two records of one program, each under its tag (the kernel's `kernel: Out of memory
        // and no killable processes...` that ends one kill, then `kernel: systemd invoked
        // oom-killer` that starts the next), are two failures, not a title and its message.
        if self.preamble.as_ref().is_some_and(|preamble| same_program(&preamble.text, &line.text)) {
            self.flush_preamble();
        }
        let preamble = self.preamble.take();
        if let Some(preamble) = &preamble {
            general::refine(&mut event, &preamble.reading);
        }
        // A code the log states wins over the one the parser implied.
        let preamble = preamble.as_ref().map_or("", Preamble::message);
        if let Some(code) = error_code(&line.text).or_else(|| error_code(preamble)) {
            event.error_code = Some(code);
        }
        let before_message = line.text.trim_end().strip_suffix(key.as_str()).unwrap_or("");
        if let Some(named) = exception(before_message).or_else(|| exception(preamble)) {
            event.exception = Some(named);
        }
        if let Some(at) = self.repeat_of(&key, &event, self.clock.second) {
            self.fold_repeat(at, &mut event, line.repeats);
            let first = &self.events[at];
            if let Some(incident) = &mut self.incident {
                incident.last_line = line.number;
            }
            if let Some(block) = block {
                let target = if first.has_report() { Target::Discard(Box::new(event)) } else { Target::Event(at) };
                let last_wrapped = false;
                self.open = Some(Open { target, block, taken: 0, last_cut: false, last_wrapped, tentative: false });
            }
            return;
        }
        // A report's body without its header, right after a device's failure of the same
        // incident that has no report yet (the TPU runtime's `[OOM Summary: … Allocator
        // stats:`, then `Limit:` and `InUse:`), is that failure's report, not one of its own.
        if event.truncated && block.is_some() {
            if let Some(at) = self.reportless_device_failure(&event) {
                self.events[at].take_report_of(event);
                self.open = block.map(|block| Open {
                    target: Target::Event(at),
                    block,
                    taken: 0,
                    last_cut: false,
                    last_wrapped: false,
                    tentative: false,
                });
                return;
            }
        }
        // A body that only counts failures (PyTorch's memory summary) right after a failure of
        // its kind counts that failure.
        if event.truncated && block.is_none() && self.near_failure_of(&event) {
            return;
        }
        let at = self.push(event, (!tentative).then_some(key), self.clock.second);
        let last_cut = looks_cut(&line.text);
        let last_wrapped = self.last_raw_wrapped;
        self.open =
            block.map(|block| Open { target: Target::Event(at), block, taken: 0, last_cut, last_wrapped, tentative });
    }

    /// The earlier event `event` repeats: one of the same message, unless their requests
    /// differ (`radv/amdgpu: Failed to allocate a buffer:` over another `size : N bytes`
    /// line is another failure; a message printed again states the same facts), or a failure
    /// of another request came between (RKNN's `failed to malloc npu memory, size: 80`, then
    /// `size: 1792`, then `size: 80` again: each call failed on its own), or it failed at
    /// another site.
    fn repeat_of(&self, key: &str, event: &OomEvent, second: u64) -> Option<usize> {
        let requested = event.requested_bytes;
        let other_request_between = |at: usize| {
            self.events.len() > at + 1
                && requested.is_some()
                && self.events.last().and_then(|last| last.requested_bytes).is_some_and(|last| Some(last) != requested)
        };
        // (Nor one a later second of the log's clock stamps: Boncode's `Exception of type
        // 'System.OutOfMemoryException' was thrown.` under `19:05:48 … ERROR`, then again under
        // `19:08:30 … ERROR`.)
        // (A message read before any timestamp, a title's, is of no second.)
        let same_second = |first: u64| first == 0 || first == second;
        // (Nor one that failed at another site of the code: TensorFlow's `OP_REQUIRES failed at
        // concat_op.cc:161 : … OOM when allocating tensor with shape[173107136,50] …`, then the
        // same tensor's at `matmul_op.cc:481`.)
        let site =
            |message: &str| regex!(r"\bfailed at ([\w./-]+:\d+)").captures(message).map(|found| found[1].to_string());
        let other_site = |at: usize| {
            let (first, this) = (site(&self.events[at].message), site(&event.message));
            first.is_some() && this.is_some() && first != this
        };
        self.by_key.get(key).copied().filter(|&(_, first)| same_second(first)).map(|(at, _)| at).filter(|&at| {
            let first = self.events[at].requested_bytes;
            (first.is_none() || requested.is_none() || first == requested)
                && !other_request_between(at)
                && !other_site(at)
        })
    }

    /// Counts `event` as a repeat of the event at `at`; a repeat can end the traceback that
    /// names the user's line.
    fn fold_repeat(&mut self, at: usize, event: &mut OomEvent, repeats: u64) {
        self.last_failure_line = event.line;
        self.context.apply(event);
        let first = &mut self.events[at];
        first.occurrences += repeats;
        first.take_figures_of(event);
        first.user_frame = first.user_frame.take().or(event.user_frame.take());
    }

    /// The open incident's last event, if it is a device's allocation failure that states
    /// neither its pool's limit nor its use and lists no allocations, close enough before
    /// `body` to be its failure.
    fn reportless_device_failure(&self, body: &OomEvent) -> Option<usize> {
        let incident = self.incident.as_ref()?;
        let &at = incident.events.last()?;
        let failure = self.events.get(at)?;
        let device = matches!(failure.kind, Kind::RuntimeAllocationFailure | Kind::BfcAllocatorOom);
        let figures = failure.capacity_bytes.is_some()
            || failure.used_bytes.is_some()
            || !failure.allocations.is_empty()
            || !failure.bins.is_empty();
        (device && !figures && !failure.truncated && incident.is_near(body.line)).then_some(at)
    }

    /// Whether the open incident's last event is a failure of `body`'s kind close enough
    /// before it to be the one `body` tells of.
    fn near_failure_of(&self, body: &OomEvent) -> bool {
        let Some(incident) = self.incident.as_ref() else { return false };
        let failure = incident.events.last().and_then(|&at| self.events.get(at));
        failure.is_some_and(|failure| failure.kind == body.kind && incident.is_near(body.line))
    }

    /// Adds a new event, to the open incident if it belongs to the same failure; `second` is
    /// the one of the log's clock it was read in.
    fn push(&mut self, mut event: OomEvent, key: Option<String>, second: u64) -> usize {
        self.context.apply(&mut event);
        let last_failure_line = std::mem::replace(&mut self.last_failure_line, event.line);
        if let Some(at) = self.header_ended_by(&event) {
            let line = event.line;
            self.events[at] = event;
            if let Some(incident) = &mut self.incident {
                incident.last_line = incident.last_line.max(line);
            }
            if let Some(key) = key {
                self.by_key.insert(key, (at, second));
            }
            return at;
        }
        if let Some(at) = self.thrown_by(&event, last_failure_line) {
            let failure = &mut self.events[at];
            if failure.kind == Kind::Unrecognised {
                failure.kind = event.kind;
            }
            failure.failure_words.append(&mut event.failure_words);
            failure.exception = failure.exception.take().or(event.exception);
            if let Some(incident) = &mut self.incident {
                incident.last_line = incident.last_line.max(event.line);
            }
            if let Some(key) = key {
                self.by_key.insert(key, (at, second));
            }
            return at;
        }
        if self.incident.as_ref().is_some_and(|incident| !incident.admits(&event, &self.events)) {
            self.end_incident();
        }
        let at = self.events.len();
        let line = event.line;
        self.events.push(event);
        let incident = self.incident.get_or_insert_with(incident::Gathering::default);
        incident.events.push(at);
        incident.last_line = incident.last_line.max(line);
        if let Some(key) = key {
            self.by_key.insert(key, (at, second));
        }
        at
    }

    /// The open incident's last event, if `event` is what it threw: a bare `bad_alloc` right
    /// under an allocation that failed with its size (GNU Radio's `gr::buffer::allocate_buffer:
    /// failed to allocate buffer of size 37500 KB`, then `terminate called after throwing an
    /// instance of 'std::bad_alloc'`) is one failure, the class its kind's evidence. (Not one
    /// under a backtrace of its own: llama.cpp's `ggml_aligned_malloc: insufficient memory …`,
    /// then the frames of an `operator new` elsewhere, then `… uncaught exception of type
    /// std::bad_alloc`.) `last_failure_line` is where the last failure, or its repeat, was read.
    fn thrown_by(&self, event: &OomEvent, last_failure_line: u64) -> Option<usize> {
        /// How far under the failed allocation its exception may be printed.
        const THROWN_WITHIN_LINES: u64 = 3;
        let incident = self.incident.as_ref()?;
        let &at = incident.events.last()?;
        let failure = self.events.get(at)?;
        let bare_throw = event.failure_words == ["bad_alloc"]
            && event.kind == Kind::HostOom
            && event.requested_bytes.is_none()
            && event.capacity_bytes.is_none();
        let sized_allocation = failure.requested_bytes.is_some()
            && matches!(failure.kind, Kind::Unrecognised | Kind::HostOom)
            && !failure.failure_words.iter().any(|words| words == "bad_alloc");
        let right_under = event.line > failure.line && event.line <= last_failure_line + THROWN_WITHIN_LINES;
        (bare_throw && sized_allocation && right_under).then_some(at)
    }

    /// The open incident's last event, if it is a notebook traceback's header that `event`
    /// ends: IPython opens a traceback with the exception's name (`MemoryError   Traceback
    /// (most recent call last)`) and ends it with the exception's message (`MemoryError:
    /// Unable to allocate …`), one failure that its last line tells best.
    fn header_ended_by(&self, event: &OomEvent) -> Option<usize> {
        let incident = self.incident.as_ref().filter(|incident| incident.is_near(event.line))?;
        let &at = incident.events.last()?;
        let header = self.events.get(at)?;
        let opened = regex!(r"^\s*([\w.]+)\s+Traceback \(most recent call last\)").captures(&header.message)?;
        let last_name = |name: &str| name.rsplit('.').next().unwrap_or(name).to_string();
        let named = last_name(&opened[1]);
        // (The exception's name, or the message it opens: `MemoryError: std::bad_alloc: …`.)
        let ends = event.exception.as_deref().is_some_and(|name| last_name(name) == named)
            || exception(&event.message).is_some_and(|name| last_name(&name) == named);
        (ends && event.line > header.line).then_some(at)
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
            if let Some(incident) = &mut self.incident {
                incident.events.retain(|&e| e != at);
            }
        }
    }

    /// What the log has moved past: a held line no message followed, an
    /// incident nothing was added to for a while.
    fn expire(&mut self, number: u64) {
        if self.preamble.as_ref().is_some_and(|p| number > p.last + PREAMBLE_REACH) {
            self.flush_preamble();
        }
        if self.open.is_none() && self.preamble.is_none() && self.incident.as_ref().is_some_and(|i| i.is_over(number)) {
            self.end_incident();
        }
    }

    /// The open incident is over: its events are explained and it is handed out.
    fn end_incident(&mut self) {
        let Some(gathering) = self.incident.take() else { return };
        self.by_key.clear();
        if gathering.events.is_empty() {
            return;
        }
        for &at in &gathering.events {
            if let Some(event) = self.events.get_mut(at) {
                explain::explain(event, &mut self.advice_texts);
            }
        }
        self.incidents.push(gathering.into_incident(&self.events));
    }

    /// A failure that no family's message followed becomes the general
    /// reader's event.
    fn flush_preamble(&mut self) {
        let Some(preamble) = self.preamble.take() else { return };
        if preamble.reading.memory_unnamed {
            // `"status": "RESOURCE_EXHAUSTED"` of an API's quota: no memory named, no memory failure.
            return;
        }
        let message = preamble.message();
        let line = Line {
            number: preamble.number,
            text: message.into(),
            repeats: preamble.repeats,
            prefixed: false,
            quoted: false,
            section: false,
        };
        let mut event = general::event(&line, &preamble.reading);
        if let Some(at) = self.repeat_of(message, &event, preamble.second) {
            self.fold_repeat(at, &mut event, preamble.repeats);
            return;
        }
        event.error_code = error_code(message);
        event.exception = exception(message.get(..preamble.reading.at).unwrap_or(message));
        let key = message.to_string();
        self.push(event, Some(key), preamble.second);
        if let Some(incident) = &mut self.incident {
            incident.last_line = incident.last_line.max(preamble.last);
        }
    }
}

/// Whether `raw` opens a list of what might have gone wrong (AFL's `[-] Oops, the program
/// crashed with one of the test cases provided. There are` / `several possible explanations:`,
/// then `- The current memory limit (1.00 GB) is too low for this program, causing it to die
/// due to OOM …`): its items are guesses, not failures met.
fn lists_guesses(raw: &[u8]) -> bool {
    // (Every line of a log comes here: one that does not end in a colon costs no search.)
    let raw = raw.trim_ascii_end();
    raw.ends_with(b":")
        && regex!(bytes r"(?i)\b(?:possible|probable|likely|potential)\s+(?:explanations?|causes?|reasons?)\b[^.!?]{0,40}:$")
            .is_match(raw)
}

/// Whether `raw` is a heading, and if it is, whether it opens what the writer expected (an
/// issue template's `**What you expected to happen**:`, `### Expected behavior`): `None` for
/// a line that is no heading.
fn expectation_heading(raw: &[u8]) -> Option<bool> {
    // (Every line of a log comes here: one that opens with no heading's mark costs no search.)
    if !matches!(raw.iter().find(|b| !b.is_ascii_whitespace()), Some(b'#' | b'*' | b'_')) {
        return None;
    }
    let heading = regex!(bytes r"^\s*(?:#{1,6}\s+.*|(?:\*\*|__)[^*_]{1,80}(?:\*\*|__)\s*:?\s*)$");
    if !heading.is_match(raw) {
        return None;
    }
    let expectation = regex!(
        bytes r"(?i)^[\s#*_]*(?:what (?:did )?you expect(?:ed)?(?: to happen)?|expected (?:behaviou?rs?|results?|outcomes?))\b\W*$"
    );
    Some(expectation.is_match(raw))
}

/// Whether two lines are rows of one table: each opens with a column (a word, then two spaces
/// or more) of the same shape, its digits aside (`kubectl get events`' `4m11s       Warning
/// Evicted …`, then `4m7s        Warning   Evicted …`): a row's failure is its own, not the
/// row above's next line.
fn same_table(first: &str, second: &str) -> bool {
    let column = |text| {
        regex!(r"^(\S{1,24}) {2,}\S")
            .captures(text)
            .map(|found| regex!(r"\d+").replace_all(&found[1], "#").into_owned())
    };
    column(first).is_some_and(|shape| column(second).as_deref() == Some(shape.as_str()))
}

/// Whether two lines open with the same program's tag (`kernel: `, `mysqld[812]: `) or the
/// same field of a program's report (deconwolf's `Reason: failed to allocate space for elist
/// ranges`, then `Reason: … rlist ranges`): not a severity's word or an exception's class.
fn same_program(first: &str, second: &str) -> bool {
    let tag = |text| {
        regex!(r#"^\s*["'`]?([A-Za-z][\w.-]*(?:\[\d+\])?):\s"#).captures(text).map(|found| found[1].to_string()).filter(
            |tag| {
                !regex!(
                    r"(?i)^(?:error|warning|warn|fatal|info|note|hint|debug|critical)$|(?:Error|Exception|Failure)$"
                )
                .is_match(tag)
            },
        )
    };
    tag(first).is_some_and(|tag_of_first| tag(second).as_deref() == Some(tag_of_first.as_str()))
}

/// Whether a raw line stops inside a word at a terminal's width (a long
/// line ending in a letter or digit, without a space).
fn is_wrapped(raw: &[u8]) -> bool {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    raw.len() >= WRAP_WIDTH && raw.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// The most messages [`Scanner::start_each`] splits from one line; the rest of a longer run
/// stays one message (the logs gathered show two on a line at most).
const MAX_GLUED: usize = 16;

/// Where in `text` a second message of the same head as `key` (the detected message to the
/// line's end) begins: the head is the message up to its first figure, long enough to be a
/// message's own words (`HIP out of memory. Tried to allocate `).
fn glued_at(text: &str, key: &str) -> Option<usize> {
    const SHORTEST_HEAD: usize = 16;
    let head = &key[..key.find(|c: char| c.is_ascii_digit())?];
    if head.trim().len() < SHORTEST_HEAD {
        return None;
    }
    // (A key that is not the line's end names the message otherwise: nothing to find in it.)
    let start = text.trim_end().strip_suffix(key)?.len();
    key[head.len()..].find(head).map(|again| start + head.len() + again)
}

/// Asks every family, most specific first.
fn detect(line: &Line) -> Option<Detected> {
    host::detect(line)
        .or_else(|| sparsecore::detect(line))
        .or_else(|| tpu_compile::detect(line))
        .or_else(|| cupy::detect(line))
        .or_else(|| tpu_runtime::detect(line))
        .or_else(|| gpu::detect(line))
        .or_else(|| bfc::detect(line))
        .or_else(|| triton::detect(line))
        .or_else(|| pytorch::detect(line))
}

/// The framework a line shows by its logging path or its exception:
/// TensorFlow's own tree (`tensorflow/core/…`, `local_xla`), JAX's
/// (`jaxlib`, `XlaRuntimeError`, XLA built as jaxlib's dependency), PyTorch's.
fn framework(raw: &[u8]) -> Option<Framework> {
    let found = regex!(bytes concat!(
        r"(external/org_tensorflow/|jaxlib|jax\.|XlaRuntimeError|external/xla/xla/)",
        r"|(tensorflow/core/|tensorflow/python|local_xla|OP_REQUIRES|ResourceExhaustedError|tensorflow/stream_executor)",
        r"|(torch[._/]|PYTORCH_)",
    ))
    .captures(raw)?;
    [Framework::Jax, Framework::TensorFlow, Framework::PyTorch]
        .into_iter()
        .zip(1..)
        .find_map(|(framework, group)| found.get(group).map(|_| framework))
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

//! The general reader: any line that states a memory failure, in any stack's
//! words, read without knowing the stack.
//!
//! A line is a failure when it holds words of the failure vocabulary
//! ([`vocabulary::FAILURE_WORDS`]) and is an error record rather than a
//! sentence about memory. Its sizes are every number with a unit (or a byte
//! count the words next to it single out), each given the role the words
//! next to it say ([`vocabulary::SIZE_ROLES`]). Its kind is the closest one
//! the words and the place they name allow, `unrecognised` only when nothing
//! fits. The family parsers (`pytorch`, `bfc`, `tpu_*`, …) refine this
//! reading with what they know; what it found and they did not stays.

use std::sync::LazyLock;

use regex::Regex;

use super::event::{Kind, OomEvent};
use super::line::Line;
use super::size::{self, UNITS};
use super::vocabulary::{self, Closest, Place, Role, Scope, Side, Strength, FAILURE_WORDS};

/// How a source file's name ends (`alloc.c`, `device_cuda_module.cc`, `train.py`): a
/// `file:line` after it is a location in code, not a figure.
macro_rules! source_file_extension {
    () => {
        r"\.(?:c|cc|cpp|cxx|h|hpp|cu|py|rs|go|java|js|ts|m|mm)"
    };
}

/// A message's reading by the vocabulary alone.
#[derive(Debug, Clone)]
pub(super) struct Reading {
    /// The vocabulary rows that match, in table order.
    pub words: Vec<&'static str>,
    /// The closest kind the words and the place they name allow.
    pub kind: Kind,
    /// An error record, not talk about memory.
    pub statement: bool,
    /// A sentence about memory failures (advice, a condition, a person
    /// writing), whatever other words the line holds.
    pub talk: bool,
    pub sizes: Sizes,
    pub memory_space: Option<String>,
    /// Where the failure words start in the line.
    pub at: usize,
    /// What the failure words say ran out, where they name a part of
    /// memory (`out of JVM Metaspace`): a capacity whose words name it wins
    /// over another the message states (the heap's, beside the Metaspace's).
    pub ran_out: Option<String>,
    /// Only words that other resources share (`RESOURCE_EXHAUSTED`), and
    /// no memory named yet: no memory failure unless the message's next
    /// lines, or a family's message after it, name memory.
    pub memory_unnamed: bool,
}

/// The sizes of a message, by role; the first of each role wins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Sizes {
    pub requested: Option<u64>,
    pub capacity: Option<u64>,
    pub free: Option<u64>,
    pub used: Option<u64>,
    pub exceeded_by: Option<u64>,
}

impl Sizes {
    fn slot(&mut self, role: Role) -> Option<&mut Option<u64>> {
        Some(match role {
            Role::Requested => &mut self.requested,
            Role::Capacity => &mut self.capacity,
            Role::Free => &mut self.free,
            Role::Used => &mut self.used,
            Role::ExceededBy => &mut self.exceeded_by,
            Role::Other => return None,
        })
    }

    /// Fills the roles still empty from `other`.
    fn fill(&mut self, other: Sizes) {
        self.requested = self.requested.or(other.requested);
        self.capacity = self.capacity.or(other.capacity);
        self.free = self.free.or(other.free);
        self.used = self.used.or(other.used);
        self.exceeded_by = self.exceeded_by.or(other.exceeded_by);
    }

    pub(super) fn is_empty(&self) -> bool {
        *self == Sizes::default()
    }
}

/// Whether a raw line holds any word the vocabulary starts with: the
/// cheap test every line of a log goes through.
pub(super) fn mentions(raw: &[u8]) -> bool {
    vocabulary::anchored(raw)
}

/// Whether a raw piece of a line holds failure words, read or not: a test that is
/// dearer than [`mentions`] and cheaper than [`read`].
pub(super) fn has_failure_words(raw: &[u8]) -> bool {
    mentions(raw) && vocabulary::compiled().set.is_match(raw)
}

/// The line's reading, if it holds failure words.
pub(super) fn read(line: &Line) -> Option<Reading> {
    let reading = read_from(line, 0)?;
    if reading.statement || !reading.talk {
        return Some(reading);
    }
    // A sentence that talks (a hedge, a complaint) may be followed by the program's own record,
    // in a sentence of its own (Bambu Studio's `The system may have run out of memory, or a bug
    // may have occurred. bad allocation`), or by what was met (ONNX Runtime's `… consumes too
    // much memory. … If deployed on CPU, the inference failed due to `std::bad_alloc`.`).
    let next_sentence = sentence_around(&line.text, reading.at).end;
    let opens_its_sentence = |later: &Reading| {
        line.text[sentence_around(&line.text, later.at).start..later.at].chars().all(|c| !c.is_alphanumeric())
    };
    match read_from(line, next_sentence) {
        Some(later) if later.statement && (opens_its_sentence(&later) || met_right_before(&line.text, later.at)) => {
            Some(later)
        }
        // (Or, in the same sentence, by what was met after the complaint: js_of_ocaml's title
        // `Latest master takes up too much memory and fails with Fatal error: out of memory`.)
        _ => match read_from(line, reading.at + 1) {
            Some(later) if later.statement && met_right_before(&line.text, later.at) => Some(later),
            _ => Some(reading),
        },
    }
}

/// Whether the words of meeting a failure stand right before `at` in its sentence, past a
/// name's end (`std::` before `bad_alloc`) or a record's error mark (`… and fails with Fatal
/// error: out of memory`).
fn met_right_before(text: &str, at: usize) -> bool {
    let opening = &text[sentence_around(text, at).start..at];
    let before_name = opening.trim_end_matches(|c: char| c.is_alphanumeric() || "_:.".contains(c));
    let before_record =
        regex!(r"(?i)\b(?:fatal\s+)?error\s*:\s*$|\b\w*(?:Error|Exception)\s*:\s*$").replace(opening, "");
    let met = &vocabulary::compiled().met;
    met.is_match(before_name.as_bytes()) || met.is_match(before_record.as_bytes())
}

/// [`read`] of the failure words that start at `from` or after.
fn read_from(line: &Line, from: usize) -> Option<Reading> {
    let text = line.text.as_ref();
    if !mentions(text.as_bytes()) {
        return None;
    }
    let tables = vocabulary::compiled();
    let mut matched: Vec<usize> = tables.set.matches(text.as_bytes()).into_iter().collect();
    let first_at =
        |row: usize| tables.rows[row].find_iter(text.as_bytes()).find(|m| m.start() >= from).map(|m| m.start());
    if from > 0 {
        matched.retain(|&row| first_at(row).is_some());
    }
    // Words that are part of a command-line flag or a file's path name it; the rows with
    // words outside any flag or path are the line's, if there are any.
    let stated = |row: usize| {
        tables.rows[row]
            .find_iter(text.as_bytes())
            .find(|m| m.start() >= from && !in_flag(text, m.start(), m.end()) && !in_path(text, m.start()))
    };
    let outside: Vec<usize> = matched.iter().copied().filter(|&row| stated(row).is_some()).collect();
    let only_in_names = outside.is_empty();
    if !only_in_names {
        matched = outside;
    }
    let first_row = *matched.first()?;
    let at = matched
        .iter()
        .filter_map(|&row| if only_in_names { first_at(row) } else { stated(row).map(|m| m.start()) })
        .min()
        .unwrap_or(0);
    // Words other resources share are memory's only where memory is named,
    // on this line or on the next lines of its message.
    let shared_words_only = matched.iter().all(|&row| FAILURE_WORDS[row].strength == Strength::Shared);
    let memory_unnamed =
        shared_words_only && !tables.memory_named.is_match(&text.as_bytes()[..window_end(text, at + READ_AFTER)]);
    let token = matched.iter().any(|&row| FAILURE_WORDS[row].strength != Strength::Phrase);
    // What follows the failure words far away is not their message (a line
    // may run on for megabytes): it is not read, so a line costs the same
    // however long it is.
    let text = &text[..window_end(text, at + READ_AFTER)];
    let sentence = sentence_around(text, at);
    // Failure words about another resource (a pty, a disk, an API quota)
    // make no memory failure.
    // (A dotted name is code's, not the resource's: `cltorch.tests.storage.test_get`.)
    // (Dotted names are taken out only where another resource is named at all, so that
    // most lines pay for no copy.)
    let rest = &text[at..sentence.end];
    // Failure words that state no shortage: the memory is another thing, or the failure
    // another error.
    if tables.no_shortage.iter().any(|(scope, pattern, unless)| {
        let scope = match scope {
            Scope::Words => rest,
            Scope::Before => &text[..at],
            Scope::Line => text,
        };
        pattern.is_match(scope.as_bytes()) && !unless.as_ref().is_some_and(|unless| unless.is_match(rest.as_bytes()))
    }) {
        return None;
    }
    if tables.other_resource.is_match(rest.as_bytes()) {
        let rest = regex!(r"\w+(?:\.\w+)+").replace_all(rest, " ");
        // Resources in general may be memory, as the next sentence tells (LM Studio's `… due to
        // insufficient system resources. Under the current settings, this model requires
        // approximately 273.25 GB of memory, …`).
        let only_resources = |rest: &str| {
            tables
                .other_resource
                .find_iter(rest.as_bytes())
                .all(|found| found.as_bytes().eq_ignore_ascii_case(b"resources"))
        };
        let next_names_memory = || {
            sentence.end < text.len()
                && tables.memory_named.is_match(text[sentence_around(text, sentence.end)].as_bytes())
        };
        // (So are they where an allocation's own error names them: X11's `BadAlloc (insufficient
        // resources for operation)`, `EGL_BAD_ALLOC: EGL failed to allocate resources …`.)
        let named_allocation = matched.iter().any(|&row| FAILURE_WORDS[row].strength == Strength::Token);
        if tables.other_resource.is_match(rest.as_bytes())
            && !tables.memory_named.is_match(rest.as_bytes())
            && !(only_resources(&rest) && (named_allocation || next_names_memory()))
        {
            return None;
        }
    }
    let opening = &text[sentence.start..at];
    let clause = clause_around(text, sentence.clone(), at);
    // (German quotes with `„…“` and `»…«`: `Fehler durch Speicherüberlauf (»RAM exceeded«)`.)
    // A message quoted in a person's sentence is what the program printed (`for any process,
    // 'not enough memory' is appearing`, `this error which is "RuntimeError: CUDA error:out of
    // memory"`, `shows error message "Model loading was stopped due to …"`).
    // (Its place may come first, in any case, where the writer met it:
    // [`vocabulary::QUOTED_AFTER_MEETING`].)
    // In backticks, only a record that opens with its error (`Here you have `RuntimeError: CUDA
    // failed with error out of memory` error.`) or its date (Nomad's `… just before a node failed
    // `2017/04/20 18:09:15.690974 [WARN] client: … cannot allocate memory``), or what a program
    // is said to print (koboldcpp's `it says `failed to allocate 10965.24 MiB of pinned
    // memory``), maybe after the device it names (`and then display "CUDA out of memory"`): a
    // name in backticks is code (Zig's `error.OutOfMemory`).
    let quote = regex!(&[
        r#"["'\u{201c}\u{2018}\u{201e}\u{ab}\u{bb}]\s*(?:(?:[A-Za-z_][\w.]*(?:Error|Exception):|(?i:error|fatal)\b)[^"'\u{201d}\u{2019}]*)?$|(?i:\b(?:displays?|displayed|shows?|showed|says?|said|prints?|printed|reports?|reported|gets?|got|throws?|threw|raises?|raised)\s+)["\u{201c}]\s*(?:CUDA|HIP|GPU|MPS|XPU)\s+$|`(?:[A-Za-z_][\w.]*(?:Error|Exception):[^`]*|(?i:error|fatal)(?:[^\w.`][^`]*)?|\d{4}[/-]\d\d[/-]\d\d[ T][^`]*)$|(?i:\berror\s+message\s*:?\s*)["\u{201c}][^"\u{201d}]*$|(?i:\b(?:says?|said|saying|shows?|showed|showing|prints?|printed|printing|reports?|reported|outputs?|errors?|messages?|exceptions?)\s*:?\s+)`[^`]*$"#,
        vocabulary::QUOTED_AFTER_MEETING,
    ]
    .join("|"))
    .find(&text[..at])
    .filter(|quote| quote.start() >= sentence.start)
    // A yes-no question asks whether a program prints the message (`Does perl print "Out of
    // memory"?`): nobody is said to have met it.
    .filter(|_| !regex!(r"(?i)^\W*(?:does|do|did|can|could|will|would|should|is|are)\b[^?]*\?").is_match(&text[sentence.clone()]))
    .map(|quote| quote.range())
    // A message in backticks has words: one name alone is code (`the exception `MemoryError``).
    .filter(|quote| {
        let mark = quote_mark(&text[quote.clone()]);
        !text[quote.start + mark..].starts_with('`')
            || text[quote.start + mark + 1..].split('`').next().is_some_and(|quoted| quoted.trim().contains(' '))
    });
    // Failure words that are an exception's class and its colon open a record: a bare mark before
    // them quotes one only there (`I've seen an "OutOfMemoryError: Java heap space" in the logs
    // so maybe …`), and the class's namespace before them opens it too (Vintage Story's
    // `System.OutOfMemoryException: Your graphics card ran out of memory!`, whose `Your` is the
    // program's).
    let opens_with_class = regex!(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s*\S").is_match(&text[at..]);
    let namespaced_class = opens_with_class && regex!(r"^\W*(?:[A-Za-z_]\w*\.)+$").is_match(opening);
    let record = opens_message(opening)
        || tables.error_marks.is_match(opening.as_bytes())
        || namespaced_class
        || thrown_of_type(opening);
    // The failure's own words, the longest of the rows found where they start.
    let words = matched
        .iter()
        .filter_map(|&row| tables.rows[row].find_at(text.as_bytes(), at))
        .filter(|found| found.start() == at)
        .max_by_key(|found| found.end())
        .and_then(|found| text.get(found.range()))
        .unwrap_or("");
    // A failure stated in a sentence before (COLMAP's `ERROR: Feature matching failed. This is
    // probably caused by insufficient GPU memory.`): what follows gives its cause.
    let failed_before = tables.error_marks.is_match(&text.as_bytes()[..sentence.start]);
    let spot = Spot { text, at, words, sentence: sentence.clone(), clause, section: line.section, failed_before };
    let talk = only_in_names || talks(&spot, record, quote.is_some()) || names_a_unit(line, at);
    // A quoted record in a sentence that talks (`what issues can lead to this error which is
    // "RuntimeError: …"?`) is read on its own.
    // (Not a string that code prints: `printf("Fatal: failed to allocate %zu bytes …")`.)
    let code_prints = |quote: &std::ops::Range<usize>| tables.code.is_match(&text.as_bytes()[..quote.start + 1]);
    // (Nor one that did not happen: `Instead of a user friendly "out of memory" error, …`; nor
    // the value an assertion got.)
    let negated = |quote: &std::ops::Range<usize>| {
        tables.negated.is_match(&text.as_bytes()[..quote.start + 1])
            || text.get(..quote.start + 1).is_some_and(assertion_got)
    };
    // (Nor one that may come: `Failure messages such as … “Out of memory” can occur.`)
    let may_come = || regex!(vocabulary::QUOTE_MAY_COME).is_match(&text[at..]);
    if let Some(quote) = quote.clone().filter(|quote| {
        talk && (quote.len() > 1 || opens_with_class) && !code_prints(quote) && !negated(quote) && !may_come()
    }) {
        // (The quote starts after its mark, past the words that say what it is: `it says `…``.)
        let mark = quote.start + quote_mark(&text[quote.clone()]);
        let from = mark + text[mark..].chars().next().map_or(1, char::len_utf8);
        let rest = &text[at..];
        let to = at
            + rest.find(['"', '\'', '\u{201d}', '\u{2019}', '\u{201c}', '\u{ab}', '\u{bb}', '`']).unwrap_or(rest.len());
        if let Some(reading) = read_part(line, text, from..to) {
            return Some(reading);
        }
    }
    // A record after a colon may follow the writer's words that name its failure (a title's
    // `… generates an out of memory error: RuntimeError: std::bad_alloc`): read on its own.
    // So may a record that the failure words open, an exception's class and its own failure
    // message with the figures a program prints (scanpy's `But now I believe the main reason is
    // MemoryError : Unable to allocate 9.90 GiB for an array with shape …`), unless it did not
    // happen. (A class and words alone may be named: a pull request's `Closes
    // #[torch.OutOfMemoryError: CUDA out of memory. …]`.)
    if talk {
        let class_message = regex!(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception) ?:\s+").find(&text[at..]);
        let pasted = class_message.is_some_and(|message| {
            let message = &text[at + message.end()..];
            tables.set.is_match(message.as_bytes()) && size_token().is_match(message)
        });
        if pasted && at > 0 && !tables.negated.is_match(opening.as_bytes()) {
            if let Some(reading) = read_part(line, text, at..text.len()) {
                return Some(reading);
            }
        }
        let record = regex!(r":\s+((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s)").captures(&text[at..]);
        if let Some(record) = record.and_then(|found| found.get(1)) {
            if let Some(reading) = read_part(line, text, at + record.start()..text.len()) {
                return Some(reading);
            }
        }
    }
    // Code that names the failure may come before its record on the same line (a
    // title pasting `raise ValueError("No available memory …") ValueError: No available
    // memory …`): the record after the code's sentence is the line's.
    if talk && tables.code.is_match(&text.as_bytes()[..at]) && sentence.end < text.len() {
        if let Some(reading) = read_part(line, text, sentence.end..text.len()) {
            return Some(reading);
        }
    }
    let message_from = message_start(text, at);
    let message = &text[message_from..];
    let ran_out = regex!(r"(?i)\bout of (?:JVM |Java )?(metaspace|heap|class space|shared memory|swap)\b")
        .captures(&text[at..])
        .map(|found| found[1].to_string());
    let kind = closest(FAILURE_WORDS[first_row].closest, message);
    let memory_space = match kind {
        Kind::HostOom => Some("host".to_string()),
        Kind::TritonOutOfResources => Some("shared memory".to_string()),
        _ => device(message),
    };
    let mut sizes = sizes_from(message, 0, ran_out.as_deref());
    // A program's record may state its figures in a sentence before the failure's (TensorRT's
    // `[W] Tactic Device request: 448MB Available: 425MB. Device memory is insufficient …`).
    let progress_before = message_from > clause_start(&text[..at]);
    if sizes.is_empty() && line.prefixed && !progress_before {
        sizes = sizes_from(text, 0, ran_out.as_deref());
    }
    // The cause of a failure the sentence before states (COLMAP's `ERROR: Feature matching
    // failed. This is probably caused by insufficient GPU memory.`).
    // (Or its hedged cause alone: gunicorn's `[ERROR] Worker (pid:30) was sent SIGKILL! Perhaps out
    // of memory?`.) (In German too: PrusaSlicer's `PrusaSlicer ist auf einen Fehler gestoßen. Es
    // wurde wahrscheinlich dadurch verursacht, dass der Speicher knapp wird.`)
    let cause_of_failure_before =
        regex!(r"(?i)\b(?:caused by|due to|because(?: of)?|probably|likely|possibly|perhaps|maybe|verursacht,? dass(?: der| die| das)?)\s+$")
            .is_match(&text[..at])
            && failed_before;
    // (A frame glued before the record by a column of spaces, where a paste lost its line breaks,
    // is another line's: llama.cpp's `11: 0x76e9762a9c __libc_init` and padding, then `libc++abi:
    // terminating due to uncaught exception of type std::bad_alloc`.)
    const COLUMN_GAP: &str = "        ";
    let own_line = &text[text[..at].rfind(COLUMN_GAP).map_or(0, |gap| gap + COLUMN_GAP.len())..];
    let statement = !talk
        && (!is_frame(own_line) || throws_bad_alloc(own_line))
        && (token
            || line.prefixed
            || quote.is_some()
            || cause_of_failure_before
            // A state the sentence opens with (SQL Server's `There is insufficient system memory
            // in resource pool 'default' to run this query.`), maybe in a bytes literal.
            || regex!(r#"(?i)^\W*(?:b["'])?there (?:is|was) $"#).is_match(opening)
            // A program's result after the step it printed in progress (hashcat's `Generated
            // bitmap tables...Insufficient memory available`).
            || regex!(r"\w(?:\.{3}|\u{2026})\s*$").is_match(&text[..at])
            // A program's report of what it met, without a subject (ComfyUI's `Got an OOM,
            // unloading all loaded models.`).
            || regex!(r"(?i)^\W*(?:got|hit|caught|encountered) (?:an? |the )?$").is_match(opening)
            // The message after the class of what was thrown, as a writer types it (Coqui TTS's
            // `but then it threw runtimeError bad allocation`).
            || regex!(vocabulary::MET_CLASS_TYPED).is_match(opening)
            // What a program does to a thing after it ran out (Gradle's `Daemon will be stopped at
            // the end of the build after running out of JVM memory`).
            || regex!(r"(?i)\b(?:be|been|was|were|is|are) (?:stopped|killed|terminated|restarted|shut down|aborted|evicted)\b[^.;]{0,60}\bafter (?:running|having run)\s+$").is_match(opening)
            || tables.writer_met.is_match(opening.as_bytes())
            || tables.error_marks.is_match(asserted(&spot).as_bytes())
            || opens_message(&text[..at])
            // (After a sentence that talks, one that opens with the words, where an error was
            // stated before them, is the program's own: [`read`].)
            || (from > 0 && record && failed_before)
            || names_alone(text, at, words)
            // What befell a thing (not a person: `I ran out of memory quickly with batch 64` is
            // talk of a setting), in the past (`The calculator ran out of memory and suddenly
            // reset`, `the memory is filled up and killed by the system`, Bitbucket's `Container
            // 'Build' exceeded memory limit.`), or a program's one-subject status with its figures (Trino's `Query
            // exceeded per-node memory limit of 23.98GB [Allocated: 23.98GB, …]`).
            || (regex!(r"(?i)^(?:ran out|crashed|died|was killed|got killed|were killed|exceeded)\b|^memory\b.*\bkilled$").is_match(words)
                && !regex!(r"(?i)\b(?:I|we|you|they)\s+$").is_match(opening))
            // (Or its state as it is found: YARN's `Container [pid=12345,…] is running beyond
            // physical memory limits.`)
            // (Or what happened, as a program's log says it: SGLang's `Decode out of memory
            // happened. #retracted_reqs: 1`.)
            || regex!(r"(?i)^\s*(?:errors?|exceptions?)?\s*(?:has |had )?(?:happened|occurred)\b").is_match(&text[at + words.len()..])
            // (Or what a thing asked for, more than there was: NVIDIA's driver's `An application
            // has requested more GPU memory than is available in the system.`)
            || (regex!(r"(?i)^more\b").is_match(words)
                && regex!(r"(?i)\b(?:(?:has|have|had) )?(?:requested|used|allocated|consumed|(?:tried|attempted) to (?:allocate|use))\s+$").is_match(opening)
                && !regex!(r"(?i)\b(?:I|we|you|they)\s+(?:(?:have|had) )?\w+(?: to \w+)?\s+$").is_match(opening))
            || (regex!(r"(?i)^beyond\b").is_match(words)
                && regex!(r"(?i)\b(?:is|was|are|were) running\s+$").is_match(opening)
                && !regex!(r"(?i)\b(?:we|you|they)\s+(?:are|were) running\s+$").is_match(opening))
            || (!sizes.is_empty() && opening.split_whitespace().count() <= 2));
    Some(Reading {
        words: matched.iter().map(|&row| FAILURE_WORDS[row].name).collect(),
        kind,
        statement,
        talk,
        sizes,
        ran_out,
        memory_space,
        at,
        memory_unnamed,
    })
}

/// Whether the failure words at `at` are in the name of a service that systemd starts or stops
/// (`systemd[1]: Started Early OOM Daemon.`, the prefix maybe stripped): a unit's description,
/// not a failure.
fn names_a_unit(line: &Line, at: usize) -> bool {
    regex!(r"(?:^|\bsystemd\[\d+\]:\s+)(?:Started|Starting|Stopped|Stopping|Reloaded|Reloading|Finished)\s+[^.;:]*$")
        .find(&line.text[..at])
        .is_some_and(|unit| unit.start() > 0 || line.prefixed)
}

/// Where a line's failure words stand: the line as read, where the words start, and the
/// sentence and the clause of it that hold them.
struct Spot<'a> {
    text: &'a str,
    at: usize,
    /// The failure's own words, the longest of the rows found at `at` (empty where the words
    /// were found only in a flag).
    words: &'a str,
    sentence: std::ops::Range<usize>,
    clause: std::ops::Range<usize>,
    /// The line is a document's section heading ([`Line::section`]).
    section: bool,
    /// A sentence before the failure words' own states a failure (an error mark in it).
    failed_before: bool,
}

/// Whether the failure words are the class that .NET's own message names as thrown, in any
/// quotes (`Exception of type System.OutOfMemoryException was thrown.`, OpenRA's crash report's
/// ``Exception of type `System.OutOfMemoryException`: …``): a program's record, not a class named
/// in prose.
fn thrown_of_type(opening: &str) -> bool {
    regex!(r#"(?i)\bexception of type\s+[`'"\u{201c}\u{2018}]?(?:[A-Za-z_]\w*\.)*$"#).is_match(opening)
}

/// Whether the failure words at `spot` are talk about memory failures (a person's, a guide's,
/// code's) rather than a report of one. `record`: the sentence opens as a record (a label, an
/// error word before the words); `quoted`: the words are in a quote of what a program printed.
fn talks(spot: &Spot, record: bool, quoted: bool) -> bool {
    let tables = vocabulary::compiled();
    let Spot { text, at, words, ref clause, section, failed_before, .. } = *spot;
    let opening = &text[spot.sentence.start..at];
    // A record's own words before the colon that opens its message are the program's, not talk
    // about the failure (Ansible's `ERROR! Unexpected Exception, this is probably a bug: [Errno
    // 12] Cannot allocate memory`).
    let talk_from = if record && (failed_before || tables.error_marks.is_match(opening.as_bytes())) {
        regex!(r":\s")
            .find_iter(&text[clause.start..at])
            .last()
            .map_or(clause.start, |colon| clause.start + colon.end())
    } else {
        clause.start
    };
    // A writer's aside in parentheses after a record's message is not the record's
    // (JMusicBot's `java.lang.OutOfMemoryError: GC overhead limit exceeded (i guess ram error )`),
    // and the program's own guess at the cause there hedges the cause, not the failure (Numba's
    // `MemoryError: Allocation failed (probably too large).`).
    let talk_end = match regex!(r"\s*\([^()]*\)[\s.]*$").find(&text[at..clause.end]) {
        Some(aside)
            if record
                && regex!(r"(?i)\(\s*(?:i|we|probably|likely|possibly|perhaps|maybe)\b").is_match(aside.as_str()) =>
        {
            at + aside.start()
        }
        _ => clause.end,
    };
    // A quote around the words, maybe opened on an earlier line, holds the program's message;
    // what the writer adds after it, a hedge or a person, is not the message's (pyvips' `the
    // console shows "pyvips.error: unable to call dzsave\n  vips_tracked: out of memory --- size
    // == 26784MB", maybe this is a simple problem for you guys`).
    // (Not a quote of the words alone, a name: `rather than the two "out of memory" codes in your
    // PR`.)
    let quotes_before = text[..at].matches('"').count();
    let in_quote = quotes_before % 2 == 1 || (quotes_before == 0 && text.matches('"').count() % 2 == 1);
    let talk_end = match text.get(at + words.len()..talk_end).and_then(|after| after.find('"')) {
        Some(close)
            if in_quote
                && text[text[..at].rfind('"').map_or(0, |open| open + 1)..at + words.len() + close].trim() != words =>
        {
            at + words.len() + close
        }
        _ => talk_end,
    };
    // (A program's record may address its reader after its log level: faceswap's `ERROR    You
    // do not have enough GPU memory available …`, JRuby's `Error: Your application used more
    // memory than the safety cap of 500M.`, Wan2GP's `… has encountered an error: it is likely that
    // you have unsufficient RAM`; the words before the level are the writer's.)
    let opening_before_level =
        regex!(r"\b(?:FATAL ERROR|ERROR|FATAL|CRITICAL|WARNING|WARN)\b|\b(?:Error|Fatal|Warning):|\ban error:")
            .find_iter(opening)
            .last()
            .map_or(opening, |level| &opening[..level.start()]);
    let people = if record { opening_before_level } else { &text[clause.start..talk_end] };
    // A program's message quoted in backticks may say `your` (Slurm's
    // `Some of your processes may have been killed`): only the writer's
    // own words around the quote tell that a person writes.
    let people = regex!(r"`[^`]*`").replace_all(people, " ");
    // Nor does the writer who reports meeting the failure (`We get HBM0 RESOURCE_EXHAUSTED
    // error when loading 8b models`).
    let people = tables.writer_meets.replace_all(people.as_bytes(), &b" "[..]);
    let people = tables.courtesy.replace_all(&people, &b" "[..]);
    let after_words = &text[at..];
    // An exception class or a code named in prose: followed by a noun or a verb
    // (`MemoryError message is often empty`), or alone in backticks in a sentence that
    // does not open as a record (``Mapped … codes `CUDA_ERROR_OUT_OF_MEMORY` and …``).
    // (Not the class said to have been thrown: `An OutOfMemoryError was thrown while loading the
    // model` reports it; `… is thrown when the heap is full` tells what it is.)
    let said_thrown = regex!(
        r"(?i)^\s*(?:errors?|messages?|warnings?|exceptions?)?\s+(?:(?:has|have|had)\s+)?(?:was|were|got|been) (?:thrown|raised)\b"
    )
    .is_match(&text[at + words.len()..]);
    let class_as_noun =
        tables.class_as_noun.is_match(after_words.as_bytes()) && !thrown_of_type(opening) && !said_thrown;
    // The failure's words before a noun they qualify, unless the writer met it (`out of memory
    // message should not require memory allocation`, `CUDA Out of Memory Solutions`, `For the
    // oom-kill result, …`, not `I keep getting out of memory messages`).
    // (Even after an error mark, a mechanism or a topic that is the subject of what may be:
    // `DOCKER WARNING: Docker Out Of Memory handling can be unreliable.`; a message so named
    // after an error mark is the one shown: `[ERROR] Out of VRAM message might be misleading`.)
    let neither_marked_nor_met = !tables.error_marks.is_match(opening.as_bytes())
        && !tables.met.is_match(opening.as_bytes())
        && !tables.writer_met.is_match(opening.as_bytes());
    // (Not after a verb, whose object the noun is: RKNN's `failed to allocate handle, …, errstr:
    // Cannot allocate memory`.)
    let verb_before = regex!(r"(?i)\b(?:allocate|alloc|[cm]alloc|reserve|commit|acquire)$").is_match(words);
    // (Nor as the cause of what happened: the UCSC library's `errAbort re-entered due to
    // out-of-memory condition. Exiting.`)
    let cause_of = regex!(r"(?i)\b(?:due to|because of|caused by)\s+(?:an?\s+|the\s+)?$").is_match(&text[..at]);
    let qualifies_a_noun = !verb_before
        && !cause_of
        && ((neither_marked_nor_met
        && regex!(r"(?i)^\s+(?:messages?|handl\w*|paths?|scenarios?|cases?|solutions?|tips?|results?|status|states?|conditions?|fields?)\b")
            .is_match(&text[at + words.len()..]))
        || regex!(r"(?i)^\s+(?:handl\w*|paths?|scenarios?|cases?|solutions?|tips?)\s+(?:can|could|may|might|should|would|will)\b")
            .is_match(&text[at + words.len()..]));
    let code = regex!(r"`[\w.:]*$").find(&text[..at]);
    // (Not an exception's class that a short title names as what befell its subject: Bio-Formats'
    // `showinf `OutOfMemoryError` with large JPG file`.)
    let titled_class = regex!(r"^\w*(?:Error|Exception)`").is_match(after_words) && names_alone(text, at, words);
    let code_named = !record
        && !titled_class
        && code.is_some_and(|code| {
            regex!(r"^[\w.:]+`").is_match(after_words)
                && !tables.met.is_match(&text.as_bytes()[spot.sentence.start..code.start() + 1])
        });
    // Failure words that are a clause of their own (`The RAM is instantly full`, `The
    // program crashed … because it ran out …`, ethminer's `… for the DAG Allocating/mapping
    // single buffer failed`, Unity's `The browser could not allocate enough memory for the
    // WebGL content.`), or the subject of one (`this insufficient memory error appears`),
    // make the determiner before them their subject's, not a name's.
    let own_clause = regex!(
        r"(?i)^(?:fail|crash|died|dies|killed|abort|ran |run |could(?:n'?t| not) |can(?:not|'t) |unable )|\b(?:is|was|are|were|kills?|kick(?:s|ed)?[- ]in|fails|failed)\b"
    )
    .is_match(words)
        || regex!(r"(?i)^\s*(?:errors?|messages?|warnings?|exceptions?)?\s+(?:(?:has|have|had)\s+)?(?:appear(?:s|ed)?|occur(?:s|red)?|happen(?:s|ed)?|(?:shows?|showed|pops?|popped|comes?|came) up)\b")
            .is_match(&text[at + words.len()..])
        || said_thrown;
    // A question in Chinese about the failure itself (`这是不是内存溢出了`, "is this a memory
    // overflow"; `…内存溢出了吗`), not one after it states what happened (`…就会出现cuda out of
    // memory，请问大佬有改进方法吗`).
    let asked_in_chinese = regex!(r"(?:是不是|是否)[^，。,.!?？！]{0,12}$").is_match(&text[clause.start..at])
        || regex!(r"^[^，。,.!?？！]{0,12}?吗").is_match(&text[at + words.len()..]);
    // A code set against another (`EAGAIN vs. ENOMEM for too large a request versus no memory
    // available`) is named to tell the two apart, not met.
    let compared = regex!(r"(?i)\b(?:vs\.?|versus)\s+$").is_match(&text[..at])
        || regex!(r"(?i)^[\w.]+\s+(?:vs\.?|versus)\s").is_match(after_words);
    // A guess asked of the failure's name, the line's last words (a title's `[HIVE]
    // graph_projections OOM error?`): whether it was is the question. So it is of the name alone,
    // which opens as a record would (rstan's title `out of memory?`).
    let alone = regex!(r"^[\s#*_>]*$").is_match(&text[..at]);
    let guessed = (alone || (!record && !failed_before))
        && regex!(r"(?i)^\s*(?:errors?|issues?|problems?)?\s*\?+\s*$").is_match(&text[at + words.len()..]);
    // A yes-no question about it (`am I running out of memory? Torch("CUDA error: device-side
    // assert triggered …`): whether it did is the question.
    // (Not a question about what a message means: `What does it mean that "terminate called after
    // throwing an instance of 'std::bad_alloc'"?`.)
    let asked = regex!(r"(?i)(?:^\W*|[,;:]\s*|\b(?:and|but|so)\s+)(?:am|are|is|was|were|do|does|did|could|can)\s+(?:I|we|you|it|this|that|they)\b[^.?!]*$")
        .is_match(&text[clause.start..at])
        && regex!(r"^[^.!?]{0,20}\?").is_match(&text[at + words.len()..]);
    // What a program is said to do as a rule (a title's `Scapy 2.4.2 uses too much memory when
    // sending packets`, or without its `s`: `` `./mill -i` use too much memory``): a complaint of
    // its use, not a failure it met.
    let habit = !record
        && regex!(r"(?i)^too much\b").is_match(words)
        && regex!(r"(?i)\b(?:uses?|consumes?|takes?(?: up)?|eats?(?: up)?|allocates?)\s+$").is_match(opening);
    // A cause the writer only supposes for what they met (Isaac-GR00T's `I keep getting illegal
    // memory errors that may be related to OOM but I am not too sure`).
    let supposed_cause = regex!(
        r"(?i)\b(?:may|might|could)\s+(?:also\s+)?(?:be|have\s+been)\s+(?:related\s+to|due\s+to|caused\s+by|because\s+of)\s+(?:(?:an?|the)\s+)?$"
    )
    .is_match(opening);
    asked_in_chinese
        || asked
        || habit
        || supposed_cause
        || guessed
        || (compared && !record)
        || class_as_noun
        // A document's section (a FAQ's `### Out-of-memory / 显存溢出`) names the failure it is
        // about; an error's record under a heading is still one.
        || (section && !tables.error_marks.is_match(text.as_bytes()))
        || qualifies_a_noun
        || (tables.worked_on.is_match(opening.as_bytes())
            && !fixes_a_thrown(&text[clause.clone()])
            // (A record's report that the program caught it: Pytorch-UNet's `ERROR: Detected
            // OutOfMemoryError! Enabling checkpointing …`.)
            && !(record && regex!(r"(?i)(?:^|:)\s*(?:detected|caught)\s+$").is_match(opening)))
        || tables.negated.is_match(opening.as_bytes())
        // (The negation may be inside the words: `crashes are not due to insufficient memory`.)
        || regex!(r"(?i)\b(?:not|never)\s+(?:due to|because of|caused by)\b").is_match(words)
        || code_named
        || (tables.talk.is_match(unhedged(&text[talk_from..talk_end], &text[talk_from..at], words, record || failed_before).as_bytes())
            && !fixes_a_thrown(&text[clause.clone()])
            && !forecasts_a_request(&text[..at], &text[at + words.len()..], record))
        || (tables.conditions.is_match(&text.as_bytes()[clause.start..at]) && !met_when(&text[clause.start..at]))
        // (Or the main clause of a condition, in a modal: Docker's `If your program unexpectedly
        // exits, it might have been terminated by the Out Of Memory killer …` tells what may have
        // happened, not what did.)
        || regex!(r"(?i)\b(?:if|unless|whenever)\b[^,;:]*,[^,;:]*\b(?:may|might|could|would)\b[^,;:]*$").is_match(&text[clause.start..at])
        // (Others named in the sentence do not make talk of what the writer met right before
        // the failure's words, or the code that holds them: `while your precompiled demo is
        // running well … i'm getting VK_ERROR_OUT_OF_DEVICE_MEMORY`.)
        || (tables.people.is_match(&people)
            && !tables.writer_met.is_match(opening.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_').as_bytes())
            // (Or right before the record's level: `We are using pnpm … and during install pnpm
            // errors with FATAL ERROR: … JavaScript heap out of memory`.)
            && !(record && tables.writer_met.is_match(opening_before_level.as_bytes())))
        || (tables.code.is_match(&text.as_bytes()[..at]) && !raised_after_code(&text[..at]))
        || tables.explained.is_match(&text.as_bytes()[..at])
        // An item of a list of causes that may be (Ray's `There are some potential root causes.
        // (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) …`).
        || (regex!(r"(?i)\b(?:potential|possible|probable|likely)\s+(?:root\s+)?(?:causes?|reasons?)\b")
            .is_match(&text[..spot.sentence.start])
            && regex!(r"^\W*(?:\(\d{1,2}\)|\d{1,2}[.)])\s").is_match(&text[spot.sentence.start..]))
        || assertion_got(&text[..at])
        || (!record
            && !quoted
            && tables.named.is_match(opening.as_bytes())
            && !tables.met.is_match(opening.as_bytes())
            && !own_clause
            // (`like this` shows the message that follows, as a colon does: turicreate's `some
            // errors have occurred in 20 million data, like this MemoryError: std::bad_alloc`.)
            && !regex!(r"(?i)\blike (?:this|that)\s+$").is_match(opening))
}

/// A record that forecasts its own request's failure (Guppy's `[guppy/warning] … CUDA device 0
/// will run out of memory while trying to allocate 284079744 bytes`, before it aborts): the
/// program's check of a request it was making, not what may happen in general.
fn forecasts_a_request(before_words: &str, after_words: &str, record: bool) -> bool {
    record
        && regex!(r"(?i)\bwill\s+(?:run\s+)?$").is_match(before_words)
        && regex!(r"(?i)^\s*(?:while|when) trying to allocate \d").is_match(after_words)
}

/// Whether what follows `before` is the value a test's assertion got, quoted (Go's `expected
/// "OK\n", but got "using too much memory: 70813696 bytes\n"`): what a check compared, not a
/// failure of the program's.
fn assertion_got(before: &str) -> bool {
    regex!(r#"(?i)\bexpected\b[^;]{0,200}?\bbut (?:got|was|received|found)\s*:?\s*["'`][^"'`]{0,40}$"#).is_match(before)
}

/// Whether the exception that the code before the failure words raised follows that code's
/// call on the line (a traceback's source line and its exception run together in a title:
/// `return super().__torch_function__(func, types, new_args, kwargs) RuntimeError: [Rank:0]
/// FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed …`): the exception is a record.
fn raised_after_code(before: &str) -> bool {
    regex!(r"\)\s+[A-Z]\w*(?:Error|Exception):\s").is_match(before)
}

/// Whether a clause is a title that fixes an exception by its class, thrown (`Fix
/// java.lang.OutOfMemoryError in Crashes.java line 923`, a crash reporter's issue; `Fix
/// OutOfMemoryException: array dimensions exceeded supported range`): the exception was met.
/// A title about failures in general names none by its class (`Fix OOM errors when …`).
/// So does a title whose subject failed with the class (CuPy's `Fix ROCm 5.3 test failing with
/// `MemoryError``).
fn fixes_a_thrown(clause: &str) -> bool {
    regex!(r"^\W*(?i:fix(?:e[sd])?)\s+(?:[a-z]\w*\.)*[A-Z]\w*(?:Error|Exception)(?::|\s+(?:in|at|on|issue|crash(?:es)?|when|while|during|due)\b)")
        .is_match(clause)
        || regex!(r"^\W*(?i:fix(?:e[sd])?\s+(?:[^.:;]|\.\d){1,60}?\b(?:fail(?:s|ed|ing)?|crash(?:es|ed|ing)?|dies|died|dying) with)\s+[`'\x22]?(?:[a-z]\w*\.)*[A-Z]\w*(?:Error|Exception)\b")
            .is_match(clause)
}

/// Whether a clause that opens with `when`, with the writer in it (`when I …`, `When running
/// Transmission … I am getting a "…"`) or the writer's own doing as its subject (`When using the
/// report page to export the PDFs … FpdfTrait.php crashes with`), tells what the writer met right
/// before the failure's words (`when I try to run the project in device it's crashing with
/// "Terminated due to memory issue"`, `When trying to save a pdf I get the following error "…`):
/// what happens each time, not a condition.
fn met_when(clause: &str) -> bool {
    let tables = vocabulary::compiled();
    regex!(r"(?i)^\W*when\b.*\b(?:I|we)\b|^\W*when\s+[a-z]+ing\b").is_match(clause)
        && (tables.met.is_match(clause.as_bytes()) || tables.writer_met.is_match(clause.as_bytes()))
}

/// `clause` without the failure's own words where they hedge only its cause (nnU-Net's
/// `Prediction on device was unsuccessful, probably due to a lack of memory.`): the failure
/// happened, and the hedge is no talk about it. A program's record may hedge right before
/// them (GPT4All's `ERROR: Previous attempt to load model resulted in crash … most likely
/// due to out of memory.`; Wan2GP's `The generation of the video has encountered an error: it is
/// likely that you have unsufficient RAM …`): the hedge goes with them.
fn unhedged<'a>(clause: &'a str, before_words: &str, words: &str, record: bool) -> std::borrow::Cow<'a, str> {
    let hedged = regex!(r"(?i)\b(?:probably|likely|possibly|perhaps|maybe)\s+(?:due to|because)\b");
    let hedge_before = regex!(
        r"(?i)\b(?:most |very )?(?:probably|likely|possibly|perhaps|maybe),?\s+(?:that you (?:have|had) |(?:due to|because(?: of)?|caused by)\s+)?$"
    );
    if hedged.is_match(words) {
        clause.replacen(words, " ", 1).into()
    } else if let Some(hedge) = hedge_before.find(before_words).filter(|_| record) {
        clause.replacen(&format!("{}{words}", hedge.as_str()), " ", 1).into()
    } else {
        clause.into()
    }
}

/// The words that assert what happened around the failure words at `spot`: their sentence,
/// and the next one unless it talks, without clauses of what would happen and names quoted.
fn asserted(spot: &Spot) -> String {
    let tables = vocabulary::compiled();
    let Spot { text, at, ref sentence, .. } = *spot;
    // An error word in a clause of what would happen (`… until init itself is
    // killed.`) does not make the line a record of what did.
    // Nor does one in a sentence before theirs (`… so the container is killed on
    // overrun; shift … instead of rigging OOM scores.`). The next sentence may tell
    // what the failure led to (`… exceeds the memory usage threshold of 0.95. Ray
    // killed this worker`), unless it talks itself (`… killer for linux systems.
    // Background Out of memory killing has historically happened …`); the ones after
    // it are other statements (`… malloc(2) and friends will never fail.`).
    // Nor does `error` naming messages (`an FAQ for Out of Memory error messages`).
    let next = if sentence.end < text.len() { sentence_around(text, sentence.end) } else { sentence.clone() };
    let told_until = if tables.talk.is_match(text[next.clone()].as_bytes()) { sentence.end } else { next.end };
    let asserted = regex!(r"(?i)\b(?:until|unless|whenever|in case)\b[^.;!?]*|\b(?:error|warning) messages?\b")
        .replace_all(&text[sentence.start..told_until], " ");
    // Nor does a name quoted in backticks (`misattributed to a generic
    // `Error``) when the failure words are the writer's own, outside the quotes.
    let quoted_words = text[..at].matches('`').count() % 2 == 1;
    if quoted_words {
        asserted.into_owned()
    } else {
        regex!(r"`[^`]*`").replace_all(&asserted, " ").into_owned()
    }
}

impl Reading {
    /// Takes in the next physical line of the same message: its sizes fill
    /// the roles still empty, and its device an empty place.
    /// The words that give a size its role may end the line before
    /// (Paddle's `available memory is only ` / `416.625000MB.`): `before`,
    /// that line's end, is read with it, its own sizes are not taken again. `mid_word`: that line
    /// stopped inside a word at a terminal's width, which this one ends (PHP's `… exhausted (tried
    /// to al` / `locate 536870920 bytes)`).
    pub fn continue_with(&mut self, before: &str, text: &str, mid_word: bool) {
        let text = &text[..window_end(text, READ_AFTER)];
        // A row of GNU ld's memory-usage table under its head (`Memory region  Used Size  Region
        // Size  %age Used` / `RAM:  36704 B  32 KB  112.01%`): what is used of the region's size.
        if regex!(r"\bUsed Size\s+Region Size\b").is_match(before) {
            if let Some(row) = regex!(r"^\s*[\w.]+:\s+(\d+ ?[KMG]?B)\s+(\d+ ?[KMG]?B)\s+[\d.]+%").captures(text) {
                let figure = |text: &str| sizes_and_roles(text).first().map(|(size, _)| size.bytes);
                self.sizes.used = self.sizes.used.or(figure(&row[1]));
                self.sizes.capacity = self.sizes.capacity.or(figure(&row[2]));
                return;
            }
        }
        // (One space between, whatever the first line kept at its end: Android's `…
        // OutOfMemoryError: (Heap ` / `Size=32775KB, Allocated=29163KB, …)` is the heap's size.)
        let spaced = before.trim_end();
        let joined = format!("{spaced} {text}");
        self.sizes.fill(sizes_from(&joined, spaced.len() + 1, self.ran_out.as_deref()));
        // (A line as long as a terminal's that ends in a letter may as well be a person's wrap
        // between words: vLLM's `… is less than desired` / `GPU memory utilization (0.9, 57.6
        // GiB)`. The word joined fills only the roles the spaced reading left empty.)
        if mid_word && !text.starts_with(char::is_whitespace) {
            let joined = format!("{before}{text}");
            self.sizes.fill(sizes_from(&joined, before.len(), self.ran_out.as_deref()));
        }
        // (And the device it names, where the first line named none: a PyTorch message broken
        // after `CUDA out of memory.`, its `Tried to allocate 260.00 MiB. GPU 1 has …` below.)
        if self.memory_space.is_none() {
            self.memory_space = device(text);
        }
        self.memory_unnamed &= !vocabulary::compiled().memory_named.is_match(text.as_bytes());
    }

    /// Takes the sizes of the lines right before the failure's (the nearest first), when the
    /// failure line has none and they state figures of memory and no failure of their own:
    /// status lines the program printed first (Heroku's `Process running mem=677M(132.3%)`
    /// before `Error R14 (Memory quota exceeded)`, earlyoom's `mem avail: 21 of 950 MiB` before
    /// `low memory!`, a miner's `Currently available amount of device memory: …` and `Total
    /// amount of device memory: …` before `status: out of memory`).
    pub fn take_status_lines<'a>(&mut self, before: impl Iterator<Item = Line<'a>>) {
        // A message with figures takes a status line's only where it names the same request
        // (`LimitedResource(GPU) reached its limit reqsize(157mb) used(432.731mb) limit(512mb)`,
        // then `Failed to acquire gpu memory (157mb)`).
        let request = self.sizes.requested;
        if !self.sizes.is_empty() && request.is_none() {
            return;
        }
        for previous in before {
            let text = &previous.text[..window_end(&previous.text, READ_AFTER)];
            if read(&previous).is_some()
                || !regex!(r"(?i)\b(?:mem|memory|RAM|rss|\w*alloc\w*|reqsize)\b").is_match(text)
            {
                return;
            }
            let status = sizes_from(text, 0, self.ran_out.as_deref());
            if request.is_some() && status.requested != request {
                return;
            }
            self.sizes.fill(status);
        }
    }

    /// Whether `next` (a line's reading) says nothing this one does not:
    /// the same failure printed again by another layer (`what():  std::bad_alloc`).
    pub fn covers(&self, next: &Reading) -> bool {
        next.words.iter().all(|word| self.words.contains(word)) && next.sizes.is_empty()
    }
}

/// An event of the reading's closest kind, for a message no family parser knows.
pub(super) fn event(line: &Line, reading: &Reading) -> OomEvent {
    let mut event = OomEvent::new(reading.kind, line);
    event.by_general_reader = true;
    refine(&mut event, reading);
    event
}

/// What the reading found and the event does not have yet.
pub(super) fn refine(event: &mut OomEvent, reading: &Reading) {
    event.take_missing(reading.sizes, &reading.memory_space);
    for word in &reading.words {
        if !event.failure_words.iter().any(|w| w == word) {
            event.failure_words.push((*word).to_string());
        }
    }
}

/// The reading of a part of the line read on its own (a quote, the record after
/// code), if it is a record; its failure words' place counted in the whole line.
fn read_part(line: &Line, text: &str, part: std::ops::Range<usize>) -> Option<Reading> {
    let from = part.start;
    let piece = Line { text: text[part].to_string().into(), ..line.clone() };
    let reading = read(&piece).filter(|reading| reading.statement)?;
    Some(Reading { at: from + reading.at, ..reading })
}

/// Where a quote's mark is in what the quote pattern found: after the words that introduce it
/// (`says `, `the error `), if any.
fn quote_mark(found: &str) -> usize {
    found.find(['"', '\'', '\u{201c}', '\u{2018}', '\u{201e}', '\u{ab}', '\u{bb}', '`']).unwrap_or(0)
}

/// Whether the words before a failure name it as talk does ([`vocabulary::TALK`]):
/// a title asking for it (`Support OOMKilled`), advice, a hedge.
pub(super) fn talks_before(text: &str, at: usize) -> bool {
    vocabulary::compiled().talk.is_match(&text.as_bytes()[..at])
}

/// Whether `text` opens in the writer's own voice ([`vocabulary::WRITER_OPENS`]).
pub(super) fn writer_speaks(text: &str) -> bool {
    vocabulary::compiled().writer_opens.is_match(text.as_bytes())
}

/// Whether the first place `text` names is a device ([`vocabulary::PLACE_WORDS`]):
/// a host family's exception class may carry a device's failure (RAPIDS'
/// `MemoryError: std::bad_alloc: out_of_memory: CUDA error at: …`).
pub(super) fn names_device_first(text: &str) -> bool {
    first_place(text) == Some(Place::Device)
}

/// The place `message` names first, if any.
fn first_place(message: &str) -> Option<Place> {
    vocabulary::compiled()
        .places
        .iter()
        .filter_map(|(pattern, place)| pattern.find(message.as_bytes()).map(|m| (m.start(), *place)))
        .min_by_key(|(at, _)| *at)
        .map(|(_, place)| place)
}

/// A line of a traceback or a native stack (`File "…", line 3`, `at java.…(`,
/// ` 3: 0xf01e57 v8::internal::V8::FatalProcessOutOfMemory`): it names
/// functions, it reports nothing itself.
pub(super) fn is_frame(text: &str) -> bool {
    regex!(r#"^\s*(?:File "|at [\w$.<>]+\(|#?\d+[:\s]+(?:0x)?[0-9a-fA-F]{6,}\b|frame #\d+|Traceback \(most recent call last\)|During handling of the above exception)"#)
        .is_match(text)
}

/// A frame of a function that does nothing but throw `std::bad_alloc`
/// (`#9 0x… in qBadAlloc() () from …/libQt6Core.so.6`): a stack that holds it
/// threw one, whatever else the log says.
fn throws_bad_alloc(frame: &str) -> bool {
    regex!(r"\b(?:qBadAlloc|__throw_bad_alloc)\(\)").is_match(frame)
        // (Or the throw itself, its object a `std::bad_alloc`: LevelDB's `#6 … in
        // __cxxabiv1::__cxa_throw (obj=…, tinfo=…, dest=0x392ee0 <std::bad_alloc::~bad_alloc()>)`.)
        || regex!(r"\b__cxa_throw\b.*<std::bad_alloc::~bad_alloc\(\)>").is_match(frame)
        // (And GLib's abort when g_malloc fails, its error's format in the frame: Arkime's
        // `g_log (…, log_level=…G_LOG_LEVEL_ERROR, format=… "%s: failed to allocate %lu bytes")`.)
        || regex!(r#"\bg_log\b.*\bG_LOG_LEVEL_ERROR\b.*"%s: failed to allocate %\w+ bytes""#).is_match(frame)
}

/// Text before the failure words that still lets them open the message:
/// nothing, punctuation, or a label (`INTERNAL: `, `error: `).
fn opens_message(before: &str) -> bool {
    if vocabulary::compiled().list_marker.is_match(before.as_bytes()) {
        return false;
    }
    // A component's tags in brackets open a message too (`[GPU] `, `[engine/Engine] `, V-Ray's
    // `[GPU Light Cache ]`).
    let before = regex!(r"^\s*(?:\[[^\]]{1,40}\]\s*)+").replace(before, "");
    // (A label may open a quote of the message: ``release-trigger: `Memory limit of …``.)
    let before = before.trim_end().trim_end_matches(['`', '"', '\'', '\u{201c}']).trim_end();
    // (So do tags after a label: VMware's `vmx| I125: [msg.memsched.preNotEnoughMem] `.)
    // (And an article that opens the message's sentence: the Android emulator's `emulator: The
    // memory needed by this AVD exceeds the max …`; and a status code in parentheses, curl's
    // `curl: (27) Out of memory`.) (Or, after a logger's dotted name, the subject the message
    // opens with, a capital and maybe a word that qualifies it: Odoo's `odoo.service.server:
    // Server virtual memory limit (4489629696) reached.`; not after a commit's tag, whose
    // capital is a verb: `bpo-45581: Raise `MemoryError` in …`.)
    let logger_subject = regex!(r"\b[a-z_]\w*(?:\.\w+)+:\s+[A-Z][\w-]*(?:\s+[a-z][\w-]*)?$").is_match(before);
    // (Or a code in hexadecimal, or named: LabVIEW's `LabVIEW: (Hex 0x2) Memory is full.`.)
    let label = regex!(
        r"(?:\s*\[[^\]]{1,40}\])+$|\s+(?:The|An?)$|\s*\((?:-?\d{1,5}|(?:Hex\s+)?0x[0-9A-Fa-f]{1,8}|(?i:code|error|errno)\s*-?\d{1,5})\)$"
    )
    .replace(before, "");
    // (A full-width colon ends a label in Chinese and Japanese text: `失败：`.)
    before.chars().all(|c| !c.is_alphanumeric())
        || logger_subject
        || label.ends_with([':', '\u{ff1a}'])
        // (A record's fields split by bars, not a Markdown table's row: VMware's
        // `2015-07-08T11:52:37.370-08:00| vmx| Not enough physical memory is available …`.)
        || (label.ends_with('|') && !label.trim_start().starts_with('|'))
        // (An exception's class, its message in parentheses: `MemcachedServerException (out of
        // memory storing object)`; and an exit status, its cause in parentheses: Cloud Foundry's
        // `Exited with status 137 (out of memory)`.)
        || regex!(r"\b[A-Z]\w*(?:Error|Exception)\s*\($|(?i:\bstatus\s+\d+\s*\($)").is_match(before)
        // (Windows' WIL failure record, its kind, count and thread before the HRESULT and its
        // text: DirectML's `…\FusedGraphKernel.cpp(365)\onnxruntime.dll!00007FFA8BA1E00A: (caller:
        // 00007FFA8BA1C7FC) Exception(2) tid(5780) 8007000E Not enough memory resources …`.)
        || regex!(r"\b(?:Exception|ReturnHr|LogHr|FailFast|Msg)\(\d+\)\s+tid\([0-9a-fA-F]+\)$").is_match(before)
        // (A logger's prefix in brackets that ends with its source location: Jittor's `[w 0429
        // 09:00:15.731000 16 cuda_device_allocator.cc:30] Unable to alloc cuda device memory`.)
        || regex!(concat!(r"^\s*\[[^\]]{0,120}", source_file_extension!(), r"\s*:\s*\d+\]$")).is_match(before)
        // (A source location, maybe after a tag, then the call that failed: PaRSEC's `W@00000
        // /tmp/…/device_cuda_module.c:428 cudaStreamCreate out of memory`.)
        || regex!(concat!(r"^(?:\S+\s+)?\S*", source_file_extension!(), r":\d+\]?:?(?:\s+[\w:.]+)?$")).is_match(before)
}

/// Whether the line is the failure's name with a few words around it, as an issue's title
/// is (`HIP out of memory`, `train.py OOM on TPUv3-8`, `hbm OOM`): short, one clause, at
/// most two words before the failure words (five where they end the line) and four after, none of them saying that it did
/// not happen ([`vocabulary::UNMET`]) and no `killer` after `OOM` (the mechanism named).
fn names_alone(text: &str, at: usize, words: &str) -> bool {
    let tables = vocabulary::compiled();
    if tables.unmet.is_match(&text.as_bytes()[..at]) || regex!(r"(?i)^OOM[- ]killer\b").is_match(&text[at..]) {
        return false;
    }
    // (A title may end with a full stop right after the words: `CUDA out of memory.`)
    let line = text.trim();
    let rest = text[at + words.len()..].trim();
    let full_stop = matches!(rest, "." | "\u{3002}");
    // (Or after the words that follow, where a device's or a runtime's name opens the title:
    // `HIP out of memory on wide pictures.`)
    let named_first = regex!(r"^\s*[A-Z][A-Z0-9]+\s+$").is_match(&text[..at]);
    let line = if full_stop || named_first { line.trim_end_matches(['.', '\u{3002}']) } else { line };
    let after = text[at..].split_whitespace().count();
    // (A list's item is no title.)
    let first_word = regex!(r"^\s*\S+\s+").find(text).map_or("", |found| found.as_str());
    if tables.list_marker.is_match(first_word.as_bytes()) {
        return false;
    }
    // (The words may come later where they end the line, a word of kind aside, after the name
    // of what failed: `GCMC with 350M edges CUDA OOM`.)
    let before = text[..at].split_whitespace().count();
    let ends_line =
        text[at + words.len()..].split_whitespace().count() <= 1 && regex!(r"\b[A-Z]{2,}\w*\s+$").is_match(&text[..at]);
    // (Or a clause of their own that ends the title, after a comma that closes its
    // circumstance: xinference's `Qwen3-Reranker-0.6B 当待排序内容大于3总tokens大于5k，CUDA out of memory.`)
    let ends_clause = (rest.is_empty() || full_stop)
        && text[..at].rfind([',', '\u{ff0c}']).is_some_and(|comma| {
            let comma_end = comma + text[comma..].chars().next().map_or(1, char::len_utf8);
            text[comma_end..at].split_whitespace().count() <= 2
                && !regex!(r"[.;!?:](?:\s|$)|[\u{3002}\u{ff1b}\u{ff01}\u{ff1f}\u{ff1a}]").is_match(&text[..comma])
                && line.chars().count() <= 80
        });
    ends_clause
        || (line.len() <= 60
            && !regex!(r"[.;!?,:](?:\s|$)").is_match(line)
            && (before <= 2 || (ends_line && before <= 5))
            && after <= 8)
}

/// Whether the failure words at `at` are a file's name at the end of a path
/// (`cat /proc/sys/vm/oom-kill`): the token that holds them opens with a slash (or `~`)
/// and has one right before them.
fn in_path(text: &str, at: usize) -> bool {
    let token_start = text[..at]
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || "`'\"=(".contains(c))
        .map_or(0, |(space, c)| space + c.len_utf8());
    let token = &text[token_start..at];
    token.ends_with('/') && token.starts_with(['/', '~']) && token.len() > 1
}

/// Whether the failure words at `at..end` are part of a command-line flag
/// ([`vocabulary::FLAG`]); only the few bytes before them are looked at. A flag is one
/// token, so words that run on past a space are a sentence glued to a dash
/// (`sbcl --Heap exhausted during garbage collection`), not a flag's name.
fn in_flag(text: &str, at: usize, end: usize) -> bool {
    if text.as_bytes()[at..end].iter().any(u8::is_ascii_whitespace) {
        return false;
    }
    let mut from = at.saturating_sub(64);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let window = &text[from..at];
    // The JVM's options on the failure (`HeapDumpOnOutOfMemoryError`, `ExitOnOutOfMemoryError`,
    // `OnOutOfMemoryError`) name it wherever they stand: `-XX:+…`, or a row of `-XX:+PrintFlagsFinal`.
    if regex!(r"(?:^|[^A-Za-z])(?:HeapDump|Exit|Crash)?On$").is_match(window) {
        return true;
    }
    // A window cut inside a long token holds no flag's start: only a separator can begin one there.
    let starts = from == 0 || window.contains(|c: char| c.is_whitespace() || "`'\"=([,".contains(c));
    starts && vocabulary::compiled().flag.is_match(window.as_bytes())
}

/// Where the message holding the failure words at `at` starts: after the
/// last sentence before them, or at the words themselves when a progress
/// bar came before them on the line (the program's message overwrote it:
/// `8.0 MiB/s in  5s ETA:  2smemory allocation of …`), so that figures printed
/// before the message are not read as its own.
fn message_start(text: &str, at: usize) -> usize {
    let before = &text[..at];
    if regex!(r"[KMGT]i?B/s\b|\bETA\b").is_match(before) {
        // The message starts at the token that holds the failure words.
        return before.rfind(char::is_whitespace).map_or(0, |space| space + 1);
    }
    clause_start(before)
}

/// How much of a line after its failure words the reader reads: a message
/// with all its figures (PyTorch's longest is under 700 bytes), not the
/// rest of a line that runs on.
const READ_AFTER: usize = 2048;

/// `end`, or the text's length if shorter, moved back to a character boundary.
fn window_end(text: &str, end: usize) -> usize {
    let mut end = end.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The sentence of `text` that holds the byte at `at`.
fn sentence_around(text: &str, at: usize) -> std::ops::Range<usize> {
    let start = clause_start(&text[..at]);
    let end = regex!(r"[.;!?]+(?:\s|$)")
        .find_iter(&text[at..])
        .find(|m| !ends_with_abbreviation(&text[..at + m.start() + 1]) && !m.as_str().starts_with("!!"))
        .map_or(text.len(), |m| at + m.end());
    start..end
}

/// The clause of `sentence` that holds the failure words at `at`: a sentence may join the
/// writer's aside to the report (`Sorry to bother you again, but I seem to be getting a
/// "MemoryError"`, `I get 'hipErrorOutOfMemory' from MIOpen, even though I believe 4gb of
/// RAM should be enough`), and what the aside says (a `you`, a hedge) is not the report's.
fn clause_around(text: &str, sentence: std::ops::Range<usize>, at: usize) -> std::ops::Range<usize> {
    let start = regex!(r"(?i),\s*(?:but|however|yet)\s+")
        .find_iter(&text[sentence.start..at])
        .last()
        .map_or(sentence.start, |aside| sentence.start + aside.end());
    let end = regex!(r"(?i),\s*(?:but|even though|although|though|whereas)\b")
        .find(&text[at..sentence.end])
        .map_or(sentence.end, |aside| at + aside.start());
    start..end
}

/// Where the sentence that ends `before` starts. A run of `!` is emphasis, not an end
/// (`CUDA error !!!!! <out of memory> !!!!!`).
fn clause_start(before: &str) -> usize {
    regex!(r"[.;!?]+\s+")
        .find_iter(before)
        .filter(|m| !ends_with_abbreviation(&before[..m.start() + 1]) && !m.as_str().starts_with("!!"))
        .last()
        .map_or(0, |m| m.end())
}

/// Whether a full stop ends an abbreviation rather than a sentence (glog's
/// `Check failed: error == cudaSuccess (2 vs. 0)`, `e.g.`, `etc.`, Z3's `error: max. memory
/// exceeded`).
fn ends_with_abbreviation(text: &str) -> bool {
    regex!(r"(?i)\b(?:vs|e\.g|i\.e|etc|cf|approx|no|max|min)\.$").is_match(text)
}

fn closest(closest: Closest, message: &str) -> Kind {
    let place = || first_place(message);
    match closest {
        Closest::Kind(kind) => kind,
        Closest::HostUnlessDevice if place() == Some(Place::Device) => Kind::RuntimeAllocationFailure,
        Closest::HostUnlessDevice => Kind::HostOom,
        Closest::ByPlace => match place() {
            Some(Place::Device) => Kind::RuntimeAllocationFailure,
            Some(Place::Host) => Kind::HostOom,
            None => Kind::Unrecognised,
        },
    }
}

/// The numbered device the message names, as it names it (`GPU 0`,
/// Ascend's `NPU 3`, `XPU 1`, `device 1`).
fn device(message: &str) -> Option<String> {
    // (A Chinese word may follow the number: `GPU 0上`.)
    // ggml's backend buffers, named by backend and device (`failed to allocate Vulkan0 buffer of size …`).
    if let Some(buffer) = regex!(r"\b((?:CUDA|ROCm|Vulkan|SYCL|CANN|MUSA)\d+) buffer\b").captures(message) {
        return Some(buffer[1].to_string());
    }
    let Some(found) = regex!(r"\b(GPU|gpu|NPU|npu|XPU|xpu|[Dd]evice)[ :]?(\d+)(?:[^0-9A-Za-z_]|$)").captures(message)
    else {
        // A TPU's high-bandwidth memory, named alone (`out of hbm memory`, `hbm OOM`).
        return regex!(r"(?i)\bhbm\d*\b").is_match(message).then(|| "hbm".to_string());
    };
    let name =
        if found[1].eq_ignore_ascii_case("device") { "device".to_string() } else { found[1].to_ascii_uppercase() };
    Some(format!("{name} {}", &found[2]))
}

/// A size found in a message.
#[derive(Debug, Clone, Copy)]
struct Found {
    start: usize,
    end: usize,
    bytes: u64,
}

/// A number, and a unit after it if there is one: decimal (`int`, `frac`; a decimal comma
/// before a unit, llama.cpp's `failed to allocate 1900,00 MiB` in a comma locale, and points
/// between thousands),
/// or hexadecimal (`hex`: `0x02800000 bytes`), with its `sep` and `unit`; C's unsigned
/// suffix before a unit is the number's (Mono's `could not allocate 16384u bytes`), and so
/// is a word of more (dmalloc's `could not extend heap 4096 more bytes`).
fn size_token() -> &'static Regex {
    static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
        let mut suffixes: Vec<&str> = UNITS.iter().map(|u| u.suffix).collect();
        suffixes.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let units = suffixes.iter().map(|suffix| regex::escape(suffix)).collect::<Vec<_>>().join("|");
        Regex::new(&format!(
            r"(?:0[xX](?P<hex>[0-9a-fA-F]{{1,16}})|(?P<int>\d{{1,3}}(?:,\d{{3}})+|\d{{1,3}}(?:\.\d{{3}}){{2,}}|\d+)(?P<frac>\.\d*|,\d{{1,2}})?)(?:(?:[uU][lL]{{0,2}})?(?P<sep> ?-?| (?:more|additional|extra) | {{2,8}})(?P<unit>{units}))?"
        ))
            .expect("size pattern in xmem's source")
    });
    &TOKEN
}

/// Every size in `text` from the byte `from` on, each with the role its words
/// give it; a capacity whose words name `ran_out` wins over the others.
fn sizes_from(text: &str, from: usize, ran_out: Option<&str>) -> Sizes {
    // A field's name is read as its words (PM2's `current_memory=46522368`, MindSpore's
    // `TotalUsedMemStatistics : 24725382656`), another language's role words as English's;
    // `from` moves with the words it is after.
    let spaced = words_for_roles(text);
    let from = if spaced.len() == text.len() { from } else { words_for_roles(&text[..from]).len() };
    let text = spaced.as_ref();
    let found: Vec<_> = sizes_and_roles(text).into_iter().filter(|(size, _)| size.start >= from).collect();
    // A message may state several pairs (YARN's `Current usage: 264.3 MB of 1 GB physical
    // memory used; 2.8 GB of 2.1 GB virtual memory used`): the one that ran out is the
    // first whose use reached its capacity, else the first.
    let pairs: Vec<(usize, u64, u64)> = found
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0].1 == Some(RoleFrom::Pair(Role::Used)) && w[1].1 == Some(RoleFrom::Pair(Role::Capacity)))
        .map(|(at, w)| (at, w[0].0.bytes, w[1].0.bytes))
        .collect();
    let chosen = pairs.iter().find(|(_, used, capacity)| used >= capacity).or(pairs.first()).map(|p| p.0);
    let mut sizes = Sizes::default();
    let mut previous_end = from;
    let mut named_size = None;
    // A rounded request restated as an exact count further on is that count: two layers' words
    // for one request (ollama's `failed to allocate buffer, size = 16571.89 MiB
    // ggml_gallocr_reserve_n: failed to allocate Metal buffer of size 17376872352`).
    let exact = |size: &Found| regex!(r"^\d+(?:\s*(?:bytes|B))?$").is_match(&text[size.start..size.end]);
    let mut rounded_request = None;
    for (at, (size, role)) in found.iter().enumerate() {
        let words = &text[previous_end.min(size.start)..size.start];
        previous_end = size.end;
        let requested_or_named = role.is_none_or(|role| role.role() == Role::Requested);
        if let Some(rounded) = rounded_request.filter(|_| requested_or_named && exact(size)) {
            if size.bytes.abs_diff(rounded) <= rounded / 1000 {
                sizes.requested = Some(size.bytes);
                rounded_request = None;
                continue;
            }
        }
        // The amount of the memory that ran out, in parentheses after it (`it ran out
        // allocated RAM (16GB)`), is all there was of it.
        if regex!(r"(?i)\bout (?:of )?(?:\w+ )?(?:memory|v?RAM)\s*\($").is_match(words) {
            sizes.capacity = sizes.capacity.or(Some(size.bytes));
            continue;
        }
        let Some(role) = role else {
            // A size named only as a size (Faiss' `… stream 0x7f7b46ba9a60 size 1610612736 bytes
            // (cudaMalloc error out of memory [2])`) is what failed to be allocated, where no
            // words name a request.
            if names_a_size(words) {
                named_size = named_size.or(Some(size.bytes));
            }
            continue;
        };
        // (Not the memory beside it: CodeQL's `Java heap maximum: 1200 MiB, Off-heap arrays
        // maximum: 2000 MiB`.)
        let names_what_ran_out = ran_out.is_some_and(|part| {
            let words = words.to_lowercase();
            words.match_indices(&part.to_lowercase()).any(|(at, _)| !words[..at].ends_with('-'))
        });
        if role.role() == Role::Capacity && names_what_ran_out {
            sizes.capacity = Some(size.bytes);
            continue;
        }
        if let Some(slot) = sizes.slot(role.role()) {
            // The chosen pair's figures win over what words elsewhere say; else the first of a role does.
            *slot = match role {
                RoleFrom::Pair(Role::Used | Role::Capacity) if chosen.is_some_and(|c| at == c || at == c + 1) => {
                    Some(size.bytes)
                }
                _ => slot.or(Some(size.bytes)),
            };
            if role.role() == Role::Requested && sizes.requested == Some(size.bytes) && !exact(size) {
                rounded_request = Some(size.bytes);
            }
        }
    }
    // calloc's request is its count of elements times each one's size (GMRFLib's `Fail to calloc
    // nmemb=128976896 elements of size=8 bytes`), whatever either figure alone was read as.
    let calloc = regex!(r"(?i)\bcalloc\b[^;]{0,20}?\bnmemb\s*=\s*(\d{1,19})\b[^;]{0,30}?\bsize\s*=\s*(\d{1,19})\b")
        .captures(text)
        .filter(|found| found.get(0).is_some_and(|all| all.start() >= from))
        .and_then(|found| found[1].parse::<u64>().ok()?.checked_mul(found[2].parse().ok()?));
    sizes.requested = calloc.or(sizes.requested).or(named_size);
    // A failed allocation call's argument is its request where no words name one
    // (`mmap(MAP_ANON|MAP_SHARED, 524288000) failed`).
    let call = vocabulary::compiled().failed_call.captures(text.as_bytes());
    if let Some(argument) =
        call.and_then(|found| found.get(1).or(found.get(2))).filter(|argument| argument.start() >= from)
    {
        sizes.requested =
            sizes.requested.or(std::str::from_utf8(argument.as_bytes()).ok().and_then(|n| n.parse().ok()));
    }
    sizes
}

/// A size found, and the role its words give it, if any.
type SizeWithRole = (Found, Option<RoleFrom>);

/// Figures joined by slashes after names joined by slashes (Beam's `Memory is used/total/max =
/// 9819/11025/11025 MB`), each in the unit after the last: each takes its name's role. Where
/// `text` has such a run, its span and its sizes.
fn named_run(text: &str) -> Option<(std::ops::Range<usize>, Vec<SizeWithRole>)> {
    let run =
        regex!(r"(?i)\b([a-z]+(?:/[a-z]+)+)\s*(?:[=:]|is|are)?\s*((?:\d+(?:\.\d+)?/)+\d+(?:\.\d+)?)( ?)([A-Za-z]+)\b")
            .captures(text)?;
    let unit = UNITS.iter().find(|unit| unit.suffix == &run[4] && (run[3].is_empty() || !unit.glued_only))?;
    let names: Vec<&str> = run[1].split('/').collect();
    let figures = run.get(2)?;
    if names.len() != figures.as_str().split('/').count() {
        return None;
    }
    let mut start = figures.start();
    let mut named = Vec::with_capacity(names.len());
    for (name, figure) in names.iter().zip(figures.as_str().split('/')) {
        let end = start + figure.len();
        let bytes = size::scaled(figure, unit.shift).and_then(|bytes| u64::try_from(bytes).ok())?;
        let role = vocabulary::compiled()
            .roles_before
            .captures(format!("{name} ").as_bytes())
            .and_then(|found| vocabulary::role_row(Side::Before, &found))
            .map(RoleFrom::Row);
        named.push((Found { start, end, bytes }, role));
        start = end + 1;
    }
    named.iter().any(|(_, role)| role.is_some()).then(|| (run.get(0).map_or(0..0, |all| all.range()), named))
}

/// `text` with every field's name in snake or camel case (before `=`, or before `:` or `=`
/// and a number) written as words (`current_memory=` as `current memory=`,
/// `TotalUsedMemStatistics :` as `Total Used Mem Statistics :`, RELION's `requestedSpace:`,
/// Druid's `maxDirectMemory[4,110,417,920]`), and the role words of other
/// languages ([`vocabulary::ROLE_WORDS_IN_ENGLISH`]) in English, so that the words of
/// [`vocabulary::SIZE_ROLES`] find them.
fn words_for_roles(text: &str) -> std::borrow::Cow<'_, str> {
    // (Its last word may be an acronym: STAR's `limitGenomeGenerateRAM=31000000000`.)
    // (Not a property's dotted path: Druid's `druid.processing.buffer.sizeBytes[1,073,741,824]`
    // is a setting, not the figure of the failure.)
    let fields = regex!(
        r"\b(?:[A-Za-z]+(?:_[A-Za-z]+)+=|[A-Za-z][a-z]+(?:[A-Z][a-z]+)*(?:[A-Z][a-z]+|[A-Z]{2,})\s*[:=]\s*\d)|(?:^|[\s,(])[A-Za-z][a-z]+(?:[A-Z][a-z]+)+\[\d"
    );
    let mut text: std::borrow::Cow<'_, str> = if fields.is_match(text) {
        fields
            .replace_all(text, |field: &regex::Captures| {
                let field = field[0].replace('_', " ");
                regex!(r"([a-z])([A-Z])").replace_all(&field, "$1 $2").into_owned()
            })
            .into_owned()
            .into()
    } else {
        text.into()
    };
    if !text.is_ascii() {
        for (word, english) in vocabulary::ROLE_WORDS_IN_ENGLISH {
            if text.contains(word) {
                text = text.replace(word, english).into();
            }
        }
    }
    text
}

/// What gave a size its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RoleFrom {
    /// A row of [`vocabulary::SIZE_ROLES`] (its index).
    Row(usize),
    /// Two sizes' places beside each other: `A of B`, `A / B` (what is used of a capacity), a
    /// limit `with` what was used, a buffer `containing A by B` more, grown `from A to B`.
    Pair(Role),
}

impl RoleFrom {
    fn role(self) -> Role {
        match self {
            RoleFrom::Row(row) => vocabulary::SIZE_ROLES[row].role,
            RoleFrom::Pair(role) => role,
        }
    }
}

/// Every size in `text` with what gives it its role, if anything does.
/// How many sizes `text` states, to tell which of two joins of a wrapped line reads it whole.
pub(super) fn count_sizes(text: &str) -> usize {
    sizes_and_roles(text).len()
}

fn sizes_and_roles(text: &str) -> Vec<SizeWithRole> {
    let mut found: Vec<Found> = size_token().captures_iter(text).filter_map(|c| as_size(text, &c)).collect();
    // A rounded size restated exactly in parentheses is one size, the exact one (XLA's `Failed to
    // allocate device memory of 104.85GiB (112583507968 bytes)`).
    found.dedup_by(|exact, rounded| {
        regex!(r"^\s*\(\s*$").is_match(&text[rounded.end..exact.start])
            && regex!(r"^\d+(?:\s*(?:bytes|B))?\s*\)").is_match(&text[exact.start..])
            && exact.bytes.abs_diff(rounded.bytes) <= rounded.bytes / 100
            && {
                rounded.bytes = exact.bytes;
                rounded.end = exact.end;
                true
            }
    });
    let mut roles: Vec<Option<RoleFrom>> = vec![None; found.len()];
    for (at, pair) in found.windows(2).enumerate() {
        let between = &text[pair[0].end..pair[1].start];
        // (The capacity may be named after `out of`: PumaWorkerKiller's `consuming total:
        // 540.853515625 mb out of max: 501.76 mb`.)
        if roles[at].is_none() && regex!(r"^\s*(?:/|of|out of(?:\s+max(?:imum)?\s*:)?)\s*$").is_match(between) {
            // What is free of a capacity where the words before say so (earlyoom's `mem
            // avail: 21 of 950 MiB`), else what is used of it.
            let words = &text[if at == 0 { 0 } else { found[at - 1].end }..pair[0].start];
            let free = role_before(words).is_some_and(|row| vocabulary::SIZE_ROLES[row].role == Role::Free);
            roles[at] = Some(RoleFrom::Pair(if free { Role::Free } else { Role::Used }));
            roles[at + 1] = Some(RoleFrom::Pair(Role::Capacity));
        } else if let Some(comparison) =
            regex!(r"^\s*\)?\s*(?:>|<|vs\.?)\s*(max\w*\s*\(\s*)?$").captures(between).filter(|_| roles[at].is_none())
        {
            // A failed check's values after its comparison (Paddle's `enforce allocating <=
            // available failed, 10513462067 > 1369702144`, glog's `Check failed: a <= b (A vs. B)`),
            // or a figure over one its name makes the maximum (JavaCPP's `physicalBytes (16451M) >
            // maxPhysicalBytes (16384M)`): what is used, then the cap.
            let named_max = comparison.get(1).map(|_| (Role::Used, Role::Capacity));
            if let Some((left, right)) = named_max.or_else(|| compared_roles(&text[..pair[0].start])) {
                roles[at] = Some(RoleFrom::Pair(left));
                roles[at + 1] = Some(RoleFrom::Pair(right));
            }
        }
    }
    let mut previous_end = 0;
    for (at, size) in found.iter().enumerate() {
        let before = &text[previous_end..size.start];
        previous_end = size.end;
        if roles[at].is_none() {
            let role = |row: usize| vocabulary::SIZE_ROLES[row].role;
            let before_words = before;
            roles[at] = match (role_after(&text[size.end..]), role_before(before)) {
                // What is needed free is asked for (AUTOMATIC1111's `Need: 1.5GB free, Have:0.1GB free`).
                (Some(after), Some(before))
                    if role(after) == Role::Free
                        && role(before) == Role::Requested
                        && regex!(r"(?i)\b(?:need|needs|needed|require|requires|required)\W*$")
                            .is_match(before_words) =>
                {
                    Some(before)
                }
                // A figure its noun names right before it is that noun's, whatever follows (the
                // kernel's `allocating 1024 of page size 2.00 MiB failed`: a page's size).
                (_, Some(before))
                    if role(before) == Role::Other && regex!(r"(?i)\bpage size\s*[:=]?\s*$").is_match(before_words) =>
                {
                    Some(before)
                }
                (after, before) => after.or(before),
            }
            .map(RoleFrom::Row);
        }
    }
    // A limit exceeded `with` a figure: that figure is what was used (App Engine's
    // `Exceeded soft memory limit of 256 MB with 340 MB`).
    for at in 1..found.len() {
        let capacity_before = roles[at - 1].is_some_and(|role| role.role() == Role::Capacity);
        if capacity_before
            && roles[at].is_none()
            && regex!(r"^\s*with\s*$").is_match(&text[found[at - 1].end..found[at].start])
        {
            roles[at] = Some(RoleFrom::Pair(Role::Used));
        }
        // What a buffer holds, then what it was to grow by (PostgreSQL's `cannot enlarge string
        // buffer containing 1073741769 bytes by 76 more bytes`): what is used, then asked for.
        if roles[at - 1].is_none()
            && roles[at].is_none()
            && regex!(r"(?i)\bcontaining\s*$").is_match(&text[..found[at - 1].start])
            && regex!(r"^\s*by\s*$").is_match(&text[found[at - 1].end..found[at].start])
        {
            roles[at - 1] = Some(RoleFrom::Pair(Role::Used));
            roles[at] = Some(RoleFrom::Pair(Role::Requested));
        }
        // A heap grown from its size to a larger one (Emscripten's `Failed to grow the heap from
        // 245432320 bytes to 610205696 bytes, not enough memory!`): what there was, then asked for.
        if regex!(r"(?i)\b(?:grow|enlarge|expand|extend|resize)\w*\b[^.;!]{0,40}\bfrom\s*$")
            .is_match(&text[..found[at - 1].start])
            && regex!(r"^\s*to\s*$").is_match(&text[found[at - 1].end..found[at].start])
        {
            roles[at - 1] = Some(RoleFrom::Pair(Role::Capacity));
            roles[at] = Some(RoleFrom::Pair(Role::Requested));
        }
    }
    let mut sized: Vec<_> = found.into_iter().zip(roles).collect();
    if let Some((run, named)) = named_run(text) {
        sized.retain(|(size, _)| !run.contains(&size.start));
        sized.extend(named);
        sized.sort_by_key(|(size, _)| size.start);
    }
    sized
}

/// The roles of the two figures a check compares (`allocating <= available`), by their names.
fn compared_roles(before: &str) -> Option<(Role, Role)> {
    // A size over its limit, the two after it (zstd's `Window size larger than maximum :
    // 268435456 > 134217728`): what was asked for, then the limit.
    if regex!(r"(?i)\b(?:larger|bigger|greater|more) than (?:the )?(?:max(?:imum)?|limit)\s*:?\s*$").is_match(before) {
        return Some((Role::Requested, Role::Capacity));
    }
    // What there is, short of what is needed, the two after it (legendary's `Current shared memory
    // cache is smaller than required: 2048.0 MiB < 4902.0 MiB`): the capacity, then the request.
    if regex!(r"(?i)\b(?:smaller|less|lower) than (?:the )?(?:required|requested|needed)\W*$").is_match(before) {
        return Some((Role::Capacity, Role::Requested));
    }
    // A limit exceeded, with the two figures after it (Slurm's `exceeded memory limit
    // (1295467052032 > 1288490188800)`): what was used, then the limit.
    if regex!(r"(?i)\bexceed\w*\s+(?:\w+\s+){0,2}limit\s*\($").is_match(before) {
        return Some((Role::Used, Role::Capacity));
    }
    // A use over its cap, the two after it (storjnode's `Excessive memory usage 104882176 >
    // 104857600!`): what is used, then the cap.
    if regex!(r"(?i)\busage\s*:?\s*$").is_match(before) {
        return Some((Role::Used, Role::Capacity));
    }
    let found = regex!(r"(?i)\b([a-z]\w*) <=? ([a-z]\w*)\b").captures_iter(before).last()?;
    let role = |name: &str| Some(vocabulary::SIZE_ROLES[role_before(&format!("{name} "))?].role);
    Some((role(&found[1])?, role(&found[2])?))
}

/// The row of the words right after a size that give it its role.
fn role_after(after: &str) -> Option<usize> {
    let found = vocabulary::compiled().roles_after.captures(after.as_bytes())?;
    // A word that goes straight on to a number is that number's (`needed 301991760,
    // available 268437504`): it says nothing of the size before it. A comparison or an
    // excess (`N larger than M`, `N kb exceeded limit M kb`) relates the two.
    let matched = found.get(0)?;
    let rest = &after[matched.end()..];
    let relates = regex!(r"(?i)\b(?:than|exceed\w*)\b").is_match(&after[matched.start()..matched.end()]);
    // So does one that opens the name of the next field (PM2's `current_memory=46522368
    // max_memory_limit=33554432`).
    if !relates && regex!(r"^\s*[:=]?\s*\(?\d|^(?:\s+[A-Za-z]\w*){1,3}\s*[:=]\s*\d").is_match(rest) {
        return None;
    }
    vocabulary::role_row(Side::After, &found)
}

/// The row of the nearest words before a size (in its clause) that give it its role.
fn role_before(before: &str) -> Option<usize> {
    let clause = &before[clause_start(before)..];
    // A parenthesis, or a bare `size =` field, right after a sentence's end is that
    // sentence's (`Failed to alloc memory! (gameHeap) (0x98CE0 bytes).`, Roblox's `Failed to
    // allocate memory. size = 3979776`).
    let opens_with_detail = clause.trim_start().starts_with('(') || regex!(r"(?i)^\s*size\s*[:=]").is_match(clause);
    let clause = if opens_with_detail { before } else { clause };
    let nearest = vocabulary::compiled().roles_before.captures_iter(clause.as_bytes()).last()?;
    vocabulary::role_row(Side::Before, &nearest)
}

/// A match of [`size_token`] as bytes, if it is a size: with a unit, or a
/// byte count the words next to it single out (`limit=2147483648`,
/// `buffer of size 643840`, `520960 free bytes`).
fn as_size(text: &str, found: &regex::Captures) -> Option<Found> {
    let all = found.get(0)?;
    let (start, end) = (all.start(), all.end());
    let before = &text[..start];
    let after = &text[end..];
    // Part of a name or another number: `CUDA0`, `0x7f`, `sm_80`, `v1.2`, `cc:376`. (Chinese
    // and Japanese glue words to figures: `分配50.000000MB内存`.)
    if before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$') {
        return None;
    }
    // (So is a figure after a name's hyphen: a device's model, `NVIDIA A100-PCIE-40GB failed to
    // allocate 2097152 bytes`.)
    if regex!(r"[A-Za-z]\w*-$").is_match(before) {
        return None;
    }
    // Elasticsearch prints a byte count with its human size: `[3844551592/3.5gb]`.
    if before.ends_with('[') && found.name("unit").is_none() && regex!(r"^/\d[\d.]*[kmgtp]?b\]").is_match(after) {
        let count = found.name("int")?.as_str().replace(',', "").parse().ok()?;
        return Some(Found { start, end, bytes: count });
    }
    // (Its human size repeats the count: not a size of its own.)
    if regex!(r"\[\d+/$").is_match(before) {
        return None;
    }
    // A usage pair of bare counts after a byte count shares its unit (Guppy's `CUDA device 0
    // reached memory limit while trying to allocate 414853888 bytes, currently at
    // 3317279728/4100456448`).
    // (The slash first: most numbers have none beside them, and pay for no search of the line.)
    let pair_after_bytes = found.name("unit").is_none()
        && found.name("frac").is_none()
        && (before.ends_with('/') || regex!(r"^/\d+\b").is_match(after))
        && regex!(r"(?i)\b\d+\s*bytes\b[^.;]{0,40}?\bat\s+(?:\d+/)?$").is_match(before);
    if pair_after_bytes {
        let count = found.name("int")?.as_str().replace(',', "").parse().ok()?;
        return Some(Found { start, end, bytes: count });
    }
    // (An underscore that closes Markdown's italics ends it: `of size 1.1 Gb_.`)
    let italics_end =
        after.strip_prefix('_').is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'));
    // (A slash goes on to another figure in `260.3 MiB/476.8 MiB used`, not in `MiB/s`.)
    let slash_pair = regex!(r"^/\d").is_match(after)
        && (found.name("unit").is_some() || regex!(r"^/\d[\d.]*\s?[KMGTPE]i?B\b").is_match(after));
    // (A unit in words glued to the next line's first word, its line break lost: basisu's
    // `malloc() failed allocating 75497472 bytesAborted`.)
    let next_line_glued =
        found.name("unit").is_some_and(|unit| unit.as_str().ends_with(|c: char| c.is_ascii_lowercase()))
            && after.starts_with(|c: char| c.is_ascii_uppercase());
    if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '/')
        && !italics_end
        && !slash_pair
        && !next_line_glued
    {
        return None;
    }
    // A count listed right after a byte count shares its unit (SBCL's `24576 bytes
    // available, 32776 requested.`, ptxas' `(0xc180 bytes, 0xc000 max)`).
    let listed_after_bytes = regex!(r"(?i)\b(?:\d+|0x[0-9a-f]+)\s*bytes(?:\s+\w+)?,\s*$").is_match(before);
    if let Some(hex) = found.name("hex") {
        // An address has no unit: a hexadecimal number is a size only with one (`0x02800000
        // bytes`), or where the words name a size (`Heap size: 0x89BED0`).
        let unit = match found.name("unit") {
            Some(unit) => UNITS.iter().find(|u| u.suffix == unit.as_str())?,
            None if names_a_size(before) || listed_after_bytes => &UNITS[0],
            None => return None,
        };
        let count = u64::from_str_radix(hex.as_str(), 16).ok()?;
        return Some(Found { start, end, bytes: count.checked_mul(1u64.checked_shl(unit.shift)?)? });
    }
    let frac = found.name("frac").map_or(String::new(), |frac| frac.as_str().replace(',', "."));
    // (Digits after a comma are decimals only before a unit: `64,32` alone is two numbers.)
    if found.name("frac").is_some_and(|frac| frac.as_str().starts_with(',')) && found.name("unit").is_none() {
        return None;
    }
    // (Points between thousands, as European locales print them, only before a unit:
    // `failed to allocate 470.286.336 bytes`; alone they may be an address's.)
    let int = found.name("int")?.as_str();
    if int.contains('.') && found.name("unit").is_none() {
        return None;
    }
    let number = format!("{}{frac}", int.replace([',', '.'], ""));
    let bytes = |shift: u32| size::scaled(number.trim_end_matches('.'), shift).and_then(|b| u64::try_from(b).ok());
    if let Some(suffix) = found.name("unit") {
        let unit = UNITS.iter().find(|u| u.suffix == suffix.as_str())?;
        let separator = found.name("sep").map_or("", |s| s.as_str());
        let glued = separator.is_empty();
        let hyphen_ok = !separator.contains('-') || unit.shift == 0;
        // A lone letter apart from the digits is a unit where the words name a size (Kokkos'
        // `Allocation of size 1.279 G failed`).
        let named_size = separator == " " && names_a_size(before);
        // (Columns of spaces before the unit, as Fortran prints a figure (Quantum Package's
        // `3.40837863087654       GB required`), only before a unit of more than a letter.)
        let column = separator.len() > 1 && separator.trim().is_empty();
        if (unit.glued_only && !glued && !named_size) || !hyphen_ok || (column && unit.suffix.len() < 2) {
            return None;
        }
        return Some(Found { start, end, bytes: bytes(unit.shift)? });
    }
    // A number of a pair whose second figure carries the unit (`21 of   950 MiB`, `8.0/64.0 GiB`);
    // not the number that a thing's name ends in (sPyNNaker's `Could not allocate recording
    // region 0 of 123458944 bytes`).
    let numbered_thing = || {
        regex!(r"(?i)\b(?:region|bank|device|gpu|rank|node|core|thread|worker|slot|channel|card|layer|block|chunk|segment|pool|zone|stage|step|batch|epoch|partition)\s+$")
            .is_match(before)
    };
    if let Some(paired) =
        regex!(r"^\s*(?:of|/)\s*\d[\d.,]*\s?([A-Za-z]+)\b").captures(after).filter(|_| !numbered_thing())
    {
        if let Some(unit) = UNITS.iter().find(|u| u.suffix == &paired[1]) {
            return Some(Found { start, end, bytes: bytes(unit.shift)? });
        }
    }
    // A unit named before the figure: in parentheses after the figure's name (Flink's `required
    // (Mb): 5120, allocated (Mb): 1965`), or in words (GlusterFS' `current memory usage in
    // kilobytes 68936`).
    if let Some(unit) = regex!(r"(?:\(([A-Za-z]{1,5})\)\s*[:=]|(?i:\bin ([a-z]*bytes|[KMGT]i?B))\s*[:=]?)\s*$")
        .captures(before)
        .and_then(|named| named.get(1).or(named.get(2)))
        .and_then(|named| UNITS.iter().find(|unit| unit.suffix == named.as_str() && !unit.glued_only))
    {
        return Some(Found { start, end, bytes: bytes(unit.shift)? });
    }
    // A bare number: an integer on its own (not in a shape's list) that the
    // words next to it name as bytes.
    // (Or alone in brackets: ND4J's `Bytes: [1077940224]`.)
    let alone = before.is_empty()
        || before.ends_with(|c: char| c.is_whitespace() || c == '=' || c == ':' || c == '(')
        || (before.ends_with('[') && after.starts_with(']'));
    // A point right after the digits ends the sentence (`request of size 2048.`); zeros after it
    // are C's `%f` of a count (DarkPlaces' `alloc of size 18446744073474398208.000000`).
    let decimals = found.name("frac").is_some_and(|d| d.as_str() != "." && !d.as_str()[1..].bytes().all(|b| b == b'0'));
    // Two digits are a byte count only where the words say so outright
    // (`of size 16`, TensorFlow's `ran out of memory when allocating 0.`).
    let short_ok = found.name("int").is_some_and(|int| int.len() >= 3)
        || listed_after_bytes
        // (Android's `Failed to allocate a 60 byte allocation with 0 free bytes and …`.)
        || regex!(r"(?i)^\s*(?:free |available )?bytes?\b").is_match(after)
        || regex!(r"(?i)\b(?:of size|allocat(?:e|ing))\s*$").is_match(before)
        // (RKNN's `failed to malloc npu memory, size: 80, flags: 0xa`.)
        || regex!(r"(?i)\bmemory,?\s+size\s*[:=]\s*$").is_match(before)
        // (ONNX Runtime's `Available memory of 0 is smaller than requested bytes of 5505024`.)
        || regex!(r"(?i)\bavailable memory of\s*$").is_match(before);
    // What follows a full stop is the next sentence, not the number's words.
    let sentence_ends = found.name("frac").is_some_and(|d| d.as_str() == ".");
    let after = if sentence_ends { "" } else { after };
    if decimals || !short_ok || !alone || !(listed_after_bytes || bare_is_bytes(before, after)) {
        return None;
    }
    Some(Found { start, end, bytes: bytes(0)? })
}

/// Whether the words right before a number name it a size (`Heap size: `, `of size `).
fn names_a_size(before: &str) -> bool {
    // (Or as its bytes: ND4J's `cudaMalloc failed; Bytes: [1077940224]`; or abbreviated, the
    // kernel's `swiotlb buffer is full (sz: 4000 bytes)`; or as the room it needed, x86's `Out of
    // SW-IOMMU space for 65536 bytes`.)
    regex!(r"(?i)\b(?:size(?: of)?|sz|bytes|space for)\s*[:=]?\s*\[?$").is_match(before)
}

/// Words that may follow a bare byte count (`allocate 99485220864 on device 0`,
/// `520960 free bytes`, `of size 118497280 failed`, Paddle's `Fail to alloc memory of
/// 5060694016 size`), as may any participle (TensorRT's `on requested size of 11580055552
/// detected for tactic`); any other word says the number counts something else (`7899
/// pages`, `23 tokens`).
const BARE_NEXT_WORDS: &[&str] = &[
    "on",
    "in",
    "at",
    "for",
    "with",
    "from",
    "to",
    "of",
    "but",
    "and",
    "or",
    "which",
    "within",
    "when",
    "while",
    "exceeded",
    "exceeds",
    "is",
    "was",
    "free",
    "available",
    "used",
    "allocated",
    "bytes",
    "total",
    "failed",
    "requested",
    "could",
    "cannot",
    "not",
    "because",
    "according",
    "error",
    "size",
    "currently",
];

/// Whether a bare number is a byte count: the words just before it name a
/// size's role (or a size: `buffer of size`), or the words after it do
/// (`520960 free bytes`); and nothing says it counts something else.
fn bare_is_bytes(before: &str, after: &str) -> bool {
    if regex!(r"(?i)\b(?:errno|code|line|pid|device|gpu|rank|step|task|port|version|node|layer|thread|error|epoch|iteration|id|index|signal|status|exit|batch|retries|attempt)\s*[:=#]?\s*$").is_match(before)
        || regex!(r"(?i)\b(?:batch|block|page|chunk|beam|window|kernel|hidden|vocab|sample|tile|step)[_ ]size\s*[:=]?\s*$").is_match(before)
        // (A length in tokens or items: `sequence length 4096`, `max_len=512`.)
        || regex!(r"(?i)\b(?:seq|sequence|context|ctx|input|output|prompt|token|max|string|name|path|key|array|list|vector)[_ ]?len(?:gth)?\s*[:=]?\s*$").is_match(before)
        // (A scheduler's figure of use whose unit it does not print: HTCondor's `due to
        // memory usage 3000000.`, in its own units.)
        || regex!(r"(?i)\bdue to memory usage\s*$").is_match(before)
        // (TeX counts its memory in words: `[main memory size=3000000]`, LuaTeX's `[node memory
        // size=50000000]`, `[font memory=…]`.)
        || regex!(r"(?i)\b(?:main|node|font|extra) memory(?: size)?\s*=\s*$").is_match(before)
        // (A tensor's dimension in its proto, TensorFlow's `shapedim { size: 10000 } dim { …`.)
        || regex!(r"dim \{ size: $").is_match(before)
        // (A source line after its function, in a location's list: flow123d's `Error
        // (.../src/system.cc, xmalloc(), 315): Not enough memory …`.)
        || regex!(r"\w\(\),\s*$").is_match(before)
        // (A source line: `[dynarmic.cpp->Java_…_nativeInitialize:583]`, `alloc.c:128`.)
        || regex!(concat!(source_file_extension!(), r"(?:(?:->|::)\w+)?:$")).is_match(before)
        // (A function and its line in brackets: Adreno's `<gsl_memory_alloc_pure:2784>`; not a
        // field, Ascend's `[size:2147483648]`.)
        || (regex!(r"[<\[][A-Za-z]\w*_\w*:$").is_match(before)
            && !regex!(r"(?i)(?:size|bytes|len|length)\s*:$").is_match(before)
            && after.starts_with(['>', ']']))
    {
        return false;
    }
    // (A count of pages: the kernel's `HugeTLB: allocating 1024 of page size 2.00 MiB failed`.)
    if regex!(r"(?i)^\s*of\s+(?:huge\s*)?pages?\b").is_match(after) {
        return false;
    }
    let next_word = regex!(r"^\s*([A-Za-z%]\w*)").captures(after).map(|c| c[1].to_lowercase());
    // Another field's label may follow a field's value (Postgres' `request size 1225135280
    // Detail: Hint:`, PM2's `current_memory=46522368 max_memory_limit=…`, MMseqs2's `Memory
    // limit: 14845796352 dbreader/writer need: …`), or a code's name
    // for a field with its value after a space (XRT's `size  419795968 xrt_.flags 0x1000000`).
    let next_field =
        regex!(r"^\s+[A-Za-z][\w /]{0,40}[:=]|^\s+[A-Za-z]\w*[_.][\w.]*\s+(?:0x[0-9A-Fa-f]+|\d)").is_match(after);
    let participle = |word: &str| word.len() > 4 && word.ends_with("ed") && !word.ends_with("eed");
    let follows_ok =
        next_field || next_word.as_deref().is_none_or(|word| BARE_NEXT_WORDS.contains(&word) || participle(word));
    if !follows_ok {
        return false;
    }
    if role_after(after).is_some() {
        return true;
    }
    // The last few words before the number.
    let tail = before.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '=' | '(' | '['));
    let start = tail.char_indices().rev().filter(|(_, c)| c.is_whitespace()).nth(5).map_or(0, |(at, _)| at);
    let tail = &tail[start..];
    vocabulary::compiled().roles_before.is_match(format!("{tail} ").as_bytes())
        || regex!(r"(?i)\b(?:size|bytes?|buffer|memory)\b").is_match(tail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oom::line::normalise;

    /// Every line is read as a record of a failure.
    fn assert_records(lines: &[&str]) {
        for line in lines {
            let reading = read(&normalise(1, line.as_bytes()));
            assert!(reading.as_ref().is_some_and(|r| r.statement), "{line}: {reading:?}");
        }
    }

    fn reading(text: &str) -> Reading {
        read(&normalise(1, text.as_bytes())).unwrap_or_else(|| panic!("no failure words in {text}"))
    }

    #[test]
    fn sizes_take_the_role_of_their_words() {
        let r = reading("Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)");
        assert_eq!(r.kind, Kind::PytorchCudaOom);
        assert_eq!(r.memory_space.as_deref(), Some("GPU 0"));
        assert_eq!(r.sizes.requested, Some(20 << 20));
        assert_eq!(r.sizes.capacity, size::parse("1.96GiB").and_then(|b| u64::try_from(b).ok()));
        assert_eq!(r.sizes.used, size::parse("1.24GiB").and_then(|b| u64::try_from(b).ok()));
        assert_eq!(r.sizes.free, size::parse("2.88MiB").and_then(|b| u64::try_from(b).ok()));
    }

    #[test]
    fn a_decimal_comma_before_a_unit_is_a_decimal() {
        // llama.cpp in a comma locale: 1900.00 MiB.
        let r = reading("ggml_cuda_host_malloc: failed to allocate 1900,00 MiB of pinned memory: invalid argument");
        assert_eq!(r.sizes.requested, Some(1900 << 20));
        // Three digits after the comma group thousands.
        let r = reading("failed to allocate 1,024 MiB of device memory");
        assert_eq!(r.sizes.requested, Some(1024 << 20));
    }

    #[test]
    fn figures_under_names_joined_by_slashes_take_their_roles() {
        let r = reading("Shutting down JVM after 8 consecutive periods of measured GC thrashing. Memory is used/total/max = 9819/11025/11025 MB, GC last/max = 99.84/99.84 %");
        assert_eq!(r.sizes.used, Some(9819 << 20));
        assert_eq!(r.sizes.capacity, Some(11025 << 20));
    }

    #[test]
    fn bare_byte_counts_need_words_that_name_them() {
        let r =
            reading("Not enough memory to allocate 99485220864 on device 0 within provided limit. limit=2147483648");
        assert_eq!((r.sizes.requested, r.sizes.capacity), (Some(99_485_220_864), Some(2_147_483_648)));
        assert_eq!(r.memory_space.as_deref(), Some("device 0"));
        assert_eq!(r.kind, Kind::RuntimeAllocationFailure);
        let r = reading("Out of memory allocating 322,122,547,200 bytes (allocated so far: 0 bytes).");
        assert_eq!((r.sizes.requested, r.sizes.used), (Some(322_122_547_200), Some(0)));
        let r = reading("MIOpen Error: /data/repo/MIOpen/src/hip/handlehip.cpp:68: Memory not available to allocate buffer: 528515072");
        assert_eq!(r.sizes, Sizes { requested: Some(528_515_072), ..Sizes::default() });
        // A hexadecimal count is a size with a unit only; an address has none.
        let r =
            reading(":1:memory.cpp               :292 : 0853955998 us: Can't allocate memory size - 0x02800000 bytes!");
        assert_eq!(r.sizes, Sizes { requested: Some(0x0280_0000), ..Sizes::default() });
        // (Points between thousands, before a unit; spaCy's cymem `assigning` a request.)
        let r = reading(
            "Native memory allocation (malloc) failed to allocate 470.286.336 bytes for committing reserved memory.",
        );
        assert_eq!(r.sizes.requested, Some(470_286_336));
        assert_eq!(reading("MemoryError: Error assigning 67108864 bytes").sizes.requested, Some(67_108_864));
        // (A rounded request restated as an exact count further on is that count.)
        let r = reading("error:failed to allocate buffer, size = 16571.89 MiB ggml_gallocr_reserve_n: failed to allocate Metal buffer of size 17376872352");
        assert_eq!(r.sizes.requested, Some(17_376_872_352));
        // (Alone, they may be an address's.)
        assert_eq!(reading("Out of memory: request from 192.168.100.200 refused").sizes.requested, None);
        let r = reading("Failed to allocate memory at 0x7f3a2c000000 of size 4096");
        assert_eq!(r.sizes, Sizes { requested: Some(4096), ..Sizes::default() });
        // A function's line in brackets is no count.
        let r = reading("[   +1 ms] E/Adreno-GSL( 7631): <gsl_memory_alloc_pure:2784>: ERROR: kgsl_sharedmem_alloc() failed! Allocation size: (9280 KB); Flags: (0x100600)");
        assert_eq!(r.sizes, Sizes { requested: Some(9280 << 10), ..Sizes::default() });
        assert_eq!(r.kind, Kind::RuntimeAllocationFailure);
    }

    #[test]
    fn units_and_counts_the_words_give() {
        // A unit in parentheses after the figure's name.
        let r = reading("java.lang.OutOfMemoryError: Could not allocate enough memory segments for NetworkBufferPool (required (Mb): 5120, allocated (Mb): 1965, missing (Mb): 3155). Cause: Direct buffer memory.");
        assert_eq!((r.sizes.requested, r.sizes.used), (Some(5120 << 20), Some(1965 << 20)));
        // A short count that `bytes` names, and jemalloc's `active`.
        let r = reading("java.lang.OutOfMemoryError: Failed to allocate a 60 byte allocation with 0 free bytes and -663KB until OOM");
        assert_eq!((r.sizes.requested, r.sizes.free), (Some(60), Some(0)));
        // A size before `allocation`, a call's argument.
        let r = reading("[GSD-13338] Arc Pro B65 Battlemage: zeMemAllocDevice returns ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY for 20 GiB allocation despite 31 GiB free VRAM; same model works with Vulkan");
        assert_eq!((r.sizes.requested, r.sizes.free), (Some(20 << 30), Some(31 << 30)));
        let r = reading("alloc(16749 bytes) failed occasionally occurs when you upgrade using http (IDFGH-11730)");
        assert_eq!(r.sizes.requested, Some(16749));
        // Figures named after them, and a hexadecimal size named by what it is the size of.
        let r = reading(
            "memory budget exceeded: 378880 bytes requested, 511938560 currently allocated, 512000000 bytes in budget",
        );
        assert_eq!(
            (r.sizes.requested, r.sizes.used, r.sizes.capacity),
            (Some(378_880), Some(511_938_560), Some(512_000_000))
        );
        let r = reading("QnnDsp <E> \"_dec_block_0_norm1_1_InstanceNormalization\" generated: Requires 0x2400000 bytes of TCM, which is greater than the TCM size of 0x800000!");
        assert_eq!((r.sizes.requested, r.sizes.capacity), (Some(0x240_0000), Some(0x80_0000)));
        let r = reading("<jemalloc>: Error in malloc(): out of memory. Requested: 1266803878728, active: 317336846336");
        assert_eq!((r.sizes.requested, r.sizes.used), (Some(1_266_803_878_728), Some(317_336_846_336)));
    }

    #[test]
    fn round_126_to_140s_records_are_read_with_their_figures() {
        // gettext's `out of memory` and ENOMEM in four languages.
        assert_records(&[
            "memoria agotada",
            "pg_restore: error: mémoire épuisée",
            "Errore: memoria esaurita",
            "mmap: Impossible d'allouer de la mémoire",
            "fork: No se puede asignar memoria",
        ]);
        // What a buffer holds, then what it was to grow by.
        let r = reading(
            "ERROR: out of memory DETAIL: Cannot enlarge string buffer containing 1073741769 bytes by 76 more bytes.",
        );
        assert_eq!((r.sizes.requested, r.sizes.used), (Some(76), Some(1_073_741_769)));
        // A count of pages, then their size: neither is the request.
        let r = reading("HugeTLB: allocating 1024 of page size 2.00 MiB failed.  Only allocated 200 hugepages.");
        assert_eq!(r.sizes.requested, None);
        let r = reading("DMA: Out of SW-IOMMU space for 65536 bytes at device 0000:00:1f.2");
        assert_eq!(r.sizes.requested, Some(65_536));
        assert_records(&[
            "RuntimeError: <function umfpack_dl_symbolic at 0x00000244E656DF28> failed with UMFPACK_ERROR_out_of_memory",
        ]);
        assert_records(&[
            "ERROR: LoadError: syntax: invalid syntax (memory-error out of gc handles)",
            "Fatal error: Allowed memory size of ... bytes exhausted (tried to allocate ... bytes) in /app/www/public/include/functions_picture.inc.php on line 146",
            "0: ABORT: AQUIRE_HGRID: ilnd_global allocation failure",
            "MemoryError: Allocation failed (probably too large).",
        ]);
        let r = reading("MemoryError: Task 'getattr-d071745a' has 197.16 GiB worth of input dependencies, but worker tcp://127.0.0.1:37893 has memory_limit set to 35.88 GiB.");
        assert_eq!(r.sizes.requested, size::parse("197.16GiB").and_then(|b| u64::try_from(b).ok()));
        assert_records(&["LabVIEW: (Hex 0x2) Memory is full.", "glib: rendering error: NoMemory"]);
        let r = reading("MemoryError: Current shared memory cache is smaller than required: 2048.0 MiB < 4902.0 MiB. Try running legendary with \"--enable-reordering\" to reduce memory usage.");
        assert_eq!((r.sizes.capacity, r.sizes.requested), (Some(2048 << 20), Some(4902 << 20)));
        // The failure as the cause of what happened, not a noun's qualifier.
        let log =
            "```\nFatal error: Exit code 1 ()\nerrAbort re-entered due to out-of-memory condition. Exiting.\n```\n";
        let report = crate::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!(report.events.len(), 1);
        let r = reading("`Fatal compilation error: Out of memory asking for 61222912.");
        assert_eq!(r.sizes.requested, Some(61_222_912));
        let r = reading("ERROR: stack overflow: max = 299869096, available = 97857896, requested = 106218000 (ne = 0, nf = 0, nefc = 3988, ncon = 668)");
        assert_eq!(
            (r.sizes.requested, r.sizes.free, r.sizes.capacity),
            (Some(106_218_000), Some(97_857_896), Some(299_869_096))
        );
        let r = reading("Message: Fail to calloc nmemb=128976896 elements of size=8 bytes");
        assert_eq!(r.sizes.requested, Some(1_031_815_168));
        let r = reading("Error: vector memory limit of 100.0 Gb reached, see mem.maxVSize()");
        assert_eq!(r.sizes.capacity, Some(100 << 30));
        let r = reading("Failed to grow the heap from 245432320 bytes to 610205696 bytes, not enough memory!");
        assert_eq!((r.sizes.requested, r.sizes.capacity), (Some(610_205_696), Some(245_432_320)));
        let r = reading("Error (.../src/system.cc, xmalloc(), 315): Not enough memory for allocating 4294967295 bytes");
        assert_eq!(r.sizes.requested, Some(4_294_967_295));
    }

    #[test]
    fn round_141s_records_are_read() {
        // A program's own error in allocating, and SuperLU's work arrays that could not grow.
        assert_records(&["`error with allocate: integer iw`", "Can't expand MemType 0: jcol 798940"]);
        let r = reading(
            "Child process error: PHPStan process crashed because it reached configured PHP memory limit: 128M",
        );
        assert_eq!(r.sizes.capacity, Some(128 << 20));
        assert_records(&["# Java Heap Space"]);
        let r = reading("Could not allocate recording region 0 of 123458944 bytes, available was 123458908 bytes (recording.c: 193)");
        assert_eq!((r.sizes.requested, r.sizes.free), (Some(123_458_944), Some(123_458_908)));
        assert_records(&[
            "E (139) lcd_panel.rgb: esp_lcd_new_rgb_panel(289): alloc frame buffers failed",
            "[HsH_Server] - Error: NoMemory. Size: 117",
            "Heap usage is constantly growing until it crushes the nodejs instance and I get \"JavaScript heap out of memory\".",
            "TypeError: OnigRegexp.last_match [15.2.15.6.3] => allocation failure of OnigMatchData (mrbgems: mruby-onig-regexp)",
            "Resizing large jpeg textures fails with `error: maxMemoryUsageInMB limit exceeded`.",
            "# Error: cannont allocate vector of size 4.6 Mb",
        ]);
        // One tensor that failed at two sites of the code is two failures.
        let log = "2021-04-08 11:15:55.436167: W tensorflow/core/framework/op_kernel.cc:1767] OP_REQUIRES failed at concat_op.cc:161 : Resource exhausted: OOM when allocating tensor with shape[173107136,50] and type double on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n2021-04-08 11:15:55.483135: W tensorflow/core/framework/op_kernel.cc:1767] OP_REQUIRES failed at matmul_op.cc:481 : Resource exhausted: OOM when allocating tensor with shape[173107136,50] and type double on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n";
        assert_eq!(crate::oom::scan("log", log.as_bytes()).unwrap().events.len(), 2);
        let r = reading("vector: malloc() failed allocating 75497472 bytesAborted");
        assert_eq!(r.sizes.requested, Some(75_497_472));
        // The Arduino IDE's size of the program in flash is not the memory that ran out.
        let log = "Insufficient memory; see https://support.arduino.cc/hc/en-us/articles/360013825179 for ways to reduce usage\nSketch uses 13262 bytes (5%) of program storage.\nGlobal variables use 9997 bytes (122%) of dynamic memory, leaving -1805 bytes for local variables. Maximum 8192 bytes\n";
        let report = crate::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!((report.events[0].used_bytes, report.events[0].capacity_bytes), (Some(9997), Some(8192)));
        // A message under an exception's head that leaves it to the next line, and a line cut
        // inside a word at a terminal's width.
        let log = "RuntimeError: Please report this error to dials-support@lists.sourceforge.net:\n       There was a problem allocating memory for shoeboxes. Possible solutions\n         Required shoebox memory: 255.623 GB\n";
        let report = crate::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!(report.events[0].requested_bytes, Some(274_473_106_276));
        let log = "[01-Feb-2019 20:50:50 UTC] PHP Fatal error:  Allowed memory size of 268435456 by\ntes exhausted (tried to allocate 262144 bytes) in /usr/home/wbcci/public_html/wb\n";
        let report = crate::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!(
            (report.events[0].capacity_bytes, report.events[0].requested_bytes),
            (Some(268_435_456), Some(262_144))
        );
        // The program's message in a quote opened on the line before: the writer's hedge and
        // `you` after the quote are not the message's.
        let log = "the console shows \"pyvips.error: unable to call dzsave\n  vips_tracked: out of memory --- size == 26784MB\", maybe this is a simple problem for you guys, but for me it will help a lot.\n";
        let report = crate::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!(report.events.len(), 1);
        assert_eq!(report.events[0].requested_bytes, Some(26784 << 20));
        // Two failures under the same field of a report are two, not one sentence wrapped.
        let log = "Reason: failed to allocate space for elist ranges\nAn unexpected error happened and dw_bw can't continue.\nReason: failed to allocate space for rlist ranges\n";
        let report = crate::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!(report.events.len(), 2);
    }

    #[test]
    fn round_148s_records_are_read() {
        // A library's exception class by its whole name, the verb for the noun, and macOS' malloc
        // cut to the kernel's refusal.
        assert_records(&[
            "I'm trying example 506_FrameField, it builds and run on my win7 machine, but on both of my win10 it throws a BadAllocation exception at:",
            "# Memory allocate error at VRMFirstPerson.Setup for large mesh",
        ]);
        let r = reading("*** mach_vm_map(size=18446744066256998400) failed (error code=3)");
        assert_eq!(r.sizes.requested, Some(18_446_744_066_256_998_400));
        // An assertion that tells the allocation it attempted; linkers' RAM areas overflowed.
        assert_records(&[
            "sources/gc/memory_pool.c:100: pool_expand: Assertion `0 && \"Attempt to allocate an unusually large memory. The memory management does not seem to be working as intended.\"' failed.",
            "ld: /home/u/3dshax/3dshax_arm9.elf section `.text' will not fit in region `memregion'",
            "ld: region `itcm' overflowed by 10128 bytes",
        ]);
        let r = reading("When linking ld65 claims that : `Segment 'ZEROPAGE' overflows memory area 'ZP' by 26 bytes`");
        assert_eq!(r.sizes.exceeded_by, Some(26));
        // What the failure made impossible, told by the one it happened to; a complaint, then
        // the failure met in the same sentence.
        assert_records(&[
            "# Can no longer compile our app due to OOM compiler crash on Dart 2.5.x",
            "# [BUG] Latest master takes up too much memory and fails with Fatal error: out of memory",
        ]);
        assert!(reading("Scapy 2.4.2 uses too much memory when sending packets").talk);
        // A message's figures on the next line, its words split before them.
        let log = "E/AndroidRuntime(18113): java.lang.OutOfMemoryError: (Heap \nSize=32775KB, Allocated=29163KB, Bitmap Size=0KB)\n";
        let report = crate::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!(
            (report.events[0].capacity_bytes, report.events[0].used_bytes),
            (Some(32775 << 10), Some(29163 << 10))
        );
        // A cause the writer only supposes for the error they met.
        assert!(
            reading("but I keep getting illegal memory errors that may be related to OOM but I am not too sure").talk
        );
        // A title's doubled letter; data too large for the memory there is.
        assert_records(&["# TractSeg bedpostX out of memoryy"]);
        let r = reading("ERROR  K-mer Counting   (kmer_data.cpp : 353)   The reads contain too many k-mers to fit into available memory. You need approx. 142.954GB of free RAM to assemble your dataset");
        assert_eq!(r.sizes.requested, Some(153_495_688_708));
        // A memory's ceiling hit, and PHP's message with its middle cut.
        assert_records(&[
            "# IfcImporter.process() aborts on IFC files >~2GB: WASM linear memory ceiling hit during conversion",
        ]);
        let r = reading(
            "into a CSV brings up this error \"Fatal error: Allowed memory size of 1342177728bytes in C:\\...\\htdocs",
        );
        assert_eq!(r.sizes.capacity, Some(1_342_177_728));
        // A `when` of the writer's own doing, then what they met: not a condition.
        let r = reading("When using the report page to export the PDFs FpdfTrait.php crashes with Allowed memory size of 134217728 bytes exhausted (tried to allocate 1069056 bytes)");
        assert_eq!((r.sizes.capacity, r.sizes.requested), (Some(134_217_728), Some(1_069_056)));
        assert_records(&["When trying to save a pdf I get the following error \"Allowed memory size of 134217728 bytes exhausted (tried to allocate 39062497 bytes)\""]);
        // The same program's next line in the same second goes on with its message, prefixed or not.
        let log = "[2016-01-05 00:22:11 - Emulator] emulator: The memory needed by this AVD exceeds the max specified in your HAXM configuration.\n[2016-01-05 00:22:11 - Emulator] emulator: AVD      RAM size = 1536 MB\n[2016-01-05 00:22:11 - Emulator] emulator: HAXM max RAM size = 512 MB\n";
        let report = crate::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!(
            (report.events[0].requested_bytes, report.events[0].capacity_bytes),
            (Some(1536 << 20), Some(512 << 20))
        );
    }

    #[test]
    fn a_size_pair_is_what_is_used_of_a_capacity() {
        let r = reading("Container killed by YARN for exceeding memory limits. 7.2 GB of 4.2 GB virtual memory used.");
        assert_eq!(r.kind, Kind::HostOom);
        assert_eq!((r.sizes.used, r.sizes.capacity), (Some(7_730_941_133), Some(4_509_715_661)));
    }

    #[test]
    fn a_size_restated_exactly_is_the_exact_one() {
        let r = reading("Failed to allocate device memory of 104.85GiB (112583507968 bytes): RESOURCE_EXHAUSTED");
        assert_eq!(r.sizes.requested, Some(112_583_507_968));
        // A different figure in parentheses is not a restatement.
        let r = reading("failed to allocate 1.00GiB (free 524288000 bytes)");
        assert_eq!((r.sizes.requested, r.sizes.free), (Some(1 << 30), Some(524_288_000)));
    }

    #[test]
    fn figures_before_the_message_are_not_its_own() {
        let r = reading(" 42.0 MiB /  60.2 MiB ( 70 %)   8.0 MiB/s in  5s ETA:  2smemory allocation of 166442784 bytes failedsh: line 371: 18018 Aborted");
        assert_eq!(r.sizes, Sizes { requested: Some(166_442_784), ..Sizes::default() });
        assert_eq!(r.kind, Kind::HostOom);
    }

    #[test]
    fn a_c_suffix_is_the_numbers_and_a_source_line_is_no_size() {
        assert_eq!(
            reading("Error: Garbage collector could not allocate 16384u bytes of memory for major heap section.")
                .sizes
                .requested,
            Some(16384)
        );
        let r = reading("nativeInitialize mmap failed[dynarmic.cpp->Java_nativeInitialize:583] size=0x8000000, errno=1455, msg=Unknown error");
        assert_eq!(r.sizes.requested, Some(0x800_0000));
    }

    #[test]
    fn a_program_that_names_itself_or_its_subject_reports_its_failure() {
        // A program's path before its message is no change's tag (`test:`); a thing that could
        // not allocate is the subject of the failure, not a name for it.
        assert_records(&[
            "./test: Failed to allocate memory in space 'device'.",
            "# The browser could not allocate enough memory for the WebGL content.",
        ]);
    }

    #[test]
    fn a_title_that_fixes_an_exception_by_its_class_reports_it() {
        // An issue a crash reporter opened, a pull request's and an issue's titles.
        assert_records(&[
            "Fix java.lang.OutOfMemoryError in Crashes.java line 923",
            "Fix OutOfMemoryException: array dimensions exceeded supported range",
            "Fix java.lang.OutOfMemoryError issue due to driver-memory parameter not being picked by spark",
        ]);
    }

    #[test]
    fn a_pasted_exception_with_its_figures_reports_it_in_a_persons_sentence() {
        assert_records(&[
            "But now I believe the main reason is MemoryError : Unable to allocate 9.90 GiB for an array with shape (310385, 8563) and data type float32 .",
        ]);
        let named = reading("I believe the reason is torch.OutOfMemoryError: CUDA out of memory.");
        assert!(!named.statement, "{named:?}");
    }

    #[test]
    fn round_85_to_90s_records_are_read() {
        assert_records(&[
            // A title's failure after the circumstance a comma closes, with its full stop.
            "Qwen3-Reranker-0.6B 当待排序内容大于3总tokens大于5k，CUDA out of memory.",
            // Windows' WIL record: its kind, count and thread before the HRESULT.
            r"Status Message: D:\a\onnxruntime\onnxruntime\onnxruntime\core\providers\dml\DmlExecutionProvider\src\FusedGraphKernel.cpp(365)\onnxruntime.dll!00007FFA8BA1E00A: (caller: 00007FFA8BA1C7FC) Exception(2) tid(5780) 8007000E Not enough memory resources are available to complete this operation.",
            // A problem met, like a message that quotes the error it met in turn.
            r#"By the way, i run your example successfully yesterday, but today i met a problem like "Critical error in pipeline: [/opt/dali/dali/util/cuda_utils.h:69] CUDA runtime api error "out of memory" Current pipeline object is no longer valid." I restart the kernel"#,
            // Erlang's process over its max_heap_size.
            "     Context:          maximum heap size reached",
        ]);
        assert_records(&[
            // A result glued to the step a program printed in progress.
            "Generated bitmap tables...Insufficient memory available Segmentation fault",
            // A message quoted cut at its last letter.
            r#"With this new v2.0 i get the "cuda error: out of memor (errn_um=2)""#,
        ]);
        // The call named between the words.
        assert_records(&["Error in Rsx_nc4_get_vara_int: NetCDF: Memory allocation (malloc) failure"]);
        // A memory setting too small for the work, its name's acronym last.
        let star = reading("EXITING because of FATAL PARAMETER ERROR: limitGenomeGenerateRAM=31000000000 is too small for your genome SOLUTION: please specify limitGenomeGenerateRAM not less than168253832576 and make that much RAM available");
        assert!(star.statement, "{star:?}");
        assert_eq!(star.sizes.capacity, Some(31_000_000_000));
        // (Not a setting whose name only ends in the letters of `RAM`.)
        assert!(read(&normalise(1, b"PARAM=3 is too small")).is_none());
        // The JVM's heap by name; its maximum, not the off-heap arrays' beside it.
        let codeql = reading("[11/53 eval 10m21s] Query failed: codeql\\csharp-queries\\Security Features\\CWE-011\\ASPNetDebug.ql (Query evaluation ran out of Java heap (Java heap maximum: 1200 MiB, Off-heap arrays maximum: 2000 MiB).");
        assert!(codeql.statement, "{codeql:?}");
        assert_eq!(codeql.sizes.capacity, Some(1200 << 20));
        // Rich's column of the caller, between the message's two rows pasted as one.
        let r = reading("ERROR: CUDA out of memory. batch_handler.py:47         Tried to allocate 1.49 GiB. GPU 0 has a total capacity of 14.58");
        assert_eq!(r.sizes.requested, Some(1_599_875_318), "1.49 GiB");
    }

    #[test]
    fn round_91_to_96s_records_are_read() {
        assert_records(&[
            // After a hedged sentence, the program's own words in the next one.
            "\"An error occurred. The system may have run out of memory, or a bug may have occurred. bad allocation\" during slicing",
            // A hedged cause after the record's error colon.
            "The generation of the video has encountered an error: it is likely that you have unsufficient RAM and / or Reserved RAM allocation should be reduced using 'perc_reserved_mem_max' or using a different Profile.",
            // A bad_alloc thrower's frame in a debugger's stack.
            "#9  0x00007d2cd16a8e45 in qBadAlloc() () from /lib/x86_64-linux-gnu/libQt6Core.so.6",
            // A program's forecast of its own request's failure.
            "[guppy/warning] barcoding::BarcodeGPU::SequenceMemorySetDef::SequenceMemorySetDef: CUDA device 0 will run out of memory while trying to allocate 284079744 bytes",
            "Could not allcate memory(minifump wil be created).",
            "GAPError: Error, reached the pre-set memory limit",
        ]);
        // A whole record in inline code; its bare counts after `currently at` share the unit.
        let guppy = reading("`2022-06-13 21:39:18.761342 [guppy/info] CUDA device 0 reached memory limit while trying to allocate 414853888 bytes, currently at 3317279728/4100456448`");
        assert!(guppy.statement, "{guppy:?}");
        assert_eq!(
            (guppy.sizes.requested, guppy.sizes.used, guppy.sizes.capacity),
            (Some(414_853_888), Some(3_317_279_728), Some(4_100_456_448))
        );
        // German: memory running short, given as the cause of an error stated before it.
        let prusa = reading("\u{201c}PrusaSlicer ist auf einen Fehler gesto\u{df}en. Es wurde wahrscheinlich dadurch verursacht, dass der Speicher knapp wird.");
        assert!(prusa.statement, "{prusa:?}");
        // (Not a sentence that only says what may happen, nor a forecast without a request.)
        for talk in [
            "The system may have run out of memory, or a bug may have occurred.",
            "[guppy/warning] CUDA device 0 will run out of memory if you raise the chunk size",
        ] {
            assert!(read(&normalise(1, talk.as_bytes())).is_none_or(|r| !r.statement), "{talk}");
        }
    }

    #[test]
    fn talk_is_not_a_statement() {
        for talk in [
            "I ran out of memory quickly with batch 64.",
            // A purpose that denies it.
            "xz: Reduced the number of threads from 64 to X to not exceed the memory usage limit of .. MiB",
            // What a program is said to do as a rule.
            "# DOM parser allocates too much memory upfront",
            // A failure the writer wishes were raised.
            "1. Why the memory issue in vips library (assuming there is one) is not raised as MemoryError for python to handle gracefully?",
            "This issue occurs literally due to insufficient memory. Please use a smaller model.",
            "throughput. However, if the value is too high, it may cause out-of-memory (OOM) errors.",
            // A condition, a person explaining.
            "In case the process is being killed by the OOM killer, no dump will be available.",
            // What may have happened if a condition holds; a mechanism that may fail.
            "DOCKER WARNING: If your program unexpectedly exits, it might have been terminated by the Out Of Memory killer without a visible notice.",
            "DOCKER WARNING: Docker Out Of Memory handling can be unreliable.",
            "If processes are killed by the oom killer, dmesg should contain information.",
            "This error means you ran out of memory on your GPU.",
            "The Linux Out-Of-Memory (OOM) killer terminates processes when RAM is exhausted. If your job uses more,",
            // Source code that throws or compares with the failure, the failure named as a thing.
            "-    throw std::bad_alloc();",
            "+      res == VK_ERROR_OUT_OF_HOST_MEMORY) {",
            "TIL: didn't know that vmaCreateBuffer could potentially return VK_ERROR_OUT_OF_HOST_MEMORY",
            "Often the cause of a MemoryError is incorrect broadcasting resulting in a very large and incorrect shape.",
            "Specify -w for full OutOfMemoryError stack trace",
            // A failure in place of which another came, one that might come.
            "There are some strange bugs when using large zipped worlds in the web demo. Instead of a user friendly \"out of memory\" error, we get \"TextDecoder\" errors:",
            "_When DevTools is open_ in Opera or Chrome and a large (several MB) image is being handled, I often get a \"Paused before potential out-of-memory crash\".",
            "Error -2 is VK_ERROR_OUT_OF_DEVICE_MEMORY. I would try to reduce the number of threads.",
            // Codes set against each other.
            "For example, EAGAIN vs. ENOMEM for too large a request versus no memory available.",
            // A flag named, a list item that only names the failure.
            "- Added `-XX:+HeapDumpOnOutOfMemoryError` option to Gradle JVM",
            "ZC1674 — Warn on `docker/podman run --oom-kill-disable` or `--oom-score-adj <= -500`",
            "- OOM kill behavior options",
            // An error word only in a clause of what would happen.
            "Why: A memory leak inside then drives the host into OOM reclaim until sshd / journald / init itself is killed.",
            "Fix suggestion: Cap memory with `--memory=<limit>` so the container is killed on overrun; shift heavy workloads to a dedicated node instead of rigging OOM scores.",
            // What a program will do on the failure, a guess, a sentence opening with `when`.
            "liballoc will call `abort` on OOM, not fail the task.",
            "It looks like Error 137 is related to not enough memory. How is Swarm handling the memory allocations for the containers?",
            "When a container is killed by the kernel OOM killer, Pelagos doesn't set the terminated container's `reason` to `OOMKilled`.",
            // An error word only as a name quoted in backticks.
            "Without it, OOM kills are invisible or misattributed to a generic `Error`, which badly hurts debuggability.",
            // A subordinate `when` clause, a change's title, an issue a change closes, a proposal.
            "Docker has out of the box support for notification when a container has been killed by the OOM killer.",
            "fix: OOM when loading from checkpoints",
            "Fix OOM errors when reloading certain large checkpointed models",
            "Fix OutOfMemoryError handling in the loader",
            "- Closes #[torch.OutOfMemoryError: CUDA out of memory. When restoring from checkpoint. ]",
            "Let's add \"oom-killed\" status info for OOM-killed kernels (in addition to \"self-terminated\").",
            // A condition's `should`, a question, a guide, a request, a search, work on the
            // failure, a how-to, a remedy, a message named, a negated cause, `when` before it.
            "running out of request memory should not crash the application",
            "Is this caused by insufficient graphics memory?",
            "PRB: Avoiding \"Insufficient Memory to Run\" Errors (86230)",
            "Buffer creation out of memory warning is incorrect",
            "[Feature Request] java.lang.OutOfMemoryError: Metaspace error",
            "[mm] Cgroup OOM controller",
            "grep -i \"OutOfMemoryError\\|heap space\\|GC overhead\" /var/log/elasticsearch/*.log",
            "[root@boot1 etc]# grep \"out of memory\" /var/log/messages.* ",
            "unable to diagnose OOM",
            "How to Solve GPU Out of Memory Error on Google Colab",
            "- **Init OOM** (large model, KV cache allocation fails): increase `mem_fraction_static`",
            "out of memory message should not require memory allocation",
            "CUDA Out of Memory Solutions",
            "https://github.com/StabilityMan/StabilityGuide/blob/master/docs/diagnosis/jvm/exception/OutOfMemoryError.md#7-kill-process-or-sacrifice-child",
            "My crashes are not due to insufficient memory, even when running with lower batch size where I'm only using 8/11 Gb train.py occasionally crashes silently...",
            "- In `lv_meter_add_needle_line`, `lv_meter_add_needle_img`, `lv_meter_add_arc` and `lv_meter_add_scale_lines` when malloc fails the functions keep going, shouldn't they return NULL after `LV_ASSERT_MALLOC`?",
            // A section heading, code's name and type, a condition and a guide in other languages.
            "### Out-of-memory / 显存溢出",
            "`fs.path.join` can throw `error.OutOfMemory`, and therefore reach the `unreachable`, causing undefined behavior.",
            "C:\\zig\\lib\\std\\build.zig:540:29: error: expected type '?[]const []const u8', found 'error{OutOfMemory}![][]const u8'",
            "Получу ли я эту ошибку в метрике, если ошибка OutOfMemoryError произошла в библиотеке?",
            "Java内存溢出错误：OutOfMemoryError异常分析 — Jackey's Blog",
            "typo: cannot allocated -> Cannot allocate",
            "But because the buffer is meant to be filled completely the computer will finally run out of memory and start to swap heavily.",
            "[优化] 由于内存不足导致游戏崩溃的文案修改",
            "メモリ不足(Out of memory)とはどんな状態?原因や対処法を詳しく解説します!",
            "Out-of-memory (OOM) errors are one of the first barriers beginners hit when training neural networks.",
            "For the oom-kill result, I am unsure if the condition is actually \"**A** service process was terminated\" or if",
            "OOM killer 是什么意思，可以在网上查一下，很多资料，这里不再解释。",
            "GPU 메모리 최적화: OOM 없이 더 크게 훈련하는 법",
            "              printf(\"Fatal: failed to allocate %zu bytes reading user directory for config file.\\n\", strlen(pwd_entry->pw_dir)+14);",
            "[sqlite3] raise MemoryError if sqlite3_open_v2() returns SQLITE_NOMEM",
            "`DeadKernelError` means the Jupyter kernel process was killed. On Kaggle this almost always comes from: 1) CPU/GPU out-of-memory, 2) nbclient timeouts after long silent cells",
            " 在JVM的运行时数据区，除了程序计数器之外，其他区域都有可能会产生OutOfMemoryError异常。",
        ] {
            let reading = read(&normalise(1, talk.as_bytes()));
            assert!(reading.as_ref().is_none_or(|r| !r.statement), "{talk}: {reading:?}");
        }
    }

    #[test]
    fn failure_words_about_another_resource_are_no_memory_failure() {
        for other in [
            "Failed to allocate directory watch: Too many open files",
            "plugin type=\"bridge\" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.22.0.1-10.22.255.254",
            "Error: failed to allocate a pty: open /dev/ptmx: no such file or directory",
            "OSError: [WinError 112] There is not enough space on the disk",
            "google.api_core.exceptions.ResourceExhausted: 429 Quota exceeded for quota metric 'Generate Content API requests per minute'",
            // (Registers and threads per block.)
            "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch",
            // (Flash holds the program, not its memory.)
            "ld: region `FLASH' overflowed by 12 bytes",
            "ld: region `program' overflowed by 12 bytes",
            // (Memory as another thing's name.)
            "error: Error during simulation: \"Invalid Qobj experiment: not enough memory slots.\"",
        ] {
            assert!(read(&normalise(1, other.as_bytes())).is_none(), "{other}");
        }
        // Memory named: memory's failure, whatever else the words say.
        for memory in
            ["Error R14 (Memory quota exceeded)", "RESOURCE_EXHAUSTED: Bandwidth exhausted or memory limit exceeded"]
        {
            assert!(reading(memory).statement, "{memory}");
        }
    }

    #[test]
    fn a_runtime_s_own_name_for_memory_is_read_in_any_spelling() {
        assert_records(&[
            // .NET's Cloo names OpenCL's code in camel case.
            "Cloo.MemoryObjectAllocationFailureComputeException: 'OpenCL error code detected: MemoryObjectAllocationFailure.'",
            // Verilator's parser, as it spelled it.
            "%Error: /home/verilator_proj/rtl/common/mux/mux_wrap.v: 5025: memory exausted.",
            // A code that names the memory within it: the node after it is where, not what, ran out.
            "FSDP raises ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY in multi-node usage",
            // What a thing asked for, more than there was.
            "An application has requested more GPU memory than is available in the system.",
            // Foundation's page allocator, failed (.NET MAUI on iOS).
            "'Objective-C exception thrown.  Name: NSInvalidArgumentException Reason: *** NSAllocateMemoryPages(4425286896) failed",
            // A mark a paste left after the message.
            "RuntimeError: bad allocation_",
            // What happened, in a program's log.
            "[2025-03-07 21:49:33 TP13] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845",
            // A fix's title whose subject failed with the class.
            "Fix ROCm 5.3 test failing with `MemoryError`",
            // The JVM's space that ran out names the host.
            "`OutOfMemoryError: Metaspace` in `execution failed for task ':spotlessJava' java.lang.reflect.InvocationTargetException`",
            // Leptonica's allocator, failed.
            "Error in pixCreateNoInit: pixdata_malloc fail for data",
            // Nim's name for GDI+'s status.
            "Error: unhandled exception: GDI+ Error:Can't load Image fromF file, status: outOfMemory [OSError]",
        ]);
    }

    #[test]
    fn the_class_net_names_as_thrown_is_a_record_in_any_quotes() {
        assert_records(&[
            "An OutOfMemoryError was thrown while loading the model",
            "Exception of type System.OutOfMemoryException was thrown.",
            "Exception of type `System.OutOfMemoryException`: Eine Ausnahme vom Typ \"System.OutOfMemoryException\" wurde ausgelöst.",
        ]);
    }

    #[test]
    fn a_cause_that_may_be_and_a_value_an_assertion_got_are_talk() {
        for talk in [
            "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called.",
            "    gc_test.go:33: expected \"OK\\n\", but got \"using too much memory: 70813696 bytes\\n\"",
        ] {
            let reading = read(&normalise(1, talk.as_bytes()));
            assert!(reading.as_ref().is_none_or(|r| !r.statement), "{talk}: {reading:?}");
        }
    }

    #[test]
    fn an_aside_or_a_condition_before_its_comma_does_not_make_the_report_talk() {
        assert_records(&[
            // A hedge on the cause only, a failure that is its own clause after a name.
            "Prediction on device was unsuccessful, probably due to a lack of memory.",
            "Creating one big buffer for the DAG Allocating/mapping single buffer failed with: clCreateBuffer(-61). GPU can't allocate the DAG in a single chunk. Bailing.",
            // Windows' ERROR_NOT_ENOUGH_MEMORY alone, as a title.
            "Not enough storage is available to process this command",
            "Allocation of 40.69 GB for suffix_array failed.",
            // A story's end, a message quoted after meeting it, the `you` of a reproduction,
            // an allocator's name labelling it, a stack's own code.
            "1.when I predict with yolov8x-seg.pt, as the number of test images increases, the memory keeps increasing, and finally cuda out of memory.",
            "And yet I have locals disappearing and getting the message `unable to restore data due to insufficient memory` in cases.",
            "If you compiling the sb2008 data you get this error: TeX capacity exceeded, sorry [main memory size=3000000]. };",
            "E (2538) esp_adapter: wifi_malloc: no memory",
            "J():  3900  unable to allocate real <tmp>[29,536870912]",
            "Error: memory error.",
            "  what():  Memory Object Allocation Failure",
            // The subject of a clause that happened, a past tense, a one-subject status with its
            // figures, a title ending in the failure after what failed, words of other languages.
            "In all Chromium versions of this site this insufficient memory error appears, it's something annoying.",
            "The calculator ran out of memory and suddenly reset and removed everything inside.",
            "`Query exceeded per-node memory limit of 23.98GB [Allocated: 23.98GB, Delta: 64kB]`",
            "GCMC with 350M edges CUDA OOM",
            "Container excedia o limite de 512 MiB causando OOM restarts e erros intermitentes na tela inicial.",
            "But while your precompiled demo is running well on my machine i'm getting VK_ERROR_OUT_OF_DEVICE_MEMORY from",
            "We have a problem. Our Spring Boot Backend services exit with the message ` Exit Code: 137, Exit Message: \"OOM Killed\"`.",
            "We have observed Travis failures because: `java.lang.OutOfMemoryError: Metaspace`.",
            "Utterances with more than 3000 frames (30 seconds) is causing GPU out-of-memory err",
            "これはおそらく @tongtybj 先生がdlbox1で学習をしていたので，GPUメモリが足りずに学習できなかったようですね．",
            "memory budget exceeded: 378880 bytes requested, 511938560 currently allocated, 512000000 bytes in budget",
            "Hermes 0.7.2 : Max heap size was exceeded",
            "However, when trying to load that through wasm-micro-runtime, it says \"allocate memory failed\".",
            "# oom-killer gets triggered when there is plenty of memory still available",
            "avril 16 21:08:50 systemd-oomd[93234]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/tmux",
            "遇到同样问题，ncnn程序仅占用了100MB内存，我的PC还有至少10GB的内存可用，然而程序出现了该错误vkAllocateMemory failed -10 （此问题在处理较大图片时遇到）",
            "10/08/2019 22:53:01 MainProcess     MainThread      cli             execute_script            ERROR    You do not have enough GPU memory available to train the selected model at the selected settings.",
            "ScErrOutOfSharedStorageAbort (SCERR8012): The transaction was aborted because of a failure to allocate shared storage memory",
            "[Bug] failed to reserve the 4 GiB guest address space",
            "Sorry to bother you again, but I downloaded the checkpoint but had not tried loading it in and I seem to be getting a \"MemoryError\" when using torch.load() with that checkpoint?",
            "When I run his AlexNet benchmark, I get 'hipErrorOutOfMemory' from MIOpen, even though I believe 4gb of RAM should be enough to run AlexNet. ",
            "Strangely, even if I change the batch size from 128 to 1, I still get the same 'hipErrorOutOfMemory' error (but from different layer).",
            "ok, well the job did exit with OOM last night:",
            "CUDA error !!!!! <out of memory> !!!!! ",
            "Every time I get CUDA out of memory issue as given below",
            "there is a problem with `hipMallocAsync` which errors out with `hipErrorOutOfMemory` while `hipMalloc` works fine.",
            "Malloc fails even if memory is available.",
            "You are right, it's an out of memory error. ",
            "发生了OOM，是因为创建线程太多了，非`xcrash`的问题。",
            "I\"m trying to make a ultra moon randomizer, and I keep getting the heap space error.",
            "# \"VirtualAlloc commit failed\" when loading rmine2.",
            "RuntimeError: Malloc for kernel output failed, Memory isn't enough, node:Default/Cast-op446",
            "ImportError: DLL load failed while importing _pywrap_tensorflow_internal: Die Auslagerungsdatei ist zu klein, um diesen Vorgang durchzuführen.",
            "Compiling https://gist.github.com/8187461 with -O2 crashes GHC 7.6.3 with memory exhaustion / stack overflow.",
            "[GPU Light Cache ]could not allocate buffer of size",
            "I'm trying to run `blender -b -P generate-bistro.py `on a Ryzen2 8GB laptop with integrated GPU on the bistro scene and the linux oom killer kicks-in and kill my shell. Can I tell blender to try to use less memory?",
        ]);
    }

    #[test]
    fn a_bare_count_before_a_participle_or_size_is_the_request() {
        let r = reading("ResourceExhaustedError: Fail to alloc memory of 5060694016 size.");
        assert_eq!(r.sizes.requested, Some(5_060_694_016));
        let r = reading("`[W] UNSUPPORTED_STATESkipping tactic 0 due to insufficient memory on requested size of 11580055552 detected for tactic 0x0000000000000000.Try decreasing the workspace size with IBuilderConfig::setMemoryPoolLimit().`");
        assert_eq!(r.sizes.requested, Some(11_580_055_552));
        let r = reading("RuntimeError: Not enough memory, use lower resolution (max approx. 640x640). Need: 1.5GB free, Have:0.1GB free");
        assert_eq!((r.sizes.requested, r.sizes.free), (Some(3 << 29), Some(107_374_182)));
        let r = reading("InternalError: Check failed: (offset + needed_size <= this->buffer.size) is false: storage allocation failure, attempted to allocate 16785408 at offset 0 in region that is 16777216bytes");
        assert_eq!((r.sizes.requested, r.sizes.capacity), (Some(16_785_408), Some(16_777_216)));
        let r = reading("[10/18/2023-20:27:01] [TRT] [W] Tactic Device request: 448MB Available: 425MB. Device memory is insufficient to use tactic.");
        assert_eq!((r.sizes.requested, r.sizes.free), (Some(448 << 20), Some(425 << 20)));
        // TeX counts its main memory in words.
        assert_eq!(reading("! TeX capacity exceeded, sorry [main memory size=3000000].").sizes, Sizes::default());
        assert_eq!(reading("! TeX capacity exceeded, sorry [node memory size=50000000].").sizes, Sizes::default());
        let r = reading("InnoDB: mmap(137363456 bytes) failed; errno 12");
        assert_eq!(r.sizes.requested, Some(137_363_456));
        // A call's argument is whole: digits in a file's name are none.
        let r = reading("MT_mmap: ERROR: mmap(/var/lib/monetdb/dados/olap/bat/01/74/47/14/174471412.tail,65536) failed: Cannot allocate memory");
        assert_eq!(r.sizes.requested, Some(65_536));
        // Two digits after a memory's `size:` are bytes.
        let r = reading("E RKNN: [10:49:05.216] failed to malloc npu memory, size: 80, flags: 0xa");
        assert_eq!(r.sizes.requested, Some(80));
        // A scheduler's figure in units it does not print is no byte count.
        let r = reading("Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 3000000.");
        assert_eq!(r.sizes, Sizes::default());
    }

    #[test]
    fn a_worker_a_null_return_and_a_notice_state_failures_a_fault_and_an_article_do_not() {
        // A worker is no work on the failure; a program's notice of what it does after one.
        assert!(reading("SAT checker ran out of memory").statement);
        assert!(reading("Daemon will be stopped at the end of the build after running out of JVM memory").statement);
        let r = reading("aligned_malloc returns null: len=7247757312 in Cycles Aligned Alloc, total 2039707352");
        assert!(r.statement);
        assert_eq!(r.sizes.requested, Some(7_247_757_312));
        // A read out of bounds is a fault; messages that may come are none yet.
        assert!(read(&normalise(1, b"3: wasm trap: out of bounds memory access")).is_none());
        let article =
            "Failure messages such as \u{201c}Invalid Topology\u{201c}, or \u{201c}Out of memory\u{201d} can occur.";
        assert!(read(&normalise(1, article.as_bytes())).is_none_or(|r| !r.statement));
    }

    #[test]
    fn the_noun_after_an_allocation_verb_is_its_object() {
        // `failed to allocate handle` allocates a handle; `OOM handling` names a topic.
        assert!(
            reading(
                "E RKNN: [10:48:59.683] failed to allocate handle, ret: -1, errno: 12, errstr: Cannot allocate memory"
            )
            .statement
        );
        assert!(read(&normalise(1, b"OOM handling in the scheduler")).is_none_or(|r| !r.statement));
    }

    #[test]
    fn a_sentence_opening_with_when_may_quote_a_record_after_a_colon() {
        let line = "When trying to run deep_gaze in windows cmd i got this error: RuntimeError: CUDA out of memory.";
        assert!(reading(line).statement);
    }

    #[test]
    fn a_program_may_say_you_after_its_failure_words() {
        assert_records(&[
            "DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 bytes.",
            "RuntimeError: Aborted(Cannot enlarge memory arrays to size 675418112 bytes (OOM). Either (1) compile with -sINITIAL_MEMORY=X, or (3) if you want malloc to return NULL (0) instead of this abort, compile with -sABORTING_MALLOC=0)",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
            "20/02/17 11:44:49 ERROR Executor: Task failed with an OutOfMemoryError",
            // `your` in the program's message quoted in backticks, not the writer's.
            "the job seems to have been killed due to oom `in StepId=5770797.batch. Some of your processes may have been killed by the cgroup out-of-memory handler`",
            "java -Xmx2g -XX:+HeapDumpOnOutOfMemoryError -jar app.jar: java.lang.OutOfMemoryError: Java heap space",
        ]);
    }

    #[test]
    fn only_a_flag_that_starts_with_a_letter_names_the_failure_words() {
        let named = "- Added `-XX:+HeapDumpOnOutOfMemoryError` option to Gradle JVM";
        assert!(read(&normalise(1, named.as_bytes())).is_some_and(|r| r.talk));
        let status =
            "cv2.error: OpenCV(4.4.0) alloc.cpp:73: error: (-4:Insufficient memory) Failed to allocate 6291456 bytes";
        let reading = read(&normalise(1, status.as_bytes())).unwrap();
        assert!(reading.statement && reading.words.contains(&"memory not available"), "{reading:?}");
    }

    /// Every line of every real log under `fixtures/` (the OOM sets and corpora).
    fn fixture_lines() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut lines = Vec::new();
        let mut dirs =
            vec![root.join("oom"), root.join("oom-logs"), root.join("oom-logs-2"), root.join("oom-logs-extra")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "txt") {
                    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                    lines.extend(text.lines().map(str::to_string));
                }
            }
        }
        lines
    }

    /// The real log line that is `example`, or else the first that holds it.
    fn real_line<'a>(lines: &'a [String], example: &str) -> &'a str {
        lines
            .iter()
            .find(|line| line.trim() == example)
            .or_else(|| lines.iter().find(|line| line.contains(example)))
            .unwrap_or_else(|| panic!("no log under fixtures/ holds {example:?}"))
    }

    /// For every row of the failure vocabulary, a piece of a real line in its words.
    const WORDING_EXAMPLES: &[(&str, &str)] = &[
        (
            "your system has run out of application memory (macOS)",
            "Your system has run out of application memory",
        ),
        (
            "lmkd kill to free memory (Android)",
            "Kill './lmkd_unit_test' (6870), uid 0, oom_score_adj 1000 to free 2740708kB rss",
        ),
        ("oom after its place, in lower case", "# cuda oom"),
        ("Rust's allocation error handler (__rg_oom)", "# Errors creating multiple large documents: error receiving message { err: RuntimeError: unreachable at __rg_oom"),
        ("no mem for (ESP-IDF)", "E (132) lcd_panel.rgb: lcd_rgb_panel_alloc_frame_buffers(159): no mem for frame buffer"),
        ("System OOM encountered (kubelet)", "`kubelet     System OOM encountered, victim process: php, pid: 27824`"),
        ("all memory pool allocations are in use (Godot)", "ERROR: All memory pool allocations are in use."),
        ("SuperLU cannot expand its memory", "Can't expand MemType 0: jcol 798940"),
        (
            "uses too much shared data (ptxas)",
            "Entry function 'input_concatenate_reduce_subtract_fusion' uses too much shared data (0xc180 bytes, 0xc000 max)",
        ),
        ("tried to allocate (GPU N; total capacity)", "Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity;"),
        ("shared memory exceeds", "INTERNAL: Shared memory requested exceeds device resources."),
        ("OOM code as a status", "  code: CRASH_OOM"),
        (
            "shared memory segment (PostgreSQL)",
            "2021-09-20T14:19:10.428518897+01:00 2021-09-20 14:19:10,427 - synapse.storage.txn - 561 - WARNING - GET-520092- [TXN OPERROR] {get_oldest_event_ids_with_depth_in_room-19f2dc} could not resize shared memory segment \"/PostgreSQL.2138012727\" to 16777216 bytes: No space left on device",
        ),
        ("ALLOC_FAILED", "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling"),
        (
            "bad allocation",
            "\"An error occurred. The system may have run out of memory, or a bug may have occurred. bad allocation\" during slicing",
        ),
        ("Array buffer allocation (V8)", "Unable to backup, RangeError: Array buffer allocation"),
        ("allocation over its limit", "[NeedMEM] trying to allocate 598017592 bytes (limits: 500000000)"),
        ("too much to fit into available memory", "2:27:34.308     1G / 46G   ERROR  K-mer Counting           (kmer_data.cpp             : 353)   The reads contain too many k-mers to fit into available memory. You need approx. 142.954GB of free RAM to assemble your dataset"),
        ("memory requested, less available", "26G JVM heap requested for read phase, 21G available"),
        ("cannot allocate, in German", "FEHLER: G_malloc: Kann nicht 2272853112 Byte auf init_vars.c:134 reservieren"),
        (
            "Memory Exception",
            "[WARNING] [2018-07-20 11:26:15,141:EnsembleBuilder(1):bc7ea84b06c06db9da18252766d56c64] Memory Exception -- restart with less ensemle_nbest: 25",
        ),
        ("cudaErrorMemoryAllocation", "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory"),
        ("ALLOCATION_FAILURE", "OpenCL error: CL_MEM_OBJECT_ALLOCATION_FAILURE"),
        ("runtime: out of memory", "fatal error: runtime: out of memory"),
        ("oom-kill event", "Detected 1 oom_kill event in StepId=11300781.0."),
        ("killed for memory", "Task was killed due to the node running low on memory."),
        (
            "shutting down the JVM for GC thrashing (Beam, Dataflow)",
            "Shutting down JVM after 8 consecutive periods of measured GC thrashing. Memory is used/total/max = 9819/11025/11025 MB",
        ),
        ("low on memory (eviction)", "The node was low on resource: memory. Container kilo was using 30332Ki"),
        ("memory setting too small", "EXITING because of FATAL PARAMETER ERROR: limitGenomeGenerateRAM=31000000000is too small for your genome"),
        ("large alloc returned nil (tcmalloc)", "tcmalloc: large alloc 4294868992 bytes == (nil) @  0x776927f0"),
        ("a need for more heap (Allegro CL)", "Error: An allocation request for 4112 bytes caused a need for 2621440"),
        ("memory limit exceeded", "Memory limit of 512 MiB exceeded with 516 MiB used."),
        ("memory over a job's limit", "=>> PBS: job killed: vmem 3372163072 exceeded limit 2147483648"),
        (
            "beyond memory limits",
            "is running beyond physical memory limits. Current usage: 9.8 GB of 9.8 GB physical memory used; 43.0 GB of 47.6 TB virtual memory used. Killing container.",
        ),
        ("a notebook's kernel out of RAM (Colab, Kaggle)", "Your session crashed after using all available RAM."),
        ("CUDA error 2 from an allocation call", "RuntimeError: Cuda error: 2[cudaMalloc(&m_gpuPtr, bytes);]"),
        (
            "no free space in the KV cache (llama.cpp)",
            "update_slots: failed to find free space in the KV cache, retrying with smaller batch size",
        ),
        ("arena size is too small (TFLite Micro)", "`Arena size is too small for all buffers. Needed 212064 but only 191120 was avai."),
        ("OutOfMemoryError (PyTorch)", "torch.cuda.OutOfMemoryError: CUDA out of memory."),
        ("failed attempt to allocate", "Failed attempt to allocate 95668727220bytes, but the free memory are 124GB"),
        ("failed to create virtual memory (MSVC)", "1>c1xx : error C3859: Failed to create virtual memory for PCH"),
        ("internal heap limit reached (MSVC)", "1>c1xx : fatal error C1076: compiler limit: internal heap limit reached"),
        ("NO_MEMORY status (Android, librsvg)", "E  Codec reported err 0xfffffff4/NO_MEMORY, actionCode 0, while in state 5/STARTING"),
        ("EXC_RESOURCE RESOURCE_TYPE_MEMORY (iOS)", "EXC_RESOURCE RESOURCE_TYPE_MEMORY (limit=650 MB, unused=0x0)"),
        ("Java heap space", "Error: Java heap space"),
        ("ResourceExhaustedError (TensorFlow)", "tensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) found."),
        ("failed for lack of memory", "It kept failing due to lack of RAM and swap space."),
        ("out of memory, in French, Spanish, Portuguese or Italian", "Memoire Insuffisante"),
        ("not enough memory, in German", "Operating system error: Nicht genügend Hauptspeicher verfügbar"),
        ("refuses to provide memory (Stata)", "op. sys. refuses to provide memory"),
        ("reason: oom (Electron)", "The window terminated unexpectedly reason oom code: -536870904"),
        ("more memory than available", "model requires more system memory (164.8 GiB) than is available (13.4 GiB)"),
        ("invalid memory alloc request size (PostgreSQL)", "Message:invalid memory alloc request size 1225135280"),
        ("System is out of GPU memory", "System is out of GPU and shared host memory"),
        ("low memory (earlyoom)", "low memory! at or below SIGTERM limits: mem 10.00%, swap 15.00%"),
        ("low virtual memory condition (Windows)", "Windows successfully diagnosed a low virtual memory condition."),
        ("OOM command not allowed (Redis)", "OOM command not allowed when used memory > 'maxmemory'."),
        (
            "circuit breaker: data too large",
            "CircuitBreakingException: [request] Data too large, data for [<reused_arrays>]",
        ),
        ("OUT_OF_RESOURCES", "Native API returns: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)"),
        (
            "CUDA OOM figures without their head (PyTorch)",
            "(GPU 0; 15.75 GiB total capacity; 79.11 MiB already allocated; 3.62 MiB free; 86.00 MiB reserved in total by PyTorch)",
        ),
        ("NSMallocException (Apple)", "NSMallocException,reason:Failed  to  grow  buffer"),
        ("ERR_NO_MEM or ERR_MEM_ALLOC status", "ESP_ERROR_CHECK failed: esp_err_t 0x101 (ESP_ERR_NO_MEM) at 0x4008de48"),
        ("memory status requires corrective action", "2023-08-10 16:53:26,460: Memory status that requires corrective actions:"),
        ("object store full", "ray.exceptions.ObjectStoreFullError: Failed to put object ffffffffffffffffffffffffffffffffffffffff0f00000003000000 in object store because it is full. Object size is 516884584 bytes."),
        ("requested allocation size exceeds maximum supported size", "==8685==ERROR: AddressSanitizer: requested allocation size 0xffffffffff7f0000 (0xffffffffff7f1000 after adjustments for alignment, red zones etc.) exceeds maximum supported size of 0x10000000000 (thread T0)"),
        (
            "reached memory limit",
            "CUDA device 0 reached memory limit while trying to allocate 0 bytes, currently at 64/11551440896",
        ),
        ("memory resource limit alarm (RabbitMQ)", "memory resource limit alarm set on node rabbit@63e2dc61db9f."),
        ("resource_error(memory) (Prolog) or memory-error (Lisp)", "error(resource_error(memory), eyeprolog). % unexpected"),
        ("increase memory in input (NWChem)", "tests/h2o-b3lyp-disp fails with ptsalloc: increase memory in input line"),
        (
            "memory limit code",
            "name=EXCEEDED_LOCAL_MEMORY_LIMIT, message=\"Query exceeded per-node memory limit of 40GB",
        ),
        ("an error's attempt to allocate", "LibClamAV Error: cli_realloc(): Attempt to allocate 190840848 bytes."),
        ("a device allocation call failed", "cuMemoryAllocate failed res=2"),
        (
            "not enough memory resources to complete (Windows)",
            "Exception(1) 800 7000E to enough memory resources tid(4790) complete this operation.",
        ),
        ("heap overflow (GHC)", "\theap overflow"),
        (
            "not executed in the allotted memory",
            "Resources exceeded during query execution: The query could not be executed in the allotted memory.",
        ),
        ("GC overhead limit exceeded (JVM)", "[ERROR] GC overhead limit exceeded -> [Help 1]"),
        ("exceeds VM budget (Android)", "bitmap size exceeds VM budget"),
        (
            "failed to allocate a byte allocation (Android)",
            "Failed to allocate a 536870928 byte allocation with 25165824 free bytes and 248MB until OOM, target footprint 301069208, growth limit 536870912",
        ),
        (
            "unable to allocate for an array (NumPy)",
            "Unable to allocate 1.89 TiB for an array with shape (1000000, 1, 3, 960, 720) and data type uint8",
        ),
        (
            "killed as a result of a cgroup's limit (Linux)",
            "Jul 10 08:56:03 prd-sisu-nomad-client-1.localdomain kernel: Task in /nomad/ebf75298-ba47-98a8-28e5-a08daf20d60e killed as a result of limit of /nomad/ebf75298-ba47-98a8-28e5-a08daf20d60e",
        ),
        ("terminated due to memory (iOS)", "Message from debugger: Terminated due to memory issue"),
        (
            "held due to memory usage (batch schedulers)",
            "Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 3000000.",
        ),
        ("could not reserve space for the heap (JVM)", "VMCould not reserve enough space for object heapRestarting"),
        (
            "free memory less than desired (vLLM)",
            "ValueError: Free memory on device (8.0/64.0 GiB) on startup is less than desired",
        ),
        ("memory is full", "DaVinci Resolve Error: Your GPU memory is full."),
        ("not enough memory, in Chinese, Japanese, Korean or Russian", "内存不足"),
        ("the failure's name alone", "memory out"),
        ("Allocation on device (cut)", "!!! Exception during processing !!! Allocation on device"),
        ("memory exhausted", "Allowed memory size of 134217728 bytes exhausted (tried to allocate 81513688 bytes)"),
        (
            "memory too low to allocate",
            "[STDERR] Log: Windows reports memory too low on GPU 0 to reliably allocate 1297920 byte block.",
        ),
        (
            "allowed memory size exhausted (PHP)",
            "For the past 18 hours I have been trying to diagnose a Symfony FatalErrorException, Allowed memory size of 536870912 bytes exhausted that occurs every ~2 minutes.",
        ),
        ("bad_alloc", "terminate called after throwing an instance of 'std::bad_alloc'"),
        ("Cannot allocate memory (ENOMEM)", "OSError: [Errno 12] Cannot allocate memory"),
        ("paging file too small", "[WinError 1455] The paging file is too small for this operation to complete"),
        ("array exceeds maximum array size", "(14368.0GB) array exceeds maximum array size preference (31.9GB)."),
        ("cannot allocate vector", "Error: cannot allocate vector of size 24.6 Gb"),
        ("allocation failed", "memory allocation of 23400000000 bytes failed"),
        (
            "OutOfMemoryException",
            "System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.",
        ),
        ("OutOfMemory", "java.lang.OutOfMemoryError: Java heap space"),
        ("vkAllocateMemory failed (Vulkan)", "vkAllocateMemory failed -2"),
        (
            "page allocation failure (Linux)",
            "Apr 01 16:27:01 sm21-r22.pun.seagate.com kernel: swapper/21: page allocation failure: order:0, mode:0x20",
        ),
        ("packet buffer full (RIOT)", "error: packet buffer full"),
        ("STORAGE_ERROR raised (Ada)", "raised STORAGE_ERROR : s-poosiz.adb:108 explicit raise"),
        (
            "arena stack overflow with its figures (MuJoCo)",
            "ERROR: stack overflow: max = 299869096, available = 97857896, requested = 106218000 (ne = 0, nf = 0, nefc = 3988, ncon = 668)",
        ),
        (
            "out-of-memory crash handler in a stack (Chromium)",
            "[ 01 ] partition_alloc::internal::OnNoMemoryInternal(unsigned __int64) ( oom.cc:41 )",
        ),
        (
            "reloaded for using significant memory (Safari)",
            "# Safari & Chrome | This webpage as reloaded because it was using significant memory",
        ),
        (
            "the kernel's reserve exhausted (Linux)",
            "rtl8192ee 0000:05:00.0: swiotlb buffer is full (sz: 4000 bytes), total 32768 (slots), used 32768 (slots)",
        ),
        ("over a Grid Engine memory limit (h_vmem)", "failed execd enforced h_vmem limit because:"),
        ("TeX capacity exceeded (memory)", "! TeX capacity exceeded, sorry [main memory size=3000000]."),
        (
            "killed: out of swap space (FreeBSD)",
            "Jan 24 01:46:15 sense4.pvt.psc.edu kernel: pid 41663 (sliod), uid 0, was killed: out of swap space",
        ),
        ("MemoryError", "MemoryError: Unable to allocate 201. GiB for an array with shape (2999, 2999, 2999)"),
        ("RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate"),
        ("out of memory", "NCCL WARN Cuda failure 'out of memory'"),
        ("out of heap space", "fatal error C1060: compiler is out of heap space"),
        ("cannot enlarge memory", "(abort(\"Cannot enlarge memory arrays. Either (1) compile with"),
        ("OOM", "2 Workers (tasks / actors) killed due to memory pressure (OOM)"),
        ("not enough memory", "error='Not enough space' (errno=12)"),
        ("low memory for what was to be allocated", "Couldn't init a GPU test: Low mem for result. aborting."),
        ("invoked oom-killer (Linux)", "haproxy invoked oom-killer"),
        ("OOM kill of PID (bcc oomkill)", "OOM kill of PID 1835561760"),
        ("RAM region overflowed (GNU ld)", "region `RAM' overflowed by 400708 bytes"),
        ("memory not available", "Memory not available to allocate buffer: 528515072"),
        ("could not allocate", "unable to allocate memory of 4004bytes on gpu"),
        ("larger than the maximum", "size 18300780544 is larger than buffer maximum of 17179869184"),
        ("failed check of an allocation", "enforce allocating <= available failed, 10513462067 > 1369702144"),
        ("exceeds memory", "which exceeds the memory usage threshold of 0.95."),
        ("an allocation larger than its heap (Vulkan)", "vkAllocateMemory: attempting to allocate 268435456 bytes from heap 2,but size of that heap is only 257949696 bytes."),
        ("null memory pointer returned", "RuntimeError: Null memory pointer returned"),
        ("over the device's largest allocation (OpenCL)", "The Merge buffer is too big for Intel(R) UHD Graphics 630 Intersect device (i.e. CL_DEVICE_MAX_MEM_ALLOC_SIZE=402653184)"),
        ("memory buffer over its limit (Fluent Bit)", "td-agent-bit[2725]: [2020/11/22 17:03:49] [ warn] [input] systemd.0 paused (mem buf overlimit)"),
        ("an allocation call of N bytes failed", "668e39cd.0ce683c2 0x7fc2f4226740 ch_calloc of 1 elems of 60129541696 bytes failed"),
        ("memory above its limit", "Exception('pantsd process 60970 was using 1428697088 bytes of memory (above the limit of 1073741824 bytes).')"),
        ("memory needed exceeds the maximum", "emulator: The memory needed by this AVD exceeds the max specified in your HAXM configuration."),
        ("not enough resource: memory (Kubernetes)", "OutOfmemory: Pod Node didn't have enough resource: memory, requested:"),
        ("ended due to memory", "Command exited with return code -9 due to RAM"),
        ("CUDA result 2", "CUresult error  result=2 file=csrc/torch_memory_saver.cpp"),
        ("insufficient resources", "Error: Model loading was stopped due to insufficient system resources."),
        ("memory overloaded", "Error: system memory overloaded"),
        ("could not grow the heap (Boehm GC, dmalloc)", "GC Warning: Failed to expand heap by 16384 KiB"),
        ("cgroups considered for killing (systemd-oomd)", "systemd-oomd[1852]: Considered 50 cgroups for killing, top candidates were:"),
        ("no memory left", "ValueError: Loaded weights leave no GPU memory for the KV cache"),
        ("NVENC error 10", "m_nvenc.nvEncOpenEncodeSessionEx(&encodeSessionExParams, &hEncoder) returned error 10"),
        ("failed to set the maximum shared memory", "RuntimeError: Failed to set maximum shared memory size (requested 7168 bytes), try lowering tile_size."),
        ("INSUFFICIENT_MEMORY", "Exiting due to RSRC_INSUFFICIENT_CONTAINER_MEMORY: docker only has 1771MiB available, less than the required 1800MiB for Kubernetes"),
        ("available memory smaller than requested (ONNX Runtime)", "Available memory of 0 is smaller than requested bytes of 176763136"),
        ("failed to get memory", "(failed to get memory)\""),
        ("memory usage over its cap (A > B)", "CRITICAL storjnode.api 241: Excessive memory usage 104882176 > 104857600!"),
        ("free fragment not found (Kamailio)", "qm_malloc(0x809132000, 3976) called from core: sip_msg_clone.c: sip_msg_shm_clone(495), module: core; Free fragment not found!"),
        ("not enough memory, in Polish", "Za mało pamięci w systemie do uruchomienia maszyny wirtualnej ideal-bustard."),
        ("low on memory, the work refused", "The router is low on memory. Please retry the request after memory consumption has gone down."),
        ("last failed alloc call (ESP8266)", "last failed alloc call: 4021B18E(544)"),
        ("failed to resize a buffer, more requested than available", "Failed to resize buffer. Requested: 19440, available 11876, missing: 7564"),
        ("could not reserve address space", "Unable to reserve 0xf7000000 bytes of virtual address space for use as guest address space"),
        ("needs more memory than is available (A needed, only B available)", "Rosetta needs 1907.35 MB RAM but only 965.88 MB is available for use."),
    ];

    #[test]
    fn every_failure_wording_makes_a_real_line_an_event() {
        let lines = fixture_lines();
        for row in FAILURE_WORDS {
            let (_, example) = WORDING_EXAMPLES
                .iter()
                .find(|(name, _)| *name == row.name)
                .unwrap_or_else(|| panic!("no real line for the wording {:?}", row.name));
            assert!(Regex::new(row.pattern).unwrap().is_match(example), "{:?} does not match {example:?}", row.name);
            assert!(vocabulary::anchored(example.as_bytes()), "no anchor in {example:?}");
            let line = real_line(&lines, example);
            let report = crate::oom::scan("line", format!("{line}\n").as_bytes()).unwrap();
            assert!(
                report.events.iter().any(|e| e.failure_words.iter().any(|w| w == row.name)),
                "{:?}: {line:?} gives {:#?}",
                row.name,
                report.events
            );
        }
        assert_eq!(WORDING_EXAMPLES.len(), FAILURE_WORDS.len(), "an example for a wording the table does not have");
    }

    /// For every row of [`vocabulary::NO_SHORTAGE`], in its order, a piece of a real line it reads.
    const NO_SHORTAGE_EXAMPLES: &[&str] = &[
        "[Pterodactyl Daemon]: Out of memory: false",
        "_swig_paddle.so: cannot allocate memory in static TLS block",
        "\"Invalid Qobj experiment: not enough memory slots.\"",
        "Failed to allocate all input signature elements in available space.",
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch",
        "wasm trap: out of bounds memory access",
        "Python Exception <class 'gdb.MemoryError'> Cannot access memory at address 0x7ffffffff000",
        "valgrind: mmap(0x400000, 598016) failed in UME with error 22 (Invalid argument).",
        "Failed to allocate frames: undeveloped feature..",
        "Too much memory used 394 mb > 40 mb, removing oldest flight ./flight",
        "\t Some nodes exceed the total amount of memory available (2.23GB).",
        "Fatal glibc error: malloc assertion failure in __libc_calloc: !mem || chunk_is_mmapped (mem2chunk (mem)) || av == arena_for_chunk (mem2chunk (mem))",
        "while running \"-c grep -E -q 'OutOfMemory|Killed' /cromwell_root/stderr",
    ];

    #[test]
    fn every_reading_of_no_shortage_keeps_a_real_line_from_being_an_event() {
        let lines = fixture_lines();
        assert_eq!(NO_SHORTAGE_EXAMPLES.len(), vocabulary::NO_SHORTAGE.len(), "one real line per row");
        for (row, example) in vocabulary::NO_SHORTAGE.iter().zip(NO_SHORTAGE_EXAMPLES) {
            let line = real_line(&lines, example);
            let pattern = regex::bytes::Regex::new(row.pattern).unwrap();
            let text = line.as_bytes();
            let read = match row.scope {
                Scope::Before => (0..=text.len()).any(|at| pattern.is_match(&text[..at])),
                Scope::Words | Scope::Line => (0..text.len()).any(|at| pattern.is_match(&text[at..])),
            };
            assert!(read, "{:?} does not read {line:?}", row.pattern);
            assert!(has_failure_words(text), "no failure words in {line:?}");
            let report = crate::oom::scan("line", format!("{line}\n").as_bytes()).unwrap();
            assert!(report.events.is_empty(), "{line:?} gives {:#?}", report.events);
        }
    }

    #[test]
    fn the_anchors_fit_the_packed_search() {
        // aho-corasick's packed (Teddy) searcher, which keeps a log's plain lines cheap,
        // takes at most 64 literals; past that the scan of every line slows by half.
        assert!(vocabulary::ANCHORS.len() <= 64, "{} anchors", vocabulary::ANCHORS.len());
        for (anchor, hints) in vocabulary::GATED_ANCHORS {
            assert!(hints.len() <= 64, "{} hints of `{anchor}`", hints.len());
        }
        // The gated anchors come last, so that one starting with them (`allocating tensor`)
        // is found first where both start.
        let gated: Vec<&str> = vocabulary::GATED_ANCHORS.iter().map(|(anchor, _)| *anchor).collect();
        assert_eq!(&vocabulary::ANCHORS[vocabulary::ANCHORS.len() - gated.len()..], gated.as_slice());
    }

    #[test]
    fn a_line_that_only_allocates_is_not_read() {
        // Each training step's memory statistics (the general log of bench/oom.sh) hold
        // `alloc` and no failure: they cost the anchor search, not the vocabulary.
        assert!(!mentions(b"step 12: loss 0.31, mem_usage 12.5 GiB, allocated 11.1 GiB"));
        assert!(mentions(b"memory allocation of 23400000000 bytes failed"));
        assert!(mentions(b"Kokkos::HostSpace::allocate[ INTEL_MM_ALLOC ]( 18446743565090964400 ) FAILED NULL"));
    }

    /// For every unit, a piece of a real line that prints a size in it.
    const UNIT_EXAMPLES: &[(&str, &str)] = &[
        ("bytes", "memory allocation of 23400000000 bytes failed"),
        ("byte", "allocating 86114305024-byte buffer"),
        ("Byte", "FEHLER: G_malloc: Kann nicht 2272853112 Byte auf init_vars.c:134 reservieren"),
        ("Bytes", "[mem_max=\"38177 Bytes (37.3 KB)\"]"),
        ("byte(s)", "failed to allocated 866 byte(s) of direct memory (used: 4Gb, max: 4Gb)"),
        ("B", "(60096009848B) on device ordinal 0"),
        ("megabyte", "no memory available with an address less than 1 megabyte (MB)."),
        ("megabytes", "Job has gone over memory limit of 16384 megabytes. Peak usage: 16328 megabytes."),
        ("gigabytes", "but slowly increased to 3.92 gigabytes by epoch 58."),
        ("KiB", "and 755.50 KiB is reserved by PyTorch"),
        ("KB", "with 520960 free bytes and 508KB until OOM"),
        ("mb", "Failed to acquire gpu memory (157mb), GLCreateTexture::setArray failed"),
        ("gb", "errors out after DDIM Sampling as it tries to allocate 256gb of memory?"),
        ("kB", "total-vm:3149468kB, anon-rss:164992kB"),
        ("kb", "job killed: mem 38427376kb exceeded limit 33554432kb"),
        ("Kb", "LogVulkanRHI: Warning: Failed to allocate Device Memory, Requested=262144.00Kb MemTypeIndex=7"),
        ("Ki", "Container kilo was using 30332Ki"),
        ("K", "global           481.0K"),
        ("MiB", "Tried to allocate 20.00 MiB (GPU 0;"),
        ("MB", "available memory is only 15.187500MB."),
        ("Mb", "Reached total allocation of 3969Mb: see help(memory.size)"),
        ("Mi", "memory:\t\t50Mi"),
        ("M", "Memory limit of 953M exceeded with 966M used."),
        ("GiB", "(GPU 0; 1.96 GiB total capacity;"),
        ("GB", "7.2 GB of 4.2 GB virtual memory used."),
        ("Gb", "cannot allocate vector of size 24.6 Gb"),
        ("Gi", "exceeding its memory limit of 4Gi"),
        ("G", "Used 18.56G of 16.00G hbm."),
        ("E", "Requires 3.47E, has 14.49G available."),
        ("PiB", "Unable to allocate 48.9 PiB for an array"),
        ("Gibibyte", "SIGABRT \"memory allocation of 8 Gibibyte failed\""),
        ("mib", "tried to allocate 30.00 mib (gpu 0; 8.00 gib total capacity"),
        ("gib", "tried to allocate 30.00 mib (gpu 0; 8.00 gib total capacity"),
        ("EB", "Tried to allocate more than 1EB memory"),
        ("Gib", "10.76 Gib total capacity; 9.01 Gib already allocated; 156.00 Mib free"),
        ("Mib", "10.76 Gib total capacity; 9.01 Gib already allocated; 156.00 Mib free"),
        ("PB", "Limit: 500.00 MB, Current: 1.36 PB"),
        ("Mio", "Cimg<float>::CImg(): Failed to allocate memory(797.3Mio) for image"),
        ("Gio", "CImg<double>::CImg(): Failed to allocate memory (1.2 Gio) for image (11563,13465,1,1)."),
    ];

    /// Units no public log we found prints, kept because the steps between
    /// `G` and `E`, and each IEC name spelled out, must read whichever of them a log uses.
    const UNITS_WITHOUT_A_PUBLIC_LINE: &[&str] = &[
        "kilobyte",
        "kilobytes",
        "gigabyte",
        "terabyte",
        "terabytes",
        "TiB",
        "TB",
        "T",
        "P",
        "EiB",
        "kib",
        "tib",
        "Kibibyte",
        "Kibibytes",
        "Mebibyte",
        "Mebibytes",
        "Gibibytes",
        "Tebibyte",
        "Tebibytes",
        "Kio",
        "Tio",
    ];

    #[test]
    fn every_unit_reads_a_size_of_a_real_line() {
        let lines = fixture_lines();
        for unit in UNITS {
            let Some((_, example)) = UNIT_EXAMPLES.iter().find(|(suffix, _)| *suffix == unit.suffix) else {
                assert!(
                    UNITS_WITHOUT_A_PUBLIC_LINE.contains(&unit.suffix),
                    "no real line for the unit {:?}",
                    unit.suffix
                );
                continue;
            };
            real_line(&lines, example);
            let read = size_token()
                .captures_iter(example)
                .filter(|c| c.name("unit").is_some_and(|u| u.as_str() == unit.suffix))
                .filter_map(|c| as_size(example, &c))
                .count();
            assert!(read > 0, "no size in {:?} read in {example:?}", unit.suffix);
        }
    }

    /// For every row of the size roles (in table order), a piece of a real line whose words give a size that role.
    const ROLE_EXAMPLES: &[&str] = &[
        "Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity;",
        "Exceeded soft private memory limit with 133.961 MB",
        "Reached total allocation of 3969Mb: see help(memory.size)",
        "Cannot allocate 25.002197MB memory on GPU 0, available memory is only 15.187500MB.",
        "Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).",
        "Used 41.74G of 16.00G hbm. Exceeded hbm capacity by 25.74G.",
        "ran out of memory trying to allocate 18.00MiB (rounded to 18874368)requested by op Mul",
        "You need approx. 142.954GB of free RAM to assemble your dataset",
        "Driver report 44666880 bytes free and 536543232 bytes total",
        "(GPU 0; 6.00 GiB total capacity; 781.59 MiB already allocated;",
        "Memory limit of 953M exceeded with 966M used.",
        "size 18300780544 is larger than buffer maximum of 17179869184",
        "24576 bytes available, 32776 requested.",
        "mem job total 115343360 kb exceeded limit 115343360 kb",
        "21.00 MiB free; 150.86 MiB cached)",
    ];

    #[test]
    fn every_size_role_names_a_size_of_a_real_line() {
        let lines = fixture_lines();
        assert_eq!(ROLE_EXAMPLES.len(), vocabulary::SIZE_ROLES.len(), "one real line per row of SIZE_ROLES");
        for (row, example) in ROLE_EXAMPLES.iter().enumerate() {
            real_line(&lines, example);
            let roles = sizes_and_roles(example);
            assert!(
                roles.iter().any(|(_, from)| *from == Some(RoleFrom::Row(row))),
                "row {row} ({:?}) gives no size its role in {example:?}: {roles:?}",
                vocabulary::SIZE_ROLES[row].words
            );
        }
    }
}

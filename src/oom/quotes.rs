//! What Markdown says about a posted log's lines: a fence (```` ``` ````) or
//! an indented block quotes text, and the quote's language and the sentence
//! that introduces it tell whether the quote is a record of a run.
//!
//! People paste logs into issues and pull requests; around the log they
//! quote code, changes, and messages as examples. A failure's words in a
//! ```` ```diff ```` fence, or in a quote introduced as an example (`Error
//! message becomes as following:`), name a failure nobody met; in a fence of
//! a program's output they are what the program printed.

use super::vocabulary;

/// How a line is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Quoted {
    /// Not quoted, or quoted as code: read as it is.
    #[default]
    Plain,
    /// A program's output in a fence (no language, `text`, `log`,
    /// `console`, …: [`OUTPUT_FENCES`]): failure words are a record unless
    /// they read as talk.
    Output,
    /// A change to files (a `diff` fence) or a quote the sentence before it
    /// introduces as an example ([`vocabulary::EXAMPLE_INTRODUCTIONS`]): not
    /// a record of a run.
    NotARecord,
}

/// The info strings of a Markdown fence that holds a program's output
/// rather than code.
const OUTPUT_FENCES: &[&[u8]] =
    &[b"", b"text", b"txt", b"log", b"logs", b"console", b"output", b"shell", b"sh", b"bash", b"plaintext", b"pytb"];

/// How much of the last line of prose the reader keeps: an introduction is one sentence.
const INTRODUCTION_TAIL: usize = 200;

/// The quoting state of a log read line by line.
#[derive(Default)]
pub(super) struct Quotes {
    /// The open fence's kind, if a fence is open.
    fence: Option<Quoted>,
    /// The open indented block's kind, if one is open.
    indented: Option<Quoted>,
    previous_blank: bool,
    /// The end of the last line of prose outside any quote.
    introduction: Vec<u8>,
    /// Lines pasted right under a line that opens as an example's title, with no fence or
    /// blank line between (a patch's `Example of oom including the new rss_* fields:` over a
    /// kernel table): Markdown quotes nothing there, but they are the example, up to a blank line.
    under_introduction: bool,
    /// The line before was prose outside any quote.
    previous_prose: bool,
}

impl Quotes {
    /// Reads the next raw line; says how it is quoted.
    pub fn observe(&mut self, raw: &[u8]) -> Quoted {
        let trimmed = raw.trim_ascii();
        // (A blockquote's line with nothing after its marks is its blank line: `> Example
        // stderr:` / `> ` / `> warning: …` are two paragraphs.)
        let blank = trimmed.iter().all(|&byte| byte == b'>' || byte.is_ascii_whitespace());
        let previous_blank = std::mem::replace(&mut self.previous_blank, blank);
        let after_prose = std::mem::replace(&mut self.previous_prose, false);
        if let Some(info) = trimmed.strip_prefix(b"```") {
            let info = info.trim_ascii().to_ascii_lowercase();
            // Only an opening fence has an info string: one after an unclosed fence opens anew.
            if self.fence.is_none() || !info.is_empty() {
                let kind = if info == b"diff" || self.introduces_an_example() {
                    Quoted::NotARecord
                } else if OUTPUT_FENCES.contains(&info.as_slice()) {
                    Quoted::Output
                } else {
                    Quoted::Plain
                };
                self.fence = Some(kind);
                return kind;
            }
            self.fence = None;
            return Quoted::Plain;
        }
        if let Some(kind) = self.fence {
            return kind;
        }
        if blank {
            self.under_introduction = false;
            return self.indented.unwrap_or_default();
        }
        if self.under_introduction {
            return Quoted::NotARecord;
        }
        let indented_line = raw.starts_with(b"    ") || raw.starts_with(b"\t");
        if indented_line && (previous_blank || self.indented.is_some()) {
            // An indented block is a quote only where Markdown makes it one: after a blank line.
            let example = self.introduces_an_example();
            let kind = *self.indented.get_or_insert(if example { Quoted::NotARecord } else { Quoted::Plain });
            return kind;
        }
        self.indented = None;
        // (Only a line that opens as an example's title: `instead of:` ends many a sentence
        // before the error the writer met.)
        if after_prose
            && self.introduction.ends_with(b":")
            && regex!(bytes r"(?i)^\W*(?:an? |the )?examples?\b[^:]*:$").is_match(&self.introduction)
        {
            self.under_introduction = true;
            return Quoted::NotARecord;
        }
        // (A Markdown link's target is no word of the sentence, and a long one would push its
        // verb out of the tail kept: OpenModelica's `… fail at runtime during initialization with
        // [errors](https://libraries.openmodelica.org/…) such as:`.)
        let prose = regex!(bytes r"\]\([^)\s]*\)").replace_all(trimmed, &b"]"[..]);
        self.introduction.clear();
        self.introduction.extend_from_slice(&prose[prose.len().saturating_sub(INTRODUCTION_TAIL)..]);
        self.previous_prose = true;
        Quoted::Plain
    }

    /// Whether the last line of prose introduces what follows as an example:
    /// it ends with a colon, in the words of [`vocabulary::EXAMPLE_INTRODUCTIONS`].
    /// The writer's own runs given as examples (chipStar's `Various tests fail on my iGPU with
    /// the out of memory error now … For example:`) are records of them, and so are runs
    /// someone is told to have met (`For instance, CTQ reported:`).
    /// So are failures the writer says they are meeting, given by their kind (FoundationDB's `We
    /// are occasionally seeing Gradle failures such as:`), and the errors a thing is said to fail
    /// with (OpenModelica's `All the 8 models … fail at runtime during initialization with [errors]
    /// such as:`).
    fn introduces_an_example(&self) -> bool {
        let writers_own = || {
            let met = regex!(bytes r"(?i)\b(?:I|we|my|our)\b|\b(?:reported|got|saw|printed|showed|logged|hit)\W*:$");
            let meeting = regex!(
                bytes r"(?i)\b(?:I|we)\b[^.:]{0,30}?\b(?:seeing|saw|got|getting|hit|hitting|encounter(?:ed|ing)|receiv(?:ed|ing)|observ(?:ed|ing)|experienc(?:ed|ing)|ran into|running into)\b"
            );
            let failed_with = regex!(
                bytes r"(?i)\b(?:fail(?:s|ed)?|crash(?:es|ed)?|abort(?:s|ed)?)\b[^.:]{0,80}?\bwith\b[^.:]{0,30}?\bsuch as\s*:$"
            );
            (regex!(bytes r"(?i)\bfor (?:example|instance)\b").is_match(&self.introduction)
                && met.is_match(&self.introduction)
                || meeting.is_match(&self.introduction)
                || failed_with.is_match(&self.introduction))
                && !regex!(bytes r"(?i)\b(?:you|your|should|would|will)\b").is_match(&self.introduction)
        };
        self.introduction.ends_with(b":")
            && vocabulary::compiled().example_introductions.is_match(&self.introduction)
            && !writers_own()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(log: &str) -> Vec<Quoted> {
        let mut quotes = Quotes::default();
        log.lines().map(|line| quotes.observe(line.as_bytes())).collect()
    }

    #[test]
    fn a_quote_introduced_as_an_example_is_no_record() {
        use Quoted::{NotARecord, Plain};
        let log = "Error message becomes as following:\n\n    cupy.cuda.memory.OutOfMemoryError: out of memory\n\ninstead of:\n\n    cudaErrorMemoryAllocation: out of memory\nFixes it.";
        assert_eq!(kinds(log), [Plain, Plain, NotARecord, NotARecord, Plain, Plain, NotARecord, Plain]);
        let log =
            "Alerts should trigger if the pod has a `Last State` section of:\n\n```\nReason: OOMKilled\n```\nDone.";
        assert_eq!(kinds(log), [Plain, Plain, NotARecord, NotARecord, Plain, Plain]);
    }

    #[test]
    fn the_writers_own_runs_given_as_examples_are_records() {
        use Quoted::{Output, Plain};
        let log = "Various tests fail on my iGPU with the out of memory error now. For example:\n```\nCHIP error : hipErrorTbd (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY )\n```";
        assert_eq!(kinds(log), [Plain, Output, Output, Plain]);
        let log = "For instance, CTQ reported:\n```\nFATAL ERROR: Ineffective mark-compacts near heap limit\n```";
        assert_eq!(kinds(log), [Plain, Output, Output, Plain]);
        let log = "You should see an error, for example:\n```\nCUDA out of memory\n```";
        assert_eq!(kinds(log), [Plain, Quoted::NotARecord, Quoted::NotARecord, Plain]);
    }

    #[test]
    fn lines_right_under_an_example_are_the_example() {
        use Quoted::{NotARecord, Plain};
        let log = "Example of oom including the new rss_* fields:\nTasks state (memory values in pages):\n[  pid  ]   uid\n\nDone.";
        assert_eq!(kinds(log), [Plain, NotARecord, NotARecord, Plain, Plain]);
        // A blockquote's paragraph ends at its blank line (Doxygen's stderr after `> Example stderr:`).
        let log = "> Example stderr:\n> \n> out of dynamic memory in doctokenizerYY_create_buffer()";
        assert_eq!(kinds(log), [Plain, Plain, Plain]);
    }

    #[test]
    fn a_failure_introduced_as_met_is_output() {
        use Quoted::{Output, Plain};
        let log = "I get this error:\n```\nRuntimeError: CUDA out of memory.\n```\n    at frame";
        assert_eq!(kinds(log), [Plain, Output, Output, Plain, Plain]);
        let log = "```python\nraise MemoryError\n```\n```diff\n+ OOM\n```";
        assert_eq!(kinds(log), [Plain, Plain, Plain, Quoted::NotARecord, Quoted::NotARecord, Plain]);
    }
}

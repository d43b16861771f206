//! One log line made comparable: what the program printed, without what the
//! logging stack, the terminal or the paste around it added.
//!
//! Logs reach xmem through glog, absl, Python logging, vLLM, Ray, Elixir's
//! Logger, Docker, `kubectl logs` and GitHub Actions timestamps, terminals that
//! keep colour codes (sometimes without the escape byte), editors and `cat -n`
//! that number lines, and issue comments that quote them (`> `), fence them or
//! prefix them with `#`. The message parsers only ever see the text after all of that.

use std::borrow::Cow;
use std::io::{self, BufRead};

use regex::Regex;

/// A line is read up to this many bytes; a longer one (a binary blob, a
/// minified dump) is cut there, so one line cannot claim the whole log's size in memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Colour and cursor codes, with the escape byte or with it lost in a copy
/// (`[31m`, `[0;1m`).
fn ansi() -> &'static Regex {
    regex!(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b|\[\d{1,3}(?:;\d{1,3})*m")
}

/// What log frameworks put before the message. Applied repeatedly, because
/// prefixes nest (a timestamp, then a severity and a source file).
fn prefix() -> &'static Regex {
    regex!(concat!(
        r"^(?:",
        // vLLM / Ray actors: (EngineCore pid=106339) , (RayWorker pid=1, ip=10.0.0.1)
        r"\((?:\w[\w-]* )?pid=\d*(?:, ip=[\d.]+)?\)\s*",
        // kubectl logs --prefix: [pod/trainer-0/main]
        r"|\[pod/[^\]\s]+\]\s+",
        // a job or process number: [1] ; TorchDynamo's frame and compile ids: [7/0]
        r"|\[\d{1,4}(?:/\d{1,4})?\]\s+",
        // Python logging's default format: ERROR:tensorflow: , WARNING:root:
        r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:",
        // Python logging with a format: - _logger.py - IPEX - INFO -
        r"|-\s+[\w.]+\s+-\s+(?:[\w.]+\s+-\s+)?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+-\s+",
        // vLLM: ERROR 06-03 07:41:11 [core.py:1184]
        r"|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s+\d{2}-\d{2}\s+\d{2}:\d{2}:\d{2}(?:\.\d+)?\s+\[[^\]]*\]\s?",
        // the Eclipse ADT console's date, time and tag: [2016-01-05 00:22:11 - Emulator]
        // (before the ISO-ish timestamps, which would take its date alone)
        r"|\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} - [\w .-]{1,40}\]\s+",
        // ISO-ish timestamps (TF, kubectl, pod logs): 2021-03-15 17:16:57.309165: , 2026/07/03 21:39:56.4413,
        // and in brackets (GlusterFS: [2021-06-18 01:20:23.018118] )
        r"|\s*\[?\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?:?\s+",
        // Day-first dates, with the zone after the time (balena's `19.04.20 15:28:37 (+0200)`)
        r"|\s*\d{1,2}\.\d{1,2}\.\d{2,4}[ ,]+\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\s*\(?[+-]\d{2}:?\d{2}\)?)?:?\s+",
        // MongoDB's severity and component after its timestamp: F -        [conn4] , I COMMAND  [conn3]
        r"|[FEWID]\s+(?:-|[A-Z]+)\s+\[[\w-]+\]\s+",
        // a log classifier's mark before the line it matched: #=MATCH=#
        r"|#=MATCH=#\s+",
        // glog: E0528 07:02:44.350251   27487 pjrt_stream_executor_client.cc:2826], and with the year
        // as newer glog prints it (OneFlow's `F20230121 23:05:30.138254 13499 op_call_instruction_policy.cpp:209]`)
        r"|[IWEF](?:\d{4}){1,2}\s+\d{2}:\d{2}:\d{2}\.\d+(?:\s+\d+)?\s+[\w./\\:-]+:\d+\]\s?",
        // PyTorch's C++ (c10) log, in bold where a Markdown post emphasises it:
        // [W dml_heap_allocator.cc:97] , [W socket.cpp:601] , **[W D:\a\_work\1\s\…\dml_heap_allocator.cc:120]
        r"|\s*(?:\*\*)?\[[IWEF](?:\d{4} [\d:.]+(?: \d+)?)? [^\]\s]+:\d+\]\s?",
        // TF after its timestamp (with the thread id in some builds), or alone in old builds:
        // W tensorflow/core/common_runtime/bfc_allocator.cc:217] , E    1578 tensorflow/compiler/xla/xla_client/xla_util.cc:76]
        // (Windows builds print the path with its drive: W T:\src\github\tensorflow\…\bfc_allocator.cc:219])
        r"|[IWEF]\s+(?:\d+\s+)?[\w./\\:-]+:\d+\]\s?",
        // the kernel's log through dmesg (seconds since boot, or -T) and syslog:
        // [ 4018.450000] , [Thu Mar 14 01:57:54 2019] , May 15 23:09:30 host kernel:
        r"|\[\s*\d+\.\d+\]\s+|\[\w{3} \w{3} +\d+ \d{2}:\d{2}:\d{2} \d{4}\]\s+",
        // syslog and journald, any program: May 15 23:09:30 host kernel: , Sep 10 14:59:49 image systemd-oomd[34]:
        r"|\w{3} +\d+ \d{2}:\d{2}:\d{2} \S+ [\w.@/-]+(?:\[\d+\])?:\s+",
        // Zabbix's process, date and time: 78699:20240927:094646.325
        r"|\d+:\d{8}:\d{6}\.\d{3}\s+",
        // pod logs: 10.128.0.33 [3]
        r"|\d{1,3}(?:\.\d{1,3}){3}\s+\[\d+\]\s+",
        // TensorRT's trtexec: [11/22/2024-13:40:08]
        r"|\[\d{2}/\d{2}/\d{4}-\d{2}:\d{2}:\d{2}\]\s+",
        // [16:10:33] stdout/INFO
        r"|\[\d{2}:\d{2}:\d{2}(?:\.\d+)?\]\s+(?:[\w-]+/[A-Z]+\s+)?",
        // Elixir Logger: 12:00:00.000 [error]
        r"|(?:\d{2}:\d{2}:\d{2}\.\d{3}\s+)?\[(?:debug|info|notice|warning|warn|error|critical|alert|emergency)\]\s+",
        // MySQL 5.5's timestamp: 150126 22:31:29 ,  2:31:29 with the hour padded
        r"|\d{6}\s+\d{1,2}:\d{2}:\d{2}\s+",
        // line numbers from an editor or a CI viewer: 123 | , 123 │
        r"|\s*\d+\s*[|│]\s?",
        // a paste commented out with #, or quoted in Markdown with >
        r"|#+\s?|>+\s?",
        r")",
    ))
}

/// Line numbers an editor, `cat -n` or a viewer put before every line
/// (`85     cvmm_kernel[grid](`, `    12\tE0912 …`). A number is taken for one
/// when it follows the number of the line before, or when a log prefix is
/// glued to it (`71\x1b[2m(MeshHostWorker pid=489)`); a count that starts a
/// message (`1 Chunks of size 256`) is left alone.
#[derive(Default)]
pub struct Numbering {
    previous: Option<u64>,
}

impl Numbering {
    /// How many bytes at the start of `raw` are a line number and its separator.
    pub fn prefix_len(&mut self, raw: &[u8]) -> usize {
        let indent = raw.iter().take(8).take_while(|&&b| b == b' ' || b == b'\t').count();
        let rest = raw.get(indent..).unwrap_or_default();
        let digits = rest.iter().take(8).take_while(|b| b.is_ascii_digit()).count();
        let number =
            std::str::from_utf8(rest.get(..digits).unwrap_or_default()).ok().and_then(|n| n.parse::<u64>().ok());
        let previous = std::mem::replace(&mut self.previous, number);
        let (Some(number), Some(after)) = (number, rest.get(digits..)) else { return 0 };
        let glued = after.starts_with(b"\x1b[")
            || regex!(bytes r"^(?:\[\d{1,3}(?:;\d{1,3})*m|\(\w[\w-]* pid=\d)").is_match(after);
        if glued {
            return indent + digits;
        }
        let follows = previous.is_some_and(|p| p.checked_add(1) == Some(number));
        let separated = after.first().is_some_and(|&b| b == b' ' || b == b'\t');
        if follows && separated && !after.trim_ascii_start().starts_with(b"Chunks of size") {
            return indent + digits + 1;
        }
        0
    }
}

/// Log collapsers that fold repeats into one line: `(×5)`, `(x5)`, Ray's `[repeated 5x across cluster]`.
fn repeat() -> &'static Regex {
    regex!(r"\s*(?:\((?:×|x)(\d+)\)|\[repeated (\d+)x across cluster\])\s*$")
}

/// Calls `f` with the number (1-based) and the bytes of each line of `reader`,
/// without its newline; returns how many lines there were. A line longer than
/// [`MAX_LINE_BYTES`] is passed cut there, so memory stays bounded whatever the input.
pub fn read_lines(mut reader: impl BufRead, mut f: impl FnMut(u64, &[u8])) -> io::Result<u64> {
    let mut line = Vec::new();
    let mut number = 0;
    let mut pending = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        let newline = memchr::memchr(b'\n', available);
        let part = &available[..newline.unwrap_or(available.len())];
        let room = MAX_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        pending = true;
        let used = newline.map_or(available.len(), |at| at + 1);
        reader.consume(used);
        if newline.is_some() {
            number += 1;
            f(number, &line);
            line.clear();
            pending = false;
        }
    }
    if pending {
        number += 1;
        f(number, &line);
    }
    Ok(number)
}

/// A line as the parsers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number in the log.
    pub number: u64,
    /// The message without colour codes, log prefixes or repeat markers. Trailing
    /// space is kept: where a terminal wrapped a line, it is the space between two words.
    pub text: Cow<'a, str>,
    /// How many times the log says this line occurred (a collapsed repeat counts more than once).
    pub repeats: u64,
    /// A log prefix was removed: the line is a record of its own, not the
    /// wrapped tail of the line before.
    pub prefixed: bool,
    /// Every prefix removed was a Markdown quote's mark (`> `): a quoted message's next line
    /// carries the mark as much as its first does, so it may still be that message's wrap.
    pub quoted: bool,
    /// The line is a Markdown heading below a title's level (`### Out-of-memory`): a
    /// document's section, named by what it is about.
    pub section: bool,
}

impl Line<'_> {
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
}

/// Cleans one raw line (without its newline or carriage return).
pub fn normalise(number: u64, raw: &[u8]) -> Line<'_> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let mut text = String::from_utf8_lossy(raw);
    if text.contains(['\x1b', '[']) {
        if let Cow::Owned(stripped) = ansi().replace_all(&text, "") {
            text = Cow::Owned(stripped);
        }
    }
    // A terminal's rows pasted as one line keep the padding of each row, even inside a
    // word (`Allowed memory size of 3221225472 b` + 180 spaces + `ytes exhausted`).
    if text.len() >= 200 && text.contains("                                                            ") {
        if let Cow::Owned(joined) = regex!(r"([A-Za-z0-9]) {60,}([A-Za-z0-9])").replace_all(&text, "$1$2") {
            text = Cow::Owned(joined);
        }
    }
    // A message's lines escaped into one (a panic's `Debug` string, a JSON field: `(out of
    // memory)\nCurrently allocated     : 16.08 GiB\nRequested …`) are its clauses. Only
    // before a capital or a space: `\nvidia` in a Windows path is no line break.
    if text.contains("\\n") {
        if let Cow::Owned(split) = regex!(r"\\n([A-Z ])").replace_all(&text, "; $1") {
            text = Cow::Owned(split);
        }
    }
    // Rich's log handler puts the caller's `file.py:NN` at the right of a record's first row,
    // and indents the rows the message wraps onto (infinity's `ERROR: CUDA out of memory.
    // batch_handler.py:47` + its padding + `Tried to allocate 1.49 GiB. …`, two rows pasted as
    // one): the column is no part of the message. (Either way two spaces or more stand beside
    // it, so a traceback's `file.py:12` lines pay for no regex.)
    if text.contains(".py:") && text.contains("  ") {
        if let Cow::Owned(cut) =
            regex!(r"\s[\w.-]+\.py:\d+ {3,}(\S)|\s{2,}[\w.-]+\.py:\d+ *$").replace_all(&text, " $1")
        {
            text = Cow::Owned(cut);
        }
    }
    // Marks a log viewer puts around what its classifier matched (`‹CUDA out of memory›`).
    if text.contains(['\u{2039}', '\u{203a}']) {
        text = Cow::Owned(text.replace(['\u{2039}', '\u{203a}'], ""));
    }
    // A log record pasted as one span of inline code, the whole line, its prefix first
    // (`` `2022-06-13 21:39:18.761342 [guppy/info] CUDA device 0 reached memory limit …` ``), is
    // the record. (A sentence so quoted stays a quote: `` `Your build has exceeded …` ``.)
    let trimmed = text.trim();
    if trimmed.len() > 2 && trimmed.starts_with('`') && trimmed.ends_with('`') {
        let inner = &trimmed[1..trimmed.len() - 1];
        if !inner.contains('`') && prefix().find(inner).is_some_and(|m| !m.is_empty()) {
            text = Cow::Owned(inner.to_string());
        }
    }
    let mut repeats = 1;
    if let Some(found) = repeat().captures(&text) {
        repeats = found.get(1).or_else(|| found.get(2)).and_then(|n| n.as_str().parse().ok()).unwrap_or(1);
        let at = found.get(0).map_or(text.len(), |m| m.start());
        text = Cow::Owned(text[..at].to_string());
    }
    let section = regex!(r"^\s*#{2,6}\s").is_match(&text);
    let mut prefixed = false;
    let mut quoted = true;
    for _ in 0..4 {
        let Some(prefix) = prefix().find(&text).filter(|m| !m.is_empty()) else { break };
        prefixed = true;
        quoted &= prefix.as_str().trim_end().bytes().all(|byte| byte == b'>');
        let end = prefix.end();
        text = match text {
            Cow::Borrowed(s) => Cow::Borrowed(&s[end..]),
            Cow::Owned(s) => Cow::Owned(s[end..].to_string()),
        };
    }
    Line { number, text, repeats, prefixed, quoted: prefixed && quoted, section }
}

/// Whether a line stops in the middle of something: an unclosed bracket or
/// quote, as when an excerpt or a terminal cuts a message mid-way.
pub fn looks_cut(text: &str) -> bool {
    let mut depth = 0i64;
    let mut quotes = 0;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '"' => quotes += 1,
            _ => {}
        }
    }
    depth > 0 || quotes % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(raw: &str) -> String {
        normalise(1, raw.as_bytes()).text.into_owned()
    }

    #[test]
    fn log_prefixes_are_removed() {
        assert_eq!(
            clean("2021-03-15 17:16:57.309165: W tensorflow/core/common_runtime/bfc_allocator.cc:433] Allocator (GPU_0_bfc) ran"),
            "Allocator (GPU_0_bfc) ran"
        );
        assert_eq!(
            clean("E0528 07:02:44.350251   27487 pjrt_stream_executor_client.cc:2826] Execution of replica 0 failed"),
            "Execution of replica 0 failed"
        );
        assert_eq!(
            clean("(EngineCore pid=106339) ERROR 06-03 07:41:11 [core.py:1184]     scoped           76.58M"),
            "    scoped           76.58M"
        );
        assert_eq!(clean("2020-10-22 02:48:58 10.128.0.33 [3]   (1) Resource exhausted"), "(1) Resource exhausted");
        assert_eq!(
            clean("[16:10:33] stdout/INFO  triton.runtime.errors.OutOfResources"),
            "triton.runtime.errors.OutOfResources"
        );
        assert_eq!(clean("12:00:01.123 [error] CUDA out of memory."), "CUDA out of memory.");
        assert_eq!(
            clean("   **[W dml_heap_allocator.cc:97] DML allocator out of memory!"),
            "DML allocator out of memory!"
        );
        assert_eq!(
            clean("[W1203 19:14:42.263404593 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed"),
            "Warning: WARNING: process group has NOT been destroyed"
        );
        // Rich's caller column, at a row's end or before the indent of the row pasted after it.
        assert_eq!(clean("ERROR: CUDA   batch_handler.py:574"), "ERROR: CUDA ");
        assert_eq!(
            clean("CUDA out of memory. batch_handler.py:47         Tried to allocate 1.49 GiB."),
            "CUDA out of memory. Tried to allocate 1.49 GiB."
        );
        assert_eq!(clean("raised at train.py:33"), "raised at train.py:33");
        assert_eq!(clean("#XlaRuntimeError: RESOURCE_EXHAUSTED"), "XlaRuntimeError: RESOURCE_EXHAUSTED");
        assert_eq!(clean("  42 | Used 1G"), "Used 1G");
        assert_eq!(
            clean("150126 22:31:29 InnoDB: Fatal error: cannot allocate memory for the buffer pool"),
            "InnoDB: Fatal error: cannot allocate memory for the buffer pool"
        );
        assert_eq!(clean("> RuntimeError: CUDA out of memory."), "RuntimeError: CUDA out of memory.");
        assert_eq!(
            clean("[2016-01-05 00:22:11 - Emulator] emulator: AVD      RAM size = 1536 MB"),
            "emulator: AVD      RAM size = 1536 MB"
        );
        // (A quote's mark alone: the line may be the wrap of the quoted line before.)
        assert!(normalise(1, b"> |  Allocating another 8680 MB").quoted);
        assert!(!normalise(1, b"> E0528 07:02:44.350251   27487 client.cc:2826] Execution failed").quoted);
        assert_eq!(
            clean("[pod/trainer-0/main] RuntimeError: CUDA out of memory."),
            "RuntimeError: CUDA out of memory."
        );
        assert_eq!(
            clean("ERROR:tensorflow:ResourceExhaustedError: OOM when allocating tensor"),
            "ResourceExhaustedError: OOM when allocating tensor"
        );
    }

    #[test]
    fn message_indentation_survives() {
        assert_eq!(clean("  1. Size: 32.00G"), "  1. Size: 32.00G");
        assert_eq!(clean("\t\tSize: 38.10GiB"), "\t\tSize: 38.10GiB");
        assert_eq!(clean("1 Chunks of size 1280 totalling 1.2KiB"), "1 Chunks of size 1280 totalling 1.2KiB");
    }

    #[test]
    fn colour_codes_go_with_or_without_the_escape_byte() {
        assert_eq!(clean("\x1b[31mRESOURCE_EXHAUSTED\x1b[0m: Out of memory"), "RESOURCE_EXHAUSTED: Out of memory");
        assert_eq!(clean("[1;31mRESOURCE_EXHAUSTED[0m: Out of memory"), "RESOURCE_EXHAUSTED: Out of memory");
        assert_eq!(clean("f32[4096,256]"), "f32[4096,256]");
    }

    #[test]
    fn collapsed_repeats_are_counted() {
        let line = normalise(2, "OutOfResources: out of resource  (×5)".as_bytes());
        assert_eq!((line.text.as_ref(), line.repeats), ("OutOfResources: out of resource", 5));
        let line = normalise(2, b"CUDA out of memory. [repeated 3x across cluster]");
        assert_eq!((line.text.as_ref(), line.repeats), ("CUDA out of memory.", 3));
    }

    #[test]
    fn lines_are_read_whatever_their_ending() {
        let mut seen = Vec::new();
        let count = read_lines(&b"first\r\n\nlast"[..], |n, line| seen.push((n, line.to_vec()))).unwrap();
        assert_eq!(count, 3);
        assert_eq!(seen, [(1, b"first\r".to_vec()), (2, Vec::new()), (3, b"last".to_vec())]);
        assert_eq!(read_lines(&b"one\n"[..], |_, _| {}).unwrap(), 1);
        assert_eq!(read_lines(&b""[..], |_, _| {}).unwrap(), 0);
    }

    #[test]
    fn an_endless_line_is_cut() {
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        let mut lengths = Vec::new();
        read_lines(&long[..], |_, line| lengths.push(line.len())).unwrap();
        assert_eq!(lengths, [MAX_LINE_BYTES]);
    }

    #[test]
    fn line_numbers_go_when_they_count_lines() {
        let mut numbering = Numbering::default();
        let lines: [&[u8]; 3] =
            [b"85     cvmm_kernel[grid](", b"86   File \"x.py\", line 114, in run", b"87 triton.runtime"];
        let cut: Vec<usize> = lines.iter().map(|line| numbering.prefix_len(line)).collect();
        assert_eq!(cut, [0, 3, 3]);
        let mut numbering = Numbering::default();
        let cat_n: Vec<usize> =
            [&b"     1\tTraceback"[..], b"     2\tMemoryError"].iter().map(|l| numbering.prefix_len(l)).collect();
        assert_eq!(cat_n, [0, 7]);
        let mut numbering = Numbering::default();
        assert_eq!(numbering.prefix_len(b"71\x1b[2m(MeshHostWorker pid=489)"), 2);
        assert_eq!(numbering.prefix_len(b"71[2m[36m(MeshHostWorker pid=489)[0m BufferAssignment stats:"), 2);
        let mut numbering = Numbering::default();
        assert_eq!(numbering.prefix_len(b"1 Chunks of size 256 totalling 256B"), 0);
        assert_eq!(numbering.prefix_len(b"2 Chunks of size 512 totalling 1.0KiB"), 0);
    }

    #[test]
    fn cut_lines_are_noticed() {
        assert!(looks_cut("%flash_attention.27 = bf16[1,2,37888,72]{3,2,1,0:T(8,128)("));
        assert!(looks_cut("Operator: op_name=\"jit(apply_fn)/a"));
        assert!(!looks_cut("Shape: f32[32,4096,4096]{1,2,0:T(8,128)}"));
    }
}

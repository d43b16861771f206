//! The host ran out, not a device: the Linux kernel's OOM killer (its
//! `invoked oom-killer` report through `Killed process N (python)`), a cgroup
//! or Slurm limit, Kubernetes' `OOMKilled` and containerd's `TaskOOM`, and Python's `MemoryError`
//! (NumPy's `Unable to allocate … for an array with shape …`) and PyTorch's
//! CPU allocator (`DefaultCPUAllocator: not enough memory: you tried to allocate N bytes`).

use super::block::{Block, Detected, Feed};
use super::event::{Kind, OomEvent};
use super::line::Line;
use super::size;

const KILLED: &str = "Killed process";

/// The kernel's report (call trace, memory state, task table) is read up to this many lines.
const MAX_KERNEL_REPORT_LINES: u32 = 100_000;

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    if let Some(found) = regex!(r"(\S+) invoked oom-killer:").captures(text) {
        let mut event = host_event(line);
        event.fact("Kernel", "invoked by", None, Some(found[1].to_string()));
        return Some(Detected::at(event, text, &found).with_block(KernelReport::default()));
    }
    // The kernel's report without its `invoked oom-killer` line: its call trace through the
    // OOM killer (`out_of_memory.cold+0xa/0x7e`, `mem_cgroup_out_of_memory+0x13a/0x150`).
    if regex!(r"\b(?:mem_cgroup_)?out_of_memory(?:\.\w+)?\+0x[0-9a-f]+/0x|\boom_kill_process(?:\.\w+)?\+0x[0-9a-f]+/0x")
        .is_match(text)
    {
        let mut event = host_event(line);
        event.truncated = true;
        return Some(Detected::new(event, "the kernel's OOM call trace").with_block(KernelReport::default()));
    }
    // V8's report of the garbage collections before it gave up, which it prints only when the
    // heap is out of memory; its `FATAL ERROR: … JavaScript heap out of memory` may follow.
    // (Its JS stack trace's mark without the collections above it, which V8 also prints only
    // when the heap is out of memory: `<--- JS stacktrace --->` under `Scavenge … allocation
    // failure` lines cut from their header.)
    if text.contains("<--- Last few GCs --->") || is_v8_stack_mark(text.as_bytes()) {
        let mut event = host_event(line);
        event.truncated = true;
        return Some(Detected::new(event, "V8's last few GCs").with_block(V8Report::default()));
    }
    // Rows of the task table alone (`[  806]  1000   806   134504  1041  221184  0  0 plasmashell`):
    // the table, if another row follows.
    if is_task_row(text.as_bytes()) {
        let mut event = host_event(line);
        event.truncated = true;
        let mut detected = Detected::new(event, "the kernel's task table").with_block(KernelTables::default());
        detected.tentative = true;
        return Some(detected);
    }
    // The kernel's report from its tables on, without the lines above them: the task table
    // (`Tasks state (memory values in pages):`, its `… oom_score_adj name` header, printed only
    // by the OOM killer) or the zones' memory state (`Node 0 Normal free:…kB … min:…kB`, `Node 0
    // Normal per-cpu:`, which an allocation failure prints too).
    if regex!(r"Tasks state \(memory values in pages\)|\boom_score_adj\s+name\s*$|^\s*Node \d+ \w+ (?:free:\d+kB\b.*\bmin:\d+kB|per-cpu:)")
        .is_match(text)
    {
        let mut event = host_event(line);
        event.truncated = true;
        return Some(Detected::new(event, "the kernel's memory report").with_block(KernelTables::default()));
    }
    // The cgroup v1 kill's first line (`Task in /kubepods… killed as a result of limit of
    // /kubepods…`): the cgroup's figures and the kill follow.
    if let Some(found) = regex!(r"\bTask in \S+ killed as a result of limit of (\S+)").captures(text) {
        let mut event = host_event(line);
        event.fact("Kernel", "cgroup", None, Some(found[1].to_string()));
        return Some(Detected::at(event, text, &found).with_block(KernelReport::default()));
    }
    if let Some(found) = killed(text) {
        let mut event = host_event(line);
        fill_killed(&mut event, text, &found);
        // The reaper's line for the same process follows: it is this kill's.
        return Some(Detected::at(event, text, &found).with_block(KernelReport { lines: 0, killed: true }));
    }
    // The reaper's line without the kill's (a journal filtered to it): the process
    // the OOM killer freed.
    if let Some(found) = regex!(r"oom_reaper: reaped process (\d+) \(([^)]*)\)").captures(text) {
        let mut event = host_event(line);
        event.op = Some(found[2].to_string());
        if let Ok(pid) = found[1].parse() {
            event.count(KILLED, "pid", pid);
        }
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) = regex!(r"Detected (\d+) oom[-_]kill events?(?:\(s\))?(?: in (?:step )?(\S+))?").captures(text)
    {
        let mut event = host_event(line);
        event.count("cgroup", "oom-kill events", found[1].parse().unwrap_or(0));
        event.op = found.get(2).map(|step| step.as_str().trim_end_matches('.').to_string());
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) = regex!(
        // (containerd's `TaskOOM event &TaskOOM{ContainerID:…}` when a container's cgroup hits its limit.)
        r#"task \d+: Out Of Memory|\boom[-_]kill event|killed by the OOM killer|\bTaskOOM event\b|\bOOMKilled\b(?:"?\s*:\s*true)?"#
    )
    .find(text)
    // (Not one the status says was false: Docker's `"OOMKilled": false`, a person's `Exit code 137,
    // OOMKilled is false.`.)
    .filter(|found| !regex!(r#"^"?\s*(?::|=|\sis|\swas)\s*(?i:false)\b"#).is_match(&text[found.end()..]))
    // A status or a field named in backticks in a sentence (`Kubernetes surfaces `OOMKilled` to
    // users`, `reveals the `State.OOMKilled` field`) is named, not reported; one negated
    // (`if the reason is not `OOMKilled`) did not happen.
    .filter(|found| {
        !regex!(r"`[\w.]*$").is_match(&text[..found.start()]) || !regex!(r"^[\w.]*`").is_match(&text[found.end()..])
    })
    .filter(|found| !regex!(r"(?i)\bnot\s+`?[\w.]*$").is_match(&text[..found.start()]))
    // Nor is a field a Go template prints (`docker inspect -f 'oom={{.State.OOMKilled}}'`).
    .filter(|found| !regex!(r"\{\{\s*[\w.]*$").is_match(&text[..found.start()]))
    // Nor is one a title asks for (`Support OOMKilled`).
    .filter(|found| !super::general::talks_before(text, found.start()))
    {
        let key = text.get(found.start()..).unwrap_or(text).trim_end();
        return Some(Detected::new(host_event(line), key));
    }
    if let Some(found) =
        regex!(r"DefaultCPUAllocator: (?:not enough memory|can't allocate memory): you tried to allocate (\d+) bytes")
            .captures(text)
    {
        // PyTorch's CPU allocator.
        let mut event = host_event(line);
        event.requested_bytes = found[1].parse().ok();
        return Some(Detected::at(event, text, &found));
    }
    let found = regex!(
        r"^\s*((?:[\w.]+\.)?_?(?:Array)?MemoryError)(?::\s*(?:Unable to allocate (\d+(?:\.\d*)? ?(?:[KMGTPE]i?B|bytes)) for an (?:array|object) with shape (\([^)]*\)))?.*)?$"
    )
    .captures(text)
    .filter(|_| !super::general::names_device_first(text))?;
    let mut event = host_event(line);
    event.exception = Some(found[1].to_string());
    event.requested_bytes = found.get(2).and_then(|s| size::unsigned(size::parse(s.as_str())));
    event.shape = found.get(3).map(|shape| shape.as_str().to_string());
    Some(Detected::new(event, text.trim()))
}

fn host_event(line: &Line) -> OomEvent {
    let mut event = OomEvent::new(Kind::HostOom, line);
    event.memory_space = Some("host".to_string());
    event
}

/// `Out of memory: Killed process 1234 (python) total-vm:…kB, anon-rss:…kB, …`
/// (`Kill process … score … or sacrifice child` and a bare `Killed process …` before Linux 4.19;
/// RHEL 6's kernel names the user: `Killed process 31217, UID 500, (python3) total-vm:…`).
fn killed(text: &str) -> Option<regex::Captures<'_>> {
    // (A mail's quote mark may stand inside, where a reply wrapped the line: `Kill process 7963
    // > (sge_qmaster)`.)
    regex!(r"(?:(?:Memory cgroup out of memory|Out of memory)(?: \(oom_kill_allocating_task\))?: )?\bKill(?:ed)? process (\d+)(?:, UID \d+,)? (?:> )?\(([^)]*)\)")
        .captures(text)
}

fn fill_killed(event: &mut OomEvent, text: &str, found: &regex::Captures) {
    event.op = Some(found[2].to_string());
    if let Ok(pid) = found[1].parse() {
        event.count(KILLED, "pid", pid);
    }
    for rss in regex!(r"([a-z-]+(?:-vm|-rss)):([\d,]+)kB").captures_iter(text) {
        let kib = size::parse_exact(&rss[2]);
        let bytes = kib.and_then(|kib| kib.checked_mul(1024));
        event.fact(KILLED, &rss[1], bytes, None);
        if &rss[1] == "anon-rss" {
            event.used_bytes = size::unsigned(bytes);
        }
    }
}

/// What the kernel prints between `invoked oom-killer` and the kill: the
/// call trace, the memory state and the task table, then the process it
/// killed (`Killed process`) and the reaper's line.
#[derive(Default)]
struct KernelReport {
    lines: u32,
    killed: bool,
}

impl Block for KernelReport {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        let text = line.text.as_ref();
        self.lines += 1;
        if self.lines > MAX_KERNEL_REPORT_LINES {
            return Feed::Ended;
        }
        if self.killed {
            return if text.contains("oom_reaper:") { Feed::Consumed } else { Feed::Ended };
        }
        if let Some(found) = killed(text) {
            fill_killed(event, text, &found);
            self.killed = true;
        } else if let Some(found) = regex!(r"^\s*memory: usage (\d+)kB, limit (\d+)kB").captures(text) {
            // The cgroup's own figures (cgroup v1 and v2), before its `memory+swap:` and `kmem:`.
            let kib = |at: usize| found[at].parse::<u64>().ok().and_then(|kib| kib.checked_mul(1024));
            event.used_bytes = event.used_bytes.or(kib(1));
            event.capacity_bytes = event.capacity_bytes.or(kib(2));
        } else if let Some(task) = regex!(r"oom-kill:constraint=(\w+).*?,task=([^,]+),pid=(\d+)").captures(text) {
            event.fact("Kernel", "constraint", None, Some(task[1].to_string()));
        } else if regex!(r"(?i)invoked oom-killer").is_match(text) {
            return Feed::Ended;
        }
        Feed::Consumed
    }

    fn is_finished(&self) -> bool {
        self.killed
    }
}

/// Whether a line is V8's mark of its JS stack trace alone (`<--- JS stacktrace --->`), which V8
/// prints only when its heap is out of memory.
pub(super) fn is_v8_stack_mark(text: &[u8]) -> bool {
    text.trim_ascii() == b"<--- JS stacktrace --->"
}

/// A row of the task table the OOM killer prints: the pid in brackets, then uid, tgid, the
/// memory columns and `oom_score_adj` (six to ten numbers, by kernel version), then the name.
/// Asked of every line of a log, so the end of the line is looked at first: a name after a
/// number (`oom_score_adj`), which few other lines end with.
pub(super) fn is_task_row(text: &[u8]) -> bool {
    let text = text.trim_ascii_end();
    let Some(space) = text.iter().rposition(|b| b.is_ascii_whitespace()) else { return false };
    let before_name = text[..space].trim_ascii_end();
    if !before_name.last().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    // (Behind any prefix: the scanner asks before it strips the line's.)
    regex!(bytes r"\[\s*\d+\](?:[ \t]+-?\d+){6,10}[ \t]+\S+$").is_match(text)
}

/// The kernel report's tables, read from wherever the excerpt starts: task rows, the zones'
/// and per-CPU lines and the totals around them, up to the kill if it follows; any other
/// line ends them.
#[derive(Default)]
struct KernelTables {
    report: KernelReport,
}

impl Block for KernelTables {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        let text = line.text.trim();
        let table_line = regex!(
            r"^(?:\[\s*\d+\]\s+\d+\s+\d+\s|Node \d+ |lowmem_reserve\[\]|CPU\s+\d+:|\d+ (?:pages|total pagecache|reserved pages)|Free swap|Total swap|Swap cache|free:\d|Mem-Info:|Tasks state|\[\s*pid\s*\]|oom-kill:|Memory cgroup|memory: usage|swap: usage|kmem: usage|[a-z_]+:\d+ [a-z_()]+:\d|\w+ free:\d+kB|\w+: \d+\*\d+kB)"
        );
        if self.report.killed || killed(text).is_some() || table_line.is_match(text) {
            return self.report.feed(event, line);
        }
        Feed::Ended
    }

    fn is_finished(&self) -> bool {
        self.report.killed
    }
}

/// V8's report from `<--- Last few GCs --->` on: the collections, the JS stack trace, and the
/// fatal line, which is the failure's message (and the report's end but for its frames).
#[derive(Default)]
struct V8Report {
    fatal: bool,
    blanks: u8,
}

impl Block for V8Report {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        let text = line.text.trim();
        if line.is_blank() {
            self.blanks += 1;
            return if self.blanks > 2 { Feed::Ended } else { Feed::Consumed };
        }
        self.blanks = 0;
        // (The native frames after the fatal line: ` 1: 0xbf9890 node::Abort() [node]`.)
        if regex!(r"^\d+: 0x[0-9a-fA-F]+\b").is_match(text) {
            return Feed::Consumed;
        }
        if self.fatal {
            return Feed::Ended;
        }
        if text.starts_with("FATAL ERROR:") {
            self.fatal = true;
            event.truncated = false;
            event.message_from(line);
            if let Some(reading) = super::general::read(line) {
                super::general::refine(event, &reading);
            }
            return Feed::Consumed;
        }
        let collection = regex!(r"\d+ ms: (?:Mark-sweep|Mark-Compact|Mark-compact|Scavenge|Minor Mark-Compact)\b");
        let stack = regex!(r"^(?:<--- JS stacktrace --->|==== JS stack trace|Security context:|JS stack trace)");
        if collection.is_match(text)
            || stack.is_match(text)
            || regex!(r"^\d+: (?:ExitFrame|StubFrame|builtin exit frame|~|\S+\(|\[)").is_match(text)
        {
            return Feed::Consumed;
        }
        Feed::Ended
    }

    fn is_finished(&self) -> bool {
        self.fatal
    }
}

#[cfg(test)]
mod tests {
    use crate::oom::scan;

    /// The zones' lines of a kernel report (an old kernel's, with per-CPU lists).
    const ZONES: &str = concat!(
        "Mem-Info:\n",
        "Node 0 DMA per-cpu:\n",
        "CPU    0: hi:    0, btch:   1 usd:   0\n",
        "active_anon:105214 inactive_anon:4 isolated_anon:0\n",
        " active_file:1004 inactive_file:1205 isolated_file:0\n",
        "Node 0 DMA free:2000kB min:80kB low:100kB high:120kB active_anon:1200kB present:15688kB\n",
        "lowmem_reserve[]: 0 489 489 489\n",
        "Node 0 DMA: 4*4kB 2*8kB 1*16kB 3*32kB 1*64kB 0*128kB 1*256kB 1*512kB 1*1024kB 0*2048kB 0*4096kB = 2000kB\n",
        "131054 pages RAM\n",
    );

    #[test]
    fn a_cgroup_v1_kill_reads_the_cgroups_usage_and_limit() {
        // From a posted syslog (round34-fragments/istio-cgroup-limit-syslog-without-header.txt).
        let log = concat!(
            "Jan  5 02:12:02 host kernel: Task in /kubepods.slice/docker-b272.scope killed as a result of limit of /kubepods.slice/pod0330.slice\n",
            "Jan  5 02:12:02 host kernel: memory: usage 1048576kB, limit 1048576kB, failcnt 189\n",
            "Jan  5 02:12:02 host kernel: memory+swap: usage 1048576kB, limit 1048576kB, failcnt 0\n",
        );
        let event = scan("log", log.as_bytes()).unwrap().events.remove(0);
        assert_eq!(event.used_bytes, Some(1 << 30));
        assert_eq!(event.capacity_bytes, Some(1 << 30));
    }

    #[test]
    fn the_zones_alone_are_a_truncated_report_read_as_one() {
        let report = scan("log", ZONES.as_bytes()).unwrap();
        assert_eq!(report.events.len(), 1);
        assert!(report.events[0].truncated);
        assert_eq!(report.events[0].occurrences, 1);
    }
}

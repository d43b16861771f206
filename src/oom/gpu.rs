//! XLA on GPU (CUDA and ROCm): the allocator's failure (`Out of memory while
//! trying to allocate N bytes.`, `Failed to allocate request for … on device
//! ordinal N`), the driver's (`failed to allocate … from device: CUDA_ERROR_OUT_OF_MEMORY`),
//! and the BufferAssignment report XLA prints after the first two.

use super::bfc::Dump;
use super::block::{Block, Detected, Feed};
use super::context::program;
use super::event::{Kind, OomEvent, Phase};
use super::line::Line;
use super::listing::Listing;
use super::size::{self, SIZE};

const STATS: &str = "BufferAssignment stats";
/// XLA's rematerialization warning: its `limit`, `reduced to` and `originally`.
pub(super) const REMAT: &str = "Rematerialization";
/// The rematerialization limit: what XLA's scheduler leaves for temporaries plus
/// the program's outputs, so exactly the outputs when the arguments exceed the base limit.
pub(super) const REMAT_LIMIT: &str = "limit";
/// XLA GPU scheduler's warning: [`ARGUMENTS_SIZE`] over its `base limit`.
pub(super) const ARGUMENTS: &str = "Program arguments";
/// The program's parameters and outputs (an aliased output counted once), an exact count.
pub(super) const ARGUMENTS_SIZE: &str = "input/output arguments";
const AUTOTUNING: &str = "Autotuning";

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    if let Some(found) = regex!(&format!(
        r"Out of (host )?memory while trying to allocate (?:(\d+) bytes|({SIZE}))(?: with allocator ([\w\-]+))?(?: on device (\d+))?\.?"
    ))
    .captures(text)
    {
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        let exact = found.get(2).and_then(|n| size::parse_exact(n.as_str()));
        event.requested_bytes = size::unsigned(exact.or_else(|| found.get(3).and_then(|s| size::parse(s.as_str()))));
        event.allocator = found.get(4).map(|name| name.as_str().to_string());
        event.memory_space = if found.get(1).is_some() {
            // PJRT's pinned host pool for the device (`xla_gpu_host_bfc`), capped by
            // `XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB`, whose default the message names.
            event.capacity_bytes = regex!(r"than the default (\d+) ?GB")
                .captures(text)
                .and_then(|limit| limit[1].parse::<u64>().ok())
                .and_then(|gib| gib.checked_mul(1 << 30));
            event.limit_bytes = event.capacity_bytes;
            Some("host".to_string())
        } else {
            found.get(5).map(|device| format!("device {}", device.as_str()))
        };
        event.program = program(text);
        return Some(Detected::at(event, text, &found).with_block(Report::default()));
    }
    if let Some(found) = regex!(&format!(
        r"(?:Can't reduce memory use below\s+)?({SIZE})(?:\s*\((\d+) bytes\))?\s+by rematerialization; only reduced to ({SIZE})(?:\s*\((\d+) bytes\))?(?:, down from ({SIZE})(?:\s*\((\d+) bytes\))? originally)?"
    ))
    .captures(text)
    {
        // XLA's estimate of the program's peak against the limit it compiles
        // for: a warning (it compiles anyway), the error follows if it does not fit.
        // Each size is exact where the line gives the count, rounded where a wrap or an old XLA left only the size.
        let mut event = OomEvent::new(Kind::CompileTimeOom, line);
        let bytes = |size_at: usize| {
            let exact = found.get(size_at + 1).and_then(|n| size::parse_exact(n.as_str()));
            exact.or_else(|| found.get(size_at).and_then(|s| size::parse(s.as_str())))
        };
        event.capacity_bytes = size::unsigned(bytes(1));
        event.used_bytes = size::unsigned(bytes(3));
        event.non_fatal = true;
        event.phase = Some(Phase::Compile);
        event.fact(REMAT, REMAT_LIMIT, bytes(1), None);
        event.fact(REMAT, "reduced to", bytes(3), None);
        if found.get(5).is_some() {
            event.fact(REMAT, "originally", bytes(5), None);
        }
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) =
        regex!(r"The byte size of input/output arguments \((\d+)\) exceeds the base limit(?: \((\d+)\))?")
            .captures(text)
    {
        // XLA GPU's scheduler: the program's parameters and outputs alone do not fit the device's memory limit.
        let mut event = OomEvent::new(Kind::CompileTimeOom, line);
        event.used_bytes = size::unsigned(size::parse_exact(&found[1]));
        event.capacity_bytes = found.get(2).and_then(|n| size::unsigned(size::parse_exact(n.as_str())));
        event.limit_bytes = event.capacity_bytes;
        event.non_fatal = true;
        event.phase = Some(Phase::Compile);
        event.fact(ARGUMENTS, ARGUMENTS_SIZE, size::parse_exact(&found[1]), None);
        if let Some(limit) = found.get(2) {
            event.fact(ARGUMENTS, "base limit", size::parse_exact(limit.as_str()), None);
        }
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) =
        regex!(r"RESOURCE_EXHAUSTED: Failed to get configs for: (\d+) out of (\d+) instructions").captures(text)
    {
        // The GEMM autotuner gave up: the candidates it tried ran out of memory.
        let mut event = OomEvent::new(Kind::CompileTimeOom, line);
        event.phase = Some(Phase::Autotune);
        event.program = program(text);
        for (name, at) in [("instructions without a config", 1), ("instructions tuned", 2)] {
            if let Ok(count) = found[at].parse() {
                event.count(AUTOTUNING, name, count);
            }
        }
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) =
        regex!(&format!(r"Failed to allocate request for ({SIZE}) \((\d+)B\) on device ordinal (\d+)")).captures(text)
    {
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.requested_bytes = size::unsigned(size::parse_exact(&found[2]).or_else(|| size::parse(&found[1])));
        event.memory_space = Some(format!("device ordinal {}", &found[3]));
        return Some(Detected::at(event, text, &found).with_block(Report::default()));
    }
    if let Some(found) =
        regex!(&format!(r"failed to allocate ({SIZE}) \((\d+) bytes\) from device(?:: (.*))?")).captures(text)
    {
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.requested_bytes = size::unsigned(size::parse_exact(&found[2]).or_else(|| size::parse(&found[1])));
        if let Some(error) = found.get(3) {
            event.fact("Driver", "error", None, Some(error.as_str().trim().to_string()));
        }
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) = regex!(r"(\S+) cuMemAllocAsync failed to allocate (\d+) bytes").captures(text) {
        // XLA's cuda_malloc_async allocator: CUDA's free and total memory, then its Stats, follow.
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.requested_bytes = found[2].parse().ok();
        event.allocator = Some(found[1].to_string());
        event.program = program(text);
        return Some(Detected::at(event, text, &found).with_block(Dump::default()));
    }
    if let Some(found) = regex!(r"Failed to load in-memory CUBIN[^:]*:\s*CUDA_ERROR_OUT_OF_MEMORY").find(text) {
        // The driver could not load the program's compiled code: memory outside XLA's pool ran out.
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.program = program(text);
        event.fact("Driver", "error", None, Some("CUDA_ERROR_OUT_OF_MEMORY loading the program's code".to_string()));
        let key = text.get(found.start()..).unwrap_or(text).trim_end();
        return Some(Detected::new(event, key).with_block(Report::default()));
    }
    if let Some(found) =
        regex!(r"failed to alloc (\d+) bytes (on host|unified memory)(?:[:;]\s*(?:result: )?(.*))?").captures(text)
    {
        // Pinned host memory for transfers, or unified memory, refused by the CUDA driver.
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.requested_bytes = found[1].parse().ok();
        event.memory_space = Some(if &found[2] == "on host" { "host" } else { "unified memory" }.to_string());
        if let Some(error) = found.get(3) {
            event.fact("Driver", "error", None, Some(error.as_str().trim().to_string()));
        }
        return Some(Detected::at(event, text, &found));
    }
    let t = line.text.trim();
    let listing = regex!(r"^Buffer \d+:$").is_match(t);
    if t == "BufferAssignment OOM Debugging." || t == "BufferAssignment stats:" || listing {
        // The report without the failure line before it (an excerpt may start
        // at its stats or in its list of buffers): the log holds only part of it.
        let mut event = OomEvent::new(Kind::BufferAssignmentOom, line);
        event.truncated = true;
        let mut report = Report { started: true, ..Report::default() };
        report.feed(&mut event, line);
        let mut detected = Detected::new(event, t).with_block(report);
        // `Buffer 1:` alone could be anything: kept only if buffer fields follow.
        detected.tentative = listing;
        return Some(detected);
    }
    None
}

/// `BufferAssignment::ToVerboseString`: the stats, then the peak buffers.
#[derive(Default)]
pub(super) struct Report {
    started: bool,
    in_stats: bool,
    listing: Listing,
    blanks: u8,
}

impl Block for Report {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        let t = line.text.trim();
        if t.is_empty() {
            self.blanks += 1;
            // A blank line separates buffers; two end the report (and one before it starts).
            return if self.blanks >= 2 || !self.started { Feed::Ended } else { Feed::Consumed };
        }
        self.blanks = 0;
        if t == "BufferAssignment OOM Debugging." {
            self.started = true;
            event.kind = Kind::BufferAssignmentOom;
            return Feed::Consumed;
        }
        if !self.started {
            // The executable's name, when a terminal or a person wrapped it onto the next line.
            // (In a quote that keeps its comment marks on every line: `#   [executable_name=…]`.)
            if event.program.is_none() && t.trim_start_matches(['#', ' ', '\t']).starts_with('[') {
                if let Some(name) = program(t) {
                    event.program = Some(name);
                    return Feed::Consumed;
                }
            }
            return Feed::Ended;
        }
        if self.listing.field(&line.text) {
            return Feed::Consumed;
        }
        if t == "BufferAssignment stats:" {
            self.in_stats = true;
            let _ = event.section(STATS);
        } else if t == "Peak buffers:" {
            self.in_stats = false;
        } else if regex!(r"^Buffer \d+:$").is_match(t) {
            self.in_stats = false;
            self.listing.start(event, None);
        } else if let Some(found) =
            regex!(&format!(r"^([a-z_ ]+?):\s+({SIZE})(?:\s+\(([\d.]+)%\))?$")).captures(t).filter(|_| self.in_stats)
        {
            let note = found.get(3).map(|percent| format!("{}%", percent.as_str()));
            event.fact(STATS, &found[1], size::parse(&found[2]), note);
        } else {
            return Feed::Ended;
        }
        Feed::Consumed
    }
    fn close(&mut self, event: &mut OomEvent) {
        self.listing.finish(event);
    }
}

//! The TensorFlow/TSL BFC allocator (`GPU_0_bfc`, `cuda_host_bfc`): its
//! failure line in every generation (classic, spatial-partitioning, and the
//! non-fatal "caller indicates that this is not a failure" variant), the
//! memory dump that follows it, and TensorFlow's `OOM when allocating tensor`.

use super::block::{Block, Detected, Feed};
use std::collections::HashMap;

use super::event::{Allocation, BfcBin, Holder, Kind, OomEvent, MAX_ITEMS};
use super::line::Line;
use super::size::{self, SIZE};

const REQUEST: &str = "Request";
const STATS: &str = "Stats";
const CHUNKS: &str = "Chunks";

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    if let Some(found) = regex!(&format!(
        r"(?:Allocator \(([^)]+)\) r|\bR)an out of memory trying to allocate ({SIZE})(?: \((\d+) bytes\))?(?: \(rounded to (\d+)\))?(?: from the (\w+) end)?(?: with freed_by_count=(\d+))?"
    ))
    .captures(text)
    {
        let mut event = OomEvent::new(Kind::BfcAllocatorOom, line);
        if let Some(name) = found.get(1) {
            name_allocator(&mut event, name.as_str());
        }
        // The exact count, when the line prints one, wins over the rounded size.
        let exact = found.get(3).and_then(|n| size::parse_exact(n.as_str()));
        event.requested_bytes = size::unsigned(exact.or_else(|| size::parse(&found[2])));
        if let Some(rounded) = found.get(4) {
            event.fact(REQUEST, "rounded to", size::parse_exact(rounded.as_str()), None);
        }
        if let Some(end) = found.get(5) {
            event.fact(REQUEST, "from the end", None, Some(end.as_str().to_string()));
        }
        if let Some(freed) = found.get(6).and_then(|n| n.as_str().parse().ok()) {
            event.count(REQUEST, "freed_by_count", freed);
        }
        event.op = regex!(r"requested by op ?(.*)$").captures(text).map(|op| op[1].trim().to_string());
        event.non_fatal = found.get(6).is_some() || text.contains("The caller indicates that this is not a failure");
        event.allocator_warning = !event.non_fatal;
        return Some(Detected::at(event, text, &found).with_block(Dump::default()));
    }
    if let Some(found) = tensor_oom(text) {
        // TensorFlow's GPU allocator is BFC: the message is BFC's unless it names another
        // allocator, or a device other than a GPU (`…/cpu:0`, DirectML's `DML:0`). An
        // allocator named only by its device (`by allocator GPU`) names no other allocator.
        let bfc = match found.name("allocator") {
            Some(allocator) => regex!(r"^GPU(?:_\d+)?$|_bfc$").is_match(allocator.as_str()),
            // (A device path cut before its device, `on /job:localhost`, names none.)
            None => found.name("device").is_none_or(|device| {
                names_gpu(device.as_str())
                    || !regex!(r"(?i)device:|/(?:cpu|gpu|xla_\w+)\b|\bDML\b").is_match(device.as_str())
            }),
        };
        let kind = if bfc { Kind::BfcAllocatorOom } else { Kind::RuntimeAllocationFailure };
        let mut event = OomEvent::new(kind, line);
        Dump::default().feed(&mut event, line);
        let named_allocator = found.name("allocator").is_some();
        return Some(Detected::at(event, text, &found).with_block(NodeLine { named_allocator, read: false }));
    }
    if let Some(found) = regex!(r"failed to allocate memory \[Op:(\w+)\]").captures(text) {
        // TensorFlow's eager op, without figures.
        let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
        event.op = Some(found[1].to_string());
        return Some(Detected::at(event, text, &found));
    }
    let t = text.trim();
    // The stats alone, their heading cut or elided (`...` then `Limit: 22654317364`): a
    // report only if the stat that follows is the allocator's own.
    if let Some(needs_next) = match t {
        "Stats:" => Some("Limit:"),
        _ if regex!(r"^Limit:\s+\d{4,}$").is_match(t) => Some("InUse:"),
        _ => None,
    } {
        let mut event = OomEvent::new(Kind::BfcAllocatorOom, line);
        event.truncated = true;
        event.allocator_warning = true;
        let mut dump = Dump { in_stats: true, ..Dump::default() };
        if t != "Stats:" {
            dump.stat(&mut event, t);
        }
        dump.needs_next = Some(needs_next);
        let mut detected = Detected::new(event, t).with_block(dump);
        detected.tentative = true;
        return Some(detected);
    }
    let fragment = regex!(
        r"^(?:BFCAllocator dump for \S+|Bin \(\d+\):.*|\d+ Chunks of size \d+ totalling .*|Sum Total of in-use chunks: .*|(?:InUse|Chunk|Free)\s+at\s+(?:0x)?[0-9a-fA-F]+(?: next \d+)? of size \d+.*|Summary of in-use Chunks by size:?|Next region of size \d+)$"
    );
    if fragment.is_match(t) {
        // The dump without the failure line that comes before it: the log holds only part of the report.
        let mut event = OomEvent::new(Kind::BfcAllocatorOom, line);
        event.truncated = true;
        event.allocator_warning = true;
        let mut dump = Dump::default();
        dump.feed(&mut event, line);
        return Some(Detected::new(event, t).with_block(dump));
    }
    None
}

/// The allocator the log names, unless one was named before, and the device it allocates on
/// (`GPU_0_bfc` is GPU 0's) when no memory space was named.
fn name_allocator(event: &mut OomEvent, name: &str) {
    if event.allocator.is_some() {
        return;
    }
    event.allocator = Some(name.to_string());
    if event.memory_space.is_none() {
        event.memory_space = regex!(r"^GPU_(\d+)_bfc$").captures(name).map(|gpu| format!("GPU {}", &gpu[1]));
    }
}

/// A TensorFlow device name of a GPU (`/job:localhost/replica:0/task:0/gpu:0`, `device:GPU:0`).
fn names_gpu(device: &str) -> bool {
    regex!(r"(?i)\bgpu:\d").is_match(device)
}

/// The node line TensorFlow prints after its op-level message
/// (`[[Node: sub_2518 = Sub[T=DT_FLOAT, _device="/job:localhost/replica:0/task:0/gpu:0"](…)]]`,
/// `[[{{node conv2d/Conv2D}}]]`): the op, and the device when the message did not name it.
struct NodeLine {
    named_allocator: bool,
    /// The failed node's line is read; the node lines after it (`[[Node: range_3/_21 =
    /// _Recv[…, _device="…/cpu:0"]]`) are other nodes of the step and name nothing of it.
    read: bool,
}

impl Block for NodeLine {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        // (Attributes before the device may hold quotes: `padding="SAME", …, _device="…"`.)
        let Some(found) = regex!(r#"^\s*\[\[(?:Node: ([\w/.-]+)|\{\{node ([\w/.-]+)\}\})(?:.*?_device="([^"]*)")?"#)
            .captures(&line.text)
        else {
            return Feed::Ended;
        };
        if std::mem::replace(&mut self.read, true) {
            return Feed::Consumed;
        }
        event.op = event.op.take().or(found.get(1).or(found.get(2)).map(|op| op.as_str().to_string()));
        if !self.named_allocator {
            if let Some(device) = found.get(3) {
                event.kind =
                    if names_gpu(device.as_str()) { Kind::BfcAllocatorOom } else { Kind::RuntimeAllocationFailure };
            }
        }
        Feed::Consumed
    }

    fn is_finished(&self) -> bool {
        true
    }
}

/// TensorFlow's op-level message: shape, and in newer versions the allocator.
fn tensor_oom(text: &str) -> Option<regex::Captures<'_>> {
    // (The device and the allocator are names: a quote's closing mark after them is not theirs,
    // `… by allocator GPU_0_bfc", and how to fix it`; nor a sentence's full stop, `… by allocator
    // GPU_0_bfc.`)
    // (Before TF 1.0 the shape was its proto, `with shapedim { size: 10000 } dim { size: 14 }`.)
    regex!(r"OOM when allocating tensor(?: with shape\s?\[(?P<shape>[^\]]*)\]| of shape \[(?P<shape_of>[^\]]*)\]| with shape\s?(?P<dims>(?:dim \{ size: \d+ \}\s?)+))?(?: and type (?P<dtype>\w+))?(?: on (?P<device>[\w/:.-]*[\w/:-]))?(?: by allocator (?P<allocator>[\w/:.-]*[\w/:-]))?")
        .captures(text)
}

/// The tensor's shape as TensorFlow prints it now (`[10000,14,14,64]`), from either form.
fn tensor_shape(found: &regex::Captures) -> Option<String> {
    if let Some(shape) = found.name("shape").or(found.name("shape_of")) {
        return Some(format!("[{}]", shape.as_str()));
    }
    let dims: Vec<&str> = regex!(r"size: (\d+)")
        .captures_iter(found.name("dims")?.as_str())
        .map(|dim| dim.get(1).map_or("", |d| d.as_str()))
        .collect();
    Some(format!("[{}]", dims.join(",")))
}

/// `DumpMemoryLog`, the occupancy map and the op's message after it.
#[derive(Default)]
pub(super) struct Dump {
    finished: bool,
    in_stats: bool,
    blanks: u8,
    chunks_in_use: u64,
    chunks_free: u64,
    largest_free: Option<u64>,
    holders: Holders,
    /// The in-use chunks as listed (up to [`MAX_ITEMS`]): the report's
    /// allocations when it has no summary of chunks by size (a log that
    /// holds only the chunk lines).
    chunks: Vec<Allocation>,
    /// How the next line must start for a fragment to be a report at all
    /// (a bare `Limit:` line is one only if `InUse:` follows it).
    needs_next: Option<&'static str>,
}

/// In-use chunks by the executable their annotation names
/// (`allocation_annotation xla.execute{executable=jit_step}`).
#[derive(Default)]
struct Holders {
    by_program: HashMap<Option<String>, Holder>,
    annotated: bool,
}

impl Holders {
    fn add(&mut self, program: Option<&str>, bytes: u64) {
        self.annotated |= program.is_some();
        let key = program.map(str::to_string);
        if !self.by_program.contains_key(&key) && self.by_program.len() >= MAX_ITEMS {
            return;
        }
        let holder =
            self.by_program.entry(key.clone()).or_insert(Holder { program: key, bytes: 0, count: 0, largest_bytes: 0 });
        holder.bytes = holder.bytes.saturating_add(bytes);
        holder.count += 1;
        holder.largest_bytes = holder.largest_bytes.max(bytes);
    }

    /// Most bytes first; nothing when no chunk is annotated (older allocators).
    fn into_list(self) -> Vec<Holder> {
        if !self.annotated {
            return Vec::new();
        }
        let mut list: Vec<Holder> = self.by_program.into_values().collect();
        list.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.program.cmp(&b.program)));
        list
    }
}

/// The executable a chunk was allocated for, from its annotation.
fn executable(chunk: &str) -> Option<&str> {
    regex!(r"xla\.execute\{(?:[^}]*?[{ ,])?executable=([^,}\s]+)")
        .captures(chunk)
        .and_then(|found| found.get(1))
        .map(|m| m.as_str())
}

impl Block for Dump {
    fn is_finished(&self) -> bool {
        self.finished
    }
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        let t = line.text.trim();
        if let Some(start) = self.needs_next.take() {
            if !t.starts_with(start) {
                return Feed::Ended;
            }
        }
        if t.is_empty() {
            self.blanks += 1;
            return if self.blanks >= 2 { Feed::Ended } else { Feed::Consumed };
        }
        self.blanks = 0;
        if let Some(found) = tensor_oom(t) {
            event.shape = event.shape.take().or_else(|| tensor_shape(&found));
            if let Some(allocator) = found.name("allocator") {
                name_allocator(event, allocator.as_str());
            }
            // TensorFlow's message is the last thing printed for this failure, and the error itself.
            event.allocator_warning = false;
            self.finished = true;
            return Feed::Consumed;
        }
        if self.finished {
            return Feed::Ended;
        }
        if self.in_stats && self.stat(event, t) {
            return Feed::Consumed;
        }
        self.in_stats = false;
        if regex!(r"^[*_x]{10,}$").is_match(t) || t == "<allocator contains no memory>" {
            // The occupancy map closes the allocator's own output.
            self.finished = true;
        } else if is_commentary(t) {
        } else if let Some(found) =
            regex!(&format!(r"^Size: ({SIZE}) \| Requested Size: ({SIZE}) \| in_use: (\d)")).captures(t)
        {
            // The chunk the request was tried in, with its neighbours.
            let state = if &found[3] == "1" { "in use" } else { "free" };
            event.fact("Chunk state", "chunk", size::parse(&found[1]), Some(state.to_string()));
        } else if let Some(found) = regex!(r"^BFCAllocator dump for (\S+)$").captures(t) {
            name_allocator(event, &found[1]);
        } else if let Some(bin) = bin(t) {
            if event.bins.len() < MAX_ITEMS {
                event.bins.push(bin);
            }
        } else if regex!(r"^Bin \(\d+\):").is_match(t) {
            // A bin line a terminal cut: its figures are on the lines after it.
        } else if let Some(found) = regex!(&format!(r"^Bin for ({SIZE}) was ({SIZE}), Chunk State:$")).captures(t) {
            let request = size::parse(&found[1]);
            // (A report without its header tells the request only here.)
            event.requested_bytes = event.requested_bytes.or(request.and_then(|bytes| u64::try_from(bytes).ok()));
            event.fact("Chunk state", "request", request, None);
            event.fact("Chunk state", "bin", size::parse(&found[2]), None);
        } else if let Some(found) = regex!(r"^(InUse|Chunk|Free)\s+at\s+(?:0x)?[0-9a-fA-F]+(?: next \d+)? of size (\d+)").captures(t) {
            let bytes = found[2].parse().ok();
            if &found[1] == "Free" {
                self.chunks_free += 1;
                self.largest_free = self.largest_free.max(bytes);
            } else {
                self.chunks_in_use += 1;
                self.holders.add(executable(t), bytes.unwrap_or(0));
                if self.chunks.len() < MAX_ITEMS {
                    self.chunks.push(Allocation {
                        size_bytes: bytes,
                        op_name: regex!(r" by op (\S+)").captures(t).map(|op| op[1].to_string()),
                        allocation_type: Some("in use".to_string()),
                        count: 1,
                        ..Allocation::default()
                    });
                }
            }
        } else if let Some(found) = regex!(r"^Next region of size (\d+)").captures(t) {
            event.fact(CHUNKS, "region", size::parse_exact(&found[1]), None);
        } else if let Some(found) = regex!(&format!(r"^(\d+) Chunks of size (\d+) totalling ({SIZE})$")).captures(t) {
            event.push_allocation(Allocation {
                size_bytes: found[2].parse().ok(),
                allocation_type: Some("in use".to_string()),
                count: found[1].parse().unwrap_or(1),
                ..Allocation::default()
            });
        } else if let Some(found) = regex!(&format!(r"^Sum Total of in-use chunks: ({SIZE})$")).captures(t) {
            event.fact(CHUNKS, "in use (sum)", size::parse(&found[1]), None);
        } else if let Some(found) = regex!(
            r"^total_region_allocated_bytes_: (\d+) memory_limit_: (\d+) available bytes: (\d+) curr_region_allocation_bytes_: (\d+)"
        )
        .captures(t)
        {
            for (name, at) in [("total region allocated", 1), ("memory limit", 2), ("available", 3), ("current region allocation", 4)] {
                event.fact("Regions", name, size::parse_exact(&found[at]), None);
            }
            event.capacity_bytes = event.capacity_bytes.or(found[2].parse().ok());
            event.limit_bytes = event.limit_bytes.or(event.capacity_bytes);
            // (What the allocator may still take from the device beyond its regions.)
            event.free_bytes = event.free_bytes.or(found[3].parse().ok());
        } else if let Some(found) = regex!(&format!(
            r"^Allocator memory summary: rounded request ({SIZE}), total free in pool ({SIZE}), largest free chunk usable by (\w+) end ({SIZE}), unallocated bytes ({SIZE}), pool size ({SIZE}), pool limit ({SIZE})"
        ))
        .captures(t)
        {
            let names = ["rounded request", "total free in pool", "", "largest free chunk", "unallocated", "pool size", "pool limit"];
            for (at, name) in names.iter().enumerate().filter(|(_, name)| !name.is_empty()) {
                event.fact("Memory summary", name, size::parse(&found[at + 1]), None);
            }
            event.free_bytes = event.free_bytes.or(size::unsigned(size::parse(&found[2])));
            event.capacity_bytes = event.capacity_bytes.or(size::unsigned(size::parse(&found[7])));
            event.limit_bytes = event.limit_bytes.or(event.capacity_bytes);
        } else if let Some(first) = t.strip_prefix("Stats:") {
            // The first figure may share the line (`Stats: Limit:   0`, XLA's async allocator).
            self.in_stats = true;
            let _ = event.section(STATS);
            let first = first.trim();
            if !first.is_empty() && !self.stat(event, first) {
                return Feed::Ended;
            }
        } else if let Some(found) = regex!(r"^Reported by CUDA: Free memory/Total memory: (\d+)/(\d+)$").captures(t) {
            event.free_bytes = event.free_bytes.or(found[1].parse().ok());
            event.capacity_bytes = event.capacity_bytes.or(found[2].parse().ok());
        } else {
            return Feed::Ended;
        }
        Feed::Consumed
    }
    fn close(&mut self, event: &mut OomEvent) {
        event.held_by = std::mem::take(&mut self.holders).into_list();
        if self.chunks_in_use + self.chunks_free > 0 {
            event.count(CHUNKS, "chunks in use (listed)", self.chunks_in_use);
            event.count(CHUNKS, "free chunks (listed)", self.chunks_free);
            if let Some(largest) = self.largest_free.and_then(|b| i64::try_from(b).ok()) {
                event.fact(CHUNKS, "largest free chunk", Some(largest), None);
            }
        }
        if event.allocations.is_empty() {
            for chunk in std::mem::take(&mut self.chunks) {
                event.push_allocation(chunk);
            }
        }
        // The summary lists sizes smallest first; the report shows the largest first.
        event.allocations.sort_by_key(|a| std::cmp::Reverse(a.size_bytes));
    }
}

impl Dump {
    /// `Limit:  10925244416` (raw bytes) or, from StreamExecutor, `Limit: 10.17GiB`.
    fn stat(&mut self, event: &mut OomEvent, t: &str) -> bool {
        let Some(found) = regex!(r"^(\w+):\s+(\S.*)$").captures(t) else { return false };
        let (name, value) = (&found[1], found[2].trim());
        let bytes = size::parse_exact(value).or_else(|| size::parse(value));
        if name == "NumAllocs" {
            if let Ok(count) = value.parse() {
                event.count(STATS, name, count);
            }
            return true;
        }
        match name {
            // A limit of 0 is no limit (the async allocator's when none is set).
            "Limit" if bytes != Some(0) => {
                event.capacity_bytes = event.capacity_bytes.or(size::unsigned(bytes));
                event.limit_bytes = event.limit_bytes.or(event.capacity_bytes);
            }
            "InUse" => event.used_bytes = event.used_bytes.or(size::unsigned(bytes)),
            _ => {}
        }
        event.fact(STATS, name, bytes, None);
        true
    }
}

/// Lines the allocator prints around its dump that carry no figure.
fn is_commentary(t: &str) -> bool {
    t == "Current allocation summary follows."
        || t.starts_with("Spatial partitioning summary")
        || t.starts_with("If the cause is memory fragmentation")
        || t.starts_with("If this is caused by memory fragmentation")
        || t.starts_with("Allocator region growth hint:")
        || t.starts_with("Summary of in-use Chunks by size")
}

/// `Bin (256): \tTotal Chunks: 64, Chunks in use: 64. 16.0KiB allocated for chunks. 16.0KiB in use in bin. 14.0KiB client-requested in use in bin.`
/// Old builds add `… client-requested for chunks.` and drop the period after the count.
fn bin(t: &str) -> Option<BfcBin> {
    let found = regex!(&format!(
        r"^Bin \((\d+)\):\s*Total Chunks: (\d+), Chunks in use: (\d+)\.? ({SIZE}) allocated for chunks\. (?:({SIZE}) client-requested for chunks\. )?({SIZE}) in use in bin\. ({SIZE}) client-requested in use in bin\.$"
    ))
    .captures(t)?;
    let bytes = |at: usize| found.get(at).and_then(|m| size::unsigned(size::parse(m.as_str())));
    Some(BfcBin {
        bin_bytes: found[1].parse().ok()?,
        total_chunks: found[2].parse().ok()?,
        chunks_in_use: found[3].parse().ok()?,
        allocated_bytes: bytes(4),
        requested_bytes: bytes(5),
        in_use_bytes: bytes(6),
        requested_in_use_bytes: bytes(7),
    })
}

#[cfg(test)]
mod tests {
    use crate::oom::{scan, Cause, Kind};

    /// TensorFlow 2's op message, as a public training log prints it after the allocator's warning.
    const OP_KERNEL: &str = "2022-11-09 16:53:58.305871: W tensorflow/core/framework/op_kernel.cc:1780] OP_REQUIRES failed at conv_grad_input_ops.cc:327 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[500,512,4,4] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n";

    #[test]
    fn tensorflow_op_message_names_the_bfc_allocator() {
        let event = scan("log", OP_KERNEL.as_bytes()).unwrap().events.remove(0);
        assert_eq!(event.kind, Kind::BfcAllocatorOom);
        assert_eq!(event.allocator.as_deref(), Some("GPU_0_bfc"));
        assert_eq!(event.memory_space.as_deref(), Some("GPU 0"));
        assert_eq!(event.shape.as_deref(), Some("[500,512,4,4]"));
        assert_eq!(event.summary, "BFC allocator OOM: GPU_0_bfc could not allocate a tensor of shape [500,512,4,4]");
    }

    /// The allocator's warning is not the failure; TensorFlow's op message after it is, and the two are one incident.
    #[test]
    fn the_op_error_after_the_allocators_warning_is_its_failure() {
        let warning = "W tensorflow/core/common_runtime/bfc_allocator.cc:433] Allocator (GPU_0_bfc) ran out of memory \
                       trying to allocate 18.00MiB (rounded to 18874368)requested by op Mul\nCurrent allocation summary \
                       follows.\n\n\n";
        let report = scan("log", warning.as_bytes()).unwrap();
        assert_eq!(report.incidents[0].cause, Some(Cause::NoErrorFollowed), "{}", report.incidents[0].title);
        let report = scan("log", format!("{warning}{OP_KERNEL}").as_bytes()).unwrap();
        assert_eq!(report.events.len(), 2);
        assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
        assert!(report.incidents[0].is_failure(), "{}", report.incidents[0].title);
    }

    #[test]
    fn tensorflow_before_1_0_prints_the_shape_as_its_proto_and_other_nodes_after_the_failed_one() {
        // From a 2015 TensorFlow issue (round31-dl/tf-2015-shapedim-proto-conv2d-node.txt): the
        // dimensions are no sizes, and the `_Recv` node on the CPU after the failed node is another node.
        let log = concat!(
            "tensorflow.python.framework.errors.ResourceExhaustedError: OOM when allocating tensor with shapedim { size: 10000 } dim { size: 14 } dim { size: 14 } dim { size: 64 }\n",
            "\t [[Node: Conv2D_1 = Conv2D[T=DT_FLOAT, padding=\"SAME\", strides=[1, 1, 1, 1], use_cudnn_on_gpu=true, _device=\"/job:localhost/replica:0/task:0/gpu:0\"](MaxPool, Variable_4)]]\n",
            "\t [[Node: range_3/_21 = _Recv[client_terminated=false, recv_device=\"/job:localhost/replica:0/task:0/cpu:0\", _device=\"/job:localhost/replica:0/task:0/cpu:0\"]()]]\n",
        );
        let event = scan("log", log.as_bytes()).unwrap().events.remove(0);
        assert_eq!(event.kind, Kind::BfcAllocatorOom);
        assert_eq!(event.shape.as_deref(), Some("[10000,14,14,64]"));
        assert_eq!(event.op.as_deref(), Some("Conv2D_1"));
        assert_eq!(event.requested_bytes, None);
    }

    #[test]
    fn without_an_allocator_or_a_device_it_is_the_gpu_allocators() {
        let line =
            "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[28000,6,29,29]\n";
        let event = scan("log", line.as_bytes()).unwrap().events.remove(0);
        assert_eq!(event.kind, Kind::BfcAllocatorOom);
        assert_eq!(event.shape.as_deref(), Some("[28000,6,29,29]"));
    }
}

//! What `xmem oom` finds, as the library hands it out and as JSON
//! (`xmem.oom/1`): the shared types every other file of `oom` builds on.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::general::Sizes;
use super::line::Line;

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
    /// The events of one failure together (an allocator's warning, the
    /// framework's error and the driver's line), in log order.
    pub incidents: Vec<Incident>,
    /// How the job ended, when `xmem run` ran it (128+N for signal N); `None`
    /// for a log read afterwards, which cannot tell.
    pub exit_code: Option<u8>,
}

impl OomReport {
    /// At least one memory error was found (`xmem oom` exits 1).
    pub fn found_errors(&self) -> bool {
        !self.events.is_empty()
    }
}

/// One failure: the messages every layer printed about it.
#[derive(Debug, Clone, Serialize)]
pub struct Incident {
    /// Indices into `events`, in log order.
    pub events: Vec<usize>,
    /// One sentence that names the cause the facts of all its events
    /// support ([`Cause`]); without one, the verdict of the primary event.
    pub title: String,
    /// The index (into `events`) of the event that says most about the failure.
    pub primary: usize,
    /// The cause the title names, when the facts single one out.
    pub cause: Option<Cause>,
    /// The XLA executable that failed, as one of the events names it.
    pub program: Option<String>,
    /// The user's line the failure came from, as the traceback shows it.
    pub user_frame: Option<UserFrame>,
    /// What to change for that cause, most useful first; shared with its
    /// events' advice where it is theirs.
    pub advice: Vec<Arc<str>>,
    /// With `xmem oom --with`: the failed program's memory, from its dump or
    /// profile. Boxed: most incidents have none, and a log can have millions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program_report: Option<Box<super::join::ProgramReport>>,
}

impl Incident {
    /// A failure, as its cause says: not warnings the job survived or may have survived.
    pub fn is_failure(&self) -> bool {
        !matches!(self.cause, Some(Cause::NotAFailure | Cause::NoErrorFollowed | Cause::Survived))
    }
}

/// Why an incident happened, in the order the verdict weighs them: the
/// first that the facts support is the one the title names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// Only warnings: the log says nothing failed.
    NotAFailure,
    /// The allocator ran out (its warning, its dump) but no error follows in
    /// the log: the job may have recovered, or the log stops before its error.
    NoErrorFollowed,
    /// `xmem run` saw the job exit 0 after it: memory warnings or an error it survived.
    Survived,
    /// One request is larger than the whole device.
    RequestAboveDevice,
    /// One request is larger than the whole pool the allocator may use.
    RequestAbovePool,
    /// A cap set below the device (a per-process fraction, a pool limit) was reached while the device had room.
    Cap,
    /// The program needs more than the limit it was compiled for.
    ProgramNeed,
    /// Enough is free in total, but no free piece is large enough.
    Fragmentation,
    /// The memory is held by live arrays (of other programs, or earlier runs of this one).
    OtherHolders,
    /// Compilation ran out while autotuning a kernel.
    Autotuning,
}

/// Where in a job's life the memory ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Compiling the program (XLA's memory estimates, TPU compile-time OOMs, kernel resources).
    Compile,
    /// Compiling, while autotuning a kernel: the candidates run on the device and need scratch memory.
    Autotune,
    /// Running: an allocation failed.
    Runtime,
    /// The host ran out, not a device.
    Host,
}

/// A frame of a Python traceback: the user's own line nearest to the failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserFrame {
    pub file: String,
    pub line: u64,
    pub function: Option<String>,
}

/// Pool memory held by one program, from the allocator's chunk annotations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// The XLA executable the chunks were allocated for; `None` for chunks without an annotation.
    pub program: Option<String>,
    pub bytes: u64,
    pub count: u64,
    pub largest_bytes: u64,
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
    /// PyTorch's caching allocator ran out: CUDA, HIP (ROCm), XPU or MPS.
    PytorchCudaOom,
    /// The host ran out: the kernel's OOM killer, a cgroup or Slurm limit,
    /// Kubernetes `OOMKilled`, Python's `MemoryError`.
    HostOom,
    /// A memory error xmem has no parser for; the line is shown as it is.
    Unrecognised,
}

/// The framework whose log it is, as its file paths and exceptions show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    Jax,
    TensorFlow,
    PyTorch,
    CuPy,
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
    /// Shared: a log of a million failures of one kind holds each text once.
    pub advice: Vec<Arc<str>>,
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
    /// The allocator's own warning that it ran out (with the dump it prints),
    /// not yet the error of what asked it: the job fails only if an error
    /// follows (TensorFlow's `OOM when allocating tensor`, JAX's `RESOURCE_EXHAUSTED`).
    #[serde(skip)]
    pub(super) allocator_warning: bool,
    /// The framework the log shows up to this message, when it shows one.
    pub framework: Option<Framework>,
    /// The figures the log groups under headings (usage totals, requirements, allocator stats).
    pub breakdown: Vec<Section>,
    /// The BFC allocator's bins, when the log dumps them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bins: Vec<BfcBin>,
    /// The XLA executable the failure names (`[executable_name='jit_step']`,
    /// `Error loading program 'jit_step'`).
    pub program: Option<String>,
    /// A limit set below the device that the failing allocator works in:
    /// the pool XLA or TensorFlow reserved (a memory fraction), PyTorch's
    /// per-process cap (`… allowed`), CuPy's pool limit.
    pub limit_bytes: Option<u64>,
    /// The whole device's memory, when the log states it (PyTorch's total
    /// capacity, TensorFlow's `totalMemory` at start).
    pub device_bytes: Option<u64>,
    /// The allocator's memory in use by the program holding it (the chunk
    /// annotations of a BFC dump), most bytes first.
    pub held_by: Vec<Holder>,
    /// The innermost frame of the traceback before the message that is the
    /// user's own code (outside site-packages and the standard library).
    pub user_frame: Option<UserFrame>,
    /// When it ran out: compiling, autotuning, running, or on the host.
    pub phase: Option<Phase>,
    /// The words of the failure vocabulary that make the message a memory
    /// error (`out of memory`, `bad_alloc`, `ALLOC_FAILED`, …), in the
    /// vocabulary's order; empty for a report body, which has none.
    pub failure_words: Vec<String>,
    /// No family parser knows the message: the general reader made the event
    /// from the vocabulary alone.
    #[serde(skip)]
    pub by_general_reader: bool,
    /// The message names no device and the wording does not imply one (PJRT's `Out of memory
    /// allocating N bytes.`, which XLA's CPU client prints for host memory and other clients
    /// for device memory): advice must not assume a GPU.
    #[serde(skip)]
    pub device_unnamed: bool,
    /// Where each section of `breakdown` is, by name, so a log with many
    /// sections is read in linear time.
    #[serde(skip)]
    sections: HashMap<String, usize>,
}

impl OomEvent {
    pub(super) fn new(kind: Kind, line: &Line) -> OomEvent {
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
            message: shorten(line.text.trim(), MAX_MESSAGE_CHARS),
            exception: None,
            allocator: None,
            op: None,
            shape: None,
            non_fatal: false,
            allocator_warning: false,
            framework: None,
            breakdown: Vec::new(),
            bins: Vec::new(),
            program: None,
            limit_bytes: None,
            device_bytes: None,
            held_by: Vec::new(),
            user_frame: None,
            phase: None,
            failure_words: Vec::new(),
            by_general_reader: false,
            device_unnamed: false,
            sections: HashMap::new(),
        }
    }

    /// Whether the event holds a report's body: allocations, a breakdown or bins.
    pub(super) fn has_report(&self) -> bool {
        !self.allocations.is_empty() || !self.breakdown.is_empty() || !self.bins.is_empty()
    }

    /// Takes in what a report's body read on its own found (`body`, a headerless event):
    /// its figures where this event has none, and its sections, allocations and bins.
    pub(super) fn take_report_of(&mut self, body: OomEvent) {
        self.capacity_bytes = self.capacity_bytes.or(body.capacity_bytes);
        self.limit_bytes = self.limit_bytes.or(body.limit_bytes);
        self.used_bytes = self.used_bytes.or(body.used_bytes);
        self.allocations.extend(body.allocations);
        self.bins.extend(body.bins);
        for section in body.breakdown {
            if let Some(own) = self.section(&section.name) {
                own.items.extend(section.items);
            }
        }
    }

    /// Takes in a repeat's figures where this event has none: a message printed again may
    /// state what its first print did not (an issue's title, then the body's message with its
    /// `Memory limit: 14845796352 dbreader/writer need: 22753642488`).
    pub(super) fn take_figures_of(&mut self, repeat: &OomEvent) {
        let sizes = Sizes {
            requested: repeat.requested_bytes,
            capacity: repeat.capacity_bytes,
            free: repeat.free_bytes,
            used: repeat.used_bytes,
            exceeded_by: repeat.exceeded_by_bytes,
        };
        self.take_missing(sizes, &repeat.memory_space);
    }

    /// Takes in each of `sizes`, and `memory_space`, where this event has none: what a
    /// family parser found first stands.
    pub(super) fn take_missing(&mut self, sizes: Sizes, memory_space: &Option<String>) {
        self.requested_bytes = self.requested_bytes.or(sizes.requested);
        self.capacity_bytes = self.capacity_bytes.or(sizes.capacity);
        self.free_bytes = self.free_bytes.or(sizes.free);
        self.used_bytes = self.used_bytes.or(sizes.used);
        self.exceeded_by_bytes = self.exceeded_by_bytes.or(sizes.exceeded_by);
        if self.memory_space.is_none() {
            self.memory_space.clone_from(memory_space);
        }
    }

    /// The section named `name`, created at the end if the event has none yet.
    /// A log can name any number of sections; past [`MAX_ITEMS`] they are not kept
    /// (`None`), like the items of a section.
    pub(super) fn section(&mut self, name: &str) -> Option<&mut Section> {
        let at = match self.sections.get(name) {
            Some(&at) => at,
            None if self.breakdown.len() >= MAX_ITEMS => return None,
            None => {
                self.breakdown.push(Section { name: name.to_string(), bytes: None, note: None, items: Vec::new() });
                self.sections.insert(name.to_string(), self.breakdown.len() - 1);
                self.breakdown.len() - 1
            }
        };
        self.breakdown.get_mut(at)
    }

    /// The section named `name`, if the event has it.
    pub(super) fn find_section(&self, name: &str) -> Option<&Section> {
        self.breakdown.get(*self.sections.get(name)?)
    }

    /// The bytes of one item of the breakdown.
    pub(super) fn figure(&self, section: &str, name: &str) -> Option<i64> {
        self.item(section, name)?.bytes
    }

    /// What the log says beside one item of the breakdown.
    pub(super) fn note(&self, section: &str, name: &str) -> Option<&str> {
        self.item(section, name)?.note.as_deref()
    }

    fn item(&self, section: &str, name: &str) -> Option<&Item> {
        self.find_section(section)?.items.iter().find(|i| i.name == name)
    }

    /// The device family PyTorch names in its message (`CUDA`, `HIP`, `XPU`).
    pub(super) fn exception_device(&self) -> Option<&'static str> {
        ["HIP", "XPU", "CUDA"].into_iter().find(|device| self.message.contains(&format!("{device} out of memory")))
    }

    /// Forgets every section, for a message re-read whole after a wrap.
    pub(super) fn clear_breakdown(&mut self) {
        self.breakdown.clear();
        self.sections.clear();
    }

    /// Adds one figure under `section`.
    pub(super) fn fact(&mut self, section: &str, name: &str, bytes: Option<i64>, note: Option<String>) {
        self.push_item(section, Item { name: name.to_string(), bytes, count: None, note });
    }

    /// The failure's own line, found after the lines that opened the event (V8's fatal line
    /// after its report of collections): its message is the event's.
    pub(super) fn message_from(&mut self, line: &Line) {
        self.message = shorten(line.text.trim(), MAX_MESSAGE_CHARS);
    }

    /// Adds a count (not bytes) under `section`.
    pub(super) fn count(&mut self, section: &str, name: &str, count: u64) {
        self.push_item(section, Item { name: name.to_string(), bytes: None, count: Some(count), note: None });
    }

    pub(super) fn push_item(&mut self, section: &str, item: Item) {
        let Some(section) = self.section(section) else { return };
        if section.items.len() < MAX_ITEMS {
            section.items.push(item);
        }
    }

    pub(super) fn push_allocation(&mut self, allocation: Allocation) {
        if self.allocations.len() < MAX_ITEMS {
            self.allocations.push(allocation);
        }
    }
}

/// The message is kept up to this many characters; JSON stays readable and a
/// pathological line cannot bloat the report.
const MAX_MESSAGE_CHARS: usize = 600;

/// Lists (allocations, breakdown items, bins) keep at most this many entries per event.
pub(super) const MAX_ITEMS: usize = 10_000;

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

/// `text` cut to `max` characters, marked with an ellipsis when cut.
pub(super) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

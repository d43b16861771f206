//! Timelines, peaks and what is live at them, computed from [`model`](crate::model)
//! types. The structs here are what every renderer prints and what the JSON
//! renderer serialises as `xmem.report/1`.

pub mod allocation_owner;
pub mod allocator_timeline;
pub mod attribution;
pub mod chart_plan;
pub mod device_memory;
pub mod drawing;
pub mod heap_simulation;
pub mod hints;
pub mod select;
pub mod torch_snapshot;

use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

pub use allocator_timeline::{AllocationRow, AllocatorReport};

use crate::model::{Capture, Module};
use device_memory::DeviceMemoryReport;
use torch_snapshot::TorchSnapshotReport;

/// Adds byte counts without overflowing: sizes come from files, and a
/// corrupt one must not wrap a total around or panic.
pub fn sum_bytes(sizes: impl Iterator<Item = i64>) -> i64 {
    sizes.fold(0, i64::saturating_add)
}

/// The sum of byte counts, or `None` when it does not fit in an `i64`: a
/// total that would saturate is a finding, not a figure.
pub fn checked_sum_bytes(mut sizes: impl Iterator<Item = i64>) -> Option<i64> {
    sizes.try_fold(0i64, i64::checked_add)
}

pub const REPORT_SCHEMA: &str = "xmem.report/1";

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub inputs: Vec<String>,
    /// Largest peak first.
    pub modules: Vec<ModuleReport>,
    /// One per JAX device memory profile among the inputs.
    pub device_memory: Vec<DeviceMemoryReport>,
    /// By host, then by name.
    pub allocators: Vec<AllocatorReport>,
    /// One per device of each PyTorch memory snapshot among the inputs.
    pub torch_snapshots: Vec<TorchSnapshotReport>,
    pub warnings: Vec<String>,
    /// Facts about the input as a whole, e.g. that a profile has no allocator events.
    pub notes: Vec<String>,
}

impl Report {
    /// One warning per module and allocator whose input contradicts itself:
    /// which memory spaces, and the first finding. `--strict` fails on them.
    pub fn inconsistency_warnings(&self) -> Vec<String> {
        let modules = self.modules.iter().filter_map(|module| {
            let spaces: Vec<&MemorySpaceReport> =
                module.memory_spaces.iter().filter(|s| !s.inconsistencies.is_empty()).collect();
            let first = spaces.first()?;
            let more = match spaces.len() - 1 {
                0 => String::new(),
                n => format!(" and {n} more memory spaces"),
            };
            Some(format!(
                "{}: module {}, {}{more}: inconsistent input, its figures are not sound: {}",
                module.input,
                module.display_name(),
                first.name,
                first.inconsistencies.first().map_or("", |found| found.as_ref())
            ))
        });
        let allocators = self.allocators.iter().filter_map(|allocator| {
            let first = allocator.inconsistencies.first()?;
            Some(format!(
                "allocator {}: inconsistent input, its figures are not sound: {first}",
                allocator.display_name()
            ))
        });
        modules.chain(allocators).collect()
    }

    /// Why nothing could be analysed, when that is so: there is no device
    /// memory profile and no allocator, and every module lacks a buffer
    /// assignment or the input holds no module at all.
    pub fn nothing_usable(&self) -> Option<String> {
        if !self.device_memory.is_empty()
            || !self.allocators.is_empty()
            || !self.torch_snapshots.is_empty()
            || self.modules.iter().any(|m| m.problem.is_none())
        {
            return None;
        }
        Some(match self.modules.iter().find_map(|m| m.problem.as_ref()) {
            Some(problem) => problem.clone(),
            None => "no compiled XLA module with a buffer assignment was found".to_string(),
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ModuleReport {
    pub name: String,
    /// The id XProf names the module by (see [`crate::model::Module::program_id`]).
    pub program_id: u64,
    /// `HloModuleProto.id`.
    pub module_id: u64,
    pub entry_computation: String,
    /// Parameter and result shapes of the entry computation.
    pub entry_signature: String,
    /// Why the module could not be analysed (no buffer assignment), if so.
    pub problem: Option<String>,
    pub memory_spaces: Vec<MemorySpaceReport>,
    /// The input the module was read from, as given.
    pub input: String,
    /// Entry parameters that could be donated to an output of the same shape.
    pub donation_candidates: Vec<hints::DonationCandidate>,
    /// What the user asked for that this module cannot show (`--at` past its trace).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ModuleReport {
    /// `jit_step(22)`, as XProf lists modules.
    pub fn display_name(&self) -> String {
        format!("{}({})", self.name, self.program_id)
    }

    pub fn largest_peak(&self) -> i64 {
        self.memory_spaces.iter().map(|s| s.peak_bytes).max().unwrap_or(0)
    }

    /// The donation candidates worth a hint: those that save at least
    /// 1 MiB and 0.1% of the module's peak (a 4-byte scalar is not worth
    /// donating). JSON keeps every candidate.
    pub fn donation_hints(&self) -> &[hints::DonationCandidate] {
        let threshold = hints::MIN_DONATION_BYTES.max(self.largest_peak() / 1000);
        // Largest first: the ones worth it lead.
        let worth = self.donation_candidates.iter().take_while(|c| c.bytes_at_most >= threshold).count();
        &self.donation_candidates[..worth]
    }
}

/// How much of the program order the heap simulation covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceStatus {
    /// The trace was replayed in full.
    Simulated,
    /// Nothing to simulate: the memory space has no temporaries.
    NotNeeded,
    /// Temporaries exist but the proto carries no trace: the peak covers only
    /// always-live buffers.
    Missing,
    /// No trace, but XLA's record of the buffers live at each allocation's
    /// peak (`peak_buffers`): the peak and the buffers at it, without a timeline.
    XlaPeakBuffers,
    /// The trace does not add up; the figures cover the events before the fault.
    Broken,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Parameter,
    Output,
    ThreadLocal,
    Constant,
    Temporary,
}

impl Category {
    pub fn label(self) -> &'static str {
        match self {
            Category::Parameter => "parameter",
            Category::Output => "output",
            Category::ThreadLocal => "thread-local",
            Category::Constant => "constant",
            Category::Temporary => "temporary",
        }
    }
}

/// The heap at the peak split by where its bytes come from.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HeapBreakdown {
    pub parameters: i64,
    pub outputs: i64,
    pub constants: i64,
    /// Temporaries live at the peak (the heap simulation's own peak).
    pub temporaries: i64,
    /// Thread-local allocations: not part of the peak, as in XProf 2.24.2.
    pub thread_local: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemorySpaceReport {
    pub color: i64,
    pub name: String,
    /// Which heap-simulator trace this report replays.
    pub trace_index: Option<usize>,
    /// False for a further trace of a colour, which XProf ignores (it
    /// simulates one trace per colour).
    pub shown_by_xprof: bool,
    pub heap_simulation: TraceStatus,
    pub peak_bytes: i64,
    pub peak_unpadded_bytes: i64,
    /// Index of the heap-simulator event that reached the peak.
    pub peak_position: usize,
    pub peak_instruction: Option<Arc<str>>,
    pub indefinite_bytes: i64,
    pub total_allocation_bytes: i64,
    pub entry_parameters_bytes: i64,
    pub maybe_live_out_bytes: i64,
    pub non_reusable_bytes: i64,
    /// XProf's fragmentation: (total − peak) / (total − indefinite).
    pub fragmentation: f64,
    pub breakdown: HeapBreakdown,
    /// `heap_bytes[i]` is the heap before event i; one more entry than events.
    pub heap_bytes: Vec<i64>,
    pub unpadded_heap_bytes: Vec<i64>,
    /// The instruction of each event, aligned with `heap_bytes`.
    pub instructions: EventInstructions,
    /// Every buffer live at the peak, largest first (by logical buffer id
    /// among equals), as the text lists them.
    pub at_peak: Vec<BufferAtPeak>,
    /// XProf's live list through the replay, for the live set at any point (`--at`).
    #[serde(skip)]
    pub live_history: heap_simulation::LiveHistory,
    /// XProf's `logicalBufferSpans`: per buffer an event names, from the
    /// event that made it live to the one that freed it (a buffer sharing a
    /// freed buffer's memory ends at its own FREE), by start; with the place
    /// in its allocation of the memory it occupied.
    pub lifetimes: Vec<Lifetime>,
    /// XProf's largest scoped-VMEM allocation (VMEM only; `None` elsewhere
    /// and where no instruction holds scoped VMEM). Not part of the peak.
    pub max_scoped_vmem_bytes: Option<i64>,
    pub max_scoped_vmem_instruction: Option<String>,
    /// Shared: a trace of thousands of memory spaces gives each the same note.
    pub notes: Vec<Arc<str>>,
    /// What in the input contradicts itself and touches this memory space's
    /// figures (a negative size, a repeated id, a buffer past its allocation,
    /// events naming buffers the assignment does not hold, a buffer allocated
    /// twice, a sum past 2^63 - 1): when not empty, the figures are computed
    /// as XProf would compute them but are not sound.
    pub inconsistencies: Vec<Arc<str>>,
    #[serde(flatten)]
    pub attribution: attribution::Attribution,
}

impl MemorySpaceReport {
    pub fn padding_bytes(&self) -> i64 {
        self.peak_bytes.saturating_sub(self.peak_unpadded_bytes)
    }

    /// A memory space nothing is allocated in: named only in the layouts of
    /// shapes (`S(5)` for host memory), it has nothing to show. A VMEM that
    /// instructions reserve scoped memory in has that to show.
    pub fn is_unused(&self) -> bool {
        self.peak_bytes == 0
            && self.total_allocation_bytes == 0
            && self.at_peak.is_empty()
            && self.max_scoped_vmem_bytes.is_none_or(|bytes| bytes == 0)
    }

    pub fn always_live_bytes(&self) -> i64 {
        sum_bytes([self.breakdown.parameters, self.breakdown.outputs, self.breakdown.constants].into_iter())
    }

    /// The buffers at the peak as a table shows them: the `top` largest of at
    /// least 16 KiB, then the rest and the small ones summed, as XProf folds them.
    pub fn largest_buffers(&self, top: usize) -> BufferTable<'_> {
        BufferTable::of(&self.at_peak, top)
    }
}

impl<'a> BufferTable<'a> {
    /// The `top` largest of `buffers` of at least 16 KiB, then the rest and
    /// the small ones summed.
    pub fn of(buffers: &'a [BufferAtPeak], top: usize) -> Self {
        let mut buffers: Vec<&BufferAtPeak> = buffers.iter().collect();
        buffers.sort_by(|a, b| a.largest_first(b));
        let (large, small): (Vec<_>, Vec<_>) =
            buffers.into_iter().partition(|b| b.size_bytes >= heap_simulation::SMALL_BUFFER_BYTES);
        let rest = large.get(top..).unwrap_or_default();
        BufferTable {
            rest_count: rest.len(),
            rest_bytes: sum_bytes(rest.iter().map(|b| b.size_bytes)),
            small_count: small.len(),
            small_bytes: sum_bytes(small.iter().map(|b| b.size_bytes)),
            rows: large.into_iter().take(top).collect(),
        }
    }
}

/// Buffers at the peak, largest first, with what did not fit summed.
#[derive(Debug)]
pub struct BufferTable<'a> {
    pub rows: Vec<&'a BufferAtPeak>,
    pub rest_count: usize,
    pub rest_bytes: i64,
    /// Buffers under 16 KiB, folded into one line as XProf does.
    pub small_count: usize,
    pub small_bytes: i64,
}

/// The instruction of each heap event, as an index per event into its
/// trace's names, which every memory space replayed from the trace shares:
/// 4 bytes an event rather than a string each (a trace can have tens of
/// millions). Serialised as the names; an index with no name is `""`.
#[derive(Debug, Clone, Default)]
pub struct EventInstructions {
    names: Arc<[Arc<str>]>,
    at: Vec<u32>,
}

impl EventInstructions {
    pub fn new(names: Arc<[Arc<str>]>, at: Vec<u32>) -> Self {
        EventInstructions { names, at }
    }

    pub fn len(&self) -> usize {
        self.at.len()
    }

    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// The instruction of event `event` (`""` when it has none).
    pub fn get(&self, event: usize) -> Option<&str> {
        self.at.get(event).map(|&name| self.name(name))
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.at.iter().map(|&name| self.name(name))
    }

    fn name(&self, index: u32) -> &str {
        self.names.get(index as usize).map_or("", |name| name)
    }
}

impl Serialize for EventInstructions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BufferAtPeak {
    /// The defining instruction, with `{i,j}` for a tuple element. This and
    /// the other strings are the model's own, shared rather than copied: a
    /// module can have a buffer at the peak per memory space, or a million.
    pub instruction: Arc<str>,
    pub logical_buffer_id: i64,
    pub size_bytes: i64,
    pub unpadded_bytes: i64,
    pub shape: Arc<str>,
    pub category: Category,
    pub opcode: Arc<str>,
    pub op_name: Arc<str>,
    /// `file:line` of the innermost Python frame.
    pub source: Option<String>,
    pub stack: Option<Arc<str>>,
    pub allocation: i64,
    pub offset: i64,
    /// XProf's Memory Viewer lists this buffer among its buffers at the
    /// peak; it leaves out always-live buffers outside HBM.
    pub listed_by_xprof: bool,
    /// A parameter, output or constant: live at every point of the program.
    #[serde(skip)]
    pub always_live: bool,
}

impl BufferAtPeak {
    pub fn padding_bytes(&self) -> i64 {
        self.size_bytes - self.unpadded_bytes
    }

    /// The order buffers are listed in, in tables and JSON: largest first,
    /// then by logical buffer id.
    pub fn largest_first(&self, other: &Self) -> std::cmp::Ordering {
        other.size_bytes.cmp(&self.size_bytes).then(self.logical_buffer_id.cmp(&other.logical_buffer_id))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Lifetime {
    pub logical_buffer_id: i64,
    /// The defining instruction, named as in [`BufferAtPeak::instruction`].
    pub instruction: Arc<str>,
    /// First and last event index of the span.
    pub start: usize,
    pub end: usize,
    pub offset: i64,
    pub size_bytes: i64,
    /// The category of the buffer's allocation, for the chart's colours.
    #[serde(skip)]
    pub category: Category,
}

pub fn analyze_module(module: &Module, options: &attribution::Options) -> ModuleReport {
    let mut notes = Vec::new();
    let (problem, memory_spaces, donation) = match &module.buffer_assignment {
        Ok(assignment) => {
            let mut spaces =
                heap_simulation::analyze(assignment, &module.layout_memory_spaces, module.max_scoped_vmem.as_ref());
            for space in &mut spaces {
                if let Err(note) = attribution::attribute(space, assignment, options) {
                    notes.push(format!("{} (color {}): {note}", space.name, space.color));
                }
            }
            (None, spaces, hints::donation_candidates(&module.entry_interface, assignment))
        }
        Err(reason) => (Some(reason.clone()), Vec::new(), Vec::new()),
    };
    ModuleReport {
        name: module.name.clone(),
        program_id: module.program_id,
        module_id: module.module_id,
        entry_computation: module.entry_computation.clone(),
        entry_signature: module.entry_signature.clone(),
        problem,
        memory_spaces,
        input: String::new(),
        donation_candidates: donation,
        notes,
    }
}

/// Why a profile has no allocator events: XProf's Memory Profile is empty for it too.
pub const NO_ALLOCATOR_EVENTS: &str = "no allocator events (MemoryAllocation / MemoryDeallocation): \
JAX and PyTorch/XLA on CPU record none, and TensorFlow records them only with host_tracer_level >= 2";

/// Analyses every module and allocator of every capture; modules largest
/// peak first, allocators by host and name.
pub fn analyze(captures: &[Capture]) -> Report {
    analyze_with(captures, &attribution::Options::default())
}

/// [`analyze`], with the groupings, program point and peaks `options` ask for.
pub fn analyze_with(captures: &[Capture], options: &attribution::Options) -> Report {
    let mut modules: Vec<ModuleReport> = captures
        .iter()
        .flat_map(|c| {
            let analyzed = c.modules.par_iter().map(|m| analyze_module(m, options)).collect::<Vec<_>>();
            analyzed.into_iter().map(|module| ModuleReport { input: c.input.clone(), ..module })
        })
        .collect();
    modules.sort_by(|a, b| b.largest_peak().cmp(&a.largest_peak()).then_with(|| a.name.cmp(&b.name)));
    let mut allocators: Vec<AllocatorReport> = captures
        .iter()
        .flat_map(|c| {
            let programs = allocation_owner::Programs::of(&c.modules);
            c.allocators
                .par_iter()
                .map(|a| allocator_timeline::analyze_allocator(a, &programs, options.intervals))
                .collect::<Vec<_>>()
        })
        .collect();
    allocators.sort_by(|a, b| a.host.cmp(&b.host).then_with(|| a.name.cmp(&b.name)));
    let mut notes: Vec<String> = captures.iter().filter_map(|c| beyond_the_device(c, &modules)).collect();
    let without_events: Vec<&str> = captures
        .iter()
        .filter(|c| !c.hosts.is_empty() && c.allocators.is_empty() && c.damaged_allocator_planes.is_empty())
        .map(|c| c.input.as_str())
        .collect();
    if !without_events.is_empty() {
        notes.push(format!("{}: {NO_ALLOCATOR_EVENTS}", without_events.join(", ")));
    }
    for capture in captures.iter().filter(|c| !c.damaged_allocator_planes.is_empty()) {
        let read = if capture.allocators.is_empty() {
            "none could be read"
        } else {
            "those read before the damage are kept, the rest are lost"
        };
        notes.push(format!(
            "{}: allocator events were in damaged {}: {read} (see the warning)",
            capture.input,
            capture.damaged_allocator_planes.join(", ")
        ));
    }
    let mut report = Report {
        schema: REPORT_SCHEMA,
        inputs: captures.iter().map(|c| c.input.clone()).collect(),
        modules,
        device_memory: captures
            .iter()
            .filter_map(|c| c.device_memory.as_ref().map(|snapshot| device_memory::analyze(&c.input, snapshot)))
            .collect(),
        allocators,
        torch_snapshots: captures
            .iter()
            .flat_map(|c| c.torch_snapshot.iter().flat_map(|snapshot| torch_snapshot::analyze(&c.input, snapshot)))
            .collect(),
        warnings: captures.iter().flat_map(|c| c.warnings.iter().cloned()).collect(),
        notes,
    };
    let inconsistent = report.inconsistency_warnings();
    report.warnings.extend(inconsistent);
    report
}

/// One line when a module of `capture` needs more memory at its peak in
/// device memory (colour 0) than the profile says its device has: it
/// cannot run there as compiled. `modules` are the report's, largest first.
fn beyond_the_device(capture: &Capture, modules: &[ModuleReport]) -> Option<String> {
    let device = capture.devices.iter().min_by_key(|d| d.memory_bytes)?;
    let device_peak =
        |m: &ModuleReport| m.memory_spaces.iter().filter(|s| s.color == 0).map(|s| s.peak_bytes).max().unwrap_or(0);
    let over: Vec<&ModuleReport> =
        modules.iter().filter(|m| m.input == capture.input && device_peak(m) > device.memory_bytes).collect();
    let first = over.first()?;
    let more = match over.len() - 1 {
        0 => String::new(),
        1 => "; so does 1 more module".to_string(),
        n => format!("; so do {n} more modules"),
    };
    let model = device.model.as_ref().map(|m| format!(" ({m})")).unwrap_or_default();
    Some(format!(
        "{} needs {} at its device-memory peak, more than the {} that {}{model} has{more}",
        first.display_name(),
        crate::units::human_bytes(device_peak(first).max(0) as u64),
        crate::units::human_bytes(device.memory_bytes as u64),
        device.name
    ))
}

/// What an input holds, for `xmem list`.
#[derive(Debug, Clone, Serialize)]
pub struct Contents {
    pub schema: &'static str,
    pub inputs: Vec<String>,
    pub modules: Vec<ModuleListing>,
    pub device_memory: Vec<DeviceMemoryListing>,
    pub allocators: Vec<AllocatorListing>,
    /// One per device of each PyTorch memory snapshot.
    pub torch_snapshots: Vec<TorchSnapshotListing>,
    /// What could not be read (a bad host file), as `report` carries them.
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AllocatorListing {
    pub name: String,
    pub host: String,
    pub num_allocations: u64,
    pub num_deallocations: u64,
    pub peak_bytes: i64,
    pub capacity_bytes: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModuleListing {
    pub name: String,
    pub program_id: u64,
    pub module_id: u64,
    pub problem: Option<String>,
    pub memory_spaces: Vec<MemorySpaceListing>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemorySpaceListing {
    pub color: i64,
    pub name: String,
    pub peak_bytes: i64,
    pub total_allocation_bytes: i64,
    pub heap_events: usize,
    pub buffers_at_peak: usize,
    pub heap_simulation: TraceStatus,
}

/// A device memory profile in one line: how much is live, in how many groups.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceMemoryListing {
    pub input: String,
    pub total_bytes: i64,
    pub total_count: i64,
    pub size_unknown_count: i64,
    pub devices: Vec<Option<String>>,
    pub stacks: usize,
}

/// A PyTorch memory snapshot's device in one line: its segments and trace.
#[derive(Debug, Clone, Serialize)]
pub struct TorchSnapshotListing {
    pub input: String,
    pub device: String,
    pub segments: usize,
    pub reserved_bytes: i64,
    pub trace_entries: usize,
    pub peak_bytes: i64,
    pub ooms: usize,
}

pub const CONTENTS_SCHEMA: &str = "xmem.list/1";

pub fn contents(report: &Report) -> Contents {
    Contents {
        schema: CONTENTS_SCHEMA,
        inputs: report.inputs.clone(),
        warnings: report.warnings.clone(),
        modules: report
            .modules
            .iter()
            .map(|m| ModuleListing {
                name: m.name.clone(),
                program_id: m.program_id,
                module_id: m.module_id,
                problem: m.problem.clone(),
                memory_spaces: m
                    .memory_spaces
                    .iter()
                    .map(|s| MemorySpaceListing {
                        color: s.color,
                        name: s.name.clone(),
                        peak_bytes: s.peak_bytes,
                        total_allocation_bytes: s.total_allocation_bytes,
                        heap_events: s.heap_bytes.len().saturating_sub(1),
                        buffers_at_peak: s.at_peak.len(),
                        heap_simulation: s.heap_simulation,
                    })
                    .collect(),
            })
            .collect(),
        device_memory: report
            .device_memory
            .iter()
            .map(|d| DeviceMemoryListing {
                input: d.input.clone(),
                total_bytes: d.total_bytes,
                total_count: d.total_count,
                size_unknown_count: d.size_unknown_count,
                devices: d.devices.iter().map(|device| device.device.clone()).collect(),
                stacks: d.stacks.len(),
            })
            .collect(),
        allocators: report
            .allocators
            .iter()
            .map(|a| AllocatorListing {
                name: a.name.clone(),
                host: a.host.clone(),
                num_allocations: a.num_allocations,
                num_deallocations: a.num_deallocations,
                peak_bytes: a.peak_bytes,
                capacity_bytes: a.capacity_bytes,
            })
            .collect(),
        torch_snapshots: report
            .torch_snapshots
            .iter()
            .map(|t| TorchSnapshotListing {
                input: t.input.clone(),
                device: t.device.clone(),
                segments: t.segments.count,
                reserved_bytes: t.reserved_bytes,
                trace_entries: t.trace_entries,
                peak_bytes: t.peak_bytes,
                ooms: t.actions.oom,
            })
            .collect(),
        notes: report.notes.clone(),
    }
}

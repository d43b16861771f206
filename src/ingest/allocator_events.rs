//! Allocator events of a host plane: the `MemoryAllocation` and
//! `MemoryDeallocation` events TensorFlow's BFC allocator records when the
//! host tracer runs at level 2 or more. Planes without them are skipped
//! without reading their threads; on a plane with them, every event is walked
//! on the wire once, for the step grouping, and only the allocator events'
//! stats are kept. Nothing is allocated per event beyond the event itself and
//! its step-grouping node.
//!
//! The same walk finds the programs the host executed: each thread's
//! outermost `…Executable::Execute…` event is one run of a program, named by
//! the events inside it, and each allocation is tied to the run its thread
//! was in (see [`ProgramRun`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::consistency::Findings;
use super::step_grouping::{is_loop_op, EventForest, GroupingKind, GroupingStats};
use super::wire::{Field, Value, Walker};
use super::xspace::{map_entry, wire_error, PlaneParts};
use crate::error::{Error, Result};
use crate::model::{Allocator, AllocatorEvent, AllocatorEventKind, ProgramRun};

/// The stats XProf's Memory Profile and step grouping read, by stat-metadata name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StatKind {
    AllocatorName,
    /// `index_on_host` or `device_ordinal`: names the allocator by number.
    AllocatorOrdinal,
    BytesReserved,
    BytesAllocated,
    BytesAvailable,
    Fragmentation,
    PeakBytesInUse,
    RequestedBytes,
    AllocationBytes,
    Address,
    TfOp,
    RegionType,
    DataType,
    Shape,
    /// Set by XProf itself when it has grouped a profile before saving it.
    GroupId,
    ProducerType,
    ProducerId,
    ConsumerType,
    ConsumerId,
    ConsumerPid,
    IsRoot,
    IsAsync,
    StepId,
    IterNum,
    ProcessId,
    /// The module a `GpuExecutable::ExecuteThunks` event executes.
    ModuleName,
    /// The module of a kernel launch or device event, with its `program_id`.
    HloModule,
    ProgramId,
}

fn stat_kind(name: &[u8]) -> Option<StatKind> {
    Some(match name {
        b"allocator_name" => StatKind::AllocatorName,
        b"index_on_host" | b"device_ordinal" => StatKind::AllocatorOrdinal,
        b"bytes_reserved" => StatKind::BytesReserved,
        b"bytes_allocated" => StatKind::BytesAllocated,
        b"bytes_available" => StatKind::BytesAvailable,
        b"fragmentation" => StatKind::Fragmentation,
        b"peak_bytes_in_use" => StatKind::PeakBytesInUse,
        b"requested_bytes" => StatKind::RequestedBytes,
        b"allocation_bytes" => StatKind::AllocationBytes,
        b"addr" => StatKind::Address,
        b"tf_op" => StatKind::TfOp,
        b"region_type" => StatKind::RegionType,
        b"data_type" => StatKind::DataType,
        b"shape" => StatKind::Shape,
        b"group_id" => StatKind::GroupId,
        b"_pt" => StatKind::ProducerType,
        b"_p" => StatKind::ProducerId,
        b"_ct" => StatKind::ConsumerType,
        b"_c" => StatKind::ConsumerId,
        b"_pid" => StatKind::ConsumerPid,
        b"_r" => StatKind::IsRoot,
        b"_a" => StatKind::IsAsync,
        b"id" => StatKind::StepId,
        b"iter_num" => StatKind::IterNum,
        b"process_id" => StatKind::ProcessId,
        b"module_name" => StatKind::ModuleName,
        b"hlo_module" => StatKind::HloModule,
        b"program_id" => StatKind::ProgramId,
        _ => return None,
    })
}

/// The stats an allocator event is read for, each as the kinds that stand
/// for it (an allocator is named or numbered).
const ALLOCATOR_STATS: [&[StatKind]; 13] = [
    &[StatKind::AllocatorName, StatKind::AllocatorOrdinal],
    &[StatKind::BytesReserved],
    &[StatKind::BytesAllocated],
    &[StatKind::BytesAvailable],
    &[StatKind::Fragmentation],
    &[StatKind::PeakBytesInUse],
    &[StatKind::RequestedBytes],
    &[StatKind::AllocationBytes],
    &[StatKind::Address],
    &[StatKind::TfOp],
    &[StatKind::RegionType],
    &[StatKind::DataType],
    &[StatKind::Shape],
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    Allocator(AllocatorEventKind),
    Grouping(GroupingKind),
}

fn event_kind(name: &[u8]) -> EventKind {
    match name {
        b"MemoryAllocation" => EventKind::Allocator(AllocatorEventKind::Allocation),
        b"MemoryDeallocation" => EventKind::Allocator(AllocatorEventKind::Deallocation),
        _ => EventKind::Grouping(GroupingKind::from_name(name)),
    }
}

/// TensorFlow's `DataType` enum as TF's `DataTypeString` prints it
/// (reference types, numbered from 101, get a `_ref` suffix).
fn data_type_name(data_type: i64) -> Cow<'static, str> {
    const NAMES: [&str; 33] = [
        "INVALID",
        "float",
        "double",
        "int32",
        "uint8",
        "int16",
        "int8",
        "string",
        "complex64",
        "int64",
        "bool",
        "qint8",
        "quint8",
        "qint32",
        "bfloat16",
        "qint16",
        "quint16",
        "uint16",
        "complex128",
        "half",
        "resource",
        "variant",
        "uint32",
        "uint64",
        "float8_e5m2",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e4m3b11fnuz",
        "float8_e5m2fnuz",
        "int4",
        "uint4",
        "int2",
        "uint2",
    ];
    const REF_OFFSET: i64 = 100;
    let name = |n: i64| usize::try_from(n).ok().and_then(|i| NAMES.get(i)).copied();
    match name(data_type) {
        Some(known) => Cow::Borrowed(known),
        None => match data_type.checked_sub(REF_OFFSET).filter(|&n| n > 0).and_then(name) {
            Some(referenced) => Cow::Owned(format!("{referenced}_ref")),
            None => Cow::Owned(format!("unknown dtype enum ({data_type})")),
        },
    }
}

/// A string stat: inline, or a reference to a stat-metadata name.
#[derive(Debug, Clone, Default)]
enum Text<'f> {
    #[default]
    Empty,
    Inline(&'f [u8]),
    Ref(i64),
}

#[derive(Debug, Clone)]
enum AllocatorId<'f> {
    Name(Text<'f>),
    Ordinal(i64),
}

/// One event's stats, as XProf reads them: the last value of each kind wins.
#[derive(Debug, Clone, Default)]
struct EventStats<'f> {
    allocator: Option<AllocatorId<'f>>,
    bytes_reserved: i64,
    bytes_allocated: i64,
    bytes_available: i64,
    fragmentation: f64,
    peak_bytes_in_use: i64,
    requested_bytes: i64,
    allocation_bytes: i64,
    address: u64,
    tf_op: Text<'f>,
    region_type: Text<'f>,
    data_type: i64,
    shape: Text<'f>,
    group_id: Option<i64>,
    grouping: GroupingStats,
    module_name: Text<'f>,
    hlo_module: Text<'f>,
    program_id: Option<u64>,
    /// A stat, or a name it refers to, whose metadata the plane does not
    /// hold (cut off with it).
    unknown_metadata: bool,
}

/// An XStat's value. Integers are read whether stored signed or unsigned.
enum StatValue<'f> {
    Int(i64),
    Double(f64),
    Text(Text<'f>),
    Other,
}

impl<'f> StatValue<'f> {
    fn int(&self) -> i64 {
        match self {
            StatValue::Int(v) => *v,
            _ => 0,
        }
    }

    fn text(self) -> Text<'f> {
        match self {
            StatValue::Text(text) => text,
            _ => Text::Empty,
        }
    }
}

impl<'f> EventStats<'f> {
    fn apply(&mut self, kind: StatKind, value: StatValue<'f>) {
        let grouping = &mut self.grouping;
        match kind {
            StatKind::AllocatorName => self.allocator = Some(AllocatorId::Name(value.text())),
            StatKind::AllocatorOrdinal => self.allocator = Some(AllocatorId::Ordinal(value.int())),
            StatKind::BytesReserved => self.bytes_reserved = value.int(),
            StatKind::BytesAllocated => self.bytes_allocated = value.int(),
            StatKind::BytesAvailable => self.bytes_available = value.int(),
            StatKind::Fragmentation => {
                self.fragmentation = match value {
                    StatValue::Double(v) => v,
                    _ => 0.0,
                }
            }
            StatKind::PeakBytesInUse => self.peak_bytes_in_use = value.int(),
            StatKind::RequestedBytes => self.requested_bytes = value.int(),
            StatKind::AllocationBytes => self.allocation_bytes = value.int(),
            StatKind::Address => self.address = value.int() as u64,
            StatKind::TfOp => self.tf_op = value.text(),
            StatKind::RegionType => self.region_type = value.text(),
            StatKind::DataType => self.data_type = value.int(),
            StatKind::Shape => self.shape = value.text(),
            StatKind::GroupId => self.group_id = Some(value.int()),
            StatKind::ProducerType => grouping.producer_type = Some(value.int()),
            StatKind::ProducerId => grouping.producer_id = Some(value.int() as u64),
            StatKind::ConsumerType => grouping.consumer_type = Some(value.int()),
            StatKind::ConsumerId => grouping.consumer_id = Some(value.int() as u64),
            StatKind::ConsumerPid => grouping.pid = Some(value.int()),
            StatKind::IsRoot => grouping.root_level = Some(value.int()),
            StatKind::IsAsync => grouping.is_async = value.int() != 0,
            StatKind::StepId => grouping.step_id = Some(value.int()),
            StatKind::IterNum => grouping.iter_num = Some(value.int()),
            StatKind::ProcessId => {}
            StatKind::ModuleName => self.module_name = value.text(),
            StatKind::HloModule => self.hlo_module = value.text(),
            StatKind::ProgramId => self.program_id = Some(value.int() as u64),
        }
    }
}

/// The allocators of one host, filled plane by plane, and the program runs
/// their events point to.
pub struct HostAllocators {
    host: String,
    allocators: Vec<AllocatorBuilder>,
    by_name: HashMap<Vec<u8>, usize>,
    runs: Vec<RunBuilder>,
    /// The program ids the host's events give for each module name
    /// (`hlo_module` with `program_id`), wherever they are.
    program_ids: HashMap<Vec<u8>, Vec<u64>>,
    /// Per thread, in time order, each kernel launch that names another
    /// program than the launch before it: a run's launches may be recorded
    /// on another line of the same thread (the CUDA or ROCm API's).
    launches: Vec<Vec<Launch>>,
}

/// A [`ProgramRun`] being read: when it ran, the first module name its
/// events give, and the program ids its own events give for module names.
#[derive(Default)]
struct RunBuilder {
    begin_ps: i64,
    end_ps: i64,
    name: Vec<u8>,
    ids: Vec<(Vec<u8>, u64)>,
}

/// A thread starting to launch the kernels of one program.
struct Launch {
    begin_ps: i64,
    module: Vec<u8>,
    program_id: u64,
}

/// Adds `value` to a short list of distinct values.
fn add_distinct<T: PartialEq>(values: &mut Vec<T>, value: T) {
    if !values.contains(&value) {
        values.push(value);
    }
}

/// The only element of `values`, if there is exactly one.
fn only<T: Copy>(values: impl IntoIterator<Item = T>) -> Option<T> {
    let mut values = values.into_iter();
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

struct AllocatorBuilder {
    allocator: Allocator,
    string_ids: HashMap<Vec<u8>, u32>,
    findings: Findings,
}

impl AllocatorBuilder {
    fn intern(&mut self, text: &[u8]) -> u32 {
        if let Some(&id) = self.string_ids.get(text) {
            return id;
        }
        let id = u32::try_from(self.allocator.strings.len()).unwrap_or(0);
        self.allocator.strings.push(String::from_utf8_lossy(text).into_owned());
        self.string_ids.insert(text.to_vec(), id);
        id
    }
}

impl HostAllocators {
    pub fn new(host: String) -> Self {
        HostAllocators {
            host,
            allocators: Vec::new(),
            by_name: HashMap::new(),
            runs: Vec::new(),
            program_ids: HashMap::new(),
            launches: Vec::new(),
        }
    }

    /// Whether some run has a name but no program id yet, which the
    /// host's other planes (its devices') may give.
    pub fn needs_program_ids(&self) -> bool {
        self.runs.iter().any(|run| !run.name.is_empty() && self.program_id(run).is_none())
    }

    /// The one program id the profile gives for a run's name: from its own
    /// events, else from the launches of its time, else from anywhere.
    fn program_id(&self, run: &RunBuilder) -> Option<u64> {
        let own = run.ids.iter().filter(|(name, _)| *name == run.name).map(|&(_, id)| id);
        let mut launched = Vec::new();
        for line in &self.launches {
            // The launch in effect when the run began, and those during it.
            let first = line.partition_point(|l| l.begin_ps <= run.begin_ps).saturating_sub(1);
            let during = line.get(first..).unwrap_or_default().iter().take_while(|l| l.begin_ps <= run.end_ps);
            for launch in during.filter(|l| l.module == run.name) {
                add_distinct(&mut launched, launch.program_id);
            }
        }
        only(own)
            .or_else(|| only(launched.iter().copied()))
            .or_else(|| self.program_ids.get(&run.name).and_then(|ids| only(ids.iter().copied())))
    }

    /// A kernel launch (or any event) at `begin_ps` of the current thread
    /// that names its program.
    fn launched(&mut self, begin_ps: i64, module: &[u8], program_id: u64) {
        self.saw_program(module, program_id);
        let Some(line) = self.launches.last_mut() else { return };
        if line.last().is_none_or(|last| last.module != module || last.program_id != program_id) {
            line.push(Launch { begin_ps, module: module.to_vec(), program_id });
        }
    }

    fn saw_program(&mut self, name: &[u8], id: u64) {
        add_distinct(self.program_ids.entry(name.to_vec()).or_default(), id);
    }

    fn allocator(&mut self, name: &[u8]) -> usize {
        if let Some(&index) = self.by_name.get(name) {
            return index;
        }
        let mut builder = AllocatorBuilder {
            allocator: Allocator {
                host: self.host.clone(),
                name: String::from_utf8_lossy(name).into_owned(),
                ..Allocator::default()
            },
            string_ids: HashMap::new(),
            findings: Findings::default(),
        };
        builder.intern(b"");
        self.allocators.push(builder);
        self.by_name.insert(name.to_vec(), self.allocators.len() - 1);
        self.allocators.len() - 1
    }

    pub fn finish(self) -> Vec<Allocator> {
        let runs: std::sync::Arc<[ProgramRun]> = self
            .runs
            .iter()
            .map(|run| ProgramRun {
                name: String::from_utf8_lossy(&run.name).into_owned(),
                program_id: self.program_id(run),
            })
            .collect();
        self.allocators
            .into_iter()
            .map(|b| Allocator { runs: runs.clone(), inconsistencies: b.findings.into_messages(), ..b.allocator })
            .collect()
    }
}

/// What a plane's metadata says about its events and stats.
#[derive(Default)]
struct PlaneIndex<'f> {
    /// Event-metadata id → kind, for the kinds that are not `Other`.
    event_kinds: HashMap<i64, EventKind>,
    /// Event-metadata id → name, for every event.
    event_names: HashMap<i64, &'f [u8]>,
    /// Event metadata that carry stats of their own, which count for every
    /// event that uses them.
    metadata_with_stats: HashMap<i64, &'f [u8]>,
    stat_kinds: HashMap<i64, StatKind>,
    stat_names: HashMap<i64, &'f [u8]>,
    /// Every stat kind an allocator event is read for has its metadata.
    every_allocator_stat_named: bool,
    has_loop_ops: bool,
    already_grouped: bool,
}

/// Where an event is decoded: the file, for error offsets, and the plane's index.
struct PlaneReader<'f> {
    path: &'f Path,
    walker: Walker<'f>,
    index: PlaneIndex<'f>,
}

impl<'f> PlaneReader<'f> {
    fn fields(&self, message: &'f [u8]) -> impl Iterator<Item = Result<Field<'f>>> + '_ {
        self.walker.fields(message).map(|f| f.map_err(|e| wire_error(self.path, e)))
    }

    fn text(&self, text: &Text<'f>) -> &'f [u8] {
        match *text {
            Text::Empty => b"",
            Text::Inline(bytes) => bytes,
            Text::Ref(id) => self.index.stat_names.get(&id).copied().unwrap_or_default(),
        }
    }

    /// Reads one XStat into `stats` if it is a kind xmem uses.
    fn apply_stat(&self, stat: &'f [u8], stats: &mut EventStats<'f>) -> Result<()> {
        let (id, read) = self.read_stat(stat)?;
        // An unknown stat matters only while a kind xmem reads has no
        // metadata: it may be that one.
        stats.unknown_metadata |= !self.index.stat_names.contains_key(&id) && !self.index.every_allocator_stat_named;
        if let Some((kind, value)) = read {
            if let StatValue::Text(Text::Ref(name)) = value {
                stats.unknown_metadata |= !self.index.stat_names.contains_key(&name);
            }
            stats.apply(kind, value);
        }
        Ok(())
    }

    /// One XStat: its metadata id, and its kind and value if it is a kind xmem uses.
    fn read_stat(&self, stat: &'f [u8]) -> Result<(i64, Option<(StatKind, StatValue<'f>)>)> {
        let mut id = 0;
        let mut kind = None;
        let mut value = StatValue::Other;
        for field in self.fields(stat) {
            let field = field?;
            // XStat: metadata_id = 1, uint64 = 3, int64 = 4, ref = 7 (varints),
            // double = 2 (fixed64), str = 5, bytes = 6.
            let expected = match field.number {
                1 | 3 | 4 | 7 => matches!(field.value, Value::Varint(_)),
                2 => matches!(field.value, Value::Fixed64(_)),
                5 | 6 => matches!(field.value, Value::Bytes(_)),
                _ => true,
            };
            if !expected {
                return Err(wrong_wire_type(self.path, "XStat", &field));
            }
            match field.number {
                1 => {
                    id = field.as_u64().unwrap_or(0) as i64;
                    kind = self.index.stat_kinds.get(&id).copied();
                }
                2 => value = field.as_f64().map_or(StatValue::Other, StatValue::Double),
                3 | 4 => value = field.as_u64().map_or(StatValue::Other, |v| StatValue::Int(v as i64)),
                5 => value = field.as_bytes().map_or(StatValue::Other, |b| StatValue::Text(Text::Inline(b))),
                7 => value = field.as_u64().map_or(StatValue::Other, |v| StatValue::Text(Text::Ref(v as i64))),
                _ => value = StatValue::Other,
            }
        }
        Ok((id, kind.map(|kind| (kind, value))))
    }

    /// Indexes the plane's stat metadata: every name, and the kind of the
    /// stats `wanted`.
    fn read_stat_metadata(&mut self, plane: &PlaneParts<'f>, wanted: impl Fn(StatKind) -> bool) -> Result<()> {
        for entry in &plane.stat_metadata {
            let (id, Some(metadata)) = map_entry(self.path, self.walker, entry)? else { continue };
            let (name, _) = name_and_stats(self, metadata)?;
            if let Some(kind) = stat_kind(name).filter(|&kind| wanted(kind)) {
                self.index.stat_kinds.insert(id, kind);
            }
            self.index.stat_names.insert(id, name);
        }
        Ok(())
    }

    /// Applies every stat (field `number`) of `message`.
    fn apply_stats_of(&self, message: &'f [u8], number: u32, stats: &mut EventStats<'f>) -> Result<()> {
        for field in self.fields(message) {
            let field = field?;
            if let (true, Some(stat)) = (field.number == number, field.as_bytes()) {
                self.apply_stat(stat, stats)?;
            }
        }
        Ok(())
    }
}

/// The name (field 2) of an XEventMetadata or XStatMetadata, and whether it has stats (field 5).
fn name_and_stats<'f>(reader: &PlaneReader<'f>, message: &'f [u8]) -> Result<(&'f [u8], bool)> {
    let mut name: &[u8] = b"";
    let mut has_stats = false;
    for field in reader.fields(message) {
        let field = field?;
        match (field.number, field.as_bytes()) {
            (2, Some(text)) => name = text,
            (5, Some(_)) => has_stats = true,
            _ => {}
        }
    }
    Ok((name, has_stats))
}

/// What reading one plane's allocator events came to.
#[derive(Debug, Default)]
pub struct PlaneRead {
    /// The plane's event metadata names allocator events.
    pub has_allocator_events: bool,
    /// Allocator events added.
    pub kept: usize,
    /// Allocator events left out because the metadata of one of their stats
    /// is not in the plane (it was cut off): their figures are not known.
    pub incomplete: usize,
    /// The first thread (line) that does not decode: its events before the
    /// error are kept, and the other threads are still read.
    pub damaged_line: Option<Error>,
}

/// Adds the allocator events of `plane` to `out`. A plane with no
/// allocator event metadata is left unread. A damaged line keeps the events
/// read before its damage. `whole` says the plane's parts are all there; in a
/// plane cut short, an allocator event some of whose stats' metadata was cut
/// off is left out (and counted), and steps are not grouped, since the
/// events that would group them may be the ones whose metadata is missing.
pub fn read_plane<'f>(
    path: &'f Path,
    walker: Walker<'f>,
    plane: &PlaneParts<'f>,
    out: &mut HostAllocators,
    whole: bool,
) -> Result<PlaneRead> {
    let mut reader = PlaneReader { path, walker, index: PlaneIndex::default() };
    let mut has_allocator_events = false;
    for entry in &plane.event_metadata {
        let (id, Some(metadata)) = map_entry(path, walker, entry)? else { continue };
        let (name, has_stats) = name_and_stats(&reader, metadata)?;
        reader.index.event_names.insert(id, name);
        let kind = event_kind(name);
        has_allocator_events |= matches!(kind, EventKind::Allocator(_));
        reader.index.has_loop_ops |= is_loop_op(name);
        if kind != EventKind::Grouping(GroupingKind::Other) {
            reader.index.event_kinds.insert(id, kind);
        }
        if has_stats {
            reader.index.metadata_with_stats.insert(id, metadata);
        }
    }
    if !has_allocator_events {
        return Ok(PlaneRead::default());
    }
    reader.read_stat_metadata(plane, |_| true)?;
    reader.index.already_grouped = reader.index.stat_kinds.values().any(|&kind| kind == StatKind::GroupId);
    reader.index.every_allocator_stat_named = ALLOCATOR_STATS
        .iter()
        .all(|kinds| kinds.iter().any(|kind| reader.index.stat_kinds.values().any(|known| known == kind)));
    let mut plane_pid = None;
    for stat in &plane.stats {
        if let (None, (_, Some((StatKind::ProcessId, value)))) = (plane_pid, reader.read_stat(stat)?) {
            plane_pid = Some(value.int());
        }
    }
    let mut walk = PlaneWalk::new(&reader, out, plane_pid, whole);
    walk.run(&plane.lines);
    Ok(PlaneRead { has_allocator_events, ..walk.read })
}

/// Adds the program ids `plane`'s events give for module names
/// (`hlo_module` with `program_id`, as a GPU plane's kernels and copies
/// carry them) to `out`: they name the programs of runs whose own events
/// give none. A plane without both stats is left unread.
pub fn read_program_ids<'f>(
    path: &'f Path,
    walker: Walker<'f>,
    plane: &PlaneParts<'f>,
    out: &mut HostAllocators,
) -> Result<()> {
    let mut reader = PlaneReader { path, walker, index: PlaneIndex::default() };
    reader.read_stat_metadata(plane, |kind| matches!(kind, StatKind::HloModule | StatKind::ProgramId))?;
    let kinds = || reader.index.stat_kinds.values();
    if !kinds().any(|&k| k == StatKind::HloModule) || !kinds().any(|&k| k == StatKind::ProgramId) {
        return Ok(());
    }
    for line in &plane.lines {
        for field in reader.fields(line) {
            let field = field?;
            if let (4, Some(event)) = (field.number, field.as_bytes()) {
                let mut stats = EventStats::default();
                reader.apply_stats_of(event, 4, &mut stats)?;
                let module = reader.text(&stats.hlo_module);
                if let (Some(id), false) = (stats.program_id, module.is_empty()) {
                    out.saw_program(module, id);
                }
            }
        }
    }
    Ok(())
}

/// Whether an event is a program's execution: `PjRtCApiLoadedExecutable::Execute`,
/// `PjRtStreamExecutorLoadedExecutable::Execute`, `TfrtTpuLoadedExecutable::Execute`,
/// `GpuExecutable::ExecuteThunks`. The outermost of a thread is the run.
fn is_execution(name: &[u8]) -> bool {
    let contains = |part: &[u8]| name.windows(part.len()).any(|w| w == part);
    contains(b"Executable") && contains(b"Execute")
}

/// The module an event of a run names: `module_name` (`GpuExecutable::ExecuteThunks`),
/// `hlo_module` (a kernel launch), `jit_step:XLA GPU module`, or
/// `CommonPjRtLoadedExecutable::Execute (jit_step)`.
fn module_named<'f>(reader: &PlaneReader<'f>, name: &'f [u8], stats: &EventStats<'f>) -> Option<&'f [u8]> {
    let stat =
        [&stats.module_name, &stats.hlo_module].into_iter().map(|text| reader.text(text)).find(|t| !t.is_empty());
    stat.or_else(|| name.strip_suffix(b":XLA GPU module"))
        .or_else(|| {
            let inner = name.strip_suffix(b")")?;
            let open = inner.windows(b"Execute (".len()).rposition(|w| w == b"Execute (")?;
            inner.get(open + b"Execute (".len()..)
        })
        .filter(|module| !module.is_empty())
}

/// A Python frame, as the Python tracer names it: `$file.py:12 function`.
fn is_python_frame(name: &[u8]) -> bool {
    name.first() == Some(&b'$')
}

/// An event of a thread that has begun and not yet ended, as the thread is
/// walked in time order.
struct OpenEvent {
    end_ps: i64,
    metadata_id: i64,
}

/// One pass over a plane's threads.
struct PlaneWalk<'a, 'f> {
    reader: &'a PlaneReader<'f>,
    out: &'a mut HostAllocators,
    /// `None` when XProf would not group this plane: it is grouped already,
    /// or it has TF loop ops.
    forest: Option<EventForest>,
    /// (allocator, event index, grouping node) of events whose step is not known yet.
    pending_steps: Vec<(usize, usize, u32)>,
    /// The events of the current thread around the one being read, outermost first.
    open: Vec<OpenEvent>,
    /// The run the current thread is in and the depth in `open` of the event that opened it:
    /// only an execution outside any run opens one, so at most one open event has a run, and
    /// keeping it here spares a search of the whole stack at every event (a deep stack of
    /// scopes made that quadratic: the `nested-step-roots` shape).
    open_run: Option<(usize, u32)>,
    /// The plane's parts are all there (see [`read_plane`]).
    whole: bool,
    read: PlaneRead,
}

impl<'a, 'f> PlaneWalk<'a, 'f> {
    fn new(reader: &'a PlaneReader<'f>, out: &'a mut HostAllocators, plane_pid: Option<i64>, whole: bool) -> Self {
        let index = &reader.index;
        let forest = (whole && !index.already_grouped && !index.has_loop_ops).then(|| EventForest::new(plane_pid));
        PlaneWalk {
            reader,
            out,
            forest,
            pending_steps: Vec::new(),
            open: Vec::new(),
            open_run: None,
            whole,
            read: PlaneRead::default(),
        }
    }

    fn run(&mut self, lines: &[&'f [u8]]) {
        for line in lines {
            if let Err(e) = self.read_line(line) {
                self.read.damaged_line.get_or_insert(e);
            }
        }
        if let Some(forest) = self.forest.take() {
            let steps = forest.group();
            for &(allocator, event, node) in &self.pending_steps {
                if let Some(slot) =
                    self.out.allocators.get_mut(allocator).and_then(|b| b.allocator.events.get_mut(event))
                {
                    slot.step = steps.get(node as usize).copied().flatten().map(i64::from);
                }
            }
        }
    }

    /// A line's events in order; at damage, the events before it are kept
    /// and the error is returned.
    fn read_line(&mut self, line: &'f [u8]) -> Result<()> {
        // The timestamp comes before the events: damage among the events
        // leaves it readable.
        let mut timestamp_ns = 0i64;
        for field in self.reader.fields(line).map_while(|field| field.ok()) {
            if field.number == 3 {
                timestamp_ns = field.as_u64().unwrap_or(0) as i64;
            }
        }
        if let Some(forest) = &mut self.forest {
            forest.start_thread();
        }
        self.open.clear();
        self.open_run = None;
        self.out.launches.push(Vec::new());
        for field in self.reader.fields(line) {
            let field = field?;
            if let (4, Some(event)) = (field.number, field.as_bytes()) {
                self.read_event(event, timestamp_ns)?;
            }
        }
        Ok(())
    }

    fn read_event(&mut self, event: &'f [u8], timestamp_ns: i64) -> Result<()> {
        let reader = self.reader;
        let mut metadata_id = None;
        let mut offset_ps = 0i64;
        let mut duration_ps = 0i64;
        let mut stats = EventStats::default();
        for field in reader.fields(event) {
            let field = field?;
            // XEvent: metadata_id = 1, offset_ps = 2, duration_ps = 3,
            // num_occurrences = 5 (varints), stats = 4.
            let expected = match field.number {
                1 | 2 | 3 | 5 => matches!(field.value, Value::Varint(_)),
                4 => matches!(field.value, Value::Bytes(_)),
                _ => true,
            };
            if !expected {
                return Err(wrong_wire_type(reader.path, "XEvent", &field));
            }
            match (field.number, field.as_bytes()) {
                (1, _) => metadata_id = field.as_u64().map(|v| v as i64),
                (2, _) => offset_ps = field.as_u64().unwrap_or(0) as i64,
                (3, _) => duration_ps = field.as_u64().unwrap_or(0) as i64,
                (4, Some(stat)) => reader.apply_stat(stat, &mut stats)?,
                _ => {}
            }
        }
        let metadata_id = metadata_id.unwrap_or(0);
        if let Some(metadata) = reader.index.metadata_with_stats.get(&metadata_id) {
            // The metadata's stats come first, so the event's own win.
            stats = EventStats::default();
            reader.apply_stats_of(metadata, 5, &mut stats)?;
            reader.apply_stats_of(event, 4, &mut stats)?;
        }
        let kind =
            reader.index.event_kinds.get(&metadata_id).copied().unwrap_or(EventKind::Grouping(GroupingKind::Other));
        let begin_ps = timestamp_ns.saturating_mul(1000).saturating_add(offset_ps);
        let node = match &mut self.forest {
            Some(forest) => {
                let grouping_kind = match kind {
                    EventKind::Grouping(g) => g,
                    EventKind::Allocator(_) => GroupingKind::Other,
                };
                let node = forest.add(begin_ps, duration_ps, grouping_kind, &stats.grouping);
                Some(node.ok_or_else(|| {
                    Error::malformed(reader.path, Some(reader.walker.offset(event)), "too many events in one plane")
                })?)
            }
            None => None,
        };
        while self.open.last().is_some_and(|open| open.end_ps <= begin_ps) {
            self.open.pop();
        }
        if self.open_run.is_some_and(|(depth, _)| depth >= self.open.len()) {
            self.open_run = None;
        }
        match kind {
            EventKind::Allocator(_) if !self.whole && stats.unknown_metadata => self.read.incomplete += 1,
            EventKind::Allocator(kind) => {
                self.add_allocator_event(kind, &stats, begin_ps, offset_ps, node);
                self.read.kept += 1;
            }
            EventKind::Grouping(_) => self.add_host_event(metadata_id, &stats, begin_ps, duration_ps),
        }
        Ok(())
    }

    /// The run the current thread is in.
    fn current_run(&self) -> Option<u32> {
        self.open_run.map(|(_, run)| run)
    }

    /// Opens a host event: a new run if it is the thread's outermost
    /// execution, and what it says about its run's program.
    fn add_host_event(&mut self, metadata_id: i64, stats: &EventStats<'f>, begin_ps: i64, duration_ps: i64) {
        let reader = self.reader;
        let name = reader.index.event_names.get(&metadata_id).copied().unwrap_or_default();
        let module = reader.text(&stats.hlo_module);
        let end_ps = begin_ps.saturating_add(duration_ps);
        if let (Some(id), false) = (stats.program_id, module.is_empty()) {
            self.out.launched(begin_ps, module, id);
        }
        let mut new_run = None;
        let run = match self.current_run() {
            Some(run) => Some(run),
            None if is_execution(name) => {
                new_run = u32::try_from(self.out.runs.len()).ok();
                if new_run.is_some() {
                    self.out.runs.push(RunBuilder { begin_ps, end_ps, ..RunBuilder::default() });
                }
                new_run
            }
            None => None,
        };
        if let Some(run) = run.and_then(|run| self.out.runs.get_mut(run as usize)) {
            if let (true, Some(named)) = (run.name.is_empty(), module_named(reader, name, stats)) {
                run.name = named.to_vec();
            }
            if let (Some(id), false) = (stats.program_id, module.is_empty()) {
                add_distinct(&mut run.ids, (module.to_vec(), id));
            }
        }
        if let Some(run) = new_run {
            self.open_run = Some((self.open.len(), run));
        }
        self.open.push(OpenEvent { end_ps, metadata_id });
    }

    /// What the current thread is doing outside any program: the innermost
    /// open event that is not a Python frame, else the innermost Python frame.
    fn activity(&self) -> &'f [u8] {
        let names = self.open.iter().rev().filter_map(|open| self.reader.index.event_names.get(&open.metadata_id));
        let mut innermost_frame = None;
        for &name in names {
            if !is_python_frame(name) {
                return name;
            }
            innermost_frame.get_or_insert(name);
        }
        innermost_frame.unwrap_or_default()
    }

    fn add_allocator_event(
        &mut self,
        kind: AllocatorEventKind,
        stats: &EventStats<'f>,
        time_ps: i64,
        thread_offset_ps: i64,
        node: Option<u32>,
    ) {
        let reader = self.reader;
        let mut ordinal = [0u8; 24];
        let name: &[u8] = match &stats.allocator {
            None => b"",
            Some(AllocatorId::Name(text)) => reader.text(text),
            Some(AllocatorId::Ordinal(n)) => {
                let mut cursor = std::io::Cursor::new(&mut ordinal[..]);
                let _ = write!(cursor, "{n}");
                let len = cursor.position() as usize;
                &ordinal[..len]
            }
        };
        let run = self.current_run();
        let made_in = if run.is_some() { &b""[..] } else { self.activity() };
        let allocator = self.out.allocator(name);
        let Some(builder) = self.out.allocators.get_mut(allocator) else { return };
        let data_type = data_type_name(stats.data_type);
        let event = AllocatorEvent {
            kind,
            time_ps,
            thread_offset_ps,
            stack_reserved_bytes: stats.bytes_reserved,
            heap_allocated_bytes: stats.bytes_allocated,
            free_memory_bytes: stats.bytes_available,
            fragmentation: stats.fragmentation,
            peak_bytes_in_use: stats.peak_bytes_in_use,
            requested_bytes: stats.requested_bytes,
            allocation_bytes: stats.allocation_bytes,
            address: stats.address,
            op_name: builder.intern(reader.text(&stats.tf_op)),
            region_type: builder.intern(reader.text(&stats.region_type)),
            data_type: builder.intern(data_type.as_bytes()),
            shape: builder.intern(reader.text(&stats.shape)),
            step: stats.group_id,
            run,
            made_in: builder.intern(made_in),
        };
        check_event(&mut builder.findings, builder.allocator.events.len(), &event);
        builder.allocator.events.push(event);
        if let Some(node) = node {
            self.pending_steps.push((allocator, builder.allocator.events.len() - 1, node));
        }
    }
}

/// A field of a known number stored as another type: a flipped bit, which
/// would otherwise drop a stat without a word.
fn wrong_wire_type(path: &Path, message: &str, field: &Field) -> Error {
    Error::malformed(path, Some(field.offset), format!("{message} field {} has the wrong wire type", field.number))
}

/// The totals and sizes an allocator event states that cannot be true.
fn check_event(findings: &mut Findings, index: usize, event: &AllocatorEvent) {
    let kind = match event.kind {
        AllocatorEventKind::Allocation => "allocation",
        AllocatorEventKind::Deallocation => "deallocation",
    };
    let figures = [
        ("bytes in use", event.heap_allocated_bytes),
        ("bytes reserved", event.stack_reserved_bytes),
        ("free bytes", event.free_memory_bytes),
        ("peak bytes in use", event.peak_bytes_in_use),
        ("requested bytes", event.requested_bytes),
        ("allocation bytes", event.allocation_bytes),
    ];
    for (what, value) in figures.into_iter().filter(|&(_, value)| value < 0) {
        findings.add(what, None, None, || format!("event {index} ({kind}) states a negative {what} ({value})"));
    }
    let total = [event.heap_allocated_bytes, event.stack_reserved_bytes, event.free_memory_bytes]
        .into_iter()
        .try_fold(0i64, |sum, value| sum.checked_add(value.max(0)));
    if total.is_none() {
        findings.add("capacity overflow", None, None, || {
            format!("event {index} ({kind}): bytes in use, reserved and free add up to more than 2^63 - 1")
        });
    }
}

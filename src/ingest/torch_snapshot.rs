//! PyTorch CUDA memory snapshots: the pickle `torch.cuda.memory._dump_snapshot`
//! writes, a dict of built-in types documented in the docstring of
//! `torch.cuda.memory._snapshot()`: `segments` (each with its `blocks`),
//! `device_traces` (one list of entries per device), `allocator_settings`,
//! `external_annotations`, and, when pinned host memory was recorded,
//! `host_segments` and `host_traces`. A pickle of `torch.cuda.memory_snapshot()`
//! (the segments alone, as a list) is read too.
//!
//! Every frame and stack is stored once: the pickle's memo shares them
//! among entries, and they are interned as the pickle is read. Each trace
//! entry becomes a 32-byte [`TraceEntry`] the moment its dict is complete.
//! Optional keys may be missing (older PyTorch wrote no `time_us`, no
//! `requested_size`, no block `address`); a key of the wrong type is an error
//! that names it.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::pickle::{self, Hooks, Object, ObjectId, Objects, Value};
use crate::error::{Error, Result};
use crate::interner::Interner;
use crate::model::torch_snapshot::{
    Action, AllocatorSettings, Block, BlockState, DeviceMemoryTrace, Pool, Segment, TorchFrame, TorchSnapshot,
    TraceEntry,
};

/// The size of the segments of the small pool (`kSmallBuffer`), which tells
/// the pool of a segment whose `segment_type` is not recorded.
const SMALL_SEGMENT_BYTES: u64 = 2 << 20;

/// The time of an entry recorded without one (PyTorch before 2.1), until
/// its trace is known to be untimed; no real time is this far before the epoch.
const UNTIMED: i64 = i64::MIN;

/// Where a snapshot comes from, for messages that say how to make one.
pub const HOW_TO_RECORD: &str =
    "torch.cuda.memory._record_memory_history() then torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")";

/// Reads a snapshot; warnings are what was read leniently (an unknown block state).
pub fn decode(path: &Path, bytes: &[u8]) -> Result<(TorchSnapshot, Vec<String>)> {
    let mut reader = Reader::default();
    let pickle = pickle::read(bytes, &mut reader).map_err(|e| Error::malformed(path, Some(e.offset), e.what))?;
    let mut objects = pickle.objects;
    let root = pickle.root;
    let not_a_snapshot = || {
        Error::unrecognised(
            path,
            format!("a Python pickle, but not a PyTorch memory snapshot (no 'segments' or 'device_traces'); make one with {HOW_TO_RECORD}"),
        )
    };
    let (segments, traces, settings, host_segments, host_traces) = if objects.items(root).is_some() {
        (Some(root), None, None, None, None)
    } else if objects.pairs(root).is_some() {
        let [segments, traces, settings, host_segments, host_traces] =
            ["segments", "device_traces", "allocator_settings", "host_segments", "host_traces"]
                .map(|key| objects.lookup(root, key));
        if segments.is_none() && traces.is_none() && host_segments.is_none() && host_traces.is_none() {
            return Err(not_a_snapshot());
        }
        (segments, traces, settings, host_segments, host_traces)
    } else {
        return Err(not_a_snapshot());
    };
    let fail = |what: String| Error::malformed(path, None, what);
    let mut devices: Vec<DeviceMemoryTrace> = Vec::new();
    for (index, entries) in list(&objects, traces, "device_traces").map_err(fail)?.iter().enumerate() {
        let entries = list(&objects, Some(*entries), "device_traces[i]").map_err(fail)?;
        devices.push(reader.device_trace(&objects, index as i64, entries).map_err(fail)?);
    }
    for (index, value) in list(&objects, segments, "segments").map_err(fail)?.to_vec().into_iter().enumerate() {
        let in_segment = |what: String| fail(format!("segments[{index}]: {what}"));
        let device = int(&objects, value, "device").map_err(in_segment)?.unwrap_or(0);
        let segment = reader.segment(&mut objects, value).map_err(in_segment)?;
        match devices.iter_mut().find(|d| d.device == device) {
            Some(trace) => trace.segments.push(segment),
            None => devices.push(DeviceMemoryTrace { device, segments: vec![segment], ..Default::default() }),
        }
    }
    devices.retain(|d| !d.segments.is_empty() || !d.trace.is_empty());
    devices.sort_by_key(|d| d.device);
    let host = reader.host(&mut objects, host_segments, host_traces).map_err(fail)?;
    let settings = settings.map(|s| allocator_settings(&objects, s)).transpose().map_err(fail)?.unwrap_or_default();
    let Reader { frames, stacks, warnings, .. } = reader;
    Ok((TorchSnapshot { frames, stacks, devices, host, settings }, warnings))
}

/// Interns frames and stacks, and turns trace entries into [`TraceEntry`]s
/// as the pickle is read.
struct Reader {
    interner: Interner,
    frames: Vec<TorchFrame>,
    frame_index: FxHashMap<TorchFrame, u32>,
    /// Frame dicts already read, by their place in the pickle's arena.
    frame_of_object: FxHashMap<ObjectId, u32>,
    stacks: Vec<Box<[u32]>>,
    stack_index: FxHashMap<Box<[u32]>, u32>,
    /// Frame lists already read (and freed from the arena).
    stack_of_object: FxHashMap<ObjectId, u32>,
    /// Every trace entry of every device, in the order the pickle holds them.
    entries: Vec<TraceEntry>,
    /// `device_free` of the out-of-memory entries, by entry index.
    device_free: FxHashMap<u32, u64>,
    warnings: Vec<String>,
}

impl Default for Reader {
    fn default() -> Self {
        Reader {
            interner: Interner::default(),
            frames: Vec::new(),
            frame_index: FxHashMap::default(),
            frame_of_object: FxHashMap::default(),
            // Stack 0 is the empty stack.
            stacks: vec![Box::default()],
            stack_index: FxHashMap::from_iter([(Box::default(), 0)]),
            stack_of_object: FxHashMap::default(),
            entries: Vec::new(),
            device_free: FxHashMap::default(),
            warnings: Vec::new(),
        }
    }
}

impl Hooks for Reader {
    /// A dict with an `action` is a trace entry.
    fn dict(&mut self, objects: &mut Objects, id: ObjectId) -> std::result::Result<Option<u32>, String> {
        let entry = Value::Object(id);
        let Some(action) = objects.lookup(entry, "action") else { return Ok(None) };
        let action = match objects.str(action) {
            Some("alloc") => Action::Alloc,
            Some("free_requested") => Action::FreeRequested,
            Some("free_completed") => Action::FreeCompleted,
            Some("segment_alloc") => Action::SegmentAlloc,
            Some("segment_free") => Action::SegmentFree,
            Some("segment_map") => Action::SegmentMap,
            Some("segment_unmap") => Action::SegmentUnmap,
            Some("oom") => Action::Oom,
            Some("snapshot") => Action::Snapshot,
            Some(_) => Action::Other,
            None => return Err("a trace entry whose action is not a string".to_string()),
        };
        let index = u32::try_from(self.entries.len()).map_err(|_| "more than 4 billion trace entries".to_string())?;
        // An entry without a time is marked until its device's trace is assembled.
        let time_us = int(objects, entry, "time_us")?.unwrap_or(UNTIMED);
        if action == Action::Oom {
            self.device_free.insert(index, uint(objects, entry, "device_free")?.unwrap_or(0));
        }
        let frames = objects.lookup(entry, "frames");
        let stack = self.stack(objects, frames)?;
        self.entries.push(TraceEntry {
            time_us,
            addr: uint(objects, entry, "addr")?.unwrap_or(0),
            size: uint(objects, entry, "size")?.unwrap_or(0),
            stack,
            action,
        });
        Ok(Some(index))
    }
}

impl Reader {
    fn frame(&mut self, objects: &Objects, value: Value) -> std::result::Result<u32, String> {
        let Value::Object(id) = value else { return Err("a frame that is not a dict".to_string()) };
        if let Some(&frame) = self.frame_of_object.get(&id) {
            return Ok(frame);
        }
        if objects.pairs(value).is_none() {
            return Err("a frame that is not a dict".to_string());
        }
        let text = |key: &str| -> std::result::Result<&str, String> {
            match objects.lookup(value, key) {
                None => Ok(""),
                Some(v) => objects.str(v).ok_or_else(|| format!("a frame whose {key} is not a string")),
            }
        };
        let frame = TorchFrame {
            function: self.interner.text(text("name")?),
            file: self.interner.text(text("filename")?),
            line: int(objects, value, "line")?.unwrap_or(0),
        };
        let next = u32::try_from(self.frames.len()).map_err(|_| "more than 4 billion frames".to_string())?;
        let index = *self.frame_index.entry(frame.clone()).or_insert(next);
        if index == next {
            self.frames.push(frame);
        }
        self.frame_of_object.insert(id, index);
        Ok(index)
    }

    /// The stack a `frames` value names (the empty stack when there is none);
    /// the list it was read from is freed.
    fn stack(&mut self, objects: &mut Objects, frames: Option<Value>) -> std::result::Result<u32, String> {
        let Some(value) = frames else { return Ok(0) };
        let Value::Object(id) = value else { return Err("frames that are not a list".to_string()) };
        if let Some(&stack) = self.stack_of_object.get(&id) {
            return Ok(stack);
        }
        let items = objects.items(value).ok_or("frames that are not a list")?.to_vec();
        let frames =
            items.into_iter().map(|item| self.frame(objects, item)).collect::<std::result::Result<Box<[u32]>, _>>()?;
        let next = u32::try_from(self.stacks.len()).map_err(|_| "more than 4 billion stacks".to_string())?;
        let index = *self.stack_index.entry(frames.clone()).or_insert(next);
        if index == next {
            self.stacks.push(frames);
        }
        self.stack_of_object.insert(id, index);
        objects.replace(id, Object::Converted(index));
        Ok(index)
    }

    /// The entries of one device's trace, read as the pickle was. The
    /// entries of a snapshot with one device are all its entries, in order:
    /// they are moved, not copied.
    fn device_trace(
        &mut self,
        objects: &Objects,
        device: i64,
        items: &[Value],
    ) -> std::result::Result<DeviceMemoryTrace, String> {
        let mut indices = Vec::with_capacity(items.len());
        for &item in items {
            match objects.of(item) {
                Some(Object::Converted(index)) => indices.push(*index),
                _ => return Err(format!("device_traces[{device}] holds an entry without an action")),
            }
        }
        let oom_device_free = indices.iter().filter_map(|index| self.device_free.get(index).copied()).collect();
        let in_order = indices.iter().enumerate().all(|(i, &index)| i == index as usize);
        let mut trace = if in_order && indices.len() == self.entries.len() {
            std::mem::take(&mut self.entries)
        } else {
            let entry = |&index: &u32| self.entries.get(index as usize).copied().ok_or("a trace entry read twice");
            indices.iter().map(entry).collect::<std::result::Result<Vec<_>, _>>()?
        };
        let timed = !trace.is_empty() && trace.iter().all(|e| e.time_us != UNTIMED);
        if !timed {
            trace.iter_mut().for_each(|e| e.time_us = 0);
        }
        Ok(DeviceMemoryTrace { device, segments: Vec::new(), trace, oom_device_free, timed })
    }

    fn segment(&mut self, objects: &mut Objects, value: Value) -> std::result::Result<Segment, String> {
        if objects.pairs(value).is_none() {
            return Err("a segment that is not a dict".to_string());
        }
        let address = uint(objects, value, "address")?.unwrap_or(0);
        let frames = objects.lookup(value, "frames");
        let stack = self.stack(objects, frames)?;
        let mut blocks = Vec::new();
        let mut next_address = address;
        let blocks_value = objects.lookup(value, "blocks");
        for item in list(objects, blocks_value, "blocks")?.to_vec() {
            let block = self.block(objects, item, next_address)?;
            next_address = block.address.saturating_add(block.size);
            blocks.push(block);
        }
        let sum = |field: fn(&Block) -> u64, active: fn(BlockState) -> bool| {
            blocks.iter().filter(|b| active(b.state)).fold(0u64, |total, b| total.saturating_add(field(b)))
        };
        let total_size = match uint(objects, value, "total_size")? {
            Some(size) => size,
            None => sum(|b| b.size, |_| true),
        };
        let pool = match objects.lookup(value, "segment_type").and_then(|v| objects.str(v)) {
            Some("small") => Pool::Small,
            Some("large") => Pool::Large,
            _ if total_size == SMALL_SEGMENT_BYTES => Pool::Small,
            _ => Pool::Large,
        };
        Ok(Segment {
            address,
            total_size,
            allocated_size: match uint(objects, value, "allocated_size")? {
                Some(size) => size,
                None => sum(|b| b.size, |s| s == BlockState::Allocated),
            },
            active_size: match uint(objects, value, "active_size")? {
                Some(size) => size,
                None => sum(|b| b.size, |s| s != BlockState::Inactive),
            },
            requested_size: match uint(objects, value, "requested_size")? {
                Some(size) => size,
                None => sum(|b| b.requested_size, |s| s != BlockState::Inactive),
            },
            stream: uint(objects, value, "stream")?.unwrap_or(0),
            pool,
            expandable: matches!(objects.lookup(value, "is_expandable"), Some(Value::Bool(true))),
            stack,
            blocks,
        })
    }

    fn block(&mut self, objects: &mut Objects, value: Value, next_address: u64) -> std::result::Result<Block, String> {
        if objects.pairs(value).is_none() {
            return Err("a block that is not a dict".to_string());
        }
        let size = uint(objects, value, "size")?.unwrap_or(0);
        let state = match objects.lookup(value, "state").map(|v| objects.str(v)) {
            Some(Some("active_allocated")) => BlockState::Allocated,
            Some(Some("active_pending_free")) => BlockState::PendingFree,
            Some(Some("inactive")) | None => BlockState::Inactive,
            Some(Some(other)) => {
                let warning = format!("a block in state '{other}', which xmem does not know, is counted as inactive");
                if !self.warnings.contains(&warning) {
                    self.warnings.push(warning);
                }
                BlockState::Inactive
            }
            Some(None) => return Err("a block whose state is not a string".to_string()),
        };
        let frames = objects.lookup(value, "frames");
        Ok(Block {
            address: uint(objects, value, "address")?.unwrap_or(next_address),
            size,
            requested_size: uint(objects, value, "requested_size")?.unwrap_or(size),
            state,
            stack: self.stack(objects, frames)?,
        })
    }

    /// Pinned host memory: its segments, and its trace as one list of
    /// entries or as one list per device.
    fn host(
        &mut self,
        objects: &mut Objects,
        segments: Option<Value>,
        traces: Option<Value>,
    ) -> std::result::Result<Option<DeviceMemoryTrace>, String> {
        if segments.is_none() && traces.is_none() {
            return Ok(None);
        }
        let items = list(objects, traces, "host_traces")?;
        let nested = items.first().is_some_and(|&first| objects.items(first).is_some());
        let entries: Vec<Value> = if nested {
            let mut flat = Vec::new();
            for &inner in items {
                flat.extend_from_slice(list(objects, Some(inner), "host_traces[i]")?);
            }
            flat
        } else {
            items.to_vec()
        };
        let mut host = self.device_trace(objects, -1, &entries)?;
        for segment in list(objects, segments, "host_segments")?.to_vec() {
            host.segments.push(self.segment(objects, segment)?);
        }
        Ok(Some(host))
    }
}

/// The items of a list value; an absent value is an empty list.
fn list<'o>(objects: &'o Objects, value: Option<Value>, name: &str) -> std::result::Result<&'o [Value], String> {
    match value {
        None | Some(Value::None) => Ok(&[]),
        Some(value) => objects.items(value).ok_or_else(|| format!("'{name}' is not a list")),
    }
}

fn int(objects: &Objects, dict: Value, key: &str) -> std::result::Result<Option<i64>, String> {
    match objects.lookup(dict, key) {
        None | Some(Value::None) => Ok(None),
        Some(Value::Int(n)) => Ok(Some(n)),
        Some(Value::Bool(b)) => Ok(Some(i64::from(b))),
        Some(Value::BigInt) => Err(format!("'{key}' is an integer too large for 64 bits")),
        Some(_) => Err(format!("'{key}' is not an integer")),
    }
}

fn uint(objects: &Objects, dict: Value, key: &str) -> std::result::Result<Option<u64>, String> {
    match int(objects, dict, key)? {
        None => Ok(None),
        Some(n) => u64::try_from(n).map(Some).map_err(|_| format!("'{key}' is negative ({n})")),
    }
}

fn allocator_settings(objects: &Objects, settings: Value) -> std::result::Result<AllocatorSettings, String> {
    if objects.pairs(settings).is_none() {
        return Ok(AllocatorSettings::default());
    }
    let mut divisions = [0u64; 16];
    if let Some(value) = objects.lookup(settings, "roundup_power2_divisions") {
        if let Some(pairs) = objects.pairs(value) {
            // Keyed by the interval's start in MiB: "1", "2", "4", … "32768".
            for (key, count) in pairs {
                let start: Option<u64> = objects.str(*key).and_then(|k| k.parse().ok());
                let slot =
                    start.filter(|s| s.is_power_of_two()).and_then(|s| divisions.get_mut(s.trailing_zeros() as usize));
                if let (Some(slot), Value::Int(count)) = (slot, count) {
                    *slot = u64::try_from(*count).unwrap_or(0);
                }
            }
        } else if let Some(items) = objects.items(value) {
            for (slot, count) in divisions.iter_mut().zip(items) {
                if let Value::Int(count) = count {
                    *slot = u64::try_from(*count).unwrap_or(0);
                }
            }
        }
    }
    Ok(AllocatorSettings {
        conf: objects.lookup(settings, "PYTORCH_CUDA_ALLOC_CONF").and_then(|v| objects.str(v)).map(str::to_string),
        expandable_segments: matches!(objects.lookup(settings, "expandable_segments"), Some(Value::Bool(true))),
        // PyTorch writes SIZE_MAX, "no limit", as -1.
        max_split_size: int(objects, settings, "max_split_size")?.and_then(|n| u64::try_from(n).ok()),
        roundup_power2_divisions: divisions,
    })
}

//! Live device memory at one instant: totals per device and kind, the
//! allocation sites ranked as `pprof -top` ranks functions, and the heaviest
//! whole stacks. Each allocation is blamed on the innermost frame of the
//! user's own code (see [`crate::python_code`]), where its stack has one:
//! the line the user wrote, not the JAX function under it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use crate::model::{DeviceMemorySnapshot, Frame, LiveGroup};
use crate::python_code::is_user_code;

/// The label JAX puts on buffers (`cpu:0`, `TPU_0(host=0,(0,0,0,0))`, …);
/// executables belong to no device and have none.
pub const DEVICE_LABEL: &str = "device";
/// `buffer` for a live array, `executable` for a loaded program.
pub const KIND_LABEL: &str = "kind";
/// The kinds JAX writes; `by_kind` always lists them so the JSON keeps one shape.
pub const KINDS: [&str; 2] = ["buffer", "executable"];
/// Where samples without a `kind` label are counted.
pub const UNLABELLED_KIND: &str = "unlabelled";

#[derive(Debug, Clone, Serialize)]
pub struct DeviceMemoryReport {
    pub input: String,
    pub total_bytes: i64,
    pub total_count: i64,
    /// Allocations the profile gives no size for (jaxlib on TPU wrote -1 for
    /// executables); they count in `total_count` but add no bytes anywhere.
    pub size_unknown_count: i64,
    /// One row per `device` label, in name order; samples without one
    /// (executables) come last, under `device: null`.
    pub devices: Vec<DeviceUsage>,
    /// Every function on any stack, with `pprof -top`'s figures, by flat bytes
    /// then cumulative bytes (pprof breaks ties by name, which puts the
    /// callers of the big allocations in alphabetical order). Flat counts
    /// go to each stack's innermost frame of the user's code, as
    /// `pprof -top -hide` of the library files gives them.
    pub top_sites: Vec<Site>,
    /// Every distinct stack, heaviest first.
    pub stacks: Vec<StackUsage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceUsage {
    pub device: Option<String>,
    pub bytes: i64,
    pub count: i64,
    pub by_kind: BTreeMap<String, i64>,
    pub count_by_kind: BTreeMap<String, i64>,
}

impl DeviceUsage {
    fn new(device: Option<String>) -> Self {
        let zeros: BTreeMap<String, i64> = KINDS.iter().map(|kind| (kind.to_string(), 0)).collect();
        DeviceUsage { device, bytes: 0, count: 0, by_kind: zeros.clone(), count_by_kind: zeros }
    }
}

/// A function, as pprof's function granularity sees it: flat counts what the
/// function allocated itself (it is the innermost frame of the user's code,
/// or the innermost frame of a stack with none), cumulative what was
/// allocated anywhere below it.
#[derive(Debug, Clone, Serialize)]
pub struct Site {
    /// Shared with the snapshot, as in [`StackFrame`].
    pub function: Arc<str>,
    pub file: Arc<str>,
    /// The line that defines the function.
    pub line: i64,
    pub flat_bytes: i64,
    pub cum_bytes: i64,
    /// Allocations whose flat bytes this function holds.
    pub count: i64,
    /// Allocations with this function anywhere on their stack.
    pub cum_count: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct StackFrame {
    /// Shared with the snapshot's function: a stack of a million frames
    /// copies no text.
    pub function: Arc<str>,
    pub file: Arc<str>,
    /// The line executing in this frame.
    pub line: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct StackUsage {
    pub bytes: i64,
    pub count: i64,
    /// Innermost frame first.
    pub frames: StackFrames,
}

/// A stack's frames, innermost first, as the frames of its pprof locations,
/// each location's made once and shared by every stack that has it (see
/// [`crate::model::Stack`]). Compared, ordered and serialised as the one
/// list of frames it stands for.
#[derive(Debug, Clone, Default)]
pub struct StackFrames {
    segments: Arc<[Arc<[StackFrame]>]>,
}

impl StackFrames {
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &StackFrame> + Clone + '_ {
        self.segments.iter().flat_map(|segment| segment.iter())
    }

    pub fn first(&self) -> Option<&StackFrame> {
        self.iter().next()
    }
}

impl PartialEq for StackFrames {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for StackFrames {}

impl PartialOrd for StackFrames {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for StackFrames {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.iter().cmp(other.iter())
    }
}

impl Serialize for StackFrames {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl StackUsage {
    /// The frame the stack's memory is blamed on: the innermost of the
    /// user's code, else the innermost.
    pub fn blamed_frame(&self) -> Option<&StackFrame> {
        self.frames.iter().find(|frame| is_user_code(&frame.file)).or(self.frames.first())
    }
}

pub fn analyze(input: &str, snapshot: &DeviceMemorySnapshot) -> DeviceMemoryReport {
    DeviceMemoryReport {
        input: input.to_string(),
        total_bytes: snapshot.samples.iter().map(|s| s.bytes).sum(),
        total_count: snapshot.samples.iter().map(|s| s.count).sum(),
        size_unknown_count: snapshot.samples.iter().filter(|s| s.size_unknown).map(|s| s.count).sum(),
        devices: devices(&snapshot.samples),
        top_sites: sites(snapshot),
        stacks: stacks(snapshot),
    }
}

fn devices(samples: &[LiveGroup]) -> Vec<DeviceUsage> {
    let mut by_device: BTreeMap<Option<&str>, DeviceUsage> = BTreeMap::new();
    for sample in samples {
        let device = sample.text_label(DEVICE_LABEL);
        let usage = by_device.entry(device).or_insert_with(|| DeviceUsage::new(device.map(str::to_string)));
        let kind = sample.text_label(KIND_LABEL).unwrap_or(UNLABELLED_KIND);
        usage.bytes += sample.bytes;
        usage.count += sample.count;
        *usage.by_kind.entry(kind.to_string()).or_default() += sample.bytes;
        *usage.count_by_kind.entry(kind.to_string()).or_default() += sample.count;
    }
    let (labelled, unlabelled): (Vec<_>, Vec<_>) = by_device.into_values().partition(|d| d.device.is_some());
    labelled.into_iter().chain(unlabelled).collect()
}

/// Bytes and allocations per distinct stack, in [`DeviceMemorySnapshot::stacks`] order.
fn per_stack(snapshot: &DeviceMemorySnapshot) -> Vec<(i64, i64)> {
    let mut totals = vec![(0, 0); snapshot.stacks.len()];
    for sample in &snapshot.samples {
        if let Some((bytes, count)) = totals.get_mut(sample.stack) {
            *bytes += sample.bytes;
            *count += sample.count;
        }
    }
    totals
}

/// Each distinct stack is walked once with its samples' sums, so the work
/// is the stacks' length, not the samples' times it. The snapshot's functions
/// are distinct by name, file and start line, pprof's function granularity,
/// so each is one site.
fn sites(snapshot: &DeviceMemorySnapshot) -> Vec<Site> {
    let mut sites: Vec<Site> = snapshot
        .functions
        .iter()
        .map(|function| Site {
            function: function.name.clone(),
            file: function.file.clone(),
            line: function.start_line,
            flat_bytes: 0,
            cum_bytes: 0,
            count: 0,
            cum_count: 0,
        })
        .collect();
    let user_code: Vec<bool> = snapshot.functions.iter().map(|function| is_user_code(&function.file)).collect();
    // The last stack that counted each site: a recursive function counts once per stack, as in pprof.
    let mut counted_in = vec![usize::MAX; sites.len()];
    for (n, (stack, (bytes, count))) in snapshot.stacks.iter().zip(per_stack(snapshot)).enumerate() {
        let blamed = stack.iter().position(|frame| user_code.get(frame.function) == Some(&true)).unwrap_or(0);
        for (depth, frame) in stack.iter().enumerate() {
            let (Some(site), Some(counted)) = (sites.get_mut(frame.function), counted_in.get_mut(frame.function))
            else {
                continue;
            };
            if depth == blamed {
                site.flat_bytes += bytes;
                site.count += count;
            }
            if *counted != n {
                *counted = n;
                site.cum_bytes += bytes;
                site.cum_count += count;
            }
        }
    }
    sites.sort_unstable_by(|a, b| {
        (b.flat_bytes, b.cum_bytes, b.count, b.cum_count)
            .cmp(&(a.flat_bytes, a.cum_bytes, a.count, a.cum_count))
            .then_with(|| (&a.function, &a.file, a.line).cmp(&(&b.function, &b.file, b.line)))
    });
    sites
}

fn stacks(snapshot: &DeviceMemorySnapshot) -> Vec<StackUsage> {
    // Each location's frames are described once, by the address of the
    // snapshot's shared frames, and shared by the stacks that have them.
    let mut described: HashMap<usize, Arc<[StackFrame]>> = HashMap::new();
    let mut describe = |segment: &Arc<[Frame]>| -> Arc<[StackFrame]> {
        let made = described.entry(segment.as_ptr() as usize).or_insert_with(|| {
            segment
                .iter()
                .filter_map(|frame| {
                    let function = snapshot.functions.get(frame.function)?;
                    Some(StackFrame { function: function.name.clone(), file: function.file.clone(), line: frame.line })
                })
                .collect()
        });
        made.clone()
    };
    let mut stacks: Vec<StackUsage> = snapshot
        .stacks
        .iter()
        .zip(per_stack(snapshot))
        .map(|(stack, (bytes, count))| StackUsage {
            bytes,
            count,
            frames: StackFrames { segments: stack.segments.iter().map(&mut describe).collect() },
        })
        .collect();
    stacks.sort_by(|a, b| (b.bytes, b.count).cmp(&(a.bytes, a.count)).then_with(|| a.frames.cmp(&b.frames)));
    stacks
}

/// The rows a report or chart shows: the `top` largest that hold bytes, and
/// the rest summed (on CPU the rest includes every executable, which holds none).
#[derive(Debug)]
pub struct Largest<'a, T> {
    pub rows: &'a [T],
    pub rest_count: usize,
    pub rest_bytes: i64,
}

/// `items` must be sorted by `bytes`, largest first.
fn largest<T>(items: &[T], bytes: impl Fn(&T) -> i64, top: usize) -> Largest<'_, T> {
    let holding_bytes = items.iter().take_while(|item| bytes(item) > 0).count();
    let (rows, rest) = items.split_at(holding_bytes.min(top));
    Largest { rows, rest_count: rest.len(), rest_bytes: rest.iter().map(bytes).sum() }
}

impl DeviceMemoryReport {
    pub fn heaviest_stacks(&self, top: usize) -> Largest<'_, StackUsage> {
        largest(&self.stacks, |stack| stack.bytes, top)
    }

    /// The functions that allocated bytes themselves, by flat bytes.
    pub fn allocating_sites(&self, top: usize) -> Largest<'_, Site> {
        largest(&self.top_sites, |site| site.flat_bytes, top)
    }
}

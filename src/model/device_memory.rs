//! A snapshot of live device memory: every buffer and loaded executable alive
//! at one instant, grouped by the Python stack that created it, as
//! `jax.profiler.save_device_memory_profile` records it.

use std::sync::Arc;

/// What was alive at the moment of the snapshot. Counts and sizes are
/// non-negative and their sums over all samples fit in an `i64`, so any
/// grouping of them can be summed without overflow.
#[derive(Debug, Clone, Default)]
pub struct DeviceMemorySnapshot {
    pub samples: Vec<LiveGroup>,
    /// Distinct stacks, innermost frame first, referenced by index from
    /// [`LiveGroup::stack`]: a stack shared by many samples is walked once.
    pub stacks: Vec<Stack>,
    /// Distinct functions, by name, file and start line, referenced by index
    /// from [`Frame::function`]: a function's text is stored once however
    /// many frames run in it.
    pub functions: Vec<Function>,
}

/// Allocations that share a stack and labels, and whether their size is
/// known. A profile's samples with the same three are one group: nothing
/// is reported per sample, and a profile may hold millions of samples made
/// from a few stacks and label sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveGroup {
    /// How many allocations the group stands for.
    pub count: i64,
    /// Their bytes together; 0 when [`Self::size_unknown`].
    pub bytes: i64,
    /// The profile does not know their size: jaxlib on TPU (2021) writes
    /// executables with size -1 each.
    pub size_unknown: bool,
    /// Index into [`DeviceMemorySnapshot::stacks`].
    pub stack: usize,
    /// Shared by every group with the same labels.
    pub labels: Arc<[Label]>,
}

impl LiveGroup {
    /// The text value of label `key`, if the group has one.
    pub fn text_label(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|label| &*label.key == key).and_then(|label| match &label.value {
            LabelValue::Text(text) => Some(&**text),
            LabelValue::Number { .. } => None,
        })
    }
}

/// Keys and text values are shared: a profile repeats the same few
/// (`kind`, `device`, `cpu:0`) on every sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub key: Arc<str>,
    pub value: LabelValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelValue {
    Text(Arc<str>),
    Number { value: i64, unit: Option<String> },
}

/// A stack, innermost frame first, as the frames of the pprof locations it
/// is made of, each location's shared by every stack that has it: samples
/// that stack the same locations in many orders (a 358 KB profile of deep
/// inlined locations expanded to 233 MB) hold each location's frames once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stack {
    pub segments: Arc<[Arc<[Frame]>]>,
}

impl Stack {
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Frame> + Clone + '_ {
        self.segments.iter().flat_map(|segment| segment.iter())
    }
}

/// One Python frame: the function and the line being executed in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Index into [`DeviceMemorySnapshot::functions`].
    pub function: usize,
    /// The line executing in this frame.
    pub line: i64,
}

/// A Python function. Names and files are shared: many functions live in
/// one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: Arc<str>,
    pub file: Arc<str>,
    /// The line where the function is defined, which names the function
    /// itself rather than one call inside it.
    pub start_line: i64,
}

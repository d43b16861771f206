//! Comparing two analyses: what grew, what shrank, what appeared and what went
//! away between a baseline and a new run, and whether any CI limit was crossed.
//!
//! Pure functions from two [`Report`]s to a [`Diff`], serialised as
//! `xmem.diff/1`. Each kind of analysis has its own comparison:
//! [`programs`] (compiled XLA modules), [`allocators`] (allocator timelines),
//! [`device_memory`] (JAX device memory profiles) and [`torch_snapshot`]
//! (PyTorch memory snapshots); [`limits`] judges the result.

pub mod allocators;
pub mod device_memory;
pub mod groups;
pub mod limits;
pub mod programs;
pub mod torch_snapshot;

use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use serde::Serialize;

use crate::analysis::Report;
pub use allocators::AllocatorDiff;
pub use device_memory::DeviceMemoryDiff;
pub use limits::{Crossed, Limit, Verdict, Violation};
pub use programs::{BufferDiff, BufferMatch, BufferSide, MatchCounts, MemorySpaceDiff, ModulePair, Pairing, PeakDiff};
pub use torch_snapshot::TorchSnapshotDiff;

pub const DIFF_SCHEMA: &str = "xmem.diff/1";

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub schema: &'static str,
    pub base_inputs: Vec<String>,
    pub new_inputs: Vec<String>,
    pub verdict: Verdict,
    pub limits: Vec<Limit>,
    /// Every limit crossed, one entry per limit and memory space.
    pub violations: Vec<Violation>,
    /// Which peaks the limits left alone for being small in both runs.
    pub min_peak: MinPeak,
    /// One entry per module and memory space, matched or not, largest absolute
    /// change of the peak first.
    pub modules: Vec<MemorySpaceDiff>,
    /// Every module of the baseline paired with one of the new run, and how.
    pub module_pairs: Vec<ModulePair>,
    /// One entry per allocator in either run, largest absolute change of the peak first.
    pub allocators: Vec<AllocatorDiff>,
    /// Live device memory of the two runs, when both inputs are device memory profiles.
    pub device_memory: Vec<DeviceMemoryDiff>,
    /// One entry per device of either run, when both inputs are PyTorch memory snapshots.
    pub torch_snapshots: Vec<TorchSnapshotDiff>,
    /// What the inputs could not tell (a module without buffer assignment), by side.
    pub warnings: Vec<String>,
}

/// How one item (a memory space's peak, a buffer) differs between the runs.
/// Ordered as a table lists changes of equal size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    Grown,
    Shrunk,
    Unchanged,
    /// Only in the new run.
    New,
    /// Only in the baseline.
    Gone,
}

/// A peak in both runs and how it changed: what the limits judge.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PeakDelta {
    pub change: Change,
    pub base_peak_bytes: Option<i64>,
    pub new_peak_bytes: Option<i64>,
    /// New minus base; a run without this peak counts as 0 bytes.
    pub delta_bytes: i64,
    /// `delta_bytes / base_peak_bytes`; null when the baseline has no such peak, or a zero one.
    pub delta_ratio: Option<f64>,
}

impl PeakDelta {
    /// Sizes come from files: a corrupt one saturates the delta rather than overflowing it.
    pub fn between(base_peak_bytes: Option<i64>, new_peak_bytes: Option<i64>) -> Self {
        let delta_bytes = new_peak_bytes.unwrap_or(0).saturating_sub(base_peak_bytes.unwrap_or(0));
        PeakDelta {
            change: Change::of(base_peak_bytes, new_peak_bytes),
            base_peak_bytes,
            new_peak_bytes,
            delta_bytes,
            delta_ratio: base_peak_bytes.filter(|&b| b != 0).map(|b| delta_bytes as f64 / b as f64),
        }
    }

    /// The order tables list peaks in: largest absolute change first.
    fn larger_change_first(&self, other: &Self) -> Ordering {
        other.delta_bytes.unsigned_abs().cmp(&self.delta_bytes.unsigned_abs())
    }
}

impl Change {
    fn of(base: Option<i64>, new: Option<i64>) -> Change {
        match (base, new) {
            (Some(base), Some(new)) => match new.cmp(&base) {
                Ordering::Greater => Change::Grown,
                Ordering::Less => Change::Shrunk,
                Ordering::Equal => Change::Unchanged,
            },
            (None, _) => Change::New,
            (Some(_), None) => Change::Gone,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Change::Grown => "grown",
            Change::Shrunk => "shrunk",
            Change::Unchanged => "unchanged",
            Change::New => "new",
            Change::Gone => "gone",
        }
    }
}

/// Peaks under this are small in any case: helper modules (random-number
/// generation, a broadcast) of a few MiB change by large ratios.
pub const MIN_PEAK_FLOOR_BYTES: i64 = 1 << 20;
/// ... and so are those under this share of the largest peak of either run.
pub const MIN_PEAK_SHARE: f64 = 0.01;

/// Peaks small in both runs, which every row still shows but no limit judges.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MinPeak {
    /// Memory spaces and allocators whose peak is under this in both runs are not judged.
    pub bytes: i64,
    /// Whether `bytes` is the default (1% of the largest peak, at least 1 MiB)
    /// rather than `--min-peak`.
    pub default: bool,
    /// How many memory spaces and allocators that left unjudged.
    pub not_judged: usize,
}

impl MinPeak {
    /// `--min-peak`, or the default for these peaks.
    fn of(min_peak_bytes: Option<u64>, peaks: impl Iterator<Item = i64>) -> Self {
        match min_peak_bytes {
            Some(bytes) => MinPeak { bytes: i64::try_from(bytes).unwrap_or(i64::MAX), default: false, not_judged: 0 },
            None => {
                let largest = peaks.max().unwrap_or(0);
                let share = (largest as f64 * MIN_PEAK_SHARE) as i64;
                MinPeak { bytes: share.max(MIN_PEAK_FLOOR_BYTES), default: true, not_judged: 0 }
            }
        }
    }

    /// Whether the limits judge this peak: it is at least `bytes` in one run.
    pub fn judges(&self, peak: &PeakDelta) -> bool {
        peak.base_peak_bytes.max(peak.new_peak_bytes).is_some_and(|bytes| bytes >= self.bytes)
    }
}

/// Compares `new` against `base` and judges the result against `limits`.
///
/// Memory spaces and allocators whose peak is under `min_peak_bytes` in both
/// runs (by default, 1% of the largest peak and at least 1 MiB) are
/// reported but cross no limit: small helper modules change by large ratios.
pub fn compare(base: &Report, new: &Report, limits: &[Limit], min_peak_bytes: Option<u64>) -> Diff {
    let (modules, module_pairs) = programs::compare(&base.modules, &new.modules);
    let allocators = allocators::compare(&base.allocators, &new.allocators);
    // One input gives at most one device memory profile, so the two sides pair in order.
    let device_memory: Vec<DeviceMemoryDiff> =
        base.device_memory.iter().zip(&new.device_memory).map(|(b, n)| device_memory::compare(b, n)).collect();
    let torch_snapshots = torch_snapshot::compare(&base.torch_snapshots, &new.torch_snapshots);
    let peaks = modules.iter().map(|s| &s.peak.delta).chain(allocators.iter().map(|a| &a.delta));
    let mut min_peak =
        MinPeak::of(min_peak_bytes, peaks.clone().flat_map(|d| [d.base_peak_bytes, d.new_peak_bytes]).flatten());
    min_peak.not_judged = peaks.filter(|peak| !min_peak.judges(peak)).count();
    let violations = limits::check(limits, &min_peak, &modules, &allocators, &device_memory, &torch_snapshots);
    let warnings = side_warnings("base", base).chain(side_warnings("new", new)).collect();
    Diff {
        schema: DIFF_SCHEMA,
        base_inputs: base.inputs.clone(),
        new_inputs: new.inputs.clone(),
        verdict: if violations.is_empty() { Verdict::Pass } else { Verdict::Fail },
        limits: limits.to_vec(),
        violations,
        min_peak,
        modules,
        module_pairs,
        allocators,
        device_memory,
        torch_snapshots,
        warnings,
    }
}

fn side_warnings<'a>(side: &'a str, report: &'a Report) -> impl Iterator<Item = String> + 'a {
    let problems =
        report.modules.iter().filter_map(|m| m.problem.as_ref().map(|p| format!("{}: {}", m.display_name(), p)));
    report.warnings.iter().cloned().chain(problems).map(move |w| format!("{side}: {w}"))
}

/// Items paired between the two runs, and what is left on either side.
#[derive(Debug)]
struct Paired<T> {
    pairs: Vec<(T, T)>,
    base_only: Vec<T>,
    new_only: Vec<T>,
}

impl<T: Copy> Paired<T> {
    /// Pairs items with equal keys, first with first; an item without a key stays unpaired.
    fn by<K: Eq + Hash>(base: Vec<T>, new: Vec<T>, key: impl Fn(&T) -> Option<K>) -> Self {
        let mut waiting: HashMap<K, VecDeque<usize>> = HashMap::new();
        for (i, item) in new.iter().enumerate() {
            if let Some(k) = key(item) {
                waiting.entry(k).or_default().push_back(i);
            }
        }
        let mut taken = vec![false; new.len()];
        let mut pairs = Vec::new();
        let mut base_only = Vec::new();
        for item in base {
            match key(&item).and_then(|k| waiting.get_mut(&k)).and_then(VecDeque::pop_front) {
                Some(i) => {
                    taken[i] = true;
                    pairs.push((item, new[i]));
                }
                None => base_only.push(item),
            }
        }
        let new_only = new.into_iter().zip(taken).filter(|(_, taken)| !taken).map(|(item, _)| item).collect();
        Paired { pairs, base_only, new_only }
    }

    /// Pairs what is left over by a second key, keeping the pairs already made.
    fn then<K: Eq + Hash>(mut self, key: impl Fn(&T) -> Option<K>) -> Self {
        let rest = Paired::by(self.base_only, self.new_only, key);
        self.pairs.extend(rest.pairs);
        Paired { pairs: self.pairs, base_only: rest.base_only, new_only: rest.new_only }
    }

    /// Every item once: pairs, then the baseline's leftovers, then the new run's.
    fn sides(self) -> impl Iterator<Item = (Option<T>, Option<T>)> {
        self.pairs
            .into_iter()
            .map(|(b, n)| (Some(b), Some(n)))
            .chain(self.base_only.into_iter().map(|b| (Some(b), None)))
            .chain(self.new_only.into_iter().map(|n| (None, Some(n))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_equal_keys_in_order_and_keeps_leftovers() {
        let paired = Paired::by(vec![1, 2, 2, 3], vec![2, 4, 2, 1], |x: &i32| Some(*x));
        assert_eq!(paired.pairs, vec![(1, 1), (2, 2), (2, 2)]);
        assert_eq!(paired.base_only, vec![3]);
        assert_eq!(paired.new_only, vec![4]);
    }

    #[test]
    fn a_second_key_pairs_only_the_leftovers() {
        let paired = Paired::by(vec![10, 12], vec![11, 10], |x: &i32| Some(*x)).then(|x: &i32| Some(x / 10));
        assert_eq!(paired.pairs, vec![(10, 10), (12, 11)]);
        assert!(paired.base_only.is_empty() && paired.new_only.is_empty());
    }

    #[test]
    fn items_without_a_key_stay_unpaired() {
        let paired = Paired::by(vec![0, 5], vec![0, 5], |x: &i32| (*x != 0).then_some(*x));
        assert_eq!(paired.pairs, vec![(5, 5)]);
        assert_eq!((paired.base_only, paired.new_only), (vec![0], vec![0]));
    }

    #[test]
    fn change_follows_the_sign_of_the_delta() {
        assert_eq!(Change::of(Some(1), Some(2)), Change::Grown);
        assert_eq!(Change::of(Some(2), Some(1)), Change::Shrunk);
        assert_eq!(Change::of(Some(2), Some(2)), Change::Unchanged);
        assert_eq!(Change::of(None, Some(0)), Change::New);
        assert_eq!(Change::of(Some(0), None), Change::Gone);
    }
}

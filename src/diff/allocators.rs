//! Allocator timelines of two runs, side by side: each allocator's peak (heap
//! plus stack), capacity and fragmentation at the peak.

use serde::Serialize;

use super::{Paired, PeakDelta};
use crate::analysis::AllocatorReport;

#[derive(Debug, Clone, Serialize)]
pub struct AllocatorDiff {
    pub name: String,
    /// The new run's host, or the baseline's for an allocator that is gone.
    pub host: String,
    /// The baseline's host when it has this allocator; it differs from `host`
    /// when the runs were profiled on different machines.
    pub base_host: Option<String>,
    /// Heap plus stack at each run's peak.
    #[serde(flatten)]
    pub delta: PeakDelta,
    pub base_capacity_bytes: Option<i64>,
    pub new_capacity_bytes: Option<i64>,
    /// New minus base; null unless both runs have the allocator.
    pub capacity_delta_bytes: Option<i64>,
    pub base_fragmentation_at_peak: Option<f64>,
    pub new_fragmentation_at_peak: Option<f64>,
    /// New minus base; null unless both runs have the allocator.
    pub fragmentation_delta: Option<f64>,
}

/// Every allocator in either run, largest absolute change of the peak first.
///
/// Allocators pair by host and name; what is left pairs by name alone, since
/// a profile names its host after the machine, and a CI runner's name changes
/// from run to run. Anything still unpaired is new or gone.
pub fn compare(base: &[AllocatorReport], new: &[AllocatorReport]) -> Vec<AllocatorDiff> {
    let paired = Paired::by(base.iter().collect(), new.iter().collect(), |a: &&AllocatorReport| {
        Some((a.host.as_str(), a.name.as_str()))
    })
    .then(|a| Some(a.name.as_str()));
    let mut diffs: Vec<AllocatorDiff> = paired.sides().filter_map(|(b, n)| compare_allocator(b, n)).collect();
    diffs.sort_by(|a, b| {
        a.delta.larger_change_first(&b.delta).then_with(|| a.host.cmp(&b.host)).then_with(|| a.name.cmp(&b.name))
    });
    diffs
}

fn compare_allocator(base: Option<&AllocatorReport>, new: Option<&AllocatorReport>) -> Option<AllocatorDiff> {
    let latest = new.or(base)?;
    let both = base.zip(new);
    Some(AllocatorDiff {
        name: latest.name.clone(),
        host: latest.host.clone(),
        base_host: base.map(|b| b.host.clone()),
        delta: PeakDelta::between(base.map(|b| b.peak_bytes), new.map(|n| n.peak_bytes)),
        base_capacity_bytes: base.map(|b| b.capacity_bytes),
        new_capacity_bytes: new.map(|n| n.capacity_bytes),
        capacity_delta_bytes: both.map(|(b, n)| n.capacity_bytes.saturating_sub(b.capacity_bytes)),
        base_fragmentation_at_peak: base.map(|b| b.fragmentation_at_peak),
        new_fragmentation_at_peak: new.map(|n| n.fragmentation_at_peak),
        fragmentation_delta: both.map(|(b, n)| n.fragmentation_at_peak - b.fragmentation_at_peak),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::analysis;
    use crate::diff::Change;
    use crate::ingest::{self, ReadOptions};

    fn allocators(fixture: &str) -> Vec<AllocatorReport> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles").join(fixture).join("profile");
        let capture = ingest::load(&path, &ReadOptions::default()).expect("the fixture loads");
        analysis::analyze(&[capture]).allocators
    }

    #[test]
    fn allocators_of_one_host_and_name_pair() {
        let (base, new) = (allocators("tf_keras_fit"), allocators("tf_keras_xla"));
        let [diff] = compare(&base, &new).try_into().expect("one allocator in each run, paired");
        assert_eq!((diff.host.as_str(), diff.base_host.as_deref()), ("vm", Some("vm")));
        assert_eq!(diff.delta, PeakDelta::between(Some(base[0].peak_bytes), Some(new[0].peak_bytes)));
        assert_eq!(diff.delta.change, Change::Grown);
        assert_eq!(diff.capacity_delta_bytes, Some(0));
        let fragmentation = new[0].fragmentation_at_peak - base[0].fragmentation_at_peak;
        assert_eq!(diff.fragmentation_delta, Some(fragmentation));
    }

    #[test]
    fn a_run_on_another_machine_pairs_by_name() {
        let base = allocators("tf_keras_fit");
        let mut new = base.clone();
        new[0].host = "ci-runner".into();
        let [diff] = compare(&base, &new).try_into().expect("paired across hosts");
        assert_eq!((diff.host.as_str(), diff.base_host.as_deref()), ("ci-runner", Some("vm")));
        assert_eq!((diff.delta.change, diff.delta.delta_bytes), (Change::Unchanged, 0));
    }

    #[test]
    fn an_allocator_of_another_name_is_new_and_the_old_one_gone() {
        let base = allocators("tf_keras_fit");
        let mut new = base.clone();
        new[0].name = "GPU_0_bfc".into();
        let diffs = compare(&base, &new);
        let sides: Vec<_> = diffs.iter().map(|d| (d.name.as_str(), d.delta.change, d.capacity_delta_bytes)).collect();
        // Equal peaks, so the table keeps host and name order.
        assert_eq!(sides, vec![("GPU_0_bfc", Change::New, None), ("bfc_cpu_allocator_for_gpu", Change::Gone, None)]);
        assert_eq!(diffs[0].delta.delta_bytes, base[0].peak_bytes);
        assert_eq!(diffs[1].delta.delta_bytes, -base[0].peak_bytes);
    }
}

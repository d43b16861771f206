//! Two PyTorch memory snapshots compared, device by device: the peak (what
//! the limits judge), the reserved memory, and what grew at the peak by
//! owner (the user's frame, or the autograd node or library frame when the
//! stack has none). Owners are matched by function, file and line, so the
//! same line of code in two runs lines up whatever it allocated.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Paired, PeakDelta};
use crate::analysis::torch_snapshot::user_frame::Owner;
use crate::analysis::torch_snapshot::TorchSnapshotReport;

/// One device's peak in the two runs: what `--fail-if-peak-grows` and `--fail-if-over` judge.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotPeak {
    pub base_input: Option<String>,
    pub new_input: Option<String>,
    pub device: String,
    #[serde(flatten)]
    pub delta: PeakDelta,
}

#[derive(Debug, Clone, Serialize)]
pub struct TorchSnapshotDiff {
    #[serde(flatten)]
    pub peak: SnapshotPeak,
    pub base_reserved_bytes: Option<i64>,
    pub new_reserved_bytes: Option<i64>,
    pub base_live_at_end_bytes: Option<i64>,
    pub new_live_at_end_bytes: Option<i64>,
    /// Whether each run's trace ends in an out-of-memory failure.
    pub base_oom: bool,
    pub new_oom: bool,
    /// Every owner whose bytes at the peak changed, largest growth first; an
    /// owner in one run only has zeros in the other. Their deltas add up to the peak's.
    pub owners: Vec<OwnerDelta>,
    /// Owners with the same bytes at both peaks.
    pub unchanged_owners: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct OwnerDelta {
    #[serde(flatten)]
    pub owner: Owner,
    pub base_bytes: i64,
    pub new_bytes: i64,
    pub delta_bytes: i64,
    pub base_count: i64,
    pub new_count: i64,
}

/// Every device of either run, paired by device name, largest absolute change of the peak first.
pub fn compare(base: &[TorchSnapshotReport], new: &[TorchSnapshotReport]) -> Vec<TorchSnapshotDiff> {
    let paired =
        Paired::by(base.iter().collect(), new.iter().collect(), |r: &&TorchSnapshotReport| Some(r.device.as_str()));
    let mut diffs: Vec<TorchSnapshotDiff> = paired.sides().filter_map(|(b, n)| compare_device(b, n)).collect();
    diffs.sort_by(|a, b| {
        a.peak.delta.larger_change_first(&b.peak.delta).then_with(|| a.peak.device.cmp(&b.peak.device))
    });
    diffs
}

fn compare_device(base: Option<&TorchSnapshotReport>, new: Option<&TorchSnapshotReport>) -> Option<TorchSnapshotDiff> {
    let device = new.or(base)?.device.clone();
    let mut owners: BTreeMap<&Owner, OwnerDelta> = BTreeMap::new();
    let blank = |owner: &Owner| OwnerDelta {
        owner: owner.clone(),
        base_bytes: 0,
        new_bytes: 0,
        delta_bytes: 0,
        base_count: 0,
        new_count: 0,
    };
    for group in base.iter().flat_map(|b| &b.at_peak_by_user_frame) {
        let row = owners.entry(&group.owner).or_insert_with(|| blank(&group.owner));
        row.base_bytes = group.bytes;
        row.base_count = group.count;
    }
    for group in new.iter().flat_map(|n| &n.at_peak_by_user_frame) {
        let row = owners.entry(&group.owner).or_insert_with(|| blank(&group.owner));
        row.new_bytes = group.bytes;
        row.new_count = group.count;
    }
    let total = owners.len();
    let mut owners: Vec<OwnerDelta> = owners
        .into_values()
        .map(|mut row| {
            row.delta_bytes = row.new_bytes.saturating_sub(row.base_bytes);
            row
        })
        .filter(|row| row.delta_bytes != 0 || row.base_count != row.new_count)
        .collect();
    // A stable sort keeps equal growth in owner order.
    owners.sort_by_key(|row| std::cmp::Reverse(row.delta_bytes));
    Some(TorchSnapshotDiff {
        peak: SnapshotPeak {
            base_input: base.map(|b| b.input.clone()),
            new_input: new.map(|n| n.input.clone()),
            device,
            delta: PeakDelta::between(base.map(|b| b.peak_bytes), new.map(|n| n.peak_bytes)),
        },
        base_reserved_bytes: base.map(|b| b.reserved_bytes),
        new_reserved_bytes: new.map(|n| n.reserved_bytes),
        base_live_at_end_bytes: base.map(|b| b.live_at_end_bytes),
        new_live_at_end_bytes: new.map(|n| n.live_at_end_bytes),
        base_oom: base.is_some_and(|b| b.oom.is_some()),
        new_oom: new.is_some_and(|n| n.oom.is_some()),
        unchanged_owners: total - owners.len(),
        owners,
    })
}

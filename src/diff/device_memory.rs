//! What grew between two device memory snapshots, by device and by stack: a
//! leak check. Stacks are matched by their frames (function, file and line),
//! so the same code path in two runs lines up even when sizes differ.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::device_memory::{DeviceMemoryReport, StackFrames};

#[derive(Debug, Clone, Serialize)]
pub struct DeviceMemoryDiff {
    #[serde(flatten)]
    pub total: LiveDiff,
    /// One row per `device` label on either side, in name order; `null` (executables) last.
    pub devices: Vec<DeviceDelta>,
    /// Every stack holding bytes on either side whose bytes or count
    /// changed, largest growth first; a stack on one side only has zeros on
    /// the other. Their byte deltas add up to `total`'s. Stacks that hold no
    /// bytes on either side (loaded executables) count in `devices` only.
    pub stacks: Vec<StackDelta>,
}

/// Live bytes and allocations of the two snapshots in total: what
/// `--fail-if-peak-grows` and `--fail-if-over` judge.
#[derive(Debug, Clone, Serialize)]
pub struct LiveDiff {
    pub base_input: String,
    pub new_input: String,
    #[serde(flatten)]
    pub delta: Delta,
    /// `delta_bytes / base_bytes`; null when the baseline holds no bytes.
    pub delta_ratio: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Delta {
    pub base_bytes: i64,
    pub new_bytes: i64,
    pub delta_bytes: i64,
    pub base_count: i64,
    pub new_count: i64,
    pub delta_count: i64,
}

impl Delta {
    fn add_base(&mut self, bytes: i64, count: i64) {
        self.base_bytes += bytes;
        self.base_count += count;
        self.settle();
    }

    fn add_new(&mut self, bytes: i64, count: i64) {
        self.new_bytes += bytes;
        self.new_count += count;
        self.settle();
    }

    fn settle(&mut self) {
        self.delta_bytes = self.new_bytes - self.base_bytes;
        self.delta_count = self.new_count - self.base_count;
    }

    pub fn is_unchanged(&self) -> bool {
        self.delta_bytes == 0 && self.delta_count == 0
    }

    /// `0 B → 0 B`: nothing to show beside the bytes that changed.
    pub fn holds_no_bytes(&self) -> bool {
        self.base_bytes == 0 && self.new_bytes == 0
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceDelta {
    pub device: Option<String>,
    #[serde(flatten)]
    pub delta: Delta,
}

#[derive(Debug, Clone, Serialize)]
pub struct StackDelta {
    #[serde(flatten)]
    pub delta: Delta,
    /// Innermost frame first.
    pub frames: StackFrames,
}

/// Compares two snapshots. Sizes in a snapshot are non-negative and sum to
/// an `i64`, so no sum or difference here can overflow.
pub fn compare(base: &DeviceMemoryReport, new: &DeviceMemoryReport) -> DeviceMemoryDiff {
    let mut total = Delta::default();
    total.add_base(base.total_bytes, base.total_count);
    total.add_new(new.total_bytes, new.total_count);

    let mut devices: BTreeMap<(bool, Option<&str>), Delta> = BTreeMap::new();
    for device in &base.devices {
        devices.entry(device_order(&device.device)).or_default().add_base(device.bytes, device.count);
    }
    for device in &new.devices {
        devices.entry(device_order(&device.device)).or_default().add_new(device.bytes, device.count);
    }

    let mut stacks: BTreeMap<&StackFrames, Delta> = BTreeMap::new();
    for stack in &base.stacks {
        stacks.entry(&stack.frames).or_default().add_base(stack.bytes, stack.count);
    }
    for stack in &new.stacks {
        stacks.entry(&stack.frames).or_default().add_new(stack.bytes, stack.count);
    }
    let mut stacks: Vec<StackDelta> = stacks
        .into_iter()
        .filter(|(_, delta)| !delta.is_unchanged() && !delta.holds_no_bytes())
        .map(|(frames, delta)| StackDelta { delta, frames: frames.clone() })
        .collect();
    // A stable sort keeps equal growth in frame order.
    stacks.sort_by_key(|s| std::cmp::Reverse((s.delta.delta_bytes, s.delta.delta_count)));

    DeviceMemoryDiff {
        total: LiveDiff {
            base_input: base.input.clone(),
            new_input: new.input.clone(),
            delta: total,
            delta_ratio: Some(total.base_bytes).filter(|&b| b != 0).map(|b| total.delta_bytes as f64 / b as f64),
        },
        devices: devices
            .into_iter()
            .map(|((_, device), delta)| DeviceDelta { device: device.map(str::to_string), delta })
            .collect(),
        stacks,
    }
}

/// Named devices first, in name order, then the row of samples without a device.
fn device_order(device: &Option<String>) -> (bool, Option<&str>) {
    (device.is_none(), device.as_deref())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::analysis::device_memory;
    use crate::ingest::{self, ReadOptions};

    fn fixture(workload: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pprof").join(workload);
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.extension().is_some_and(|e| e == "prof"))
            .unwrap()
    }

    fn analyse(path: &Path) -> DeviceMemoryReport {
        let capture = ingest::load(path, &ReadOptions::default()).unwrap();
        device_memory::analyze(&capture.input, capture.device_memory.as_ref().unwrap())
    }

    /// `live_bytes` that the workload read from `jax.live_arrays()` when it saved the profile.
    fn live_bytes(workload: &str) -> i64 {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pprof").join(workload);
        let analysis: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("memory_analysis.json")).unwrap()).unwrap();
        let profiles = analysis["device_memory_profiles"].as_object().unwrap();
        assert_eq!(profiles.len(), 1);
        profiles.values().next().unwrap()["live_bytes"].as_i64().unwrap()
    }

    #[test]
    fn a_snapshot_against_itself_has_no_growth() {
        for workload in ["mlp_train", "donation", "big_model"] {
            let report = analyse(&fixture(workload));
            let diff = compare(&report, &report);
            assert_eq!(diff.total.delta.delta_bytes, 0, "{workload}");
            assert_eq!(diff.total.delta.delta_count, 0, "{workload}");
            assert_eq!(diff.total.delta.new_bytes, live_bytes(workload), "{workload}");
            assert!(diff.stacks.is_empty(), "{workload}: {:?}", diff.stacks);
            assert!(diff.devices.iter().all(|d| d.delta.is_unchanged()), "{workload}");
        }
    }

    #[test]
    fn growth_between_two_runs_is_the_difference_of_their_totals() {
        let (base, new) = (analyse(&fixture("pair_base")), analyse(&fixture("pair_new")));
        let diff = compare(&base, &new);
        let growth = live_bytes("pair_new") - live_bytes("pair_base");
        assert_eq!(growth, 23_146_496);
        assert_eq!(diff.total.delta.delta_bytes, growth);
        assert_eq!(diff.stacks.iter().map(|s| s.delta.delta_bytes).sum::<i64>(), growth);
        assert_eq!(diff.devices.iter().map(|d| d.delta.delta_bytes).sum::<i64>(), growth);
        // Width 1024 → 1536 grows the parameters and optimiser state returned by the
        // training step, all created at one line of the script; nothing else changed.
        let [grown] = diff.stacks.as_slice() else { panic!("expected one changed stack: {:?}", diff.stacks) };
        assert_eq!(grown.delta.delta_count, 0);
        let outermost = grown.frames.iter().next_back().unwrap();
        assert_eq!(
            (&*outermost.function, &*outermost.file, outermost.line),
            ("<module>", "/home/user/models/wl_pair_mlp.py", 56)
        );
    }

    #[test]
    fn reversed_runs_shrink_by_the_same_amount() {
        let (base, new) = (analyse(&fixture("pair_base")), analyse(&fixture("pair_new")));
        let forward = compare(&base, &new);
        let backward = compare(&new, &base);
        assert_eq!(backward.total.delta.delta_bytes, -forward.total.delta.delta_bytes);
        assert_eq!(backward.stacks.len(), forward.stacks.len());
    }
}

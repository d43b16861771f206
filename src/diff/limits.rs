//! The CI gate: `--fail-if-peak-grows` and `--fail-if-over`, judged on every
//! memory space and allocator the comparison kept, on the live bytes of
//! every pair of device memory profiles, and on the peak of every device of
//! two PyTorch memory snapshots.

use serde::Serialize;

use super::allocators::AllocatorDiff;
use super::device_memory::{DeviceMemoryDiff, LiveDiff};
use super::programs::{MemorySpaceDiff, PeakDiff};
use super::torch_snapshot::{SnapshotPeak, TorchSnapshotDiff};
use super::{MinPeak, PeakDelta};
use crate::units::Growth;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Limit {
    /// `--fail-if-peak-grows 5%`: growth relative to the baseline's peak, as a fraction.
    PeakGrowthRatio { ratio: f64 },
    /// `--fail-if-peak-grows 64MiB`.
    PeakGrowthBytes { bytes: u64 },
    /// `--fail-if-over 15GiB`: a ceiling on every peak of the new run, allocators' included.
    PeakOver { bytes: u64 },
}

impl From<Growth> for Limit {
    fn from(growth: Growth) -> Self {
        match growth {
            Growth::Ratio(ratio) => Limit::PeakGrowthRatio { ratio },
            Growth::Bytes(bytes) => Limit::PeakGrowthBytes { bytes },
        }
    }
}

impl Limit {
    /// A peak that only the new run has (a module compiled for the first
    /// time, or renamed; an allocator first used) grew from nothing: it
    /// crosses a size limit when it is above it and any percentage limit
    /// unless it is zero, so it cannot slip past a growth limit unseen. A
    /// peak that went away never crosses a growth limit.
    fn crossed_by(self, peak: &PeakDelta) -> bool {
        self.crossed(peak.new_peak_bytes, peak.delta_bytes, peak.delta_ratio)
    }

    /// Live bytes are judged as a peak: the limit applies to their total.
    fn crossed_by_live(self, live: &LiveDiff) -> bool {
        self.crossed(Some(live.delta.new_bytes), live.delta.delta_bytes, live.delta_ratio)
    }

    fn crossed(self, new_bytes: Option<i64>, delta_bytes: i64, delta_ratio: Option<f64>) -> bool {
        match self {
            Limit::PeakGrowthRatio { ratio } => delta_ratio.map_or(delta_bytes > 0, |r| r > ratio),
            Limit::PeakGrowthBytes { bytes } => u64::try_from(delta_bytes).is_ok_and(|delta| delta > bytes),
            Limit::PeakOver { bytes } => {
                new_bytes.and_then(|new| u64::try_from(new).ok()).is_some_and(|new| new > bytes)
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
}

/// A limit crossed by one memory space's or allocator's peak, or one device memory profile's live bytes.
#[derive(Debug, Clone, Serialize)]
pub struct Violation {
    pub limit: Limit,
    #[serde(flatten)]
    pub crossed: Crossed,
}

/// What crossed a limit; the JSON holds its fields beside `limit`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Crossed {
    Peak(PeakDiff),
    AllocatorPeak(AllocatorDiff),
    LiveBytes(LiveDiff),
    SnapshotPeak(SnapshotPeak),
}

/// Every limit crossed, limit by limit, in the order of `spaces`, then of
/// `allocators`, then of `device_memory`, then of `snapshots`; peaks
/// `min_peak` leaves alone cross none.
pub fn check(
    limits: &[Limit],
    min_peak: &MinPeak,
    spaces: &[MemorySpaceDiff],
    allocators: &[AllocatorDiff],
    device_memory: &[DeviceMemoryDiff],
    snapshots: &[TorchSnapshotDiff],
) -> Vec<Violation> {
    limits
        .iter()
        .flat_map(|&limit| {
            let peaks = spaces
                .iter()
                .filter(move |s| min_peak.judges(&s.peak.delta) && limit.crossed_by(&s.peak.delta))
                .map(move |s| Violation { limit, crossed: Crossed::Peak(s.peak.clone()) });
            let allocators = allocators
                .iter()
                .filter(move |a| min_peak.judges(&a.delta) && limit.crossed_by(&a.delta))
                .map(move |a| Violation { limit, crossed: Crossed::AllocatorPeak(a.clone()) });
            let live = device_memory
                .iter()
                .filter(move |d| limit.crossed_by_live(&d.total))
                .map(move |d| Violation { limit, crossed: Crossed::LiveBytes(d.total.clone()) });
            let snapshots = snapshots
                .iter()
                .filter(move |s| limit.crossed_by(&s.peak.delta))
                .map(move |s| Violation { limit, crossed: Crossed::SnapshotPeak(s.peak.clone()) });
            peaks.chain(allocators).chain(live).chain(snapshots)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_limits_are_strict_upper_bounds() {
        let grown = PeakDelta::between(Some(1000), Some(1100));
        assert!(Limit::PeakGrowthRatio { ratio: 0.09 }.crossed_by(&grown));
        assert!(!Limit::PeakGrowthRatio { ratio: 0.1 }.crossed_by(&grown));
        assert!(Limit::PeakGrowthBytes { bytes: 99 }.crossed_by(&grown));
        assert!(!Limit::PeakGrowthBytes { bytes: 100 }.crossed_by(&grown));
        assert!(Limit::PeakOver { bytes: 1099 }.crossed_by(&grown));
        assert!(!Limit::PeakOver { bytes: 1100 }.crossed_by(&grown));
    }

    #[test]
    fn a_peak_only_in_the_new_run_grew_from_nothing() {
        let new = PeakDelta::between(None, Some(4096));
        assert!(Limit::PeakGrowthRatio { ratio: 1000.0 }.crossed_by(&new));
        assert!(Limit::PeakGrowthBytes { bytes: 4095 }.crossed_by(&new));
        assert!(!Limit::PeakGrowthBytes { bytes: 4096 }.crossed_by(&new));
        assert!(!Limit::PeakGrowthRatio { ratio: 0.0 }.crossed_by(&PeakDelta::between(None, Some(0))));
        assert!(Limit::PeakGrowthRatio { ratio: 0.0 }.crossed_by(&PeakDelta::between(Some(0), Some(1))));
    }

    #[test]
    fn a_peak_that_went_away_crosses_no_limit() {
        let gone = PeakDelta::between(Some(1 << 30), None);
        for limit in
            [Limit::PeakGrowthRatio { ratio: 0.0 }, Limit::PeakGrowthBytes { bytes: 0 }, Limit::PeakOver { bytes: 0 }]
        {
            assert!(!limit.crossed_by(&gone), "{limit:?}");
        }
    }
}

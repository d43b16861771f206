//! The CI gate: `--fail-if-peak-grows` and `--fail-if-over`, judged on every
//! memory space the comparison kept and on the live bytes of every pair of
//! device memory profiles.

use serde::Serialize;

use super::device_memory::{DeviceMemoryDiff, LiveDiff};
use super::programs::{MemorySpaceDiff, PeakDiff};
use crate::units::Growth;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Limit {
    /// `--fail-if-peak-grows 5%`: growth relative to the baseline's peak, as a fraction.
    PeakGrowthRatio { ratio: f64 },
    /// `--fail-if-peak-grows 64MiB`.
    PeakGrowthBytes { bytes: u64 },
    /// `--fail-if-over 15GiB`: a ceiling on every peak of the new run.
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
    /// A memory space that only the new run has (a module compiled for the
    /// first time, or renamed) grew from nothing: it crosses a size limit when
    /// its peak is above it and any percentage limit unless its peak is zero,
    /// so it cannot slip past a growth limit unseen. A memory space that went
    /// away never crosses a growth limit.
    fn crossed_by(self, peak: &PeakDiff) -> bool {
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

/// A limit crossed by one memory space's peak or one device memory profile's live bytes.
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
    LiveBytes(LiveDiff),
}

/// Every limit crossed, limit by limit, in the order of `spaces`, then of `device_memory`.
pub fn check(limits: &[Limit], spaces: &[MemorySpaceDiff], device_memory: &[DeviceMemoryDiff]) -> Vec<Violation> {
    limits
        .iter()
        .flat_map(|&limit| {
            let peaks = spaces
                .iter()
                .filter(move |s| limit.crossed_by(&s.peak))
                .map(move |s| Violation { limit, crossed: Crossed::Peak(s.peak.clone()) });
            let live = device_memory
                .iter()
                .filter(move |d| limit.crossed_by_live(&d.total))
                .map(move |d| Violation { limit, crossed: Crossed::LiveBytes(d.total.clone()) });
            peaks.chain(live)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Change;

    fn peak(base: Option<i64>, new: Option<i64>) -> PeakDiff {
        let delta_bytes = new.unwrap_or(0) - base.unwrap_or(0);
        PeakDiff {
            name: "jit_step".into(),
            base_program_id: base.map(|_| 1),
            new_program_id: new.map(|_| 1),
            color: 0,
            memory_space: "hbm".into(),
            trace_index: Some(0),
            change: Change::of(base, new),
            base_peak_bytes: base,
            new_peak_bytes: new,
            delta_bytes,
            delta_ratio: base.filter(|&b| b != 0).map(|b| delta_bytes as f64 / b as f64),
        }
    }

    #[test]
    fn growth_limits_are_strict_upper_bounds() {
        let grown = peak(Some(1000), Some(1100));
        assert!(Limit::PeakGrowthRatio { ratio: 0.09 }.crossed_by(&grown));
        assert!(!Limit::PeakGrowthRatio { ratio: 0.1 }.crossed_by(&grown));
        assert!(Limit::PeakGrowthBytes { bytes: 99 }.crossed_by(&grown));
        assert!(!Limit::PeakGrowthBytes { bytes: 100 }.crossed_by(&grown));
        assert!(Limit::PeakOver { bytes: 1099 }.crossed_by(&grown));
        assert!(!Limit::PeakOver { bytes: 1100 }.crossed_by(&grown));
    }

    #[test]
    fn a_memory_space_only_in_the_new_run_grew_from_nothing() {
        let new = peak(None, Some(4096));
        assert!(Limit::PeakGrowthRatio { ratio: 1000.0 }.crossed_by(&new));
        assert!(Limit::PeakGrowthBytes { bytes: 4095 }.crossed_by(&new));
        assert!(!Limit::PeakGrowthBytes { bytes: 4096 }.crossed_by(&new));
        assert!(!Limit::PeakGrowthRatio { ratio: 0.0 }.crossed_by(&peak(None, Some(0))));
        assert!(Limit::PeakGrowthRatio { ratio: 0.0 }.crossed_by(&peak(Some(0), Some(1))));
    }

    #[test]
    fn a_memory_space_that_went_away_crosses_no_limit() {
        let gone = peak(Some(1 << 30), None);
        for limit in
            [Limit::PeakGrowthRatio { ratio: 0.0 }, Limit::PeakGrowthBytes { bytes: 0 }, Limit::PeakOver { bytes: 0 }]
        {
            assert!(!limit.crossed_by(&gone), "{limit:?}");
        }
    }
}

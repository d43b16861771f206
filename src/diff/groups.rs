//! A peak's change grouped as the report groups a peak: by source line, op
//! name and category, so "+44.6 MiB from model.py:40" comes before the
//! per-buffer list.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::attribution::Group;
use crate::analysis::MemorySpaceReport;

/// One group's bytes at the peak in both runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupDelta {
    pub key: String,
    pub base_bytes: i64,
    pub new_bytes: i64,
    pub delta_bytes: i64,
}

/// The groups whose bytes changed, largest absolute change first.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GroupChanges {
    pub by_source: Vec<GroupDelta>,
    pub by_op_name: Vec<GroupDelta>,
    pub by_category: Vec<GroupDelta>,
}

impl GroupChanges {
    pub fn between(base: Option<&MemorySpaceReport>, new: Option<&MemorySpaceReport>) -> Self {
        let groups =
            |space: Option<&MemorySpaceReport>| space.map(|s| s.attribution.at_peak_groups.clone()).unwrap_or_default();
        let (base, new) = (groups(base), groups(new));
        GroupChanges {
            by_source: changes(&base.by_source, &new.by_source),
            by_op_name: changes(&base.by_op_name, &new.by_op_name),
            by_category: changes(&base.by_category, &new.by_category),
        }
    }
}

fn changes(base: &[Group], new: &[Group]) -> Vec<GroupDelta> {
    let mut by_key: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for group in base {
        by_key.entry(&group.key).or_default().0 = group.bytes;
    }
    for group in new {
        by_key.entry(&group.key).or_default().1 = group.bytes;
    }
    let mut deltas: Vec<GroupDelta> = by_key
        .into_iter()
        .filter(|(_, (b, n))| b != n)
        .map(|(key, (base_bytes, new_bytes))| GroupDelta {
            key: key.to_string(),
            base_bytes,
            new_bytes,
            delta_bytes: new_bytes.saturating_sub(base_bytes),
        })
        .collect();
    deltas.sort_by(|a, b| {
        b.delta_bytes.unsigned_abs().cmp(&a.delta_bytes.unsigned_abs()).then_with(|| a.key.cmp(&b.key))
    });
    deltas
}

//! A peak's change grouped as the report groups a peak: by source line, op
//! name and category, so "+44.6 MiB from model.py:40" comes before the
//! per-buffer list.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::analysis::attribution::{Group, NO_SOURCE};
use crate::analysis::MemorySpaceReport;

/// One group's bytes at the peak in both runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupDelta {
    pub key: String,
    pub base_bytes: i64,
    pub new_bytes: i64,
    pub delta_bytes: i64,
    /// For a source line: the op name whose bytes there changed most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op_name: Option<String>,
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
        let mut by_source = changes(&groups(base).by_source, &groups(new).by_source);
        let ops = largest_op_changes(base, new);
        for delta in &mut by_source {
            delta.op_name = ops.get(delta.key.as_str()).cloned();
        }
        GroupChanges {
            by_source,
            by_op_name: changes(&groups(base).by_op_name, &groups(new).by_op_name),
            by_category: changes(&groups(base).by_category, &groups(new).by_category),
        }
    }
}

/// Per source line, the op name whose bytes at the peak changed most there.
fn largest_op_changes(base: Option<&MemorySpaceReport>, new: Option<&MemorySpaceReport>) -> HashMap<String, String> {
    let mut by_pair: BTreeMap<(&str, &str), i64> = BTreeMap::new();
    for (space, sign) in [(base, -1i64), (new, 1)] {
        for buffer in space.map(|s| &s.at_peak[..]).unwrap_or_default() {
            let key = (buffer.source.as_deref().unwrap_or(NO_SOURCE), &*buffer.op_name);
            let delta = by_pair.entry(key).or_default();
            *delta = delta.saturating_add(sign.saturating_mul(buffer.size_bytes));
        }
    }
    let mut largest: HashMap<String, (String, i64)> = HashMap::new();
    // Buffers without a source line are of every kind: no one op stands for them.
    let named = by_pair.into_iter().filter(|((source, op), d)| *d != 0 && !op.is_empty() && *source != NO_SOURCE);
    for ((source, op), delta) in named {
        let entry = largest.entry(source.to_string()).or_insert_with(|| (op.to_string(), delta));
        if delta.unsigned_abs() > entry.1.unsigned_abs() {
            *entry = (op.to_string(), delta);
        }
    }
    largest.into_iter().map(|(source, (op, _))| (source, op)).collect()
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
            op_name: None,
        })
        .collect();
    deltas.sort_by(|a, b| {
        b.delta_bytes.unsigned_abs().cmp(&a.delta_bytes.unsigned_abs()).then_with(|| a.key.cmp(&b.key))
    });
    deltas
}

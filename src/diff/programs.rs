//! Compiled XLA modules of two runs, side by side: modules matched by name,
//! their memory spaces by colour and heap trace, and the buffers live at each
//! peak by instruction.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Change, Paired, PeakDelta};
use crate::analysis::{BufferAtPeak, Category, MemorySpaceReport, ModuleReport};

/// One memory space's peak in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct PeakDiff {
    /// The module name without its program id, which differs between runs.
    pub name: String,
    pub base_program_id: Option<u64>,
    pub new_program_id: Option<u64>,
    pub color: i64,
    pub memory_space: String,
    pub trace_index: Option<usize>,
    #[serde(flatten)]
    pub delta: PeakDelta,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemorySpaceDiff {
    #[serde(flatten)]
    pub peak: PeakDiff,
    /// Buffers at the peak that grew, shrank, appeared or went away, largest
    /// absolute delta first.
    pub buffers: Vec<BufferDiff>,
    /// Buffers at the peak found in both runs with the same size.
    pub unchanged_buffers: usize,
    /// The change of the peak by source line, op name and category.
    pub groups: super::groups::GroupChanges,
}

#[derive(Debug, Clone, Serialize)]
pub struct BufferDiff {
    /// The new run's instruction, or the baseline's for a buffer that is gone.
    pub instruction: String,
    pub change: Change,
    pub base_bytes: Option<i64>,
    pub new_bytes: Option<i64>,
    pub delta_bytes: i64,
    pub base: Option<BufferSide>,
    pub new: Option<BufferSide>,
}

/// A buffer as one run has it.
#[derive(Debug, Clone, Serialize)]
pub struct BufferSide {
    pub instruction: String,
    pub shape: String,
    pub op_name: String,
    pub category: Category,
}

/// Every memory space of every module in either run, largest absolute change
/// of the peak first.
pub fn compare(base: &[ModuleReport], new: &[ModuleReport]) -> Vec<MemorySpaceDiff> {
    let mut diffs: Vec<MemorySpaceDiff> =
        match_modules(base, new).into_iter().flat_map(|(b, n)| compare_module(b, n)).collect();
    diffs.sort_by(|a, b| {
        let (a, b) = (&a.peak, &b.peak);
        a.delta
            .larger_change_first(&b.delta)
            .then_with(|| a.name.cmp(&b.name))
            .then(a.new_program_id.or(a.base_program_id).cmp(&b.new_program_id.or(b.base_program_id)))
            .then(a.color.cmp(&b.color))
            .then(a.trace_index.cmp(&b.trace_index))
    });
    diffs
}

type Sides<'a, T> = (Option<&'a T>, Option<&'a T>);

/// Modules pair by name. Several modules with one name (`jit__normal` is
/// compiled once per shape) pair in compile order when both runs have as many;
/// otherwise those with the same entry signature pair first and the rest in
/// compile order.
fn match_modules<'a>(base: &'a [ModuleReport], new: &'a [ModuleReport]) -> Vec<Sides<'a, ModuleReport>> {
    type Group<'a> = (Vec<&'a ModuleReport>, Vec<&'a ModuleReport>);
    let mut by_name: BTreeMap<&str, Group<'a>> = BTreeMap::new();
    for module in base {
        by_name.entry(&module.name).or_default().0.push(module);
    }
    for module in new {
        by_name.entry(&module.name).or_default().1.push(module);
    }
    by_name
        .into_values()
        .flat_map(|(mut base, mut new)| {
            base.sort_by_key(|m| compile_order(m));
            new.sort_by_key(|m| compile_order(m));
            let paired = if base.len() == new.len() {
                Paired::by(base, new, |_| Some(()))
            } else {
                Paired::by(base, new, |m| Some(m.entry_signature.as_str())).then(|_| Some(()))
            };
            paired.sides()
        })
        .collect()
}

/// Program ids grow as a process compiles; a module without one goes last.
fn compile_order(module: &ModuleReport) -> u64 {
    module.program_id.unwrap_or(u64::MAX)
}

fn compare_module(base: Option<&ModuleReport>, new: Option<&ModuleReport>) -> Vec<MemorySpaceDiff> {
    let Some(name) = new.or(base).map(|m| m.name.as_str()) else { return Vec::new() };
    let (base_program_id, new_program_id) = (base.and_then(|m| m.program_id), new.and_then(|m| m.program_id));
    Paired::by(memory_spaces(base), memory_spaces(new), |s: &&MemorySpaceReport| Some((s.color, s.trace_index)))
        .sides()
        .filter_map(|(b, n)| {
            let space = n.or(b)?;
            let (buffers, unchanged_buffers) = compare_buffers(
                b.map(|s| &s.at_peak[..]).unwrap_or_default(),
                n.map(|s| &s.at_peak[..]).unwrap_or_default(),
            );
            Some(MemorySpaceDiff {
                peak: PeakDiff {
                    name: name.to_string(),
                    base_program_id,
                    new_program_id,
                    color: space.color,
                    memory_space: space.name.clone(),
                    trace_index: space.trace_index,
                    delta: PeakDelta::between(b.map(|s| s.peak_bytes), n.map(|s| s.peak_bytes)),
                },
                buffers,
                unchanged_buffers,
                groups: super::groups::GroupChanges::between(b, n),
            })
        })
        .collect()
}

fn memory_spaces(module: Option<&ModuleReport>) -> Vec<&MemorySpaceReport> {
    module.map(|m| m.memory_spaces.iter().collect()).unwrap_or_default()
}

/// Buffers pair by instruction name, then, for what is left, by op name and
/// shape together, so an instruction the compiler renamed (`fusion.3` became
/// `fusion.4`) is not reported as gone and new. A buffer without an op name
/// cannot be told apart that way.
fn compare_buffers(base: &[BufferAtPeak], new: &[BufferAtPeak]) -> (Vec<BufferDiff>, usize) {
    let paired =
        Paired::by(base.iter().collect(), new.iter().collect(), |b: &&BufferAtPeak| Some(b.instruction.as_str()))
            .then(|b| (!b.op_name.is_empty()).then_some((b.op_name.as_str(), b.shape.as_str())));
    let mut unchanged = 0;
    let mut changed = Vec::new();
    for (b, n) in paired.sides() {
        let change = Change::of(b.map(|b| b.size_bytes), n.map(|n| n.size_bytes));
        if change == Change::Unchanged {
            unchanged += 1;
            continue;
        }
        let Some(latest) = n.or(b) else { continue };
        changed.push(BufferDiff {
            instruction: latest.instruction.clone(),
            change,
            base_bytes: b.map(|b| b.size_bytes),
            new_bytes: n.map(|n| n.size_bytes),
            delta_bytes: n.map_or(0, |n| n.size_bytes) - b.map_or(0, |b| b.size_bytes),
            base: b.map(side),
            new: n.map(side),
        });
    }
    changed.sort_by(|a, b| {
        b.delta_bytes
            .unsigned_abs()
            .cmp(&a.delta_bytes.unsigned_abs())
            .then(a.change.cmp(&b.change))
            .then_with(|| a.instruction.cmp(&b.instruction))
    });
    (changed, unchanged)
}

fn side(buffer: &BufferAtPeak) -> BufferSide {
    BufferSide {
        instruction: buffer.instruction.clone(),
        shape: buffer.shape.clone(),
        op_name: buffer.op_name.clone(),
        category: buffer.category,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::analysis::{self, Report};
    use crate::ingest::{self, ReadOptions};

    fn report(fixture: &str) -> Report {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles").join(fixture);
        let capture = ingest::load(&path, &ReadOptions::default()).expect("the fixture loads");
        analysis::analyze(&[capture])
    }

    fn pairs_of<'a>(name: &str, base: &'a [ModuleReport], new: &'a [ModuleReport]) -> Vec<(Option<u64>, Option<u64>)> {
        let mut pairs: Vec<_> = match_modules(base, new)
            .into_iter()
            .filter(|(b, n)| n.or(*b).is_some_and(|m| m.name == name))
            .map(|(b, n)| (b.and_then(|m| m.program_id), n.and_then(|m| m.program_id)))
            .collect();
        pairs.sort();
        pairs
    }

    #[test]
    fn modules_of_one_name_pair_in_compile_order_when_both_runs_have_as_many() {
        // pair_base and pair_new compile jit__normal four times each, at other widths.
        let (base, new) = (report("pair_base/profile"), report("pair_new/profile"));
        assert_eq!(
            pairs_of("jit__normal", &base.modules, &new.modules),
            vec![(Some(8), Some(8)), (Some(16), Some(16)), (Some(20), Some(20)), (Some(36), Some(36))]
        );
    }

    #[test]
    fn modules_of_one_name_pair_by_entry_signature_when_the_counts_differ() {
        // Without jit__normal(16) in the new run, compile order alone would pair 16 with 20 and 20 with 36.
        let base = report("pair_base/profile");
        let new: Vec<ModuleReport> =
            base.modules.iter().filter(|m| !(m.name == "jit__normal" && m.program_id == Some(16))).cloned().collect();
        assert_eq!(
            pairs_of("jit__normal", &base.modules, &new),
            vec![(Some(8), Some(8)), (Some(16), None), (Some(20), Some(20)), (Some(36), Some(36))]
        );
    }

    #[test]
    fn a_renamed_instruction_pairs_by_op_name_and_shape() {
        let base = report("pair_base/xla_dump").modules.remove(0).memory_spaces.remove(0).at_peak;
        let mut new = base.clone();
        let renamed = new.iter_mut().find(|b| b.instruction == "dot.1").expect("dot.1 is live at the peak");
        renamed.instruction = "dot.7".into();
        let without_op_name = new.iter_mut().find(|b| b.op_name.is_empty()).expect("a buffer without op name");
        let gone = without_op_name.instruction.clone();
        without_op_name.instruction.push_str(".renamed");

        let (changed, unchanged) = compare_buffers(&base, &new);
        assert_eq!(unchanged, base.len() - 1, "dot.1 → dot.7 pairs with itself; the unnamed one does not");
        let kinds: Vec<_> = changed.iter().map(|b| (b.change, b.instruction.as_str())).collect();
        assert_eq!(kinds.len(), 2);
        assert!(kinds.contains(&(Change::Gone, gone.as_str())), "{kinds:?}");
        assert!(kinds.contains(&(Change::New, format!("{gone}.renamed").as_str())), "{kinds:?}");
    }
}

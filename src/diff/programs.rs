//! Compiled XLA modules of two runs, side by side: modules matched by name
//! (or, when a framework numbers its graphs, by role), their memory spaces by
//! colour and heap trace, and the buffers live at each peak by instruction.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::{Change, Paired, PeakDelta};
use crate::analysis::{BufferAtPeak, Category, MemorySpaceReport, ModuleReport};

/// One memory space's peak in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct PeakDiff {
    /// The module name without its program id, which differs between runs.
    pub name: String,
    /// Each run's module name; they differ when the modules paired by role.
    pub base_name: Option<String>,
    pub new_name: Option<String>,
    pub base_program_id: Option<u64>,
    pub new_program_id: Option<u64>,
    /// How the two modules were paired; null for a module of one run only.
    pub paired_by: Option<Pairing>,
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

/// How a module of the baseline was paired with one of the new run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pairing {
    /// The only module of its name in both runs.
    Name,
    /// Several modules of one name (`jit__normal` per shape), as many in both runs: in compile order.
    NameCompileOrder,
    /// Several modules of one name: the same entry signature.
    NameEntrySignature,
    /// Names that differ only in the number the framework gives each graph
    /// (PyTorch/XLA's `SyncTensorsGraph.3422`, TensorFlow's `a_inference_f_12__.34`):
    /// the same entry signature.
    SuffixEntrySignature,
    /// Names that differ only in that number: the n-th compiled of the family in each run.
    SuffixCompileOrder,
}

impl Pairing {
    pub fn describe(self) -> &'static str {
        match self {
            Pairing::Name => "same name",
            Pairing::NameCompileOrder => "same name, in compile order",
            Pairing::NameEntrySignature => "same name and entry signature",
            Pairing::SuffixEntrySignature => "names differ only in the graph number; same entry signature",
            Pairing::SuffixCompileOrder => "names differ only in the graph number; in compile order",
        }
    }
}

/// Two modules paired across the runs.
#[derive(Debug, Clone, Serialize)]
pub struct ModulePair {
    /// `name(program_id)` in the baseline and in the new run.
    pub base: String,
    pub new: String,
    pub paired_by: Pairing,
}

/// Every memory space of every module in either run, largest absolute change
/// of the peak first, and every pair of modules with how it was made.
pub fn compare(base: &[ModuleReport], new: &[ModuleReport]) -> (Vec<MemorySpaceDiff>, Vec<ModulePair>) {
    let matched = match_modules(base, new);
    let pairs = matched
        .iter()
        .filter_map(|&(b, n, pairing)| {
            Some(ModulePair { base: b?.display_name(), new: n?.display_name(), paired_by: pairing? })
        })
        .collect();
    let mut diffs: Vec<MemorySpaceDiff> =
        matched.into_iter().flat_map(|(b, n, pairing)| compare_module(b, n, pairing)).collect();
    diffs.sort_by(|a, b| {
        let (a, b) = (&a.peak, &b.peak);
        a.delta
            .larger_change_first(&b.delta)
            .then_with(|| a.name.cmp(&b.name))
            .then(a.new_program_id.or(a.base_program_id).cmp(&b.new_program_id.or(b.base_program_id)))
            .then(a.color.cmp(&b.color))
            .then(a.trace_index.cmp(&b.trace_index))
    });
    (diffs, pairs)
}

/// A module of either run or both, and how the two were paired.
type Matched<'a> = (Option<&'a ModuleReport>, Option<&'a ModuleReport>, Option<Pairing>);
type Group<'a> = (Vec<&'a ModuleReport>, Vec<&'a ModuleReport>);

/// Modules pair by name. Several modules with one name (`jit__normal` is
/// compiled once per shape) pair in compile order when both runs have as many;
/// otherwise those with the same entry signature pair first and the rest in
/// compile order. What is left pairs by role within a family of names that
/// differ only in a graph number ([`graph_family`]): the same entry signature
/// first, then in compile order.
fn match_modules<'a>(base: &'a [ModuleReport], new: &'a [ModuleReport]) -> Vec<Matched<'a>> {
    let mut matched = Vec::new();
    let mut left: Group<'a> = (Vec::new(), Vec::new());
    let (base, new): (Vec<_>, Vec<_>) = (base.iter().collect(), new.iter().collect());
    for (base, new) in grouped(&base, &new, |m| Some(m.name.as_str())) {
        if base.len() == 1 && new.len() == 1 {
            matched.push((Some(base[0]), Some(new[0]), Some(Pairing::Name)));
        } else if base.len() == new.len() {
            pair(Paired::by(base, new, |_| Some(())), Pairing::NameCompileOrder, &mut matched, &mut left);
        } else {
            let by_signature = Paired::by(base, new, |m| Some(m.entry_signature.as_str()));
            let rest = pair(by_signature, Pairing::NameEntrySignature, &mut matched, &mut Group::default());
            pair(Paired::by(rest.0, rest.1, |_| Some(())), Pairing::NameCompileOrder, &mut matched, &mut left);
        }
    }
    for (base, new) in grouped(&left.0, &left.1, |m| graph_family(&m.name)) {
        let by_signature = Paired::by(base, new, |m| Some(m.entry_signature.as_str()));
        let rest = pair(by_signature, Pairing::SuffixEntrySignature, &mut matched, &mut Group::default());
        let mut unpaired = Group::default();
        pair(Paired::by(rest.0, rest.1, |_| Some(())), Pairing::SuffixCompileOrder, &mut matched, &mut unpaired);
        matched.extend(unpaired.0.into_iter().map(|b| (Some(b), None, None)));
        matched.extend(unpaired.1.into_iter().map(|n| (None, Some(n), None)));
    }
    let unnumbered = |m: &&ModuleReport| graph_family(&m.name).is_none();
    matched.extend(left.0.iter().copied().filter(unnumbered).map(|b| (Some(b), None, None)));
    matched.extend(left.1.iter().copied().filter(unnumbered).map(|n| (None, Some(n), None)));
    matched
}

/// The modules of both runs grouped by `key`, each side in compile order;
/// modules without a key are left out.
fn grouped<'a>(
    base: &[&'a ModuleReport],
    new: &[&'a ModuleReport],
    key: impl Fn(&'a ModuleReport) -> Option<&'a str>,
) -> Vec<Group<'a>> {
    let mut groups: BTreeMap<&str, Group<'a>> = BTreeMap::new();
    for &module in base {
        if let Some(k) = key(module) {
            groups.entry(k).or_default().0.push(module);
        }
    }
    for &module in new {
        if let Some(k) = key(module) {
            groups.entry(k).or_default().1.push(module);
        }
    }
    groups
        .into_values()
        .map(|(mut base, mut new)| {
            base.sort_by_key(|m| compile_order(m));
            new.sort_by_key(|m| compile_order(m));
            (base, new)
        })
        .collect()
}

/// Records `paired`'s pairs as made `by`, and hands back what is left, also
/// adding it to `left`.
fn pair<'a>(
    paired: Paired<&'a ModuleReport>,
    by: Pairing,
    matched: &mut Vec<Matched<'a>>,
    left: &mut Group<'a>,
) -> Group<'a> {
    matched.extend(paired.pairs.iter().map(|&(b, n)| (Some(b), Some(n), Some(by))));
    left.0.extend(paired.base_only.iter().copied());
    left.1.extend(paired.new_only.iter().copied());
    (paired.base_only, paired.new_only)
}

/// The name without the number a framework gives each graph it compiles:
/// `SyncTensorsGraph` for PyTorch/XLA's `SyncTensorsGraph.3422`,
/// `a_inference_train_step` for TensorFlow's `a_inference_train_step_1443__.25`.
fn graph_family(name: &str) -> Option<&str> {
    static NUMBERED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(.+?)(?:_\d+__)?\.\d+$").expect("a valid pattern"));
    NUMBERED.captures(name).and_then(|c| c.get(1)).map(|m| m.as_str())
}

/// Module ids grow as a process compiles (program ids may be fingerprints).
fn compile_order(module: &ModuleReport) -> u64 {
    module.module_id
}

fn compare_module(
    base: Option<&ModuleReport>,
    new: Option<&ModuleReport>,
    paired_by: Option<Pairing>,
) -> Vec<MemorySpaceDiff> {
    let Some(name) = new.or(base).map(|m| m.name.as_str()) else { return Vec::new() };
    let (base_program_id, new_program_id) = (base.map(|m| m.program_id), new.map(|m| m.program_id));
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
                    base_name: base.map(|m| m.name.clone()),
                    new_name: new.map(|m| m.name.clone()),
                    base_program_id,
                    new_program_id,
                    paired_by,
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
    let paired = Paired::by(base.iter().collect(), new.iter().collect(), |b: &&BufferAtPeak| Some(&*b.instruction))
        .then(|b| (!b.op_name.is_empty()).then_some((&*b.op_name, &*b.shape)));
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
            instruction: latest.instruction.to_string(),
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
        instruction: buffer.instruction.to_string(),
        shape: buffer.shape.to_string(),
        op_name: buffer.op_name.to_string(),
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
            .filter(|(b, n, _)| n.or(*b).is_some_and(|m| m.name == name))
            .map(|(b, n, _)| (b.map(|m| m.program_id), n.map(|m| m.program_id)))
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
            base.modules.iter().filter(|m| !(m.name == "jit__normal" && m.program_id == 16)).cloned().collect();
        assert_eq!(
            pairs_of("jit__normal", &base.modules, &new),
            vec![(Some(8), Some(8)), (Some(16), None), (Some(20), Some(20)), (Some(36), Some(36))]
        );
    }

    #[test]
    fn graph_numbers_make_a_family() {
        assert_eq!(graph_family("SyncTensorsGraph.3422"), Some("SyncTensorsGraph"));
        assert_eq!(graph_family("a_inference_one_step_on_data_1443__.25"), Some("a_inference_one_step_on_data"));
        assert_eq!(graph_family("jit_train_step"), None);
        assert_eq!(graph_family(".12"), None);
    }

    /// The PyTorch/XLA pair: the same MLP at two sizes and depths, whose graphs
    /// are numbered by their size; the first compiled pairs with the first.
    #[test]
    fn pytorch_xla_graphs_pair_by_compile_order() {
        let (base, new) = (report("torch_xla_small/profile"), report("torch_xla_large/profile"));
        let mut made: Vec<(String, String, Option<Pairing>)> = match_modules(&base.modules, &new.modules)
            .into_iter()
            .map(|(b, n, by)| {
                (b.map(|m| m.display_name()).unwrap_or_default(), n.map(|m| m.display_name()).unwrap_or_default(), by)
            })
            .collect();
        made.sort_by(|a, b| a.0.cmp(&b.0));
        let expected = [
            ("SyncTensorsGraph.351(1)", "SyncTensorsGraph.434(1)"),
            ("SyncTensorsGraph.397(0)", "SyncTensorsGraph.495(0)"),
        ]
        .map(|(b, n)| (b.to_string(), n.to_string(), Some(Pairing::SuffixCompileOrder)));
        assert_eq!(made, expected);
    }

    #[test]
    fn a_graph_with_the_same_entry_signature_pairs_first() {
        let base = report("torch_xla_small/profile").modules;
        let mut new = base.clone();
        // The later graph compiled first, renumbered: its signature still finds it.
        new[0].name = "SyncTensorsGraph.9".into();
        new[1].name = "SyncTensorsGraph.8".into();
        (new[0].module_id, new[1].module_id) = (new[1].module_id, new[0].module_id);
        let made: Vec<_> = match_modules(&base, &new)
            .into_iter()
            .map(|(b, n, by)| (b.map(|m| m.name.as_str()), n.map(|m| m.name.as_str()), by))
            .collect();
        assert_eq!(made.len(), 2);
        for (b, n, by) in made {
            assert_eq!(by, Some(Pairing::SuffixEntrySignature));
            let b = base.iter().find(|m| Some(m.name.as_str()) == b).unwrap();
            let n = new.iter().find(|m| Some(m.name.as_str()) == n).unwrap();
            assert_eq!(b.entry_signature, n.entry_signature);
        }
    }

    #[test]
    fn a_renamed_instruction_pairs_by_op_name_and_shape() {
        let base = report("pair_base/xla_dump").modules.remove(0).memory_spaces.remove(0).at_peak;
        let mut new = base.clone();
        let renamed = new.iter_mut().find(|b| &*b.instruction == "dot.1").expect("dot.1 is live at the peak");
        renamed.instruction = "dot.7".into();
        let without_op_name = new.iter_mut().find(|b| b.op_name.is_empty()).expect("a buffer without op name");
        let gone = without_op_name.instruction.clone();
        without_op_name.instruction = format!("{gone}.renamed").into();

        let (changed, unchanged) = compare_buffers(&base, &new);
        assert_eq!(unchanged, base.len() - 1, "dot.1 → dot.7 pairs with itself; the unnamed one does not");
        let kinds: Vec<_> = changed.iter().map(|b| (b.change, b.instruction.as_str())).collect();
        assert_eq!(kinds.len(), 2);
        assert!(kinds.contains(&(Change::Gone, &*gone)), "{kinds:?}");
        assert!(kinds.contains(&(Change::New, format!("{gone}.renamed").as_str())), "{kinds:?}");
    }
}

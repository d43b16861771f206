//! Compiled XLA modules of two runs, side by side: modules matched by name
//! (or, when a framework numbers its graphs, by role), their memory spaces by
//! colour and heap trace, and the buffers live at each peak by what they are
//! (op, source line, opcode, category), since the compiler renumbers
//! instructions (`custom-call.24` → `custom-call.71`) and a widened layer
//! changes their shapes.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::{Change, Paired, PeakDelta};
use crate::analysis::attribution::{op_name_components, op_name_scope};
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
    /// How many buffers of both runs were matched each way, changed or not.
    pub matched_by: MatchCounts,
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
    /// How the two sides were matched; null for a buffer of one run only.
    pub matched_by: Option<BufferMatch>,
}

/// How a buffer at the peak of one run was found in the other, in the
/// order the ways are tried: each pairs only what the ones before left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferMatch {
    /// The same instruction name, and the same op name, source line, opcode and category.
    Instruction,
    /// The same op name, source line, opcode, category and tuple index,
    /// the n-th such buffer of one run with the n-th of the other: an
    /// instruction the compiler renumbered, whose shape may have changed.
    Role,
    /// The same op name and shape.
    OpNameAndShape,
    /// A parameter, output or constant with the same opcode and tuple index,
    /// the n-th such buffer of one run with the n-th of the other: what is
    /// always live is in the same order in both, though a fusion the
    /// compiler formed around another op takes that op's name and source line.
    Kind,
    /// The same op-name scope (the op name without its last component,
    /// `jit(step)/jvp()`), category, opcode and tuple index, in order: the
    /// compiler fused differently in the two runs (a transpose in one, an
    /// add in the other), and the buffer holds the same place in the step.
    Scope,
    /// Only the instruction name is the same.
    InstructionName,
}

impl BufferMatch {
    pub fn describe(self) -> &'static str {
        match self {
            BufferMatch::Instruction => "by instruction",
            BufferMatch::Role => "by op, source line and kind (renumbered)",
            BufferMatch::OpNameAndShape => "by op name and shape",
            BufferMatch::Kind => "as the n-th parameter, output or constant of its opcode",
            BufferMatch::Scope => "by op scope and kind, in order",
            BufferMatch::InstructionName => "by instruction name only",
        }
    }
}

/// Buffers of both runs matched each way; `new` and `gone` are the buffers
/// of one run only.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct MatchCounts {
    pub instruction: usize,
    pub role: usize,
    pub op_name_and_shape: usize,
    pub kind: usize,
    pub scope: usize,
    pub instruction_name: usize,
    pub new: usize,
    pub gone: usize,
}

impl MatchCounts {
    fn add(&mut self, how: BufferMatch) {
        *match how {
            BufferMatch::Instruction => &mut self.instruction,
            BufferMatch::Role => &mut self.role,
            BufferMatch::OpNameAndShape => &mut self.op_name_and_shape,
            BufferMatch::Kind => &mut self.kind,
            BufferMatch::Scope => &mut self.scope,
            BufferMatch::InstructionName => &mut self.instruction_name,
        } += 1;
    }

    /// Pairs matched, any way.
    pub fn matched(&self) -> usize {
        self.instruction + self.role + self.op_name_and_shape + self.kind + self.scope + self.instruction_name
    }
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
    // A memory space with temporaries in one run only has a trace in that run only.
    Paired::by(memory_spaces(base), memory_spaces(new), |s: &&MemorySpaceReport| Some((s.color, s.trace_index)))
        .then(|s| Some(s.color))
        .sides()
        .filter_map(|(b, n)| {
            let space = n.or(b)?;
            let (buffers, unchanged_buffers, matched_by) = compare_buffers(
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
                matched_by,
                groups: super::groups::GroupChanges::between(b, n),
            })
        })
        .collect()
}

fn memory_spaces(module: Option<&ModuleReport>) -> Vec<&MemorySpaceReport> {
    module.map(|m| m.memory_spaces.iter().collect()).unwrap_or_default()
}

/// What a buffer is, whatever the compiler numbered its instruction: its op
/// name, source line, opcode, category and tuple index (`{1}`). `None` for a
/// buffer with neither op name nor source line, which this cannot tell apart.
type Role<'a> = (&'a str, Option<&'a str>, Kind<'a>);

fn role(buffer: &BufferAtPeak) -> Option<Role<'_>> {
    if buffer.op_name.is_empty() && buffer.source.is_none() {
        return None;
    }
    Some((&buffer.op_name, buffer.source.as_deref(), kind(buffer)))
}

/// A buffer's category, opcode and tuple index (`{1}`, empty for an array).
type Kind<'a> = (Category, &'a str, &'a str);

fn kind(buffer: &BufferAtPeak) -> Kind<'_> {
    let tuple_index = buffer.instruction.rfind('{').filter(|_| buffer.instruction.ends_with('}'));
    (buffer.category, &buffer.opcode, tuple_index.map_or("", |at| &buffer.instruction[at..]))
}

/// Buffers pair by instruction and role ([`role`]), then, for what is left,
/// by role alone in order (the n-th buffer of a role in one run is the n-th
/// in the other: an instruction the compiler renumbered, widened or not),
/// then by op name and shape, then parameters, outputs and constants by
/// opcode in order, then by op scope and kind in order, then by instruction name.
/// Each changed buffer says which way it was matched.
fn compare_buffers<'a>(base: &'a [BufferAtPeak], new: &'a [BufferAtPeak]) -> (Vec<BufferDiff>, usize, MatchCounts) {
    let mut pairs: Vec<(&BufferAtPeak, &BufferAtPeak, BufferMatch)> = Vec::new();
    let mut round = |how: BufferMatch, paired: Paired<&'a BufferAtPeak>| {
        pairs.extend(paired.pairs.iter().map(|&(b, n)| (b, n, how)));
        (paired.base_only, paired.new_only)
    };
    let (base, new) = (base.iter().collect(), new.iter().collect());
    let left = round(BufferMatch::Instruction, Paired::by(base, new, |&b| Some((&*b.instruction, role(b), kind(b)))));
    let left = round(BufferMatch::Role, Paired::by(left.0, left.1, |&b| role(b)));
    let by_op = |&b: &&'a BufferAtPeak| (!b.op_name.is_empty()).then_some((&*b.op_name, &*b.shape));
    let left = round(BufferMatch::OpNameAndShape, Paired::by(left.0, left.1, by_op));
    let always_live = |&b: &&'a BufferAtPeak| {
        matches!(b.category, Category::Parameter | Category::Output | Category::Constant).then(|| kind(b))
    };
    let left = round(BufferMatch::Kind, Paired::by(left.0, left.1, always_live));
    let scope = |&b: &&'a BufferAtPeak| {
        let components = op_name_components(&b.op_name).len();
        (components > 1).then(|| (op_name_scope(&b.op_name, Some(components - 1)), kind(b)))
    };
    let left = round(BufferMatch::Scope, Paired::by(left.0, left.1, scope));
    let (gone, new) = round(BufferMatch::InstructionName, Paired::by(left.0, left.1, |&b| Some(&*b.instruction)));
    let mut counts = MatchCounts { new: new.len(), gone: gone.len(), ..MatchCounts::default() };
    let sides = pairs
        .into_iter()
        .map(|(b, n, how)| (Some(b), Some(n), Some(how)))
        .chain(gone.into_iter().map(|b| (Some(b), None, None)))
        .chain(new.into_iter().map(|n| (None, Some(n), None)));
    let mut unchanged = 0;
    let mut changed = Vec::new();
    for (b, n, matched_by) in sides {
        if let Some(how) = matched_by {
            counts.add(how);
        }
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
            matched_by,
        });
    }
    changed.sort_by(|a, b| {
        b.delta_bytes
            .unsigned_abs()
            .cmp(&a.delta_bytes.unsigned_abs())
            .then(a.change.cmp(&b.change))
            .then_with(|| a.instruction.cmp(&b.instruction))
    });
    (changed, unchanged, counts)
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

    /// Issue 24: the compiler renumbers instructions (`custom-call.24` →
    /// `custom-call.71`) and a widened layer changes shapes; each buffer is
    /// still found by what it is, and reads as grown, not as new and gone.
    #[test]
    fn renumbered_and_widened_buffers_are_grown_not_new_and_gone() {
        let base = report("pair_base/xla_dump").modules.remove(0).memory_spaces.remove(0).at_peak;
        let mut new = base.clone();
        for (i, buffer) in new.iter_mut().rev().enumerate() {
            let (name, tuple_index) =
                buffer.instruction.split_at(buffer.instruction.find('{').unwrap_or(buffer.instruction.len()));
            buffer.instruction = format!("{name}.{}{tuple_index}", 100 + i).into();
            buffer.shape = format!("{}·2", buffer.shape).into();
            buffer.size_bytes *= 2;
        }
        let (changed, unchanged, counts) = compare_buffers(&base, &new);
        let sized = base.iter().filter(|b| b.size_bytes > 0).count();
        assert_eq!((changed.len(), unchanged), (sized, base.len() - sized));
        assert_eq!((counts.new, counts.gone, counts.instruction), (0, 0, 0), "{counts:?}");
        assert_eq!(counts.matched(), base.len());
        for buffer in &changed {
            assert_eq!(buffer.change, Change::Grown, "{buffer:?}");
            assert_eq!(buffer.new_bytes, buffer.base_bytes.map(|b| b * 2));
            let (b, n) = (buffer.base.as_ref().unwrap(), buffer.new.as_ref().unwrap());
            // The n-th buffer of a role pairs with the n-th: the same op and category.
            assert_eq!((&b.op_name, b.category), (&n.op_name, n.category));
            let expected = if role(base.iter().find(|x| *x.instruction == b.instruction).unwrap()).is_some() {
                BufferMatch::Role
            } else {
                BufferMatch::Kind
            };
            assert_eq!(buffer.matched_by, Some(expected), "{buffer:?}");
        }
        // A buffer that nothing tells apart from another is new and gone:
        // a temporary with neither op name nor source line, renamed.
        let mut anonymous = base[base.len() - 1].clone();
        (anonymous.op_name, anonymous.source, anonymous.category) = ("".into(), None, Category::Temporary);
        let mut renamed = anonymous.clone();
        renamed.instruction = "elsewhere.1".into();
        let (_, _, counts) = compare_buffers(std::slice::from_ref(&anonymous), std::slice::from_ref(&renamed));
        assert_eq!((counts.new, counts.gone), (1, 1));
    }
}

//! XProf's step grouping (TSL's `GroupTfEvents`, `group_events.cc`), reduced
//! to one host plane. Profiles do not store which training step an allocator
//! event belongs to: XProf derives it before it builds its Memory Profile, by
//! nesting events on each thread, linking producer and consumer events across
//! threads, and giving every root event (a `FunctionRun` marked `_r`, a
//! `TraceContext`, or the first executor run of a TF loop iteration) a
//! number that flows down to everything reachable from it. xmem repeats that
//! so its step ids are XProf's.

use std::collections::{HashMap, HashSet};

/// Producer and consumer events sharing a context id with at least this many
/// of each are not linked, as in XProf (the links would be quadratic).
const CONTEXT_FAN_LIMIT: usize = 64;

/// The event kinds grouping treats specially, by their metadata name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupingKind {
    Other,
    /// `ExecutorState::Process`: one executor run, keyed by step id and iteration.
    ExecutorRun,
    /// `IteratorGetNextOp::DoCompute` and its `AsOptional` twin, linked to
    /// the executor run with the same step id and iteration.
    IteratorGetNext,
    /// A root by itself even without an `_r` stat.
    TraceContext,
    /// `InstantiatedCapturedFunction::Run*`: its step ids belong to tf.data,
    /// and roots with those ids are not steps.
    TfDataFunction,
}

impl GroupingKind {
    pub fn from_name(name: &[u8]) -> Self {
        match name {
            b"ExecutorState::Process" => GroupingKind::ExecutorRun,
            b"IteratorGetNextOp::DoCompute" | b"IteratorGetNextAsOptionalOp::DoCompute" => {
                GroupingKind::IteratorGetNext
            }
            b"TraceContext" => GroupingKind::TraceContext,
            b"InstantiatedCapturedFunction::Run"
            | b"InstantiatedCapturedFunction::RunAsync"
            | b"InstantiatedCapturedFunction::RunInstantiated"
            | b"InstantiatedCapturedFunction::RunWithBorrowedArgs" => GroupingKind::TfDataFunction,
            _ => GroupingKind::Other,
        }
    }
}

/// TF loop ops: when a profile has any, XProf does no step grouping at all.
pub fn is_loop_op(name: &[u8]) -> bool {
    matches!(name, b"WhileOp-EvalCond" | b"WhileOp-StartBody" | b"ForOp" | b"ParallelForOp" | b"ForeverOp")
}

/// The stats of one event that grouping reads (`_pt`, `_p`, `_ct`, `_c`,
/// `_pid`, `_r`, `_a`, `id`, `iter_num`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupingStats {
    pub producer_type: Option<i64>,
    pub producer_id: Option<u64>,
    pub consumer_type: Option<i64>,
    pub consumer_id: Option<u64>,
    pub pid: Option<i64>,
    pub root_level: Option<i64>,
    pub is_async: bool,
    pub step_id: Option<i64>,
    pub iter_num: Option<i64>,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    begin_ps: i64,
    end_ps: i64,
    root_level: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ContextKey {
    kind: i64,
    id: u64,
    pid: Option<i64>,
}

/// Links from each node, stored as one flat list.
struct Adjacency {
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

impl Adjacency {
    fn new(nodes: usize, links: impl Iterator<Item = (u32, u32)> + Clone) -> Self {
        let mut offsets = vec![0usize; nodes + 1];
        for (from, _) in links.clone() {
            offsets[from as usize + 1] += 1;
        }
        for i in 0..nodes {
            offsets[i + 1] += offsets[i];
        }
        let mut next = offsets.clone();
        let mut targets = vec![0u32; offsets[nodes]];
        for (from, to) in links {
            targets[next[from as usize]] = to;
            next[from as usize] += 1;
        }
        Adjacency { offsets, targets }
    }

    fn of(&self, node: u32) -> &[u32] {
        &self.targets[self.offsets[node as usize]..self.offsets[node as usize + 1]]
    }
}

/// The events of one plane as grouping sees them, added thread by thread in
/// the order the profile stores them.
pub struct EventForest {
    plane_pid: Option<i64>,
    nodes: Vec<Node>,
    /// Parent → child.
    links: Vec<(u32, u32)>,
    /// The open events of the current thread, innermost last.
    open: Vec<u32>,
    contexts: Vec<(ContextKey, bool, u32)>,
    executor_runs: Vec<(u32, i64, i64)>,
    iterator_ops: Vec<(u32, i64, i64)>,
    roots: Vec<(u32, Option<i64>)>,
    tf_data_steps: HashSet<i64>,
}

impl EventForest {
    /// `plane_pid` is the plane's `process_id` stat, if it has one.
    pub fn new(plane_pid: Option<i64>) -> Self {
        EventForest {
            plane_pid,
            nodes: Vec::new(),
            links: Vec::new(),
            open: Vec::new(),
            contexts: Vec::new(),
            executor_runs: Vec::new(),
            iterator_ops: Vec::new(),
            roots: Vec::new(),
            tf_data_steps: HashSet::new(),
        }
    }

    /// Events nest only within their own thread.
    pub fn start_thread(&mut self) {
        self.open.clear();
    }

    /// Adds the next event of the current thread; returns its node id, or
    /// `None` once the plane has more events than node ids.
    pub fn add(&mut self, begin_ps: i64, duration_ps: i64, kind: GroupingKind, stats: &GroupingStats) -> Option<u32> {
        let id = u32::try_from(self.nodes.len()).ok()?;
        let end_ps = begin_ps.saturating_add(duration_ps);
        let root_level = stats.root_level.unwrap_or(if kind == GroupingKind::TraceContext { 1 } else { 0 });
        let root_level = i32::try_from(root_level).unwrap_or(0);
        self.nodes.push(Node { begin_ps, end_ps, root_level });
        if root_level > 0 {
            self.roots.push((id, stats.step_id));
        }
        let pid = stats.pid.or(self.plane_pid);
        if let (Some(kind), Some(context)) = (stats.producer_type, stats.producer_id) {
            self.contexts.push((ContextKey { kind, id: context, pid }, true, id));
        }
        if let (Some(kind), Some(context)) = (stats.consumer_type, stats.consumer_id) {
            self.contexts.push((ContextKey { kind, id: context, pid }, false, id));
        }
        match (kind, stats.step_id, stats.iter_num) {
            (GroupingKind::ExecutorRun, Some(step), Some(iter)) => self.executor_runs.push((id, step, iter)),
            (GroupingKind::IteratorGetNext, Some(step), Some(iter)) => self.iterator_ops.push((id, step, iter)),
            (GroupingKind::TfDataFunction, Some(step), _) => {
                self.tf_data_steps.insert(step);
            }
            _ => {}
        }
        if !stats.is_async {
            while let Some(&parent) = self.open.last() {
                let p = self.nodes[parent as usize];
                if p.begin_ps <= begin_ps && end_ps <= p.end_ps {
                    self.links.push((parent, id));
                    break;
                }
                self.open.pop();
            }
            self.open.push(id);
        }
        Some(id)
    }

    /// The step (group id) of every node, in the order they were added.
    pub fn group(mut self) -> Vec<Option<u32>> {
        self.link_contexts();
        self.link_iterators();
        let loop_roots = self.link_loop_iterations();
        let children = Adjacency::new(self.nodes.len(), self.links.iter().copied());
        let mut groups: Vec<Option<u32>> = vec![None; self.nodes.len()];
        if !loop_roots.is_empty() {
            for (group, &root) in (0..).zip(&loop_roots) {
                propagate(root, group, &children, &mut groups);
            }
            return groups;
        }
        let mut roots: Vec<u32> = self
            .roots
            .iter()
            .filter(|(_, step)| step.is_none_or(|s| !self.tf_data_steps.contains(&s)))
            .map(|&(node, _)| node)
            .collect();
        let nodes = &self.nodes;
        roots.sort_by(|&a, &b| {
            let (na, nb) = (nodes[a as usize], nodes[b as usize]);
            nb.root_level.cmp(&na.root_level).then(na.begin_ps.cmp(&nb.begin_ps)).then(a.cmp(&b))
        });
        let nested = roots_under_same_level(&roots, nodes, &children);
        let mut next_group = 0;
        for root in roots {
            if groups[root as usize].is_none() && !nested[root as usize] {
                propagate(root, next_group, &children, &mut groups);
                next_group += 1;
            }
        }
        groups
    }

    fn link_contexts(&mut self) {
        self.contexts.sort_unstable();
        for same in self.contexts.chunk_by(|a, b| a.0 == b.0) {
            let producers: Vec<u32> = same.iter().filter(|c| c.1).map(|c| c.2).collect();
            let consumers = same.len() - producers.len();
            if producers.len() >= CONTEXT_FAN_LIMIT && consumers >= CONTEXT_FAN_LIMIT {
                continue;
            }
            for &producer in &producers {
                self.links.extend(same.iter().filter(|c| !c.1).map(|c| (producer, c.2)));
            }
        }
    }

    /// An executor run is the parent of the iterator op of the same step and
    /// iteration (the last such run, when several share them).
    fn link_iterators(&mut self) {
        let runs: HashMap<(i64, i64), u32> =
            self.executor_runs.iter().map(|&(node, step, iter)| ((step, iter), node)).collect();
        for &(node, step, iter) in &self.iterator_ops {
            if let Some(&run) = runs.get(&(step, iter)) {
                self.links.push((run, node));
            }
        }
    }

    /// TF while loops: every iteration of a function that loops is a step,
    /// rooted at its first executor run. Returns those roots in time order.
    fn link_loop_iterations(&mut self) -> Vec<u32> {
        let mut iterations: HashMap<i64, HashMap<i64, Vec<u32>>> = HashMap::new();
        for &(node, step, iter) in &self.executor_runs {
            if !self.tf_data_steps.contains(&step) {
                iterations.entry(step).or_default().entry(iter).or_default().push(node);
            }
        }
        let mut loop_roots = Vec::new();
        for function in iterations.into_values() {
            if function.len() == 1 && function.contains_key(&0) {
                continue;
            }
            for runs in function.into_values() {
                let Some(&first) = runs.iter().min_by_key(|&&n| (self.nodes[n as usize].begin_ps, n)) else {
                    continue;
                };
                self.links.extend(runs.iter().filter(|&&n| n != first).map(|&n| (first, n)));
                loop_roots.push(first);
            }
        }
        loop_roots.sort_by_key(|&n| (self.nodes[n as usize].begin_ps, n));
        loop_roots
    }
}

/// The roots that sit under another event of their own root level, which
/// then groups them (XProf's `RootNeedsGrouping`: a breadth-first search up
/// from each root). Searching up from every root costs roots × ancestors;
/// instead, per root level, one search down from all events of that level
/// marks what each reaches. A root reached only from itself (through a
/// cycle) is not under another, so every event keeps up to two of the
/// sources that reach it: O(levels × links) in all.
fn roots_under_same_level(roots: &[u32], nodes: &[Node], children: &Adjacency) -> Vec<bool> {
    const NONE: u32 = u32::MAX;
    let mut levels: Vec<i32> = roots.iter().map(|&r| nodes[r as usize].root_level).collect();
    levels.sort_unstable();
    levels.dedup();
    // Every event of a root's level, roots filtered out included, can group it.
    let mut by_level: Vec<(i32, u32)> = (0..)
        .zip(nodes)
        .filter(|(_, n)| levels.binary_search(&n.root_level).is_ok())
        .map(|(id, n)| (n.root_level, id))
        .collect();
    by_level.sort_unstable();
    let mut nested = vec![false; nodes.len()];
    let mut reached_from = vec![[NONE; 2]; nodes.len()];
    let mut touched = Vec::new();
    let mut queue: Vec<(u32, u32)> = Vec::new();
    for same_level in by_level.chunk_by(|a, b| a.0 == b.0) {
        let mut reach = |node: u32, source: u32, touched: &mut Vec<u32>, queue: &mut Vec<(u32, u32)>| {
            let slots = &mut reached_from[node as usize];
            if slots.contains(&source) || slots[1] != NONE {
                return;
            }
            if slots[0] == NONE {
                slots[0] = source;
                touched.push(node);
            } else {
                slots[1] = source;
            }
            queue.push((node, source));
        };
        for &(_, source) in same_level {
            for &child in children.of(source) {
                reach(child, source, &mut touched, &mut queue);
            }
        }
        while let Some((node, source)) = queue.pop() {
            for &child in children.of(node) {
                reach(child, source, &mut touched, &mut queue);
            }
        }
        for &(_, node) in same_level {
            let from_another = reached_from[node as usize].iter().any(|&s| s != NONE && s != node);
            nested[node as usize] = from_another || children.of(node).contains(&node);
        }
        for node in touched.drain(..) {
            reached_from[node as usize] = [NONE; 2];
        }
    }
    nested
}

/// Gives `group` to `root` and everything reachable from it through events
/// that have no group yet.
fn propagate(root: u32, group: u32, children: &Adjacency, groups: &mut [Option<u32>]) {
    if groups[root as usize].is_some() {
        return;
    }
    groups[root as usize] = Some(group);
    let mut queue = vec![root];
    while let Some(node) = queue.pop() {
        for &child in children.of(node) {
            if groups[child as usize].is_none() {
                groups[child as usize] = Some(group);
                queue.push(child);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> GroupingStats {
        GroupingStats { root_level: Some(1), ..Default::default() }
    }

    #[test]
    fn roots_number_steps_in_time_order_and_nested_events_inherit_them() {
        let mut forest = EventForest::new(None);
        forest.start_thread();
        let late_root = forest.add(500, 100, GroupingKind::Other, &root()).unwrap();
        let inside_late = forest.add(550, 0, GroupingKind::Other, &GroupingStats::default()).unwrap();
        forest.start_thread();
        let early_root = forest.add(100, 100, GroupingKind::Other, &root()).unwrap();
        let inside_early = forest.add(120, 10, GroupingKind::Other, &GroupingStats::default()).unwrap();
        let outside = forest.add(300, 10, GroupingKind::Other, &GroupingStats::default()).unwrap();
        let groups = forest.group();
        assert_eq!(groups[early_root as usize], Some(0));
        assert_eq!(groups[inside_early as usize], Some(0));
        assert_eq!(groups[late_root as usize], Some(1));
        assert_eq!(groups[inside_late as usize], Some(1));
        assert_eq!(groups[outside as usize], None);
    }

    #[test]
    fn consumers_on_other_threads_join_their_producers_step() {
        let mut forest = EventForest::new(Some(7));
        forest.start_thread();
        let producer = GroupingStats { producer_type: Some(2), producer_id: Some(42), ..root() };
        forest.add(0, 1000, GroupingKind::Other, &producer).unwrap();
        forest.start_thread();
        let consumer = GroupingStats { consumer_type: Some(2), consumer_id: Some(42), ..Default::default() };
        let run = forest.add(10, 100, GroupingKind::Other, &consumer).unwrap();
        let allocation = forest.add(20, 0, GroupingKind::Other, &GroupingStats::default()).unwrap();
        let groups = forest.group();
        assert_eq!((groups[run as usize], groups[allocation as usize]), (Some(0), Some(0)));
    }

    #[test]
    fn roots_of_tf_data_functions_are_not_steps() {
        let mut forest = EventForest::new(None);
        forest.start_thread();
        let data = GroupingStats { step_id: Some(9), ..Default::default() };
        forest.add(0, 10, GroupingKind::TfDataFunction, &data).unwrap();
        let data_root = forest.add(20, 10, GroupingKind::Other, &GroupingStats { step_id: Some(9), ..root() }).unwrap();
        let step_root = forest.add(40, 10, GroupingKind::Other, &root()).unwrap();
        let groups = forest.group();
        assert_eq!((groups[data_root as usize], groups[step_root as usize]), (None, Some(0)));
    }

    #[test]
    fn each_iteration_of_a_tf_loop_is_a_step() {
        let mut forest = EventForest::new(None);
        forest.start_thread();
        forest.add(0, 1000, GroupingKind::Other, &root()).unwrap();
        let iteration = |iter| GroupingStats { step_id: Some(5), iter_num: Some(iter), ..Default::default() };
        forest.start_thread();
        let first = forest.add(100, 10, GroupingKind::ExecutorRun, &iteration(0)).unwrap();
        let second = forest.add(200, 10, GroupingKind::ExecutorRun, &iteration(1)).unwrap();
        let second_again = forest.add(250, 10, GroupingKind::ExecutorRun, &iteration(1)).unwrap();
        let groups = forest.group();
        assert_eq!(groups[first as usize], Some(0));
        assert_eq!((groups[second as usize], groups[second_again as usize]), (Some(1), Some(1)));
    }

    #[test]
    fn a_root_under_a_root_of_its_level_joins_it_and_of_another_level_is_its_own_step() {
        let mut forest = EventForest::new(None);
        forest.start_thread();
        let level = |root_level| GroupingStats { root_level: Some(root_level), ..Default::default() };
        let outer = forest.add(0, 1000, GroupingKind::Other, &level(1)).unwrap();
        let middle = forest.add(10, 900, GroupingKind::Other, &level(2)).unwrap();
        let inner = forest.add(20, 800, GroupingKind::Other, &level(1)).unwrap();
        let innermost = forest.add(30, 700, GroupingKind::Other, &level(2)).unwrap();
        let groups = forest.group();
        // Level 2 first: `middle` has no level-2 ancestor and takes everything under it.
        assert_eq!(groups[middle as usize], Some(0));
        assert_eq!((groups[inner as usize], groups[innermost as usize]), (Some(0), Some(0)));
        assert_eq!(groups[outer as usize], Some(1));
    }

    #[test]
    fn a_root_reached_only_from_itself_through_a_cycle_is_a_step() {
        let mut forest = EventForest::new(Some(1));
        forest.start_thread();
        let root = GroupingStats {
            producer_type: Some(1),
            producer_id: Some(5),
            consumer_type: Some(1),
            consumer_id: Some(6),
            ..root()
        };
        let step = forest.add(0, 10, GroupingKind::Other, &root).unwrap();
        forest.start_thread();
        let other = GroupingStats {
            consumer_type: Some(1),
            consumer_id: Some(5),
            producer_type: Some(1),
            producer_id: Some(6),
            ..Default::default()
        };
        let linked = forest.add(100, 10, GroupingKind::Other, &other).unwrap();
        let groups = forest.group();
        assert_eq!((groups[step as usize], groups[linked as usize]), (Some(0), Some(0)));
    }
}

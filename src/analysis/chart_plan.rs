//! Which charts a report gets, and how much each may draw: decided once,
//! before anything is rendered, for `xmem plot` and the HTML page alike, so
//! that what they write is bounded by what a reader can see rather than by
//! what the input holds. A 200 KB HloProto with 4,000 memory spaces and a
//! deep stack made `plot` write 16,000 charts (3.2 GB): output grew as
//! memory spaces × stack depth.
//!
//! The bound (design.md, "Untrusted inputs"): at most [`MAX_CHARTED`]
//! memory spaces, allocators, device memory profiles and PyTorch snapshot
//! devices each are charted, those with the largest peaks; everything else
//! with a peak is one bar of one summary chart ([`NotCharted`]). A memory space with nothing
//! live at its peak gets no chart; one without a heap-simulator trace gets
//! its buffers at the peak only. Within a chart, series are thinned to
//! points a pixel can show, and at most [`MAX_BARS`] bars,
//! [`MAX_LIFETIME_BOXES`] buffer boxes and [`MAX_ICICLE_FRAMES`] icicle
//! frames are drawn, the rest summed into one and named; no text from the
//! input is drawn longer than [`MAX_LABEL_CHARS`].

use std::borrow::Cow;

use super::{sum_bytes, Report};

/// Memory spaces, allocators, device memory profiles and PyTorch snapshot
/// devices charted one by one, of each kind: those with the largest peaks.
pub const MAX_CHARTED: usize = 32;
/// Bars of a bar chart beside the ones that sum the rest, whatever `--top`.
pub const MAX_BARS: usize = 100;
/// Subjects the summary chart of what is not charted names one by one.
pub const MAX_SUMMARY_BARS: usize = 40;
/// Buffers a lifetimes chart draws as boxes: the largest.
pub const MAX_LIFETIME_BOXES: usize = 2000;
/// Distinct frames (stack prefixes) an icicle graph draws.
pub const MAX_ICICLE_FRAMES: usize = 2000;
/// Frames of one stack an icicle graph draws: the outermost and innermost,
/// with one frame that counts those between.
pub const MAX_STACK_FRAMES: usize = 48;
/// Characters of any one text from the input (a name, an op name, a frame)
/// where a chart draws it, before it is escaped.
pub const MAX_LABEL_CHARS: usize = 240;
/// Bytes, escaped, of any one text a chart draws (a label, a caption).
pub const MAX_LABEL_BYTES: usize = 480;
/// Bytes, escaped, of a chart's tooltip, or of any one text the HTML page
/// shows (a table cell, a note, a stack).
pub const MAX_TEXT_BYTES: usize = 1000;
/// Rows of the HTML page's summary table; the rest are counted under it.
pub const MAX_SUMMARY_ROWS: usize = 200;
/// Step boundaries an allocator timeline marks; more are thinned evenly.
pub const MAX_STEP_BOUNDARIES: usize = 100;

/// A chart of a memory space, a device memory profile, a PyTorch snapshot or an allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    Timeline,
    Peak,
    Lifetimes,
    /// A device memory profile's allocation sites.
    Sites,
    /// A memory space's heap in two runs, in a diff.
    Overlay,
    /// An icicle graph of the live set at the peak, by stack.
    Flame,
    /// A PyTorch snapshot's peak by user frame.
    UserFrames,
    /// The peaks of what is not charted one by one.
    Summary,
}

impl ChartKind {
    /// The chart's name in file names: `<module>.<space>.<name>.svg`.
    pub fn name(self) -> &'static str {
        match self {
            ChartKind::Timeline => "timeline",
            ChartKind::Peak => "peak",
            ChartKind::Lifetimes => "lifetimes",
            ChartKind::Sites => "sites",
            ChartKind::Overlay => "overlay",
            ChartKind::Flame => "flame",
            ChartKind::UserFrames => "user-frames",
            ChartKind::Summary => "summary",
        }
    }
}

/// Something a report could chart, by its place in the [`Report`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// `report.modules[module].memory_spaces[space]`.
    MemorySpace { module: usize, space: usize },
    /// `report.allocators[i]`.
    Allocator(usize),
    /// `report.device_memory[i]`.
    DeviceMemory(usize),
    /// `report.torch_snapshots[i]`: one device of a PyTorch snapshot.
    TorchSnapshot(usize),
}

/// How a memory space is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Not,
    /// Its figures only: nothing is live at its peak.
    Figures,
    /// Its figures and these charts, in reading order.
    Charts(&'static [ChartKind]),
}

/// What the charts of a report show.
#[derive(Debug, Clone)]
pub struct ChartPlan {
    /// Per module, per memory space.
    spaces: Vec<Vec<Shown>>,
    allocators: Vec<bool>,
    device_memory: Vec<bool>,
    torch_snapshots: Vec<bool>,
    /// Rows per table: `--top`.
    pub top: usize,
    /// Bars per bar chart: `--top`, at most [`MAX_BARS`].
    pub bars: usize,
    /// Per module: whether a module that could not be analysed gets a
    /// section that says why (the first [`MAX_CHARTED`] do).
    problems: Vec<bool>,
    /// Memory spaces with something allocated but nothing live at their
    /// peak: no chart. They and the spaces with nothing allocated get their
    /// figures shown, the first [`MAX_CHARTED`] of them.
    pub empty_spaces: usize,
    /// What has a peak but no chart of its own; `None` when everything is charted.
    pub not_charted: Option<NotCharted>,
}

/// The subjects past the caps, for one summary chart: the largest one by
/// one, the rest as one sum.
#[derive(Debug, Clone)]
pub struct NotCharted {
    /// Largest peak first, at most [`MAX_SUMMARY_BARS`].
    pub largest: Vec<(Subject, i64)>,
    pub rest_count: usize,
    pub rest_bytes: i64,
    pub memory_spaces: usize,
    pub allocators: usize,
    pub device_memory: usize,
    pub torch_snapshots: usize,
}

const WITH_TRACE: &[ChartKind] = &[ChartKind::Timeline, ChartKind::Peak, ChartKind::Lifetimes, ChartKind::Flame];
const WITH_TRACE_NO_LIFETIMES: &[ChartKind] = &[ChartKind::Timeline, ChartKind::Peak, ChartKind::Flame];
/// A memory space without a heap-simulator trace: its buffers at the peak are all it has to show.
const WITHOUT_TRACE: &[ChartKind] = &[ChartKind::Peak];

impl ChartPlan {
    /// The plan for `report`, whose tables show `top` rows.
    pub fn of(report: &Report, top: usize) -> ChartPlan {
        let mut empty_spaces = 0;
        // Memory spaces with nothing live (or nothing at all) whose figures are shown.
        let mut figures_only = 0;
        let mut problems_shown = 0;
        let problems: Vec<bool> = (report.modules.iter())
            .map(|m| {
                let shown = m.problem.is_some() && problems_shown < MAX_CHARTED;
                problems_shown += usize::from(shown);
                shown
            })
            .collect();
        let mut spaces: Vec<Vec<Shown>> = Vec::with_capacity(report.modules.len());
        let mut live_spaces: Vec<(Subject, i64)> = Vec::new();
        for (m, module) in report.modules.iter().enumerate() {
            let mut shown = Vec::with_capacity(module.memory_spaces.len());
            for (s, space) in module.memory_spaces.iter().enumerate() {
                let live = space.peak_bytes > 0 && space.at_peak.iter().any(|b| b.size_bytes > 0);
                if live {
                    live_spaces.push((Subject::MemorySpace { module: m, space: s }, space.peak_bytes));
                }
                shown.push(match (live, space.heap_bytes.len() >= 2, space.lifetimes.is_empty()) {
                    (false, _, _) => {
                        empty_spaces += usize::from(!space.is_unused());
                        figures_only += 1;
                        if figures_only <= MAX_CHARTED {
                            Shown::Figures
                        } else {
                            Shown::Not
                        }
                    }
                    (true, false, _) => Shown::Charts(WITHOUT_TRACE),
                    (true, true, false) => Shown::Charts(WITH_TRACE),
                    (true, true, true) => Shown::Charts(WITH_TRACE_NO_LIFETIMES),
                });
            }
            spaces.push(shown);
        }
        let allocators = report.allocators.iter().enumerate();
        let mut allocators: Vec<(Subject, i64)> = allocators
            .filter(|(_, a)| !a.timeline.time_ps.is_empty())
            .map(|(i, a)| (Subject::Allocator(i), a.peak_bytes))
            .collect();
        let profiles = report.device_memory.iter().enumerate();
        let mut profiles: Vec<(Subject, i64)> = profiles
            .filter(|(_, p)| p.total_bytes > 0)
            .map(|(i, p)| (Subject::DeviceMemory(i), p.total_bytes))
            .collect();

        let torch = report.torch_snapshots.iter().enumerate();
        let mut torch: Vec<(Subject, i64)> =
            torch.filter(|(_, t)| t.peak_bytes > 0).map(|(i, t)| (Subject::TorchSnapshot(i), t.peak_bytes)).collect();
        let mut folded = Vec::new();
        let folded_spaces = fold_past(&mut live_spaces, MAX_CHARTED, &mut folded);
        let folded_allocators = fold_past(&mut allocators, MAX_CHARTED, &mut folded);
        let folded_profiles = fold_past(&mut profiles, MAX_CHARTED, &mut folded);
        let folded_torch = fold_past(&mut torch, MAX_CHARTED, &mut folded);
        let mut charted_allocators = vec![false; report.allocators.len()];
        let mut charted_profiles = vec![false; report.device_memory.len()];
        let mut charted_torch = vec![false; report.torch_snapshots.len()];
        for (subject, _) in allocators.iter().chain(&profiles).chain(&torch) {
            match *subject {
                Subject::Allocator(i) => charted_allocators[i] = true,
                Subject::DeviceMemory(i) => charted_profiles[i] = true,
                Subject::TorchSnapshot(i) => charted_torch[i] = true,
                Subject::MemorySpace { .. } => {}
            }
        }
        for (subject, _) in &folded {
            if let Subject::MemorySpace { module, space } = *subject {
                spaces[module][space] = Shown::Not;
            }
        }
        let not_charted = (!folded.is_empty()).then(|| {
            folded.sort_by_key(|(_, peak)| std::cmp::Reverse(*peak));
            let rest = folded.split_off(folded.len().min(MAX_SUMMARY_BARS));
            NotCharted {
                largest: folded,
                rest_count: rest.len(),
                rest_bytes: sum_bytes(rest.iter().map(|(_, peak)| *peak)),
                memory_spaces: folded_spaces,
                allocators: folded_allocators,
                device_memory: folded_profiles,
                torch_snapshots: folded_torch,
            }
        });
        ChartPlan {
            spaces,
            allocators: charted_allocators,
            device_memory: charted_profiles,
            torch_snapshots: charted_torch,
            top,
            bars: top.min(MAX_BARS),
            problems,
            empty_spaces,
            not_charted,
        }
    }

    fn shown(&self, module: usize, space: usize) -> Shown {
        self.spaces.get(module).and_then(|spaces| spaces.get(space)).copied().unwrap_or(Shown::Not)
    }

    /// The charts of `report.modules[module].memory_spaces[space]`, in reading order.
    pub fn space_charts(&self, module: usize, space: usize) -> &'static [ChartKind] {
        match self.shown(module, space) {
            Shown::Charts(kinds) => kinds,
            Shown::Not | Shown::Figures => &[],
        }
    }

    /// Whether a page shows `report.modules[module].memory_spaces[space]` in
    /// a section of its own: its figures, and its charts if it has any.
    pub fn shows_space(&self, module: usize, space: usize) -> bool {
        self.shown(module, space) != Shown::Not
    }

    /// Whether `report.modules[module]`, which could not be analysed, gets a section saying why.
    pub fn shows_problem(&self, module: usize) -> bool {
        self.problems.get(module).copied().unwrap_or(false)
    }

    /// Whether a page shows any memory space of `report.modules[module]`.
    pub fn shows_module(&self, module: usize) -> bool {
        self.spaces.get(module).is_some_and(|spaces| spaces.iter().any(|&shown| shown != Shown::Not))
    }

    /// Whether `report.allocators[i]` gets its timeline.
    pub fn charts_allocator(&self, i: usize) -> bool {
        self.allocators.get(i).copied().unwrap_or(false)
    }

    /// Whether `report.device_memory[i]` gets its charts.
    pub fn charts_device_memory(&self, i: usize) -> bool {
        self.device_memory.get(i).copied().unwrap_or(false)
    }

    /// Whether `report.torch_snapshots[i]` gets its charts.
    pub fn charts_torch_snapshot(&self, i: usize) -> bool {
        self.torch_snapshots.get(i).copied().unwrap_or(false)
    }
}

/// Moves the subjects of `group` past the `cap` with the largest peaks
/// (the earlier first among equals) to `folded`; returns how many.
fn fold_past(group: &mut Vec<(Subject, i64)>, cap: usize, folded: &mut Vec<(Subject, i64)>) -> usize {
    if group.len() <= cap {
        return 0;
    }
    // A stable sort: equal peaks keep the report's order.
    group.sort_by_key(|(_, peak)| std::cmp::Reverse(*peak));
    let past = group.split_off(cap);
    let count = past.len();
    folded.extend(past);
    count
}

/// `text` cut to about `max_chars` characters, ending with `…` when cut:
/// how charts and pages show text from the input in the room they have
/// ([`MAX_LABEL_CHARS`] at most).
pub fn shorten(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let end = text.char_indices().nth(max_chars.saturating_sub(1)).map_or(text.len(), |(at, _)| at);
            Cow::Owned(format!("{}…", &text[..end]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_are_kept_and_equals_keep_the_reports_order() {
        let space = |i| (Subject::Allocator(i), [5, 9, 5, 1, 9][i]);
        let mut group: Vec<(Subject, i64)> = (0..5).map(space).collect();
        let mut folded = Vec::new();
        assert_eq!(fold_past(&mut group, 3, &mut folded), 2);
        assert_eq!(group, vec![space(1), space(4), space(0)]);
        assert_eq!(folded, vec![space(2), space(3)]);
        assert_eq!(fold_past(&mut group, 3, &mut folded), 0, "within the cap, nothing moves");
    }

    #[test]
    fn shorten_cuts_at_a_character_with_an_ellipsis() {
        assert_eq!(shorten("abcdef", 6), "abcdef");
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("ééééé", 3), "éé…");
    }
}

use std::collections::HashSet;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use anyhow::Context;

use super::args::{Format, PlotArgs};
use super::{output, Outcome};
use crate::analysis::{AllocatorReport, MemorySpaceReport, ModuleReport};
use crate::render::svg::{self, allocator_chart_caption, ChartKind};

pub fn run(args: PlotArgs) -> anyhow::Result<Outcome> {
    // Paths are for scripts as much as for people: written whole, as JSON is, never cut to the terminal.
    let mut listing = Listing(Some(output::open(None, Format::Json)?));
    write_charts(&args, |path| listing.print(path))?;
    listing.finish()?;
    Ok(Outcome::Success)
}

/// Writes the charts the arguments ask for, calling `saved` with each file
/// written; an error from `saved` stops the writing.
pub fn write_charts(args: &PlotArgs, mut saved: impl FnMut(&Path) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let report = output::selected_report(
        std::slice::from_ref(&args.input),
        &args.selection,
        &args.input_options,
        &Default::default(),
    )?;
    fs::create_dir_all(&args.output).with_context(|| format!("cannot create {}", args.output.display()))?;
    let mut names = FileNames::default();
    let mut written = 0;
    // As `report` details them: the largest module, unless --all or --module asks for more.
    let shown = if args.selection.detail().all { report.modules.len() } else { 1 };
    if report.modules.len() > shown {
        let others = report.modules.len() - shown;
        eprintln!("xmem: charts of the largest module only; --all draws the other {others}, --module NAME one of them");
    }
    for module in report.modules.iter().take(shown) {
        if let Some(problem) = &module.problem {
            eprintln!("xmem: {}: nothing to plot: {problem}", module.display_name());
        }
        for space in &module.memory_spaces {
            let charts = svg::space_charts(module, space, args.selection.top)
                .with_context(|| format!("drawing {} {}", module.display_name(), space.name))?;
            for (kind, chart) in charts {
                save(&args.output.join(names.claim(module, space, kind)), &chart, &mut saved)?;
                written += 1;
            }
        }
    }
    for snapshot in &report.device_memory {
        let caption = format!("{}: allocation sites by function", snapshot.input);
        let chart = svg::sites::draw(&caption, snapshot, args.selection.top)
            .with_context(|| format!("drawing the allocation sites of {}", snapshot.input))?;
        let stem = Path::new(&snapshot.input).file_stem().map(|s| safe(&s.to_string_lossy())).unwrap_or_default();
        if let Some(chart) = chart {
            save(&args.output.join(names.claim_stem(&stem, ChartKind::Sites)), &chart, &mut saved)?;
            written += 1;
        }
        let caption = format!("{}: live memory by stack", snapshot.input);
        if let Some(chart) = svg::flame::device_memory(&caption, snapshot)? {
            save(&args.output.join(names.claim_stem(&stem, ChartKind::Flame)), &chart, &mut saved)?;
            written += 1;
        }
    }
    for snapshot in &report.torch_snapshots {
        let charts = svg::torch_snapshot_charts(snapshot, args.selection.top)
            .with_context(|| format!("drawing {} {}", snapshot.input, snapshot.device))?;
        let stem = format!("{}.{}", snapshot_stem(&snapshot.input), safe(&snapshot.device));
        for (kind, chart) in charts {
            save(&args.output.join(names.claim_stem(&stem, kind)), &chart, &mut saved)?;
            written += 1;
        }
    }
    for allocator in &report.allocators {
        let caption = allocator_chart_caption(allocator);
        let chart = svg::timeline::allocator(&caption, allocator)
            .with_context(|| format!("drawing the timeline of allocator {}", allocator.display_name()))?;
        if let Some(chart) = chart {
            save(&args.output.join(names.claim_allocator(allocator)), &chart, &mut saved)?;
            written += 1;
        }
    }
    if written == 0 {
        anyhow::bail!("{}: no module has anything to plot", args.input.display());
    }
    Ok(())
}

fn save(path: &Path, chart: &str, saved: &mut impl FnMut(&Path) -> anyhow::Result<()>) -> anyhow::Result<()> {
    fs::write(path, chart).with_context(|| format!("cannot write {}", path.display()))?;
    saved(path)
}

/// The paths of the charts written, one a line on standard output, so a
/// script can pick the files up. A reader that goes away (`| head -1`)
/// stops the listing, never the charts.
struct Listing(Option<Box<dyn Write>>);

impl Listing {
    fn print(&mut self, path: &Path) -> anyhow::Result<()> {
        if let Some(out) = &mut self.0 {
            if let Err(e) = writeln!(out, "{}", path.display()).and_then(|()| out.flush()) {
                self.0 = None;
                output::finish(Err(e), &mut io::sink())?;
            }
        }
        Ok(())
    }

    fn finish(self) -> anyhow::Result<()> {
        match self.0 {
            Some(mut out) => output::finish(Ok(()), &mut out),
            None => Ok(()),
        }
    }
}

/// File names for charts, `<module>.<space>.<chart>.svg` (`<profile>.sites.svg`
/// for a device memory profile, `<host>.<allocator>.timeline.svg` for an
/// allocator, `<snapshot>.cuda_0.timeline.svg` for a PyTorch snapshot's device), safe on any file system (module names hold `(`, `)`, `/`, …)
/// and never used twice.
#[derive(Default)]
struct FileNames {
    taken: HashSet<String>,
}

impl FileNames {
    fn claim(&mut self, module: &ModuleReport, space: &MemorySpaceReport, kind: ChartKind) -> String {
        let mut stem = format!("{}.{}", safe(&module.display_name()), safe(&space.name));
        let colour_has_several_traces = module.memory_spaces.iter().filter(|s| s.color == space.color).count() > 1;
        if let (true, Some(trace)) = (colour_has_several_traces, space.trace_index) {
            stem.push_str(&format!(".trace{trace}"));
        }
        self.claim_stem(&stem, kind)
    }

    fn claim_allocator(&mut self, allocator: &AllocatorReport) -> String {
        self.claim_stem(&format!("{}.{}", safe(&allocator.host), safe(&allocator.name)), ChartKind::Timeline)
    }

    /// `<stem>.<chart>.svg`, or `<stem>-2.<chart>.svg`, … when taken.
    fn claim_stem(&mut self, stem: &str, kind: ChartKind) -> String {
        let mut name = format!("{stem}.{}.svg", kind.name());
        for n in 2.. {
            if self.taken.insert(name.clone()) {
                break;
            }
            name = format!("{stem}-{n}.{}.svg", kind.name());
        }
        name
    }
}

/// `oom` of `runs/oom.pickle.gz`: the file's name without the extensions snapshots are saved with.
fn snapshot_stem(input: &str) -> String {
    let name = Path::new(input).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let name = [".pickle", ".pkl"].iter().find_map(|ext| name.strip_suffix(ext)).unwrap_or(name);
    safe(name)
}

/// ASCII letters, digits and `-` kept, anything else `_`, at most 100
/// characters, no `_` at either end: `jit_step(22)` becomes `jit_step_22`.
fn safe(name: &str) -> String {
    let replaced: String =
        name.chars().take(100).map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    match replaced.trim_matches('_') {
        "" => "unnamed".to_string(),
        trimmed => trimmed.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::safe;

    #[test]
    fn names_are_safe_file_names() {
        assert_eq!(safe("jit_train_step(44)"), "jit_train_step_44");
        assert_eq!(safe("jit__normal(10)"), "jit__normal_10");
        assert_eq!(safe("../../etc/passwd"), "etc_passwd");
        assert_eq!(safe(".hidden"), "hidden");
        assert_eq!(safe("color 7"), "color_7");
        assert_eq!(safe("()"), "unnamed");
        assert_eq!(safe(&"x".repeat(300)).len(), 100);
    }
}

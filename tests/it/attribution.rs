//! Who owns the peak: groupings that add up to the peak and agree with
//! XProf's buffers, the live set at any event, distinct peaks, donation
//! candidates and the pprof export.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use xmem::analysis::attribution::{self, Group, Options, PeakSearch, ProgramPoint, NO_SOURCE};
use xmem::analysis::heap_simulation::SMALL_BUFFER_BYTES;
use xmem::analysis::{self, MemorySpaceReport, Report, TraceStatus};
use xmem::ingest::{self, ReadOptions};

fn report(input: &Path, options: &Options) -> Report {
    let capture = ingest::load(input, &ReadOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
    analysis::analyze_with(std::slice::from_ref(&capture), options)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles")
}

/// Every input of a directory of workloads: each profile and each XLA dump.
fn inputs(root: &Path) -> Vec<PathBuf> {
    subdirectories(root)
        .into_iter()
        .flat_map(|dir| [dir.join("profile"), dir.join("xla_dump")])
        .filter(|input| input.is_dir() && ingest::load(input, &ReadOptions::default()).is_ok())
        .collect()
}

fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// Third-party inputs beside the corpus (`corpus/external/<source>/<name>`:
/// a log dir in `profile/`, a directory of protos, or device memory profiles),
/// when present; those xmem cannot read are left to the bad-input tests.
fn external_inputs() -> Vec<PathBuf> {
    let Some(profiles) = common::shared_corpus() else { return Vec::new() };
    let mut inputs = Vec::new();
    for name in subdirectories(&profiles.join("../external")).iter().flat_map(|source| subdirectories(source)) {
        if name.join("profile").is_dir() {
            inputs.push(name.join("profile"));
        } else if ingest::load(&name, &ReadOptions::default()).is_ok() {
            inputs.push(name);
        } else {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&name).unwrap().map(|e| e.unwrap().path()).collect();
            files.sort();
            inputs.extend(files);
        }
    }
    inputs.retain(|input| ingest::load(input, &ReadOptions::default()).is_ok());
    inputs
}

fn sum(groups: &[Group]) -> i64 {
    groups.iter().map(|g| g.bytes).sum()
}

/// Every grouping of every simulated memory space adds up to its peak.
fn check_groupings_sum_to_the_peak(inputs: &[PathBuf]) -> usize {
    let mut checked = 0;
    let mut failures = Vec::new();
    for input in inputs {
        let report = report(input, &Options::default());
        for snapshot in &report.device_memory {
            let groups = attribution::device_memory_groups(snapshot);
            if sum(&groups) != snapshot.total_bytes {
                failures.push(format!(
                    "{}: by source sums to {}, not {}",
                    input.display(),
                    sum(&groups),
                    snapshot.total_bytes
                ));
            }
            checked += 1;
        }
        for allocator in &report.allocators {
            let groups = attribution::allocator_groups(allocator);
            if sum(&groups) != allocator.peak_heap_bytes {
                failures.push(format!("{} {}: by op sums to {}", input.display(), allocator.name, sum(&groups)));
            }
            checked += 1;
        }
        for module in report.modules {
            for space in &module.memory_spaces {
                if space.heap_simulation != TraceStatus::Simulated {
                    continue;
                }
                let groups = &space.attribution.at_peak_groups;
                let expected = space.peak_bytes;
                for (name, grouping) in [
                    ("by_source", &groups.by_source),
                    ("by_op_name", &groups.by_op_name),
                    ("by_category", &groups.by_category),
                ] {
                    if sum(grouping) != expected {
                        failures.push(format!(
                            "{} {} {}: {name} sums to {}, not {expected}",
                            input.display(),
                            module.display_name(),
                            space.name,
                            sum(grouping),
                        ));
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{} groupings differ from the peak:\n{}", failures.len(), failures.join("\n"));
    checked
}

#[test]
fn every_grouping_of_every_fixture_sums_to_the_peak() {
    let mut all = inputs(&fixtures());
    let pprof = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pprof");
    all.extend(subdirectories(&pprof).iter().flat_map(|dir| {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "prof"))
    }));
    let checked = check_groupings_sum_to_the_peak(&all);
    // 50 memory spaces with a heap-simulator trace (token_mixer's one, the
    // PyTorch/XLA pair's two and gpu_mlp_adam's six among them), 4 allocators,
    // 10 device memory profiles.
    assert_eq!(checked, 64);
}

#[test]
fn padding_is_named_where_it_is_most_of_a_tpu_peak() {
    let Some(root) = common::shared_corpus() else { return };
    let input = root.join("../external/xprof/tpu_inference_2_v1/profile");
    let tpu = report(&input, &Options::default());
    let module = tpu.modules.iter().find(|m| m.name == "jit_broadcast_in_dim").unwrap();
    let space = module.memory_spaces.iter().find(|s| s.name == "sparsecore").unwrap();
    let hint = space.attribution.padding.as_ref().expect("a padding hint");
    // An f32[] of 4 bytes tiled to 512 on the SparseCore.
    assert_eq!((space.peak_bytes, space.peak_unpadded_bytes, hint.padding_bytes), (512, 4, 508));
    assert_eq!(hint.buffers[0].shape, "f32[]{:T(128)S(6)}");
    // No padding on CPU, so no hint on any fixture.
    for input in inputs(&fixtures()) {
        let fixture = report(&input, &Options::default());
        assert!(fixture.modules.iter().flat_map(|m| &m.memory_spaces).all(|s| s.attribution.padding.is_none()));
    }
}

#[test]
fn every_grouping_of_the_shared_corpus_sums_to_the_peak() {
    let Some(root) = common::shared_corpus() else { return };
    let mut all = inputs(&root);
    let external = external_inputs();
    all.extend(external.iter().cloned());
    let checked = check_groupings_sum_to_the_peak(&all);
    eprintln!(
        "{checked} live sets (memory spaces, allocators, device memory profiles) of {} inputs ({} external) checked",
        all.len(),
        external.len()
    );
}

/// XProf's source line of a buffer in `maxHeap`, as xmem keys it.
fn oracle_source(buffer: &Value) -> String {
    let info = &buffer["sourceInfo"];
    match (info["fileName"].as_str(), info["lineNumber"].as_i64()) {
        (Some(file), Some(line)) if !file.is_empty() => format!("{file}:{line}"),
        (Some(file), None) if !file.is_empty() => format!("{file}:0"),
        _ => NO_SOURCE.to_string(),
    }
}

/// For every source line, the grouped bytes are XProf's buffers at the peak
/// with that line plus the small buffers XProf folds into one entry.
fn check_sources_against_oracle(input: &Path, oracle_dir: &Path) -> usize {
    let report = report(input, &Options::default());
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(oracle_dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".json") else { continue };
        // `NO_MODULE.memory_space_0.json`: XProf's answer for a profile without modules.
        let Some((module, color)) = stem.rsplit_once(".memory_space_").filter(|(m, _)| m.ends_with(')')) else {
            continue;
        };
        let color: i64 = color.parse().unwrap();
        let oracle: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let Some(module) = report.modules.iter().find(|m| m.display_name() == module) else {
            failures.push(format!("{}: no module {module} in xmem's report", path.display()));
            continue;
        };
        let space: &MemorySpaceReport = module.memory_spaces.iter().find(|s| s.color == color).expect("space");
        let mut expected: BTreeMap<String, i64> = BTreeMap::new();
        for buffer in oracle["maxHeap"].as_array().into_iter().flatten().filter(|b| b["logicalBufferId"] != -1) {
            *expected.entry(oracle_source(buffer)).or_default() +=
                common::mib_to_bytes(&buffer["logicalBufferSizeMib"]);
        }
        for small in space.at_peak.iter().filter(|b| b.size_bytes < SMALL_BUFFER_BYTES) {
            *expected.entry(small.source.clone().unwrap_or_else(|| NO_SOURCE.to_string())).or_default() +=
                small.size_bytes;
        }
        let ours: BTreeMap<String, i64> =
            space.attribution.at_peak_groups.by_source.iter().map(|g| (g.key.clone(), g.bytes)).collect();
        let expected: BTreeMap<String, i64> = expected.into_iter().filter(|(_, bytes)| *bytes != 0).collect();
        let ours: BTreeMap<String, i64> = ours.into_iter().filter(|(_, bytes)| *bytes != 0).collect();
        if ours != expected {
            failures.push(format!("{}: xmem {ours:?}\nXProf {expected:?}", path.display()));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{} of {checked} differ:\n{}", failures.len(), failures.join("\n"));
    checked
}

fn oracle_pairs(root: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    for dir in subdirectories(root) {
        for (input, oracle) in [("profile", "oracle/memory_viewer"), ("xla_dump", "oracle/memory_viewer_from_dump")] {
            if dir.join(input).is_dir() && dir.join(oracle).is_dir() {
                pairs.push((dir.join(input), dir.join(oracle)));
            }
        }
    }
    pairs
}

#[test]
fn bytes_by_source_line_agree_with_xprof_buffers_at_the_peak() {
    let checked: usize = oracle_pairs(&fixtures()).iter().map(|(i, o)| check_sources_against_oracle(i, o)).sum();
    // The memory viewer parity test's 119 oracle files.
    assert_eq!(checked, 119);
}

#[test]
fn bytes_by_source_line_of_the_shared_corpus_agree_with_xprof() {
    let Some(root) = common::shared_corpus() else { return };
    let checked: usize = oracle_pairs(&root).iter().map(|(i, o)| check_sources_against_oracle(i, o)).sum();
    eprintln!("{checked} oracle files agree by source line");
}

#[test]
fn the_live_set_at_the_peak_position_is_the_peak() {
    let mut checked = 0;
    for input in inputs(&fixtures()) {
        let plain = report(&input, &Options::default());
        for module in &plain.modules {
            for space in module.memory_spaces.iter().filter(|s| s.heap_simulation == TraceStatus::Simulated) {
                let id = module.program_id.to_string();
                for point in [
                    ProgramPoint::Event(space.peak_position),
                    ProgramPoint::Instruction(space.peak_instruction.as_deref().unwrap().to_string()),
                ] {
                    let options = Options { at: Some(point), ..Options::default() };
                    let at = report(&input, &options);
                    let same = at.modules.iter().find(|m| m.program_id.to_string() == id).unwrap();
                    let other = same
                        .memory_spaces
                        .iter()
                        .find(|s| s.trace_index == space.trace_index && s.color == space.color)
                        .unwrap();
                    let live = other.attribution.at.as_ref().expect("a live set");
                    assert_eq!(live.position, space.peak_position);
                    assert_eq!(live.heap_bytes, space.peak_bytes);
                    // The same buffers: the live set in program order, the peak's largest first.
                    let ids = |b: &[xmem::analysis::BufferAtPeak]| {
                        let mut ids = b.iter().map(|b| b.logical_buffer_id).collect::<Vec<_>>();
                        ids.sort();
                        ids
                    };
                    assert_eq!(ids(&live.buffers), ids(&space.at_peak), "{} {}", module.display_name(), space.name);
                    checked += 1;
                }
            }
        }
    }
    // Both points for each of the 50 simulated memory spaces.
    assert_eq!(checked, 100);
}

#[test]
fn peaks_of_a_real_module_are_distinct_and_the_first_is_xprofs() {
    let input = common::profile("memory_hungry");
    let oracles = common::oracles("memory_hungry");
    let search = PeakSearch { count: 5, drop: 0.1 };
    let report = report(&input, &Options { peaks: Some(search), ..Options::default() });
    let mut with_several = 0;
    for oracle in &oracles {
        let module = report.modules.iter().find(|m| m.display_name() == oracle.module).unwrap();
        let space = module.memory_spaces.iter().find(|s| s.color == oracle.color).unwrap();
        let peaks = &space.attribution.peaks;
        if oracle.heap_points() < 2 {
            continue;
        }
        assert_eq!(peaks[0].position, oracle.peak_position(), "{}", oracle.module);
        assert_eq!(peaks[0].heap_bytes, oracle.peak_bytes());
        let heap: Vec<i64> = oracle.json["heapSizes"].as_array().unwrap().iter().map(common::mib_to_bytes).collect();
        for live in peaks {
            // XProf's heapSizes[i] is the heap before event i.
            assert_eq!(live.heap_bytes, heap[live.position + 1], "{} event {}", oracle.module, live.position);
            assert_eq!(live.groups.by_source.iter().map(|g| g.bytes).sum::<i64>(), live.heap_bytes);
        }
        let mut by_position: Vec<_> = peaks.iter().map(|p| (p.position, p.heap_bytes)).collect();
        by_position.sort();
        for pair in by_position.windows(2) {
            let ((a, a_bytes), (b, b_bytes)) = (pair[0], pair[1]);
            let low = *heap[a + 1..=b + 1].iter().min().unwrap();
            assert!(low as f64 <= a_bytes as f64 * 0.9, "{}: no 10% drop between events {a} and {b}", oracle.module);
            assert!(b_bytes > low);
        }
        with_several += usize::from(peaks.len() > 1);
    }
    assert!(with_several > 0, "no module of memory_hungry has a second peak");
}

#[test]
fn donation_candidates_of_the_copy_are_what_donating_saved() {
    let dump = fixtures().join("donation/xla_dump");
    let report = report(&dump, &Options::default());
    let module = |name: &str| report.modules.iter().find(|m| m.name == name).unwrap();
    let (copy, donated) = (module("jit_update_copy"), module("jit_update_donated"));
    let names: Vec<&str> = copy.donation_candidates.iter().map(|c| c.parameter.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["mom[0]", "mom[1]", "mom[2]", "mom[3]", "params[0]", "params[1]", "params[2]", "params[3]"]);
    assert!(donated.donation_candidates.is_empty(), "{:?}", donated.donation_candidates);
    // XProf's peaks of the two compilations differ by exactly what donating saved.
    let oracle = |name: &str| {
        let path =
            fixtures().join("donation/oracle/memory_viewer_from_dump").join(format!("{name}.memory_space_0.json"));
        let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        common::mib_to_bytes(&json["peakHeapMib"])
    };
    let saved = oracle("jit_update_copy(20)") - oracle("jit_update_donated(18)");
    assert_eq!(copy.donation_candidates.iter().map(|c| c.bytes_at_most).sum::<i64>(), saved);
}

#[test]
fn the_report_names_the_parameters_to_donate() {
    let dump = fixtures().join("donation/xla_dump");
    let out = Command::new(env!("CARGO_BIN_EXE_xmem"))
        .args(["report", "--module", "jit_update_copy", "--top", "3"])
        .arg(&dump)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // params[2] and mom[2] save 16 KiB each: left out of the 8.
    assert!(text.contains("Donation: 6 parameters"), "{text}");
    assert!(
        text.contains("params[0] (parameter 0, f32[1024,4096]{1,0}) could become output {0}: saves up to 16.0 MiB"),
        "{text}"
    );
}

/// `go tool pprof -top -unit=B` on an export, its total in bytes.
fn pprof_total(go: &Path, profile: &Path) -> i64 {
    let out = Command::new(go).args(["tool", "pprof", "-top", "-unit=B"]).arg(profile).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // "Showing nodes accounting for 193604044B, 100% of 193604044B total"
    let line = text.lines().find(|l| l.contains("% of ")).unwrap_or_else(|| panic!("{text}"));
    let total = line.rsplit("% of ").next().unwrap().trim_end_matches(" total").trim_end_matches('B');
    total.parse().unwrap_or_else(|_| panic!("{line}"))
}

fn go() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join("go")).find(|go| go.is_file()));
    if found.is_none() {
        eprintln!("skipped: no go on PATH for go tool pprof");
    }
    found
}

#[test]
fn go_tool_pprof_totals_the_export_of_every_fixture_module_to_its_peak() {
    let Some(go) = go() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for input in inputs(&fixtures()) {
        for module in report(&input, &Options::default()).modules {
            let id = module.program_id;
            for space in module.memory_spaces.iter().filter(|s| s.shown_by_xprof && s.peak_bytes > 0) {
                // --memory-space keeps every trace of the colour.
                let expected: i64 =
                    module.memory_spaces.iter().filter(|s| s.color == space.color).map(|s| s.peak_bytes).sum();
                let file = dir.path().join(format!("{checked}.pb.gz"));
                let status = Command::new(env!("CARGO_BIN_EXE_xmem"))
                    .args(["report", "--format", "pprof", "--module", &id.to_string(), "--memory-space"])
                    .arg(space.color.to_string())
                    .arg("-o")
                    .arg(&file)
                    .arg(&input)
                    .status()
                    .unwrap();
                assert!(status.success());
                assert_eq!(pprof_total(&go, &file), expected, "{} {}", module.display_name(), space.name);
                checked += 1;
            }
        }
    }
    // Every fixture module and memory space with a peak (colours with several traces once):
    // 101, and the 19 modules of gpu_mlp_adam.
    assert_eq!(checked, 120);
}

/// `go tool pprof -top -cum` of an export, every node: its name and cumulative bytes;
/// with `focus`, the bytes the focused nodes account for.
fn pprof_cum(go: &Path, profile: &Path, focus: Option<&str>) -> (HashMap<String, i64>, i64) {
    let mut command = Command::new(go);
    command.args(["tool", "pprof", "-top", "-cum", "-unit=B", "-nodefraction=0", "-nodecount=1000000"]);
    if let Some(focus) = focus {
        command.arg(format!("-focus={focus}"));
    }
    let out = command.arg(profile).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes = |cell: &str| cell.trim_end_matches('B').parse::<i64>().unwrap_or_else(|_| panic!("{cell}: {text}"));
    // "Showing nodes accounting for 193604044B, 100% of 193604044B total"
    let shown = text.lines().find_map(|l| l.strip_prefix("Showing nodes accounting for ")).unwrap();
    let shown = bytes(shown.split(',').next().unwrap());
    let rows = text.lines().skip_while(|l| !l.trim_start().starts_with("flat")).skip(1);
    let cum = rows
        .map(|row| {
            let cells: Vec<&str> = row.split_whitespace().collect();
            (cells[5..].join(" "), bytes(cells[3]))
        })
        .collect();
    (cum, shown)
}

/// A Go regular expression that matches `name` exactly.
fn exactly(name: &str) -> String {
    let escaped: String =
        name.chars().flat_map(|c| if "()[]{}.*+?^$|\\".contains(c) { vec!['\\', c] } else { vec![c] }).collect();
    format!("^{escaped}$")
}

/// Issue 24: a whole profile's export has each program as a root frame,
/// so `go tool pprof -top` totals each program to its peak and `-focus`
/// on one shows that program alone; an instruction name two programs share
/// is two nodes, not one summed across them.
#[test]
fn go_tool_pprof_totals_each_program_of_a_whole_export_to_its_peak() {
    let Some(go) = go() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for input in inputs(&fixtures()) {
        let report = report(&input, &Options::default());
        let file = dir.path().join(format!("{checked}.pb.gz"));
        let status = Command::new(env!("CARGO_BIN_EXE_xmem"))
            .args(["report", "--format", "pprof", "-o"])
            .arg(&file)
            .arg(&input)
            .status()
            .unwrap();
        assert!(status.success());
        let (cum, _) = pprof_cum(&go, &file, None);
        for module in report.modules.iter().filter(|m| m.largest_peak() > 0) {
            let peak: i64 = module.memory_spaces.iter().map(|s| s.peak_bytes).sum();
            assert_eq!(cum.get(&module.display_name()), Some(&peak), "{}: {}", input.display(), module.display_name());
            checked += 1;
        }
        if let Some(largest) = report.modules.first().filter(|_| report.modules.len() > 1) {
            let (_, focused) = pprof_cum(&go, &file, Some(&exactly(&largest.display_name())));
            let peak: i64 = largest.memory_spaces.iter().map(|s| s.peak_bytes).sum();
            assert_eq!(focused, peak, "{}: -focus {}", input.display(), largest.display_name());
        }
    }
    // Every fixture module with a peak (the per-module test's count, less colours counted twice).
    assert!(checked >= 100, "{checked}");
}

#[test]
fn the_flame_graph_of_a_peak_has_its_bytes_in_the_root_tooltip() {
    let report = report(&common::profile("mlp_train"), &Options::default());
    let space = &report.modules[0].memory_spaces[0];
    let svg = xmem::render::svg::flame::buffers("peak", &space.at_peak).unwrap().unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let titles: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("title")).filter_map(|n| n.text()).collect();
    let root = format!("all ({} bytes, 100%)", common::thousands(space.peak_bytes));
    assert!(titles.contains(&root.as_str()), "no {root:?} in {:?}", &titles[..titles.len().min(5)]);
    // A Python frame of the training step, with its share.
    assert!(titles.iter().any(|t| t.starts_with("wl_mlp_train.py:51 (") && t.ends_with("%)")), "{titles:?}");
    assert!(!svg.contains("<script"), "the chart must stay script-free for the HTML report");
}

#[test]
fn a_diff_groups_the_change_by_source_line_before_the_buffers() {
    let out = Command::new(env!("CARGO_BIN_EXE_xmem"))
        .args(["diff", "--format", "json"])
        .arg(common::profile("pair_base"))
        .arg(common::profile("pair_new"))
        .output()
        .unwrap();
    let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
    let step = diff["modules"].as_array().unwrap().iter().find(|m| m["name"] == "jit_wide_mlp_step").unwrap();
    let by_source = step["groups"]["by_source"].as_array().unwrap();
    let delta: i64 = by_source.iter().map(|g| g["delta_bytes"].as_i64().unwrap()).sum();
    assert_eq!(delta, step["delta_bytes"].as_i64().unwrap());
    let base = oracle_peak("pair_base", "jit_wide_mlp_step");
    let new = oracle_peak("pair_new", "jit_wide_mlp_step");
    assert_eq!(delta, new - base);
    // Each source line names the op whose bytes there grew most, by XProf's buffers at the two peaks.
    let mut by_op: BTreeMap<(String, String), i64> = BTreeMap::new();
    for (workload, sign) in [("pair_base", -1), ("pair_new", 1)] {
        let oracles = common::oracles(workload);
        let oracle = oracles.iter().find(|o| o.module.starts_with("jit_wide_mlp_step(")).unwrap();
        for buffer in oracle.buffers_at_peak() {
            let key = (oracle_source(buffer), buffer["tfOpName"].as_str().unwrap_or_default().to_string());
            *by_op.entry(key).or_default() += sign * common::mib_to_bytes(&buffer["logicalBufferSizeMib"]);
        }
    }
    for group in by_source.iter().filter(|g| g["key"] != NO_SOURCE) {
        let key = group["key"].as_str().unwrap();
        let largest =
            by_op.iter().filter(|((source, op), _)| source == key && !op.is_empty()).max_by_key(|(_, d)| d.abs());
        assert_eq!(group["op_name"].as_str(), largest.map(|((_, op), _)| op.as_str()), "{key}");
    }
}

fn oracle_peak(workload: &str, module: &str) -> i64 {
    common::oracles(workload).iter().find(|o| o.module.starts_with(&format!("{module}("))).unwrap().peak_bytes()
}

#[test]
fn op_name_scopes_at_depth_one_are_the_jitted_functions() {
    let options = Options { op_name_depth: Some(1), ..Options::default() };
    let report = report(&common::profile("mlp_train"), &options);
    let space = &report.modules[0].memory_spaces[0];
    let keys: Vec<&str> = space.attribution.at_peak_groups.by_op_name.iter().map(|g| g.key.as_str()).collect();
    assert!(keys.contains(&"jit(train_step)"), "{keys:?}");
    assert!(keys.iter().all(|k| !k.contains('/')), "{keys:?}");
    assert_eq!(sum(&space.attribution.at_peak_groups.by_op_name), space.peak_bytes);
}

#[test]
fn at_an_instruction_shows_the_live_set_at_its_highest_point_and_at_a_missing_event_says_why() {
    let oracle =
        common::oracles("memory_hungry").into_iter().find(|o| o.module == "jit_naive_attention_grad(16)").unwrap();
    let heap: Vec<i64> = oracle.json["heapSizes"].as_array().unwrap().iter().map(common::mib_to_bytes).collect();
    let names: Vec<&str> =
        oracle.json["hloInstructionNames"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    // XProf's heap after each event of broadcast_add_fusion; the highest is the one --at shows.
    let (event, bytes) = names
        .iter()
        .enumerate()
        .filter(|(_, n)| **n == "broadcast_add_fusion")
        .map(|(i, _)| (i, heap[i + 1]))
        // The highest, the first of equal ones.
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .unwrap();
    let run = |at: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_xmem"))
            .args(["report", "--module", "jit_naive_attention_grad", "--top", "3", "--at", at])
            .arg(common::profile("memory_hungry"))
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run("broadcast_add_fusion");
    let title = format!(
        "Live after event {event} (broadcast_add_fusion): {} ({bytes} bytes)",
        xmem::render::table::bytes(bytes)
    );
    assert!(text.contains(&title), "no {title:?} in\n{text}");
    let text = run("999");
    let last = heap.len() - 2;
    assert!(text.contains(&format!("Note: hbm (color 0): --at 999: the trace has events 0 to {last}")), "{text}");
}

/// Issue 24: a hint that saves less than 1 MiB, or 0.1% of the peak, is not
/// worth reading (`t (parameter 26, f32[]) ... saves up to 4 B`); JSON keeps
/// every candidate.
#[test]
fn donation_hints_leave_out_what_saves_next_to_nothing() {
    let gpu = common::profile("gpu_mlp_adam");
    let report = report(&gpu, &Options::default());
    let step = report.modules.iter().find(|m| m.name == "jit_train_step").unwrap();
    assert_eq!(step.donation_candidates.iter().map(|c| c.bytes_at_most).collect::<Vec<_>>(), [4]);
    let out = Command::new(env!("CARGO_BIN_EXE_xmem")).arg("report").arg(&gpu).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("Donation:"), "{text}");

    let dump = fixtures().join("donation/xla_dump");
    let out = Command::new(env!("CARGO_BIN_EXE_xmem"))
        .args(["report", "--module", "jit_update_copy"])
        .arg(&dump)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // params[2] and mom[2] are 16 KiB each.
    assert!(
        text.contains("Donation: 6 parameters") && text.contains("; 2 more, each saving less than 1 MiB"),
        "{text}"
    );
    assert!(!text.contains("params[2] (parameter 2"), "{text}");
}

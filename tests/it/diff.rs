//! `xmem diff` run as a user runs it, on the real regression pair in
//! `fixtures/profiles/pair_base` and `pair_new` (a wide-MLP step at width 1024
//! and 1536), and for allocators on the two TensorFlow runs `tf_keras_fit`
//! and `tf_keras_xla` (one BFC allocator each, on host `vm`). Expected peaks
//! come from XProf 2.24.2's own oracle files.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use prost::Message;
use serde_json::Value;
use xmem::ingest::proto::xla::{HloModuleProto, HloProto};

const BASE: &str = "fixtures/profiles/pair_base/profile";
const NEW: &str = "fixtures/profiles/pair_new/profile";
const BASE_DUMP: &str =
    "fixtures/profiles/pair_base/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb";
const NEW_DUMP: &str =
    "fixtures/profiles/pair_new/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb";
const MAIN_MODULE: &str = "jit_wide_mlp_step";
/// A Keras fit without XLA: allocator events, no XLA module.
const TF_FIT: &str = "fixtures/profiles/tf_keras_fit/profile";
/// A Keras fit with XLA: the same allocator, and two XLA modules.
const TF_XLA: &str = "fixtures/profiles/tf_keras_xla/profile";
const ALLOCATOR: &str = "bfc_cpu_allocator_for_gpu";

fn xmem() -> Command {
    let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("xmem");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// XProf's peak of every module's memory space 0, in bytes, keyed by (name, program id).
fn oracle_peaks(workload: &str) -> BTreeMap<(String, u64), i64> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles").join(workload).join("oracle/memory_viewer");
    let mut peaks = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path: PathBuf = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(module) = file.strip_suffix(".memory_space_0.json") else { continue };
        let (name, id) = module.strip_suffix(')').and_then(|m| m.rsplit_once('(')).unwrap();
        let oracle: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mib = oracle["peakHeapMib"].as_f64().unwrap();
        peaks.insert((name.to_string(), id.parse().unwrap()), (mib * (1 << 20) as f64).round() as i64);
    }
    peaks
}

fn diff_json(args: &[&str]) -> Value {
    let output = xmem().arg("diff").args(args).args(["--format", "json"]).output().unwrap();
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The growth of the main module's peak, from the oracles: (bytes, ratio).
fn main_module_growth() -> (i64, f64) {
    let (base, new) = (oracle_peaks("pair_base"), oracle_peaks("pair_new"));
    let key = (MAIN_MODULE.to_string(), 40);
    let delta = new[&key] - base[&key];
    (delta, delta as f64 / base[&key] as f64)
}

/// `diff base new flag bytes` passes; one byte less fails, and that run is returned to check its output.
fn limit_just_under_fails(base: &str, new: &str, flag: &str, bytes: i64) -> assert_cmd::assert::Assert {
    xmem()
        .args(["diff", base, new, flag, &format!("{bytes}B")])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("Verdict: PASS"));
    xmem().args(["diff", base, new, flag, &format!("{}B", bytes - 1)]).assert().code(1)
}

/// A percentage limit written with three decimals just under and just over `ratio`.
fn percent_around(ratio: f64) -> (String, String) {
    let percent = ratio * 100.0;
    (format!("{:.3}%", (percent * 1000.0).floor() / 1000.0), format!("{:.3}%", (percent * 1000.0).ceil() / 1000.0))
}

#[test]
fn deltas_are_the_difference_of_the_oracle_peaks() {
    let (base, new) = (oracle_peaks("pair_base"), oracle_peaks("pair_new"));
    assert_eq!(base.len(), 21);
    let diff = diff_json(&[BASE, NEW]);
    assert_eq!(diff["schema"], "xmem.diff/1");
    let modules = diff["modules"].as_array().unwrap();
    assert_eq!(modules.len(), base.len());
    for module in modules {
        let name = module["name"].as_str().unwrap().to_string();
        let id = module["base_program_id"].as_u64().unwrap();
        assert_eq!(module["new_program_id"].as_u64(), Some(id), "{name}: paired with another compilation");
        let key = (name, id);
        assert_eq!(module["base_peak_bytes"].as_i64(), Some(base[&key]), "{key:?}");
        assert_eq!(module["new_peak_bytes"].as_i64(), Some(new[&key]), "{key:?}");
        assert_eq!(module["delta_bytes"].as_i64(), Some(new[&key] - base[&key]), "{key:?}");
    }
    // Largest change first: the main module grew most.
    assert_eq!(modules[0]["name"], MAIN_MODULE);
    // serde_json reads floats to within one unit in the last place.
    let ratio = modules[0]["delta_ratio"].as_f64().unwrap();
    assert!((ratio - main_module_growth().1).abs() < 1e-12, "{ratio}");
}

#[test]
fn changed_buffers_add_up_to_the_change_of_the_peak() {
    // Every buffer live at either peak is listed unless unchanged, so the
    // deltas of the listed ones sum to the change of the peak.
    let diff = diff_json(&[BASE_DUMP, NEW_DUMP]);
    let module = &diff["modules"][0];
    let buffers = module["buffers"].as_array().unwrap();
    let sum: i64 = buffers.iter().map(|b| b["delta_bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum, main_module_growth().0);
    let deltas: Vec<u64> = buffers.iter().map(|b| b["delta_bytes"].as_i64().unwrap().unsigned_abs()).collect();
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "largest absolute delta first: {deltas:?}");
    let dot = buffers.iter().find(|b| b["instruction"] == "dot.1").unwrap();
    assert_eq!(dot["base"]["shape"], "f32[1024,1024]{1,0}");
    assert_eq!(dot["new"]["shape"], "f32[1536,1536]{1,0}");
    assert_eq!(dot["new"]["op_name"], "jit(wide_mlp_step)/transpose(jvp())/transpose");
    assert_eq!(dot["delta_bytes"].as_i64(), Some((1536 * 1536 - 1024 * 1024) * 4));
}

#[test]
fn dump_files_diff_like_the_profiles() {
    let diff = diff_json(&[BASE_DUMP, NEW_DUMP]);
    let modules = diff["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 1);
    assert_eq!(modules[0]["delta_bytes"].as_i64(), Some(main_module_growth().0));
    assert_eq!(modules[0]["change"], "grown");
}

#[test]
fn a_growth_limit_without_a_unit_is_refused() {
    xmem()
        .args(["diff", BASE, NEW, "--fail-if-peak-grows", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'5' needs a unit: '5%' for a percentage"));
}

/// Issue 24: by default, peaks under 1% of the largest, or under 1 MiB, in
/// both runs (helper modules: random numbers, a broadcast) are reported but
/// not judged, and the verdict says so; `--min-peak 0` judges them all.
#[test]
fn small_peaks_are_reported_but_not_judged_by_default() {
    let every = diff_json(&[BASE, NEW, "--fail-if-peak-grows", "10%", "--min-peak", "0"]);
    let default = diff_json(&[BASE, NEW, "--fail-if-peak-grows", "10%"]);
    let explicit = diff_json(&[BASE, NEW, "--fail-if-peak-grows", "10%", "--min-peak", "1MiB"]);
    let rows = |diff: &Value| diff["modules"].as_array().unwrap().len();
    assert_eq!(rows(&default), rows(&every));
    assert_eq!(rows(&explicit), rows(&every));
    let peak = |m: &Value, side: &str| m[format!("{side}_peak_bytes")].as_i64().unwrap_or(0);
    let largest = every["modules"].as_array().unwrap().iter().map(|m| peak(m, "base").max(peak(m, "new"))).max();
    let threshold = (largest.unwrap() / 100).max(1 << 20);
    assert_eq!(default["min_peak"]["bytes"].as_i64(), Some(threshold));
    assert_eq!(default["min_peak"]["default"], true);
    let crossed = |diff: &Value| -> Vec<i64> {
        diff["violations"].as_array().unwrap().iter().map(|v| peak(v, "base").max(peak(v, "new"))).collect()
    };
    let small = crossed(&every).iter().filter(|&&p| p < threshold).count();
    assert!(small > 0, "the pair's helper modules grow by 50%");
    assert_eq!(crossed(&default).len(), crossed(&every).len() - small);
    assert!(crossed(&default).iter().all(|&p| p >= threshold));
    assert_eq!(crossed(&explicit), crossed(&default));
    let text =
        String::from_utf8(xmem().args(["diff", BASE, NEW, "--fail-if-peak-grows", "10%"]).output().unwrap().stdout)
            .unwrap();
    let not_judged = default["min_peak"]["not_judged"].as_u64().unwrap();
    assert!(
        text.contains(&format!("; {not_judged} peaks under 1.0 MiB in both runs not judged, the default --min-peak")),
        "{text}"
    );
}

#[test]
fn a_size_limit_just_under_the_growth_fails_and_one_at_it_passes() {
    // Without --module the limit covers every module; the main one grew most.
    limit_just_under_fails(BASE, NEW, "--fail-if-peak-grows", main_module_growth().0)
        .stdout(predicate::str::contains("Verdict: FAIL, 1 limit crossed"))
        .stderr(predicate::str::contains("xmem: FAIL, 1 limit crossed"));
}

#[test]
fn a_percentage_limit_just_under_the_growth_fails_and_just_over_passes() {
    let (under, over) = percent_around(main_module_growth().1);
    for (limit, code) in [(under, 1), (over, 0)] {
        xmem().args(["diff", BASE, NEW, "--module", MAIN_MODULE, "--fail-if-peak-grows", &limit]).assert().code(code);
    }
}

#[test]
fn a_percentage_limit_covers_every_matched_peak() {
    let (base, new) = (oracle_peaks("pair_base"), oracle_peaks("pair_new"));
    let largest = base.iter().map(|(key, &b)| (new[key] - b) as f64 / b as f64).fold(0.0, f64::max);
    assert!(largest > main_module_growth().1, "a smaller module grew faster than the main one");
    let (under, over) = percent_around(largest);
    xmem().args(["diff", BASE, NEW, "--fail-if-peak-grows", &under]).assert().code(1);
    xmem().args(["diff", BASE, NEW, "--fail-if-peak-grows", &over]).assert().code(0);
}

#[test]
fn a_ceiling_just_under_the_new_peak_fails_and_one_at_it_passes() {
    let largest = *oracle_peaks("pair_new").values().max().unwrap();
    limit_just_under_fails(BASE, NEW, "--fail-if-over", largest)
        .stdout(predicate::str::contains(format!("{MAIN_MODULE}(40) · hbm: peak 86.4 MiB crosses --fail-if-over")));
}

#[test]
fn an_input_against_itself_has_zero_deltas_and_passes() {
    let args = [BASE, BASE, "--fail-if-peak-grows", "0%", "--fail-if-over", "1GiB", "--min-peak", "0"];
    let diff = diff_json(&args);
    assert_eq!(diff["verdict"], "pass");
    assert_eq!(diff["violations"].as_array().map(Vec::len), Some(0));
    let modules = diff["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 21);
    for module in modules {
        assert_eq!(module["delta_bytes"].as_i64(), Some(0));
        assert_eq!(module["change"], "unchanged");
        assert_eq!(module["buffers"].as_array().map(Vec::len), Some(0));
    }
    xmem()
        .arg("diff")
        .args(args)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("No peak changed: 21 memory spaces"))
        .stdout(predicate::str::ends_with("Verdict: PASS (--fail-if-peak-grows 0%, --fail-if-over 1.0 GiB)\n"));
}

#[test]
fn a_module_without_baseline_crosses_a_percentage_limit() {
    // The dump holds only the main module; the profile holds it and 20 more.
    let diff = diff_json(&[BASE_DUMP, BASE, "--fail-if-peak-grows", "1000%", "--min-peak", "0"]);
    let modules = diff["modules"].as_array().unwrap();
    let new: Vec<&Value> = modules.iter().filter(|m| m["change"] == "new").collect();
    assert_eq!(new.len(), 20);
    assert!(new.iter().all(|m| m["base_peak_bytes"].is_null() && m["delta_ratio"].is_null()));
    assert_eq!(diff["verdict"], "fail");
    assert_eq!(diff["violations"].as_array().map(Vec::len), Some(20));
    // A size limit compares the whole new peak; none of the new modules is above 1 GiB.
    xmem().args(["diff", BASE_DUMP, BASE, "--fail-if-peak-grows", "1GiB"]).assert().code(0);
    // Modules that went away cross no growth limit.
    let gone = diff_json(&[BASE, BASE_DUMP, "--fail-if-peak-grows", "0%"]);
    assert_eq!(gone["verdict"], "pass");
    assert_eq!(gone["modules"].as_array().unwrap().iter().filter(|m| m["change"] == "gone").count(), 20);
}

/// Proto3 JSON writes int64 as a string.
fn int64(value: &Value) -> i64 {
    value.as_str().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("not an int64 string: {value}"))
}

/// XProf's Memory Profile summary of the allocator in a TensorFlow fixture.
fn oracle_allocator(workload: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles").join(workload);
    let oracle: Value =
        serde_json::from_slice(&std::fs::read(path.join("oracle/memory_profile.json")).unwrap()).unwrap();
    oracle["memoryProfilePerAllocator"][ALLOCATOR]["profileSummary"].clone()
}

/// XProf's peak heap plus stack of the allocator, checked against its parts.
fn oracle_allocator_peak(workload: &str) -> i64 {
    let peak = &oracle_allocator(workload)["peakStats"];
    let in_use = int64(&peak["peakBytesInUse"]);
    assert_eq!(in_use, int64(&peak["heapAllocatedBytes"]) + int64(&peak["stackReservedBytes"]), "{workload}");
    in_use
}

/// The allocator's peak as `xmem report` gives it.
fn reported_allocator_peak(profile: &str) -> i64 {
    let output = xmem().args(["report", profile, "--format", "json"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let [allocator] = report["allocators"].as_array().unwrap().as_slice() else { panic!("one allocator") };
    assert_eq!((allocator["host"].as_str(), allocator["name"].as_str()), (Some("vm"), Some(ALLOCATOR)));
    allocator["peak_bytes"].as_i64().unwrap()
}

/// The allocator's growth from tf_keras_fit to tf_keras_xla: (bytes, ratio).
fn allocator_growth() -> (i64, f64) {
    let (base, new) = (oracle_allocator_peak("tf_keras_fit"), oracle_allocator_peak("tf_keras_xla"));
    (new - base, (new - base) as f64 / base as f64)
}

#[test]
fn allocator_delta_is_the_difference_of_the_two_peaks() {
    let (base, new) = (reported_allocator_peak(TF_FIT), reported_allocator_peak(TF_XLA));
    assert_eq!((base, new), (oracle_allocator_peak("tf_keras_fit"), oracle_allocator_peak("tf_keras_xla")));
    let diff = diff_json(&[TF_FIT, TF_XLA]);
    let [allocator] = diff["allocators"].as_array().unwrap().as_slice() else { panic!("one allocator, paired") };
    assert_eq!((allocator["host"].as_str(), allocator["base_host"].as_str()), (Some("vm"), Some("vm")));
    assert_eq!(allocator["name"], ALLOCATOR);
    assert_eq!(allocator["change"], "grown");
    assert_eq!(allocator["base_peak_bytes"].as_i64(), Some(base));
    assert_eq!(allocator["new_peak_bytes"].as_i64(), Some(new));
    assert_eq!(allocator["delta_bytes"].as_i64(), Some(new - base));
    assert_eq!(new - base, 204_891_136);
    let ratio = allocator["delta_ratio"].as_f64().unwrap();
    assert!((ratio - allocator_growth().1).abs() < 1e-12, "{ratio}");
    for (side, workload) in [("base", "tf_keras_fit"), ("new", "tf_keras_xla")] {
        let oracle = oracle_allocator(workload);
        assert_eq!(allocator[format!("{side}_capacity_bytes")].as_i64(), Some(int64(&oracle["memoryCapacity"])));
        assert_eq!(allocator[format!("{side}_fragmentation_at_peak")], oracle["peakStats"]["fragmentation"]);
    }
    assert_eq!(allocator["capacity_delta_bytes"].as_i64(), Some(0));
    // The XLA run's two modules are new; the run without XLA has none.
    let modules = diff["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 2);
    assert!(modules.iter().all(|m| m["change"] == "new"));
}

#[test]
fn an_allocator_size_limit_just_under_its_growth_fails_and_one_at_it_passes() {
    // The new modules' peaks (19.0 and 7.0 MiB) are far below the allocator's growth.
    limit_just_under_fails(TF_FIT, TF_XLA, "--fail-if-peak-grows", allocator_growth().0)
        .stdout(predicate::str::contains("Verdict: FAIL, 1 limit crossed"))
        .stdout(predicate::str::contains(format!(
            "allocator {ALLOCATOR} on vm: peak grew 85.2 MiB → 280.6 MiB (+195.4 MiB, +229.4%) crosses"
        )));
}

#[test]
fn an_allocator_percentage_limit_judges_only_the_allocator_selected() {
    let (under, over) = percent_around(allocator_growth().1);
    for (limit, code) in [(&under, 1), (&over, 0)] {
        xmem()
            .args(["diff", TF_FIT, TF_XLA, "--allocator", ALLOCATOR, "--fail-if-peak-grows", limit])
            .assert()
            .code(code);
    }
    // Without --allocator, the two modules new in the XLA run grew from nothing: any percentage fails.
    let diff = diff_json(&[TF_FIT, TF_XLA, "--fail-if-peak-grows", &over]);
    let violations = diff["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 2);
    assert!(violations.iter().all(|v| v["change"] == "new" && v["color"] == 0), "{violations:?}");
    // --module leaves the allocators out of the comparison and the limits.
    let modules_only = diff_json(&[TF_FIT, TF_XLA, "--module", "/one_step/", "--fail-if-peak-grows", "1000%"]);
    assert_eq!(modules_only["allocators"].as_array().map(Vec::len), Some(0));
}

#[test]
fn an_allocator_ceiling_just_under_the_new_peak_fails_and_one_at_it_passes() {
    limit_just_under_fails(TF_FIT, TF_XLA, "--fail-if-over", oracle_allocator_peak("tf_keras_xla")).stdout(
        predicate::str::contains(format!("allocator {ALLOCATOR} on vm: peak 280.6 MiB crosses --fail-if-over")),
    );
}

#[test]
fn a_profile_with_allocators_only_against_itself_has_zero_deltas_and_passes() {
    let args = [TF_FIT, TF_FIT, "--fail-if-peak-grows", "0%", "--fail-if-over", "1GiB"];
    let diff = diff_json(&args);
    assert_eq!(diff["verdict"], "pass");
    assert_eq!(diff["modules"].as_array().map(Vec::len), Some(0));
    let [allocator] = diff["allocators"].as_array().unwrap().as_slice() else { panic!("one allocator") };
    assert_eq!(allocator["change"], "unchanged");
    assert_eq!(allocator["delta_bytes"].as_i64(), Some(0));
    assert_eq!(allocator["new_peak_bytes"].as_i64(), Some(oracle_allocator_peak("tf_keras_fit")));
    assert_eq!(allocator["capacity_delta_bytes"].as_i64(), Some(0));
    assert_eq!(allocator["fragmentation_delta"].as_f64(), Some(0.0));
    xmem()
        .arg("diff")
        .args(args)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("No peak changed").not())
        .stdout(predicate::str::ends_with("Verdict: PASS (--fail-if-peak-grows 0%, --fail-if-over 1.0 GiB)\n"));
}

/// What `xmem diff` prints when a limit is crossed, as a user sees it.
fn stdout_of_a_failing_diff(args: &[&str]) -> String {
    let output = xmem().arg("diff").args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn allocators_in_markdown_for_a_pull_request() {
    let args = [TF_FIT, TF_XLA, "--format", "markdown", "--top", "3", "--fail-if-peak-grows", "150%"];
    insta::assert_snapshot!(stdout_of_a_failing_diff(&args));
}

#[test]
fn markdown_for_a_pull_request() {
    let args = [BASE, NEW, "--format", "markdown", "--top", "5", "--fail-if-peak-grows", "5%"];
    insta::assert_snapshot!(stdout_of_a_failing_diff(&args));
}

#[test]
fn text_for_a_terminal() {
    let args = [BASE_DUMP, NEW_DUMP, "--top", "6", "--fail-if-over", "64MiB"];
    insta::assert_snapshot!(stdout_of_a_failing_diff(&args));
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("module.after_optimizations.hlo.pb");
    std::fs::write(&garbage, b"\xff\xff\xff\xff not a proto").unwrap();
    // Saved before optimization: a module, but no buffer assignment to compare.
    let unoptimized = dir.path().join("module_0040.jit_wide_mlp_step.before_optimizations.hlo.pb");
    let module = HloModuleProto { name: MAIN_MODULE.into(), id: 40, ..Default::default() };
    std::fs::write(&unoptimized, HloProto { hlo_module: Some(module), buffer_assignment: None }.encode_to_vec())
        .unwrap();
    let (garbage, unoptimized) = (garbage.display().to_string(), unoptimized.display().to_string());
    let cases: [(&[&str], &str); 7] = [
        (&[BASE, "fixtures/profiles/no_such_run"], "fixtures/profiles/no_such_run: No such file"),
        (&[BASE_DUMP, &garbage], &garbage),
        (&[&unoptimized, NEW_DUMP], "--xla_dump_hlo_as_proto"),
        (&[BASE, NEW, "--memory-space", "nowhere"], "unknown memory space 'nowhere'"),
        (&[BASE, NEW, "--module", "no_such_module"], "no module matches"),
        (&[BASE, NEW, "--allocator", ALLOCATOR], "no allocator named 'bfc_cpu_allocator_for_gpu': the inputs have no"),
        (&[TF_FIT, TF_XLA, "--allocator", "GPU_0_bfc"], "(the inputs have vm/bfc_cpu_allocator_for_gpu)"),
    ];
    for (args, reason) in cases {
        let output = xmem().arg("diff").args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.starts_with("xmem: ") && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
    // A limit that does not parse is a usage error, reported by clap.
    xmem()
        .args(["diff", BASE, NEW, "--fail-if-peak-grows", "lots"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'lots' is not a size"));
}

/// PyTorch/XLA numbers each graph by its size, so the same training step is
/// `SyncTensorsGraph.351` in the small model and `SyncTensorsGraph.434` in
/// the large one: the modules pair by role (here compile order), the diff
/// says so, and each delta is the difference of XProf's peaks.
#[test]
fn pytorch_xla_graphs_of_two_model_sizes_pair_by_role() {
    const SMALL: &str = "fixtures/profiles/torch_xla_small/profile";
    const LARGE: &str = "fixtures/profiles/torch_xla_large/profile";
    let (base, new) = (oracle_peaks("torch_xla_small"), oracle_peaks("torch_xla_large"));
    let json = diff_json(&[SMALL, LARGE]);
    let modules = json["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 2);
    for (base_name, new_name, id) in
        [("SyncTensorsGraph.397", "SyncTensorsGraph.495", 0), ("SyncTensorsGraph.351", "SyncTensorsGraph.434", 1)]
    {
        let entry = modules.iter().find(|m| m["new_name"] == new_name).unwrap();
        assert_eq!(entry["base_name"], base_name);
        assert_eq!(entry["paired_by"], "suffix-compile-order");
        let expected = new[&(new_name.to_string(), id)] - base[&(base_name.to_string(), id)];
        assert_eq!(entry["delta_bytes"].as_i64(), Some(expected), "{new_name}");
        assert!(json["module_pairs"].as_array().unwrap().iter().any(|p| p["base"] == format!("{base_name}({id})")
            && p["new"] == format!("{new_name}({id})")
            && p["paired_by"] == "suffix-compile-order"));
    }
    for format in ["text", "markdown"] {
        xmem()
            .args(["diff", SMALL, LARGE, "--format", format])
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "- SyncTensorsGraph.397(0) → SyncTensorsGraph.495(0): names differ only in the graph number; in compile order",
            ));
    }
}

/// Issue 24, on the shared corpus's H200 regression pair (a token-mixing
/// MLP whose hidden width doubles, nothing else): the compiler renumbers the
/// cuBLAS custom calls and the widened buffers change shape, yet each is
/// found by what it is; under 10% of the buffers are new or gone, and no
/// module is listed both as new and as gone.
#[test]
fn a_widened_gpu_model_reads_as_grown_buffers_not_new_and_gone() {
    let Some(gpu) = common::shared_corpus_folder("gpu") else { return };
    let (base, new) = (gpu.join("gpu_pair_base/profile"), gpu.join("gpu_pair_new/profile"));
    let diff = diff_json(&[base.to_str().unwrap(), new.to_str().unwrap(), "--min-peak", "0"]);
    let modules = diff["modules"].as_array().unwrap();
    for space in modules {
        let paired = !space["paired_by"].is_null();
        assert!(!(paired && (space["change"] == "new" || space["change"] == "gone")), "{space}");
    }
    let step = modules.iter().find(|m| m["name"] == "jit_mixer_train_step").unwrap();
    let counts = &step["matched_by"];
    let n = |key: &str| counts[key].as_u64().unwrap();
    let matched =
        n("instruction") + n("role") + n("op_name_and_shape") + n("kind") + n("scope") + n("instruction_name");
    let one_side = n("new") + n("gone");
    assert!(one_side * 10 < matched + one_side, "{counts}");
    // The cuBLAS output the issue names: renumbered, twice the width, grown 32 → 64 MiB.
    let widened =
        step["buffers"].as_array().unwrap().iter().find(|b| b["base"]["instruction"] == "custom-call.24{0}").unwrap();
    assert_eq!(widened["new"]["instruction"], "custom-call.71{0}");
    assert_eq!((&widened["change"], &widened["matched_by"]), (&Value::from("grown"), &Value::from("role")));
    assert_eq!((widened["base_bytes"].as_i64(), widened["new_bytes"].as_i64()), (Some(32 << 20), Some(64 << 20)));
}

/// The HTML page leads each changed peak with its change by source line and
/// op name, as the text and Markdown do: the changed groups of the main
/// module, whose changes add up to the change of the oracles' peaks, each a
/// row of its table.
#[test]
fn the_html_diff_shows_the_change_by_source_line_and_op_name() {
    let json = diff_json(&[BASE, NEW]);
    let output = xmem().args(["diff", BASE, NEW, "--format", "html"]).output().unwrap();
    let html = String::from_utf8(output.stdout).unwrap();
    let main = json["modules"].as_array().unwrap().iter().find(|m| m["name"] == MAIN_MODULE).unwrap();
    let (base_peaks, new_peaks) = (oracle_peaks("pair_base"), oracle_peaks("pair_new"));
    let key = (MAIN_MODULE.to_string(), 40);
    let section = html
        .split_once(&format!(">{MAIN_MODULE}(40) · hbm: "))
        .and_then(|(_, rest)| rest.split_once("</section>"))
        .map(|(section, _)| section)
        .expect("a section for the main module");
    let human = |bytes: i64| xmem::units::human_bytes(bytes as u64);
    for (grouping, column) in [("by_source", "Source line"), ("by_op_name", "Op name")] {
        let groups = main["groups"][grouping].as_array().unwrap();
        let delta = groups.iter().map(|g| g["delta_bytes"].as_i64().unwrap()).sum::<i64>();
        assert_eq!(delta, new_peaks[&key] - base_peaks[&key], "{grouping}");
        assert!(section.contains(&format!("<th>Delta</th><th>Base</th><th>New</th><th>{column}</th>")), "{column}");
        for group in groups.iter().take(20) {
            let key = group["key"].as_str().unwrap();
            let shown = if column == "Source line" { key.rsplit('/').next().unwrap() } else { key };
            let row = format!(
                "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                human(group["base_bytes"].as_i64().unwrap()),
                human(group["new_bytes"].as_i64().unwrap()),
                html_escape::encode_text(shown).replace('/', "/<wbr>"),
            );
            assert!(section.contains(&row), "{grouping}: no row {row}");
        }
    }
    assert!(section.contains("<li>+11.0 MiB from wl_pair_mlp.py:40 (jit(wide_mlp_step)/add)</li>"));
}

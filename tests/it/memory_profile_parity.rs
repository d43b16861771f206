//! Parity with XProf 2.24.2's Memory Profile: every allocator of every
//! `oracle/memory_profile.json` against `xmem report --format json` on the
//! same profile, figure by figure, and every row of XProf's breakdown table.
//!
//! It runs over `fixtures/profiles/` always, and over the whole shared corpus
//! too when it is present (`../shared/corpus/profiles`, or `XMEM_CORPUS`).

use crate::common;

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::{json, Value};

fn report_json(input: &Path) -> Value {
    let output = cargo_bin_cmd!("xmem").arg("report").arg(input).args(["--format", "json"]).output().unwrap();
    assert!(output.status.success(), "{}: {}", input.display(), String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Proto3 JSON writes int64 as a string and leaves out nothing (defaults are printed).
fn int(value: &Value) -> i64 {
    match value {
        Value::String(text) => text.parse().unwrap(),
        other => other.as_i64().unwrap(),
    }
}

/// XProf's breakdown table as rows in xmem's JSON form: each active
/// allocation points at a snapshot, or at a special allocation when its
/// snapshot index is negative.
fn oracle_rows(profile: &Value) -> Vec<Value> {
    let snapshots = profile["memoryProfileSnapshots"].as_array().unwrap();
    let specials = profile["specialAllocations"].as_array().unwrap();
    profile["activeAllocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|active| {
            let snapshot = int(&active["snapshotIndex"]);
            let metadata = if snapshot >= 0 {
                &snapshots[snapshot as usize]["activityMetadata"]
            } else {
                &specials[int(&active["specialIndex"]) as usize]
            };
            json!({
                "op_name": metadata["tfOpName"],
                "allocation_bytes": int(&metadata["allocationBytes"]),
                "requested_bytes": int(&metadata["requestedBytes"]),
                "occurrences": int(&active["numOccurrences"]),
                "region_type": metadata["regionType"],
                "data_type": metadata["dataType"],
                "shape": metadata["tensorShape"],
            })
        })
        .collect()
}

/// Compares one allocator of xmem's report with XProf's; returns the mismatches.
fn compare(ours: &Value, theirs: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let summary = &theirs["profileSummary"];
    let peak = &summary["peakStats"];
    let xprof = &ours["xprof_summary"];
    let figures = [
        ("capacity", &ours["capacity_bytes"], int(&summary["memoryCapacity"])),
        ("peak heap + stack", &ours["peak_bytes"], int(&peak["peakBytesInUse"])),
        ("heap at peak", &ours["peak_heap_bytes"], int(&peak["heapAllocatedBytes"])),
        ("stack at peak", &ours["peak_stack_bytes"], int(&peak["stackReservedBytes"])),
        ("free at peak", &ours["peak_free_bytes"], int(&peak["freeMemoryBytes"])),
        ("XProf lifetime peak", &xprof["peak_bytes_usage_lifetime"], int(&summary["peakBytesUsageLifetime"])),
        ("XProf peak time", &xprof["peak_time_ps"], int(&summary["peakStatsTimePs"])),
        ("XProf capacity", &xprof["capacity_bytes"], int(&summary["memoryCapacity"])),
        ("XProf peak", &xprof["peak_bytes"], int(&peak["peakBytesInUse"])),
    ];
    for (label, ours, theirs) in figures {
        if ours.as_i64() != Some(theirs) {
            errors.push(format!("{label}: xmem {ours}, XProf {theirs}"));
        }
    }
    if ours["fragmentation_at_peak"].as_f64() != peak["fragmentation"].as_f64() {
        errors.push(format!(
            "fragmentation at peak: xmem {}, XProf {}",
            ours["fragmentation_at_peak"], peak["fragmentation"]
        ));
    }
    let rows = oracle_rows(theirs);
    let step = &ours["xprof_peak_step"];
    if step["rows"].as_array() != Some(&rows) {
        errors.push(format!("peak-step table: xmem {}, XProf {}", step["rows"], Value::Array(rows.clone())));
    }
    // Every row XProf shows carries the step id of its peak step.
    let specials = theirs["specialAllocations"].as_array().unwrap();
    if let Some(special) = specials.first() {
        if step["step"].as_i64() != Some(int(&special["stepId"])) {
            errors.push(format!("peak step: xmem {}, XProf {}", step["step"], special["stepId"]));
        }
    }
    errors
}

/// Checks the report of `input` against `oracle`; returns how many
/// allocators were compared and what differed.
fn check_workload(input: &Path, oracle: &Path) -> (usize, Vec<String>) {
    let oracle: Value = serde_json::from_slice(&std::fs::read(oracle).unwrap()).unwrap();
    let report = report_json(input);
    let allocators = report["allocators"].as_array().unwrap();
    let mut failures = Vec::new();
    let ids: Vec<&str> = oracle["memoryIds"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let names: Vec<&str> = allocators.iter().map(|a| a["name"].as_str().unwrap()).collect();
    if ids != names {
        failures.push(format!("{}: allocators: xmem {names:?}, XProf {ids:?}", input.display()));
    }
    for allocator in allocators {
        let name = allocator["name"].as_str().unwrap();
        let Some(theirs) = oracle["memoryProfilePerAllocator"].get(name) else { continue };
        failures.extend(compare(allocator, theirs).into_iter().map(|e| format!("{} {name}: {e}", input.display())));
    }
    (ids.len(), failures)
}

fn run_parity(root: &Path) -> usize {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in dirs.iter().filter(|d| d.join("oracle/memory_profile.json").is_file()) {
        let (n, errors) = check_workload(&dir.join("profile"), &dir.join("oracle/memory_profile.json"));
        checked += n;
        failures.extend(errors);
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
    checked
}

#[test]
fn fixtures_match_xprof_memory_profile() {
    // One allocator each in tf_keras_fit and tf_keras_xla, two in gpu_mlp_adam.
    assert_eq!(run_parity(&common::fixture("")), 4);
}

#[test]
fn gpu_corpus_matches_xprof_memory_profile() {
    let Some(root) = common::shared_corpus_folder("gpu") else { return };
    assert!(run_parity(&root) > 0);
}

#[test]
fn shared_corpus_matches_xprof_memory_profile() {
    let Some(root) = common::shared_corpus() else { return };
    let checked = run_parity(&root);
    eprintln!("{checked} allocators matched");
    assert!(checked > 0);
}

/// The third-party profiles of `../shared/corpus/external` against XProf's
/// Memory Profile for them, kept compact in `tests/oracle-external/` (each
/// `<path>/memory_profile.json` is XProf's answer for `<external>/<path>`).
#[test]
fn external_corpus_matches_xprof_memory_profile() {
    let Some(external) = common::shared_external() else { return };
    let oracles = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle-external");
    let mut pending = vec![oracles.clone()];
    let mut checked = 0;
    let mut failures = Vec::new();
    while let Some(dir) = pending.pop() {
        for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
            if path.is_dir() {
                pending.push(path);
            } else if path.file_name().is_some_and(|n| n == "memory_profile.json") {
                let input = external.join(dir.strip_prefix(&oracles).unwrap());
                let (n, errors) = check_workload(&input, &path);
                checked += n;
                failures.extend(errors);
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
    println!("{checked} of {checked} allocators match XProf");
    assert!(checked > 0);
}

#[test]
fn rows_at_peak_and_the_before_capture_line_add_up_to_the_heap_at_the_peak() {
    for workload in ["tf_keras_fit", "tf_keras_xla"] {
        let report = report_json(&common::profile(workload));
        let allocator = &report["allocators"][0];
        let rows: i64 = allocator["at_peak"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["allocation_bytes"].as_i64().unwrap() * r["occurrences"].as_i64().unwrap())
            .sum();
        let before = allocator["unattributed_at_peak_bytes"].as_i64().unwrap();
        assert_eq!(rows + before, allocator["peak_heap_bytes"].as_i64().unwrap(), "{workload}");
        assert!(before > 0, "{workload}: the input pipeline's buffers predate the capture");
    }
}

/// TensorFlow's own `tf.config.experimental.get_memory_info` peak, saved by
/// the run: the allocator's high-water mark, which XProf misreports for
/// tf_keras_fit (it shows the mark of the last thread it reads).
#[test]
fn lifetime_peak_is_the_allocators_own_high_water_mark() {
    for workload in ["tf_keras_fit", "tf_keras_xla"] {
        let info: Value =
            serde_json::from_slice(&std::fs::read(common::fixture(workload).join("tf_info.json")).unwrap()).unwrap();
        let report = report_json(&common::profile(workload));
        let allocator = &report["allocators"][0];
        assert_eq!(allocator["lifetime_peak_bytes"], info["get_memory_info_CPU0"]["peak"], "{workload}");
    }
    let report = report_json(&common::profile("tf_keras_fit"));
    let notes = report["allocators"][0]["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("lifetime peak of 83.8 MiB")), "{notes:?}");
}

//! `xmem report` on JAX device memory profiles, checked against two oracles
//! per workload: an independent decoder's `*.decoded.json` and the
//! `jax.live_arrays()` figures the workload wrote to `memory_analysis.json`.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

const WORKLOADS: [&str; 7] =
    ["mlp_train", "host_offload", "donation", "multi_module", "big_model", "pair_base", "pair_new"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture_dir(workload: &str) -> PathBuf {
    root().join("fixtures/pprof").join(workload)
}

/// The workload's profile, relative to the crate root so output is stable.
fn profile(workload: &str) -> String {
    let name = std::fs::read_dir(fixture_dir(workload))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .find(|name| name.ends_with(".prof"))
        .unwrap();
    format!("fixtures/pprof/{workload}/{name}")
}

/// Runs xmem from the crate root, so the paths it prints are stable.
fn xmem<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Output {
    cargo_bin_cmd!("xmem").current_dir(root()).args(args).output().unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn report_json(input: &Path) -> Value {
    let output = xmem([OsStr::new("report"), OsStr::new("--format"), OsStr::new("json"), input.as_os_str()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or_else(|| panic!("not an integer: {value}"))
}

/// `function file:line` as the decoder prints a frame.
fn frame_text(frame: &Value) -> String {
    format!("{} {}:{}", frame["function"].as_str().unwrap(), frame["file"].as_str().unwrap(), int(&frame["line"]))
}

/// `(function, file)` of a decoder frame `function /path/file.py:12`.
fn function_and_file(frame: &str) -> (String, String) {
    let (function, location) = frame.split_once(' ').unwrap();
    let (file, _line) = location.rsplit_once(':').unwrap();
    (function.to_string(), file.to_string())
}

type Sums = BTreeMap<String, (i64, i64)>;

fn add(sums: &mut Sums, key: String, bytes: i64, count: i64) {
    let entry = sums.entry(key).or_default();
    entry.0 += bytes;
    entry.1 += count;
}

/// What the independent decoder says, grouped the ways xmem groups it.
struct Oracle {
    total_bytes: i64,
    total_count: i64,
    by_device: Sums,
    by_kind: Sums,
    by_stack: Sums,
    flat: Sums,
    cum: Sums,
}

fn oracle(decoded: &Value) -> Oracle {
    let mut oracle = Oracle {
        total_bytes: int(&decoded["totals"]["space/bytes"]),
        total_count: int(&decoded["totals"]["allocations/count"]),
        by_device: Sums::new(),
        by_kind: Sums::new(),
        by_stack: Sums::new(),
        flat: Sums::new(),
        cum: Sums::new(),
    };
    let types: Vec<&str> = decoded["sample_types"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(types, ["allocations/count", "space/bytes"]);
    for sample in decoded["samples"].as_array().unwrap() {
        let (count, bytes) = (int(&sample["values"][0]), int(&sample["values"][1]));
        let labels = &sample["labels"];
        let device = labels.get("device").and_then(Value::as_str).unwrap_or("null").to_string();
        add(&mut oracle.by_device, device, bytes, count);
        add(&mut oracle.by_kind, labels["kind"].as_str().unwrap().to_string(), bytes, count);
        let stack: Vec<&str> = sample["stack"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        add(&mut oracle.by_stack, stack.join(" | "), bytes, count);
        let functions: Vec<(String, String)> = stack.iter().map(|f| function_and_file(f)).collect();
        // Flat bytes go to the innermost frame of the user's code: the
        // workloads ran from /home/user/models, JAX from a virtualenv.
        let blamed = functions.iter().find(|(_, file)| file.starts_with("/home/user/")).unwrap_or(&functions[0]);
        add(&mut oracle.flat, format!("{blamed:?}"), bytes, count);
        for function in functions.iter().collect::<BTreeSet<_>>() {
            add(&mut oracle.cum, format!("{function:?}"), bytes, count);
        }
    }
    oracle
}

#[test]
fn totals_labels_stacks_and_sites_equal_the_oracles() {
    for workload in WORKLOADS {
        let dir = fixture_dir(workload);
        let prof = profile(workload);
        let name = prof.rsplit('/').next().unwrap();
        let decoded = read_json(&dir.join(name.replace(".prof", ".decoded.json")));
        let live = read_json(&dir.join("memory_analysis.json"))["device_memory_profiles"][name].clone();
        let expected = oracle(&decoded);

        let report = report_json(Path::new(&prof));
        assert_eq!(report["modules"].as_array().unwrap().len(), 0, "{workload}");
        let [memory] = report["device_memory"].as_array().unwrap().as_slice() else { panic!("{workload}") };

        assert_eq!(int(&memory["total_bytes"]), expected.total_bytes, "{workload}");
        assert_eq!(int(&memory["total_bytes"]), int(&live["live_bytes"]), "{workload}");
        assert_eq!(int(&memory["total_count"]), expected.total_count, "{workload}");

        let (mut by_device, mut by_kind) = (Sums::new(), Sums::new());
        for device in memory["devices"].as_array().unwrap() {
            let name = device["device"].as_str().unwrap_or("null").to_string();
            add(&mut by_device, name, int(&device["bytes"]), int(&device["count"]));
            for (kind, bytes) in device["by_kind"].as_object().unwrap() {
                add(&mut by_kind, kind.clone(), int(bytes), int(&device["count_by_kind"][kind]));
            }
        }
        by_kind.retain(|_, &mut (bytes, count)| bytes != 0 || count != 0);
        assert_eq!(by_device, expected.by_device, "{workload}");
        assert_eq!(by_kind, expected.by_kind, "{workload}");
        assert_eq!(by_kind["buffer"].1, int(&live["live_arrays"]), "{workload}: buffers are jax.live_arrays()");

        let mut by_stack = Sums::new();
        for stack in memory["stacks"].as_array().unwrap() {
            let frames: Vec<String> = stack["frames"].as_array().unwrap().iter().map(frame_text).collect();
            add(&mut by_stack, frames.join(" | "), int(&stack["bytes"]), int(&stack["count"]));
        }
        assert_eq!(by_stack, expected.by_stack, "{workload}");

        let (mut flat, mut cum) = (Sums::new(), Sums::new());
        for site in memory["top_sites"].as_array().unwrap() {
            let key = format!("{:?}", (site["function"].as_str().unwrap(), site["file"].as_str().unwrap()));
            add(&mut flat, key.clone(), int(&site["flat_bytes"]), int(&site["count"]));
            add(&mut cum, key, int(&site["cum_bytes"]), int(&site["cum_count"]));
        }
        flat.retain(|_, &mut (bytes, count)| bytes != 0 || count != 0);
        assert_eq!(flat, expected.flat, "{workload}");
        assert_eq!(cum, expected.cum, "{workload}");
    }
}

#[test]
fn list_names_the_live_total_and_the_stacks() {
    let decoded = read_json(&fixture_dir("mlp_train").join("device_memory_after_training.decoded.json"));
    let expected = oracle(&decoded);
    let output = xmem(["list", &profile("mlp_train")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let line = format!(
        "Device memory profile: 92.1 MiB in {} allocations from {} stacks, on cpu:0",
        expected.total_count,
        expected.by_stack.len()
    );
    assert!(stdout.contains(&line), "{stdout}");
    assert!(!stdout.contains("Module"), "{stdout}");
}

#[test]
fn text_report_of_a_training_snapshot() {
    let output = xmem(["report", &profile("mlp_train")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    insta::assert_snapshot!(String::from_utf8(output.stdout).unwrap());
}

#[test]
fn markdown_report_of_a_regression_snapshot() {
    let output = xmem(["report", "--format", "markdown", "--top", "3", &profile("pair_new")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    insta::assert_snapshot!(String::from_utf8(output.stdout).unwrap());
}

#[test]
fn detected_by_content_whatever_the_name_and_compression() {
    let mut compressed = Vec::new();
    std::fs::File::open(root().join(profile("donation"))).unwrap().read_to_end(&mut compressed).unwrap();
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(compressed.as_slice()).read_to_end(&mut plain).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("snapshot.bin", &compressed), ("snapshot.pb", &plain)] {
        let path = dir.path().join(name);
        std::fs::File::create(&path).unwrap().write_all(bytes).unwrap();
        let report = report_json(&path);
        assert_eq!(int(&report["device_memory"][0]["total_bytes"]), 188_825_704, "{name}");
    }
}

#[test]
fn a_damaged_profile_is_one_line_naming_the_file() {
    let compressed = std::fs::read(root().join(profile("mlp_train"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.prof");
    std::fs::write(&path, &compressed[..compressed.len() / 2]).unwrap();
    let output = xmem([Path::new("report"), &path]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("xmem: ") && stderr.contains("cut.prof") && stderr.contains("gzip"), "{stderr}");
}

/// `live_bytes` of `jax.live_arrays()` when the workload saved its profile.
fn live_bytes(workload: &str) -> i64 {
    let analysis = read_json(&fixture_dir(workload).join("memory_analysis.json"));
    let profiles = analysis["device_memory_profiles"].as_object().unwrap();
    let [(_, live)] = profiles.iter().collect::<Vec<_>>()[..] else { panic!("{workload}: one profile expected") };
    int(&live["live_bytes"])
}

fn diff(base: &str, new: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let output = xmem([&["diff", &profile(base), &profile(new), "--format", "json"], extra].concat());
    (output.status.code(), serde_json::from_slice(&output.stdout).unwrap())
}

#[test]
fn diff_of_a_profile_with_itself_has_no_growth() {
    for workload in ["mlp_train", "big_model"] {
        let (code, diff) = diff(workload, workload, &["--fail-if-peak-grows", "0B"]);
        assert_eq!(code, Some(0), "{workload}");
        assert_eq!(diff["verdict"], "pass", "{workload}");
        let [memory] = diff["device_memory"].as_array().unwrap().as_slice() else { panic!("{workload}") };
        assert_eq!(int(&memory["base_bytes"]), live_bytes(workload), "{workload}");
        assert_eq!(int(&memory["delta_bytes"]), 0, "{workload}");
        assert_eq!(int(&memory["delta_count"]), 0, "{workload}");
        assert_eq!(memory["stacks"].as_array().unwrap().len(), 0, "{workload}");
    }
}

#[test]
fn diff_of_two_runs_grows_by_the_difference_of_their_totals() {
    let growth = live_bytes("pair_new") - live_bytes("pair_base");
    let (code, diff) = diff("pair_base", "pair_new", &[]);
    assert_eq!(code, Some(0));
    let memory = &diff["device_memory"][0];
    assert_eq!(int(&memory["delta_bytes"]), growth);
    let stack_growth: i64 = memory["stacks"].as_array().unwrap().iter().map(|s| int(&s["delta_bytes"])).sum();
    assert_eq!(stack_growth, growth);
    let ratio = memory["delta_ratio"].as_f64().unwrap();
    assert!((ratio - growth as f64 / live_bytes("pair_base") as f64).abs() < 1e-12, "{ratio}");
}

#[test]
fn live_bytes_limits_are_strict_at_the_real_growth() {
    let growth = live_bytes("pair_new") - live_bytes("pair_base");
    let new_total = live_bytes("pair_new");
    for (flag, limit, code) in [
        ("--fail-if-peak-grows", growth - 1, 1),
        ("--fail-if-peak-grows", growth, 0),
        ("--fail-if-over", new_total - 1, 1),
        ("--fail-if-over", new_total, 0),
    ] {
        let (exit, diff) = diff("pair_base", "pair_new", &[flag, &format!("{limit}B")]);
        assert_eq!(exit, Some(code), "{flag} {limit}");
        let violations = diff["violations"].as_array().unwrap();
        assert_eq!(violations.len(), code as usize, "{flag} {limit}");
        if let Some(violation) = violations.first() {
            assert_eq!(int(&violation["new_bytes"]), new_total);
            assert!(violation["new_input"].as_str().unwrap().contains("pair_new"));
        }
    }
}

#[test]
fn diff_text_names_the_stack_that_grew() {
    let output = xmem(["diff", &profile("pair_base"), &profile("pair_new"), "--fail-if-peak-grows", "50%"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("live bytes grew 20.6 MiB → 42.7 MiB (+22.1 MiB, +106.9%)"), "{stderr}");
    insta::assert_snapshot!(String::from_utf8(output.stdout).unwrap());
}

#[test]
fn diff_refuses_a_profile_against_another_kind_of_input() {
    let output = xmem(["diff", &profile("pair_base"), "fixtures/profiles/pair_new/profile"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("is a device memory profile and fixtures/profiles/pair_new/profile is not"), "{stderr}");
}

#[test]
fn plot_draws_the_allocation_sites_with_the_oracles_bytes() {
    let expected = oracle(&read_json(&fixture_dir("donation").join("device_memory_after_updates.decoded.json")));
    let dir = tempfile::tempdir().unwrap();
    let output = xmem([
        OsStr::new("plot"),
        OsStr::new(&profile("donation")),
        OsStr::new("--top"),
        OsStr::new("2"),
        OsStr::new("-o"),
        dir.path().as_os_str(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let chart = dir.path().join("device_memory_after_updates.sites.svg");
    let flame = dir.path().join("device_memory_after_updates.flame.svg");
    assert_eq!(String::from_utf8(output.stdout).unwrap().trim(), format!("{}\n{}", chart.display(), flame.display()));
    // The icicle of the stacks holds every live byte in its root frame.
    let root = format!("<title>all ({} bytes, 100%)</title>", common::thousands(expected.total_bytes));
    assert!(std::fs::read_to_string(&flame).unwrap().contains(&root), "no {root}");

    let source = std::fs::read_to_string(&chart).unwrap();
    let svg = roxmltree::Document::parse(&source).unwrap();
    let texts = |class: &str| -> Vec<String> {
        svg.descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("class") == Some(class))
            .map(|n| n.text().unwrap_or_default().to_string())
            .collect()
    };
    let tooltips: Vec<&str> =
        svg.descendants().filter(|n| n.has_tag_name("rect")).filter_map(|n| n.first_element_child()?.text()).collect();
    // The two functions that allocated most, as the independent decoder sums the innermost frames.
    let mut flat: Vec<(&String, &(i64, i64))> = expected.flat.iter().collect();
    flat.sort_by_key(|(_, (bytes, _))| std::cmp::Reverse(*bytes));
    let labels = texts("bar-label");
    let rest: i64 = flat.iter().skip(2).map(|(_, (bytes, _))| bytes).sum();
    // Flat bytes go to the user's code: two functions of the script hold them all.
    assert_eq!(rest, 0);
    assert_eq!(labels.len(), 2, "two sites and no rest: {labels:?}");
    // (The decoder's sites are by function name and file; xmem's, as pprof's, also by the line
    // that defines the function, so two list comprehensions of one file are two sites: the
    // bytes agree, the counts of the 0-byte executables under the second do not.)
    for (i, (site, (bytes, _))) in flat.iter().take(2).enumerate() {
        let function = site.split('"').nth(1).unwrap();
        assert!(labels[i].starts_with(&format!("{function} · ")), "{site}: {labels:?}");
        assert!(tooltips.iter().any(|t| t.contains(&format!("({bytes} bytes) in "))), "{site}");
    }
}

#[test]
fn html_report_shows_the_snapshot_with_its_chart() {
    let live = live_bytes("donation");
    let count =
        oracle(&read_json(&fixture_dir("donation").join("device_memory_after_updates.decoded.json"))).total_count;
    let output = xmem(["report", "--format", "html", "--top", "2", &profile("donation")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let page = String::from_utf8(output.stdout).unwrap();
    assert!(page.contains("<h2>Device memory: fixtures/pprof/donation/device_memory_after_updates.prof</h2>"));
    assert!(page.contains(&format!("<dt>Live</dt><dd>180.1 MiB ({live} bytes) in {count} allocations</dd>")), "{page}");
    assert_eq!(page.matches("<figure class=\"chart sites\">").count(), 1);
    assert!(!page.contains("No compiled XLA modules"));
    assert_eq!(page.matches("<li>").count(), 2, "--top 2 stacks");
}

/// A JAX GPU snapshot (NVIDIA H200, jax 0.11.2): JAX makes every array in
/// its own `stages.py`; the bytes belong to the user's lines.
#[test]
fn a_gpu_snapshot_blames_the_users_lines_not_jax() {
    let prof = profile("gpu_mlp_adam");
    let report = report_json(Path::new(&prof));
    let memory = &report["device_memory"][0];
    // `jax.live_arrays()` when the profile was written.
    let live = live_bytes("gpu_mlp_adam");
    assert_eq!(int(&memory["total_bytes"]), live);
    // Every site holding flat bytes is the user's script.
    let holding: Vec<&Value> =
        memory["top_sites"].as_array().unwrap().iter().filter(|site| int(&site["flat_bytes"]) > 0).collect();
    assert!(!holding.is_empty());
    for site in &holding {
        assert_eq!(site["file"], "/home/user/models/wl_gpu_mlp_adam.py", "{site}");
    }
    assert_eq!(holding.iter().map(|site| int(&site["flat_bytes"])).sum::<i64>(), live);
    // JSON keeps the whole stack, JAX's frames first.
    let heaviest = &memory["stacks"][0]["frames"];
    assert_eq!((&heaviest[0]["function"], &heaviest[1]["line"]), (&Value::from("__call__"), &Value::from(47)));
    let out = xmem(["report", prof.as_str()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let by_line = text.split("Live memory by source line").nth(1).unwrap();
    assert!(by_line.lines().nth(2).unwrap().ends_with("wl_gpu_mlp_adam.py:47"), "{text}");
    assert!(!by_line.split("\n\n").next().unwrap().contains("stages.py"), "{text}");
}

/// Loaded executables hold no bytes on GPU: a diff lists no `0 B → 0 B` stack or device.
#[test]
fn a_gpu_diff_lists_only_what_holds_bytes() {
    let (base, new) = (profile("gpu_pair_base"), profile("gpu_pair_new"));
    let out = xmem(["diff", base.as_str(), new.as_str()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("0 B → 0 B") && !text.contains("   0 B       0 B"), "{text}");
    let (_, json) = diff("gpu_pair_base", "gpu_pair_new", &[]);
    let stacks = json["device_memory"][0]["stacks"].as_array().unwrap();
    let growth = live_bytes("gpu_pair_new") - live_bytes("gpu_pair_base");
    assert_eq!(stacks.iter().map(|s| int(&s["delta_bytes"])).sum::<i64>(), growth);
    assert!(stacks.iter().all(|s| int(&s["base_bytes"]) + int(&s["new_bytes"]) > 0), "{stacks:?}");
}

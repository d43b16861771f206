//! `xmem report`, `plot`, `list` and `diff` on PyTorch CUDA memory
//! snapshots. The real snapshots' figures are checked against
//! `torch.cuda.memory_stats()` and the OOM message PyTorch printed in the
//! same run (`fixtures/torch/h200/*.memory_stats.json`); the synthetic ones
//! against the figures `fixtures/torch/gen_synthetic.py` built them with.

use crate::common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

const MIB: i64 = 1 << 20;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/torch").join(name)
}

fn xmem<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Output {
    cargo_bin_cmd!("xmem").current_dir(root()).args(args).output().unwrap()
}

/// The `torch_snapshots` of `xmem report --format json`.
fn snapshots(input: &Path) -> Vec<Value> {
    let output = xmem([OsStr::new("report"), OsStr::new("--format"), OsStr::new("json"), input.as_os_str()]);
    assert!(output.status.success(), "{}: {}", input.display(), String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["schema"], "xmem.report/1");
    report["torch_snapshots"].as_array().unwrap().clone()
}

fn device(input: &Path) -> Value {
    let mut devices = snapshots(input);
    assert_eq!(devices.len(), 1, "{}", input.display());
    devices.remove(0)
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or_else(|| panic!("not an integer: {value}"))
}

/// `torch.cuda.memory_stats()` of the run, as the capture script saved it.
fn memory_stats(path: &Path) -> Value {
    let saved: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    if saved.get("memory_stats").is_some() {
        saved["memory_stats"].clone()
    } else {
        saved
    }
}

/// The active and reserved bytes the replay gives are PyTorch's own: the
/// peak is `active_bytes.all.peak`, the end `active_bytes.all.current` and
/// the segments' `active_size`, and the reserved bytes `reserved_bytes.all.*`.
fn assert_matches_memory_stats(snapshot: &Path, stats: &Path) {
    let report = device(snapshot);
    let stats = memory_stats(stats);
    let name = snapshot.display();
    assert_eq!(int(&report["peak_bytes"]), int(&stats["active_bytes.all.peak"]), "{name}: peak");
    assert_eq!(int(&report["live_at_end_bytes"]), int(&stats["active_bytes.all.current"]), "{name}: live at the end");
    assert_eq!(int(&report["segments_active_bytes"]), int(&report["live_at_end_bytes"]), "{name}: Σ active_size");
    assert_eq!(int(&report["reserved_bytes"]), int(&stats["reserved_bytes.all.current"]), "{name}: reserved");
    assert_eq!(int(&report["reserved_peak_bytes"]), int(&stats["reserved_bytes.all.peak"]), "{name}: reserved peak");
    // PyTorch counts cudaMalloc segments only; expandable ones are mapped, not allocated.
    if report["segments"]["expandable"] == false {
        assert_eq!(int(&report["segments"]["count"]), int(&stats["segment.all.current"]), "{name}: segments");
    }
}

#[test]
fn real_snapshots_give_memory_stats_figures_to_the_byte() {
    // `pinned` also holds pinned host memory (92,274,688 bytes in
    // `torch.cuda.host_memory_stats()`), which PyTorch 2.11 leaves out of its
    // snapshot: `device` asserts that xmem reads the one device it records.
    for name in ["oom", "oom_expandable", "ring", "pinned"] {
        assert_matches_memory_stats(
            &fixture(&format!("h200/{name}.pickle.gz")),
            &fixture(&format!("h200/{name}.memory_stats.json")),
        );
    }
}

#[test]
fn the_shared_gpt_snapshot_gives_memory_stats_figures_to_the_byte() {
    let Some(corpus) = common::shared_torch() else { return };
    assert_matches_memory_stats(&corpus.join("snapshot.pickle"), &corpus.join("memory_stats.json"));
    let report = device(&corpus.join("snapshot.pickle"));
    // The parameters predate the recording: counted from the segments, as memory_viz does.
    assert_eq!(int(&report["before_trace"]["live_at_end_count"]), 75);
    assert_eq!(int(&report["trace_entries"]), 7294);
    // The owners at the peak add up to it, and so do its blocks.
    let owners: i64 = report["at_peak_by_user_frame"].as_array().unwrap().iter().map(|g| int(&g["bytes"])).sum();
    let blocks: i64 = report["at_peak"].as_array().unwrap().iter().map(|a| int(&a["size_bytes"])).sum();
    assert_eq!((owners, blocks), (int(&report["peak_bytes"]), int(&report["peak_bytes"])));
}

/// `Tried to allocate 384.00 MiB`, `5.21 GiB is allocated by PyTorch, and
/// 40.20 MiB is reserved by PyTorch but unallocated`: PyTorch's message, to
/// the two decimals it prints.
fn assert_oom_matches_message(snapshot: &Path, stats: &Path) {
    let saved: Value = serde_json::from_slice(&std::fs::read(stats).unwrap()).unwrap();
    let message = saved["error"].as_str().unwrap();
    let oom = &device(snapshot)["oom"];
    let gib = |bytes: i64| format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64);
    let mib = |bytes: i64| format!("{:.2} MiB", bytes as f64 / MIB as f64);
    let live = int(&oom["live_bytes"]);
    let unallocated = int(&oom["reserved_bytes"]) - live;
    for expected in [
        format!("Tried to allocate {}", mib(int(&oom["requested_bytes"]))),
        format!("Of the allocated memory {} is allocated by PyTorch", gib(live)),
        format!("and {} is reserved by PyTorch but unallocated", mib(unallocated)),
    ] {
        assert!(message.contains(&expected), "{}: {expected:?} not in {message:?}", snapshot.display());
    }
    // The message says "5.59 GiB allowed": the cap of set_per_process_memory_fraction, and the device had far more free.
    assert!(message.contains("GiB allowed"), "{message}");
    assert_eq!(oom["cause"], "process-limit");
    assert!(int(&oom["device_free_bytes"]) > int(&oom["requested_bytes"]));
    assert_eq!(int(&oom["earlier_ooms"]), 0);
}

/// A snapshot nobody made for xmem (fixtures/torch/README.md, public/):
/// the figures the file states itself, read with Python's `pickle`.
#[test]
fn a_public_snapshot_of_an_older_pytorch_gives_the_figures_it_states() {
    let device = device(&fixture("public/eor_nn.pickle.gz"));
    // Σ segments' active_size.
    assert_eq!(int(&device["live_at_end_bytes"]), 48_760_832);
    assert_eq!(int(&device["reserved_bytes"]), 134_217_728);
    assert_eq!(int(&device["trace_entries"]), 5_803);
    let actions = &device["actions"];
    assert_eq!(
        [int(&actions["alloc"]), int(&actions["free_requested"]), int(&actions["free_completed"])],
        [1_935, 1_926, 1_926]
    );
    assert_eq!(int(&actions["segment_alloc"]), 7);
    // Active blocks at the end whose address no `alloc` of the trace names.
    assert_eq!(int(&device["before_trace"]["live_at_end_count"]), 31);
    assert_eq!(int(&device["before_trace"]["live_at_end_bytes"]), 8_781_824);
    assert!(device["oom"].is_null());
}

#[test]
fn the_oom_is_what_pytorch_said() {
    for name in ["oom", "oom_expandable"] {
        assert_oom_matches_message(
            &fixture(&format!("h200/{name}.pickle.gz")),
            &fixture(&format!("h200/{name}.memory_stats.json")),
        );
    }
    let oom = &device(&fixture("h200/oom.pickle.gz"))["oom"];
    assert_eq!((int(&oom["requested_bytes"]), int(&oom["device_free_bytes"])), (402_653_184, 143_681_257_472));
    // What was live then, by owner, adds up to what was active.
    let at_oom: i64 = oom["at_oom"].as_array().unwrap().iter().map(|g| int(&g["bytes"])).sum();
    assert_eq!(at_oom, int(&oom["live_bytes"]));
    assert_eq!(oom["user_frame"]["function"], "forward");
}

#[test]
fn expandable_segments_are_reported_as_mapped() {
    let report = device(&fixture("h200/oom_expandable.pickle.gz"));
    let segments = &report["segments"];
    assert_eq!(segments["expandable"], true);
    assert_eq!(int(&segments["expandable_segments"]), 3);
    assert_eq!(int(&report["actions"]["segment_map"]), 95);
    assert_eq!(int(&report["actions"]["segment_unmap"]), 2);
    assert!(int(&segments["mapped_bytes"]) > int(&segments["unmapped_bytes"]));
    // Free pages of an expandable segment are remapped, not kept in runs: no largest free block.
    assert!(report["oom"]["largest_free_block_bytes"].is_null());
}

#[test]
fn a_trace_cut_by_the_ring_buffer_says_so() {
    let report = device(&fixture("h200/ring.pickle.gz"));
    assert_eq!(int(&report["trace_entries"]), 3000);
    assert!(int(&report["before_trace"]["freed_in_trace_count"]) > 0);
    let notes = report["notes"].to_string();
    assert!(notes.contains("begins mid-run") && notes.contains("max_entries"), "{notes}");
    // The window still holds the run's peak here: the last step of the largest batch.
    let stats = memory_stats(&fixture("h200/ring.memory_stats.json"));
    assert!(int(&report["peak_bytes"]) <= int(&stats["active_bytes.all.peak"]));
}

#[test]
fn every_protocol_reads_the_same() {
    let reports: Vec<Value> = (2..=5)
        .map(|protocol| {
            let mut report = device(&fixture(&format!("synthetic/basic_p{protocol}.pickle")));
            report["input"] = Value::Null;
            report
        })
        .collect();
    for report in &reports[1..] {
        assert_eq!(report, &reports[0]);
    }
    let mut gzipped = device(&fixture("synthetic/basic_p4.pickle.gz"));
    gzipped["input"] = Value::Null;
    assert_eq!(gzipped, reports[0]);
}

#[test]
fn blocks_are_sized_as_the_allocator_sizes_them() {
    let report = device(&fixture("synthetic/basic_p4.pickle"));
    // 1 MiB from before the trace + 3 MiB + 15.5 MiB asked, which got the whole 16 MiB left in the segment.
    assert_eq!(int(&report["peak_bytes"]), 20 * MIB);
    assert_eq!(int(&report["peak_requested_bytes"]), 1_000_000 + 3 * MIB + 31 * MIB / 2);
    assert_eq!(int(&report["peak_entry"]), 1);
    assert_eq!(int(&report["peak_time_us"]) - int(&report["trace_start_us"]), 10);
    assert_eq!(int(&report["live_at_end_bytes"]), 4 * MIB + 1024);
    assert_eq!((int(&report["reserved_at_peak_bytes"]), int(&report["reserved_bytes"])), (20 * MIB, 22 * MIB));
    let owners: Vec<(String, i64)> = report["at_peak_by_user_frame"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                format!("{}:{}", g["user_frame"]["file"].as_str().unwrap_or("-"), g["user_frame"]["line"]),
                int(&g["bytes"]),
            )
        })
        .collect();
    assert_eq!(
        owners,
        [
            ("/home/user/train.py:31".to_string(), 16 * MIB),
            ("/home/user/train.py:12".to_string(), 3 * MIB),
            ("-:null".to_string(), MIB)
        ]
    );
    assert_eq!(report["at_peak_by_user_frame"][2]["no_user_frame"], "before-recording");
    // The full stack stays in the JSON, C++ frames included.
    let frames = report["at_peak"][0]["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3);
    assert!(frames[0]["function"].as_str().unwrap().starts_with("c10::cuda::CUDACachingAllocator"));
}

#[test]
fn an_oom_after_caught_ones_with_free_memory_in_pieces_is_fragmentation() {
    let oom = device(&fixture("synthetic/fragmented.pickle"))["oom"].clone();
    assert_eq!(oom["cause"], "fragmentation");
    assert_eq!(int(&oom["earlier_ooms"]), 2);
    assert_eq!(int(&oom["requested_bytes"]), 4 * MIB);
    assert_eq!(int(&oom["device_free_bytes"]), MIB);
    assert_eq!((int(&oom["live_bytes"]), int(&oom["reserved_bytes"])), (10 * MIB, 20 * MIB));
    assert_eq!(int(&oom["largest_free_block_bytes"]), 2 * MIB);
    let explanation = oom["explanation"].to_string();
    assert!(explanation.contains("expandable_segments:True"), "{explanation}");
    assert!(explanation.contains("2 earlier out-of-memory failure"), "{explanation}");
}

#[test]
fn optional_keys_may_be_missing() {
    let report = device(&fixture("synthetic/legacy.pickle"));
    assert_eq!(int(&report["peak_bytes"]), 1536);
    assert!(report["peak_time_us"].is_null() && report["trace_start_us"].is_null());
    assert_eq!(int(&report["reserved_bytes"]), 2 * MIB);
    let only_segments = device(&fixture("synthetic/segments_only.pickle"));
    assert_eq!(int(&only_segments["peak_bytes"]), 4 * MIB + 1024);
    assert_eq!(int(&only_segments["trace_entries"]), 0);
    assert!(only_segments["notes"].to_string().contains("holds no trace"));
}

#[test]
fn pinned_host_memory_is_a_device_of_its_own() {
    let devices = snapshots(&fixture("synthetic/host.pickle"));
    let names: Vec<&str> = devices.iter().map(|d| d["device"].as_str().unwrap()).collect();
    assert_eq!(names, ["cuda:0", "host"]);
    assert_eq!(int(&devices[1]["peak_bytes"]), 3 * MIB);
    assert_eq!(int(&devices[1]["live_at_end_bytes"]), 2 * MIB);
}

#[test]
fn long_memo_indices_are_read() {
    let report = device(&fixture("synthetic/memo_long.pickle"));
    assert_eq!(int(&report["peak_bytes"]), 300 * 512);
    assert_eq!(int(&report["live_at_end_bytes"]), 150 * 512);
    assert_eq!(report["at_peak_by_user_frame"].as_array().unwrap().len(), 300);
}

#[test]
fn hostile_pickles_are_refused_with_a_reason() {
    let cases = [
        ("empty_dict", "not a PyTorch memory snapshot"),
        ("code", "GLOBAL"),
        ("truncated", "bytes are left in the file"),
        ("huge_length", "a length of 4611686018427387904 bytes"),
        ("cycle", "an entry without an action"),
        ("wrong_type", "'address' is not an integer"),
        ("negative_size", "'size' is negative"),
        ("deep", "not a dict"),
    ];
    for (name, reason) in cases {
        let path = format!("fixtures/torch/synthetic/hostile/{name}.pickle");
        let output = xmem(["report", &path]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(stderr.contains(&path) && stderr.contains(reason), "{name}: {stderr}");
    }
}

#[test]
fn the_text_report_names_the_peak_its_owners_and_the_oom() {
    let output = xmem(["report", "fixtures/torch/h200/oom.pickle.gz", "--top", "3"]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "PyTorch memory snapshot: fixtures/torch/h200/oom.pickle.gz, cuda:0",
        "Peak (active)         5.2 GiB (5599191040 bytes)",
        "Out of memory at",
        "Requested             384.0 MiB (402653184 bytes)",
        "torch.cuda.set_per_process_memory_fraction",
        "Who owns the peak (5.2 GiB), by user frame:",
        "forward (torch_snap.py:17)",
        "Largest stacks at the peak (3 of",
        "Blocks live at the peak: 181, largest first (top 3)",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }
    let markdown =
        String::from_utf8(xmem(["report", "fixtures/torch/h200/oom.pickle.gz", "--format", "markdown"]).stdout)
            .unwrap();
    assert!(
        markdown.contains("| Bytes | Share | Blocks | User frame")
            || markdown.contains("|     Bytes | Share | Blocks | User frame"),
        "{markdown}"
    );
}

#[test]
fn the_html_page_has_the_snapshot_with_its_charts() {
    let output = xmem(["report", "fixtures/torch/synthetic/basic_p4.pickle", "--format", "html"]);
    assert!(output.status.success());
    let html = String::from_utf8(output.stdout).unwrap();
    assert!(html.contains("PyTorch memory snapshot: fixtures/torch/synthetic/basic_p4.pickle, cuda:0"));
    for kind in ["timeline", "user-frames", "flame"] {
        assert!(html.contains(&format!("<figure class=\"chart {kind}\">")), "no {kind} chart");
    }
}

#[test]
fn plot_writes_the_timeline_the_peak_and_the_flame_graph() {
    let dir = tempfile::tempdir().unwrap();
    let output = xmem([
        OsStr::new("plot"),
        OsStr::new("fixtures/torch/h200/oom.pickle.gz"),
        OsStr::new("-o"),
        dir.path().as_os_str(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut written: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    written.sort();
    assert_eq!(written, ["oom.cuda_0.flame.svg", "oom.cuda_0.timeline.svg", "oom.cuda_0.user-frames.svg"]);
    let timeline = std::fs::read_to_string(dir.path().join("oom.cuda_0.timeline.svg")).unwrap();
    let document = roxmltree::Document::parse(&timeline).unwrap();
    assert!(document.descendants().any(|n| n.text().is_some_and(|t| t.contains("forward (torch_snap.py:17)"))));
}

#[test]
fn list_shows_devices_segments_and_trace_length() {
    let output = xmem(["list", "fixtures/torch/h200/oom.pickle.gz", "--format", "json"]);
    assert!(output.status.success());
    let listing: Value = serde_json::from_slice(&output.stdout).unwrap();
    let device = &listing["torch_snapshots"][0];
    assert_eq!(device["device"], "cuda:0");
    assert_eq!((int(&device["segments"]), int(&device["trace_entries"]), int(&device["ooms"])), (39, 5180, 1));
}

#[test]
fn diff_judges_the_peak_and_names_what_grew() {
    let output = xmem([
        "diff",
        "fixtures/torch/h200/ring.pickle.gz",
        "fixtures/torch/h200/oom.pickle.gz",
        "--fail-if-peak-grows",
        "10%",
        "--format",
        "markdown",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let markdown = String::from_utf8(output.stdout).unwrap();
    assert!(markdown.contains("**Verdict: FAIL, 1 limit crossed (--fail-if-peak-grows 10%)**"), "{markdown}");
    assert!(markdown.contains("PyTorch snapshot fixtures/torch/h200/oom.pickle.gz cuda:0: peak grew"), "{markdown}");
    assert!(markdown.contains("Owners at the peak that changed"), "{markdown}");
    let json: Value = serde_json::from_slice(
        &xmem(["diff", "fixtures/torch/h200/ring.pickle.gz", "fixtures/torch/h200/oom.pickle.gz", "--format", "json"])
            .stdout,
    )
    .unwrap();
    let device = &json["torch_snapshots"][0];
    let grown = int(&device["delta_bytes"]);
    let owners: i64 = device["owners"].as_array().unwrap().iter().map(|o| int(&o["delta_bytes"])).sum();
    assert_eq!(owners, grown, "the owners' deltas add up to the peak's");
    let same = xmem([
        "diff",
        "fixtures/torch/synthetic/basic_p2.pickle",
        "fixtures/torch/synthetic/basic_p5.pickle",
        "--fail-if-peak-grows",
        "0%",
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", String::from_utf8_lossy(&same.stdout));
    let mixed = xmem(["diff", "fixtures/torch/synthetic/basic_p4.pickle", "fixtures/profiles/pair_base/profile"]);
    assert_eq!(mixed.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&mixed.stderr);
    assert!(
        stderr.contains("basic_p4.pickle is a PyTorch memory snapshot and fixtures/profiles/pair_base/profile is not"),
        "{stderr}"
    );
}

#[test]
fn a_snapshot_on_standard_input_is_told_by_its_bytes() {
    let bytes = std::fs::read(fixture("synthetic/basic_p4.pickle")).unwrap();
    let output = cargo_bin_cmd!("xmem")
        .current_dir(root())
        .args(["report", "-", "--format", "json"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(int(&report["torch_snapshots"][0]["peak_bytes"]), 20 * MIB);
}

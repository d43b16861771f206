//! Allocator timelines as a user sees them (`xmem report`, `xmem list`,
//! `--allocator`), checked against a full decode of the same xplane with the
//! generated protobuf types, independent of xmem's wire walker.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use prost::Message;
use serde_json::Value;
use xmem::ingest::proto::xplane::{
    x_event, x_stat, XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata,
};

fn fit() -> PathBuf {
    common::profile("tf_keras_fit")
}

fn fit_xplane() -> PathBuf {
    fit().join("plugins/profile/2026_11_22_07_55_18/vm.xplane.pb")
}

fn xmem_json(args: &[&str]) -> Value {
    let output = cargo_bin_cmd!("xmem").args(args).args(["--format", "json"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// An allocator event as the full decode sees it.
struct Event {
    time_ps: i64,
    allocation: bool,
    heap: i64,
    bytes: i64,
    address: i64,
}

fn decode_events(xplane: &Path) -> Vec<Event> {
    let space = XSpace::decode(std::fs::read(xplane).unwrap().as_slice()).unwrap();
    let mut events = Vec::new();
    for plane in &space.planes {
        let stat = |e: &XEvent, name: &str| -> i64 {
            e.stats
                .iter()
                .find(|s| plane.stat_metadata.get(&s.metadata_id).is_some_and(|m| m.name == name))
                .and_then(|s| match s.value {
                    Some(x_stat::Value::Int64Value(v)) => Some(v),
                    _ => None,
                })
                .unwrap_or(0)
        };
        for line in &plane.lines {
            for event in &line.events {
                let name = plane.event_metadata.get(&event.metadata_id).map(|m| m.name.as_str()).unwrap_or("");
                if name != "MemoryAllocation" && name != "MemoryDeallocation" {
                    continue;
                }
                let offset = match event.data {
                    Some(x_event::Data::OffsetPs(o)) => o,
                    _ => 0,
                };
                events.push(Event {
                    time_ps: line.timestamp_ns * 1000 + offset,
                    allocation: name == "MemoryAllocation",
                    heap: stat(event, "bytes_allocated"),
                    bytes: stat(event, "allocation_bytes"),
                    address: stat(event, "addr"),
                });
            }
        }
    }
    events.sort_by_key(|e| e.time_ps);
    events
}

#[test]
fn counts_are_every_event_of_the_profile() {
    let events = decode_events(&fit_xplane());
    let list = xmem_json(&["list", fit().to_str().unwrap()]);
    let allocator = &list["allocators"][0];
    assert_eq!(allocator["name"], "bfc_cpu_allocator_for_gpu");
    assert_eq!(allocator["host"], "vm");
    assert_eq!(allocator["num_allocations"], events.iter().filter(|e| e.allocation).count());
    assert_eq!(allocator["num_deallocations"], events.iter().filter(|e| !e.allocation).count());
}

/// What was allocated before the capture and is still live at the peak,
/// found another way: the heap before the first event, less what the capture
/// frees without having allocated it.
#[test]
fn before_capture_bytes_follow_from_the_first_event() {
    let events = decode_events(&fit_xplane());
    let report = xmem_json(&["report", fit().to_str().unwrap()]);
    let allocator = &report["allocators"][0];
    let peak_time = allocator["peak_time_ps"].as_i64().unwrap();
    let first = &events[0];
    let mut before_capture = first.heap - if first.allocation { first.bytes } else { -first.bytes };
    let mut allocated = HashSet::new();
    for event in events.iter().take_while(|e| e.time_ps <= peak_time) {
        if event.allocation {
            allocated.insert(event.address);
        } else if !allocated.contains(&event.address) {
            before_capture -= event.bytes;
        }
    }
    assert_eq!(allocator["unattributed_at_peak_bytes"].as_i64().unwrap(), before_capture);
    assert_eq!(allocator["timeline"]["time_ps"].as_array().unwrap().len(), events.len());
}

#[test]
fn text_report_snapshot() {
    let output = cargo_bin_cmd!("xmem")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["report", "fixtures/profiles/tf_keras_fit/profile", "--top", "8"])
        .output()
        .unwrap();
    assert!(output.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn markdown_report_has_an_allocator_section() {
    cargo_bin_cmd!("xmem")
        .args(["report", fit().to_str().unwrap(), "--format", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains("### Allocator bfc_cpu_allocator_for_gpu on vm"))
        .stdout(predicate::str::is_match(r"\|\s+18\.0 MiB \|.*\| allocated before the capture started\s+\|").unwrap());
}

#[test]
fn list_shows_allocators_with_their_event_counts() {
    cargo_bin_cmd!("xmem").args(["list", fit().to_str().unwrap()]).assert().success().stdout(
        predicate::str::is_match(r"bfc_cpu_allocator_for_gpu\s+vm\s+2026\s+2005\s+85\.2 MiB\s+64\.0 GiB").unwrap(),
    );
}

#[test]
fn allocator_selection_shows_only_that_allocator() {
    let xla = common::profile("tf_keras_xla");
    for name in ["bfc_cpu_allocator_for_gpu", "vm/bfc_cpu_allocator_for_gpu"] {
        let report = xmem_json(&["report", xla.to_str().unwrap(), "--allocator", name]);
        assert_eq!(report["allocators"].as_array().unwrap().len(), 1, "{name}");
        assert_eq!(report["modules"].as_array().unwrap().len(), 0, "{name}");
    }
    let modules_only = xmem_json(&["report", xla.to_str().unwrap(), "--module", "72"]);
    assert_eq!(modules_only["allocators"].as_array().unwrap().len(), 0);
    cargo_bin_cmd!("xmem").args(["report", xla.to_str().unwrap(), "--allocator", "GPU_0_bfc"]).assert().code(2).stderr(
        predicate::str::contains("no allocator named 'GPU_0_bfc' (the input has vm/bfc_cpu_allocator_for_gpu)"),
    );
}

#[test]
fn a_profile_without_allocator_events_says_why_and_still_reports_its_modules() {
    let profile = common::profile("mlp_train");
    let output = cargo_bin_cmd!("xmem").args(["report", profile.to_str().unwrap()]).output().unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.contains("no allocator events")).collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(lines[0].contains("JAX and PyTorch/XLA on CPU record none"), "{}", lines[0]);
    assert!(stdout.contains("jit_train_step(44) · hbm"), "{stdout}");
    let report = xmem_json(&["report", profile.to_str().unwrap()]);
    assert_eq!(report["allocators"].as_array().unwrap().len(), 0);
    assert!(!report["modules"].as_array().unwrap().is_empty());
}

/// A host plane whose allocator event has a stat that is not protobuf.
fn xspace_with_a_broken_allocator_event() -> Vec<u8> {
    let mut plane = XPlane { name: "/host:CPU".into(), ..Default::default() };
    plane.event_metadata.insert(1, XEventMetadata { id: 1, name: "MemoryAllocation".into(), ..Default::default() });
    plane.stat_metadata.insert(1, XStatMetadata { id: 1, name: "bytes_allocated".into(), ..Default::default() });
    let stat = XStat { metadata_id: 1, value: Some(x_stat::Value::Int64Value(1024)) };
    let event =
        XEvent { metadata_id: 1, data: Some(x_event::Data::OffsetPs(5)), stats: vec![stat], ..Default::default() };
    plane.lines.push(XLine { id: 1, events: vec![event], ..Default::default() });
    let mut bytes = XSpace { planes: vec![plane], ..Default::default() }.encode_to_vec();
    // The stat's int64 (field 4, varint) is the last two bytes before the
    // plane's metadata; make its varint run on forever.
    let at = bytes.windows(3).position(|w| w == [0x20, 0x80, 0x08]).unwrap();
    bytes[at + 2] = 0x88;
    bytes
}

#[test]
fn a_corrupt_allocator_event_is_an_error_naming_the_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("host.xplane.pb");
    std::fs::write(&file, xspace_with_a_broken_allocator_event()).unwrap();
    let output = cargo_bin_cmd!("xmem").arg("report").arg(&file).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("host.xplane.pb") && stderr.contains("at byte"), "{stderr}");
}

#[test]
fn every_host_of_a_run_has_its_own_allocators() {
    let run = tempfile::tempdir().unwrap();
    for host in ["worker_0", "worker_1"] {
        std::fs::copy(fit_xplane(), run.path().join(format!("{host}.xplane.pb"))).unwrap();
    }
    let list = xmem_json(&["list", run.path().to_str().unwrap()]);
    let hosts: Vec<&str> = list["allocators"].as_array().unwrap().iter().map(|a| a["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["worker_0", "worker_1"]);
    let report =
        xmem_json(&["report", run.path().to_str().unwrap(), "--allocator", "worker_1/bfc_cpu_allocator_for_gpu"]);
    assert_eq!(report["allocators"][0]["host"], "worker_1");
    assert_eq!(report["allocators"].as_array().unwrap().len(), 1);
}

#[test]
fn html_report_has_a_section_per_allocator() {
    let output = cargo_bin_cmd!("xmem").arg("report").arg(fit()).args(["--format", "html"]).output().unwrap();
    assert!(output.status.success());
    let html = String::from_utf8_lossy(&output.stdout);
    assert_eq!(html.matches("<section>").count(), 1);
    assert!(html.contains("\">Allocator bfc_cpu_allocator_for_gpu on vm</h2>"), "{html}");
    assert!(html.contains("85.2 MiB (89316096 bytes)"), "{html}");
    assert!(html.contains("<td>allocated before the capture started</td>"), "{html}");
}

//! Device memory profiles that do not record every size: jaxlib on TPU (2021)
//! wrote executables with size -1, and a device without a name as a `device`
//! label with an empty value. Checked on a profile built here and on the 13
//! third-party profiles of the shared corpus (skipped without it).

use crate::common;

use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;
use prost::Message;
use serde_json::Value;
use xmem::ingest::proto::pprof::{Function, Label, Line, Location, Profile, Sample, ValueType};

fn report(input: &Path, format: &str) -> String {
    let output = cargo_bin_cmd!("xmem").args(["report", "--format", format]).arg(input).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn snapshot_json(input: &Path) -> Value {
    let json: Value = serde_json::from_str(&report(input, "json")).unwrap();
    json["device_memory"][0].clone()
}

/// A TPU snapshot as old jaxlib wrote it: a 4096-byte buffer on a device
/// whose label is empty, and 3 executables (one sample) with size -1 each.
fn old_tpu_profile() -> Profile {
    let strings = ["", "allocations", "count", "space", "bytes", "kind", "buffer", "device", "executable", "f", "f.py"];
    let label = |key, str| Label { key, str, num: 0, num_unit: 0 };
    Profile {
        sample_type: vec![ValueType { r#type: 1, unit: 2 }, ValueType { r#type: 3, unit: 4 }],
        sample: vec![
            Sample { location_id: vec![1], value: vec![1, 4096], label: vec![label(5, 6), label(7, 0)] },
            Sample { location_id: vec![1], value: vec![3, -3], label: vec![label(5, 8)] },
        ],
        location: vec![Location {
            id: 1,
            line: vec![Line { function_id: 1, line: 3, column: 0 }],
            ..Default::default()
        }],
        function: vec![Function { id: 1, name: 9, system_name: 9, filename: 10, start_line: 1 }],
        string_table: strings.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn unknown_sizes_are_counted_and_said_and_an_empty_device_is_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.prof");
    std::fs::write(&path, old_tpu_profile().encode_to_vec()).unwrap();

    let json = snapshot_json(&path);
    assert_eq!((json["total_bytes"].as_i64(), json["total_count"].as_i64()), (Some(4096), Some(4)));
    assert_eq!(json["size_unknown_count"], 3);
    let devices: Vec<(&Value, &Value, &Value)> =
        json["devices"].as_array().unwrap().iter().map(|d| (&d["device"], &d["bytes"], &d["count"])).collect();
    assert_eq!(
        devices,
        [(&Value::from(""), &Value::from(4096), &Value::from(1)), (&Value::Null, &Value::from(0), &Value::from(3))]
    );

    for format in ["text", "markdown"] {
        let text = report(&path, format);
        let said: Vec<&str> = text.lines().filter(|l| l.contains("of unknown size")).collect();
        assert_eq!(said.len(), 1, "{text}");
        assert!(said[0].contains("in 4 allocations; 3 of them of unknown size (recorded as -1"), "{}", said[0]);
        assert!(text.contains("\"\" (empty device label)") && text.contains("(no device)"), "{text}");
    }
    let list = cargo_bin_cmd!("xmem").arg("list").arg(&path).output().unwrap();
    let list = String::from_utf8(list.stdout).unwrap();
    assert!(
        list.contains("4.0 KiB in 4 allocations (3 of unknown size) from 1 stacks, on \"\" (empty device label)"),
        "{list}"
    );
}

/// Every pprof file of `corpus/external/pprof`, with its totals from an
/// independent decode (a schema-less protobuf reader in Python): bytes of the
/// samples whose size is known, allocations, and allocations of size -1.
/// `go tool pprof -top -unit=B -sample_index=space` prints as its total the
/// sum of the absolute values, the known bytes plus one per unknown size.
const EXTERNAL: [(&str, i64, i64, i64, i64); 13] = [
    ("Ajax/memory.prof", 172033275, 348, 0, 172033275),
    ("Implementation/memory_profile.prof", 95406688, 725, 0, 95406688),
    ("JAX-DIPS/memory_3037.prof", 3642323548, 333, 0, 3642323548),
    ("JAX-DIPS/memory_advecting_sphere.prof", 1989756420, 66, 0, 1989756420),
    ("Jax_cuda_med/memory.prof", 4771980, 11, 0, 4771980),
    ("TinyVLA/memory.prof", 84029768, 12, 0, 84029768),
    ("constraintawareml/memory.prof", 959994, 92211, 0, 959994),
    ("exploration-reimplementation/memory.prof", 3550656, 88, 0, 3550656),
    ("gsn-link-sign-pred/memory_8e68.prof", 469956, 173, 0, 469956),
    ("microjax/memory.prof", 1055160, 103, 0, 1055160),
    ("poscidyn/memory_d67b.prof", 17808207, 272, 0, 17808207),
    ("scalingExperiments/memory_400c.prof", 23554502656, 1383, 149, 23554502805),
    ("scalingExperiments/model_parallel_tutorial_memory.prof", 1997273088, 157, 30, 1997273118),
];

#[test]
fn every_external_pprof_file_loads_with_its_totals() {
    let Some(external) = common::shared_external() else { return };
    let root = external.join("pprof");
    for (file, known_bytes, count, unknown, go_total) in EXTERNAL {
        let json = snapshot_json(&root.join(file));
        let figures = (json["total_bytes"].as_i64(), json["total_count"].as_i64(), json["size_unknown_count"].as_i64());
        assert_eq!(figures, (Some(known_bytes), Some(count), Some(unknown)), "{file}");
        assert_eq!(known_bytes + unknown, go_total, "{file}");
    }
    let json = snapshot_json(&root.join("exploration-reimplementation/memory.prof"));
    let unnamed =
        json["devices"].as_array().unwrap().iter().find(|d| d["device"] == "").expect("the empty device label");
    assert_eq!((unnamed["bytes"].as_i64(), unnamed["count"].as_i64()), (Some(3232672), Some(37)));
}

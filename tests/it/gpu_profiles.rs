//! JAX profiles of NVIDIA and AMD GPUs as a user reads them: what the
//! allocator held at its peak, tied to the programs that made it.

use std::path::PathBuf;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

use crate::common;

fn xmem(args: &[&str]) -> String {
    let output = cargo_bin_cmd!("xmem").args(args).output().unwrap();
    assert!(output.status.success(), "xmem {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn report_json(input: &std::path::Path) -> Value {
    serde_json::from_str(&xmem(&["report", input.to_str().unwrap(), "--format", "json"])).unwrap()
}

fn mlp_adam() -> PathBuf {
    common::profile("gpu_mlp_adam")
}

/// The `profile` folders of the workloads under `root`, in name order.
fn profiles_under(root: PathBuf) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path().join("profile"))
        .filter(|profile| profile.is_dir())
        .collect();
    found.sort();
    found
}

/// Every GPU profile with allocator events there is: the fixture, and the
/// shared corpus's NVIDIA H200 and AMD MI300X captures when present.
fn gpu_profiles() -> Vec<PathBuf> {
    let mut profiles = vec![mlp_adam()];
    for folder in ["gpu", "oom-gpu"] {
        profiles.extend(common::shared_corpus_folder(folder).into_iter().flat_map(profiles_under));
    }
    profiles
        .extend(common::shared_external().into_iter().flat_map(|external| profiles_under(external.join("TraceLens"))));
    profiles
}

/// XLA's own buffer assignment of `jit_train_step` (the run's
/// `module_11939.jit_train_step…-buffer-assignment.txt`): `allocation 56:
/// size 276345112, preallocated-temp`.
const TRAIN_STEP_TEMP_BYTES: i64 = 276_345_112;

#[test]
fn the_largest_allocation_at_the_gpu_peak_is_the_training_steps_temp_allocation() {
    let report = report_json(&mlp_adam());
    let gpu = report["allocators"].as_array().unwrap().iter().find(|a| a["name"] == "GPU_0_bfc").unwrap();
    let largest = &gpu["at_peak"][0];
    assert_eq!(largest["requested_bytes"], TRAIN_STEP_TEMP_BYTES);
    assert_eq!(largest["program"], "jit_train_step(11939)");
    assert_eq!(largest["attribution"], "temp-allocation");
    // The program named is a module of the report, by name and id.
    assert!(report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "jit_train_step" && m["program_id"] == 11939));
    // The 200-byte request is the step's output tuple (`allocation 26: size 200, output shape is |(f32[], …)|`).
    let tuple = gpu["at_peak"].as_array().unwrap().iter().find(|row| row["requested_bytes"] == 200).unwrap();
    assert_eq!(
        (&tuple["program"], &tuple["attribution"]),
        (&Value::from("jit_train_step(11939)"), &Value::from("output"))
    );
    // A scalar put on the device by the host before the step ran belongs to no program.
    let host = gpu["at_peak"].as_array().unwrap().iter().find(|row| row["program"].is_null()).unwrap();
    assert_eq!(host["attribution"], "outside-programs");
    assert_eq!(host["made_in"], "PjRtCApiCompiler::BufferFromHostBuffer(f32[])");

    let profile = mlp_adam();
    let profile = profile.to_str().unwrap();
    for format in ["text", "markdown", "html"] {
        let out = xmem(&["report", profile, "--format", format]);
        assert!(out.contains("jit_train_step(11939): temp allocation"), "{format}:\n{out}");
        assert!(out.contains("outside any program"), "{format}:\n{out}");
        assert!(!out.contains("INVALID"), "{format}: JAX records no data type\n{out}");
    }
}

/// The done-when of issue 24: on every GPU profile with allocator events,
/// each allocation at the allocator peak names its program or says why it
/// cannot; a program named with an id is a module of the same profile.
#[test]
fn every_allocation_at_a_gpu_allocators_peak_names_its_program_or_why_not() {
    let mut rows = 0;
    let mut named = 0;
    for profile in gpu_profiles() {
        let report = report_json(&profile);
        let modules: Vec<String> = report["modules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| format!("{}({})", m["name"].as_str().unwrap(), m["program_id"]))
            .collect();
        for allocator in report["allocators"].as_array().unwrap() {
            for row in allocator["at_peak"].as_array().unwrap() {
                rows += 1;
                let what = format!("{} {}: {row}", profile.display(), allocator["name"]);
                match (row["program"].as_str(), row["attribution"].as_str().unwrap()) {
                    (Some(program), _) => {
                        named += 1;
                        assert!(
                            !program.ends_with(')') || modules.iter().any(|m| m == program),
                            "{what}: no module {program}"
                        );
                    }
                    (None, "outside-programs") => assert!(row["made_in"].is_string(), "{what}"),
                    (None, other) => panic!("{what}: no program, attributed by {other}"),
                }
            }
        }
    }
    assert!(named > 0 && rows >= named, "{named} of {rows} rows named");
    eprintln!("{named} of {rows} rows at GPU allocator peaks name their program; the others were made outside any");
}

/// Issue 24: a program whose peak is more than the device's memory cannot
/// run there as compiled; the report says so in one line. The H200's plane
/// gives its memory (`memory_size` 150109880320, 139.8 GiB).
#[test]
fn a_peak_beyond_the_devices_memory_is_said_in_one_line() {
    let mut capture = xmem::ingest::load(&mlp_adam(), &xmem::ingest::ReadOptions::default()).unwrap();
    let [device] = capture.devices.as_slice() else { panic!("{:?}", capture.devices) };
    assert_eq!((device.name.as_str(), device.memory_bytes), ("vm:/device:GPU:0", 150_109_880_320));
    assert_eq!(device.model.as_deref(), Some("NVIDIA H200"));
    let fits = xmem::analysis::analyze(std::slice::from_ref(&capture));
    assert!(!fits.notes.iter().any(|n| n.contains("more than the")), "{:?}", fits.notes);
    // The same programs on a device of 512 MiB: the training step's 750.6 MiB peak does not fit.
    capture.devices[0].memory_bytes = 512 << 20;
    let report = xmem::analysis::analyze(std::slice::from_ref(&capture));
    let over: Vec<&String> = report.notes.iter().filter(|n| n.contains("more than the")).collect();
    assert_eq!(
        over,
        [&"jit_train_step(11939) needs 750.6 MiB at its device-memory peak, more than the 512.0 MiB that \
           vm:/device:GPU:0 (NVIDIA H200) has"
            .to_string()]
    );
}

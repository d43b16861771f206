//! `xmem report` and `xmem list` run as a user runs them, on real fixtures and
//! on broken inputs. Golden numbers come from XProf's oracle files.

use crate::common;

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use prost::Message;
use serde_json::Value;
use xmem::ingest::proto::xla::{HloComputationProto, HloInstructionProto, HloModuleProto, HloProto};

const MIB: f64 = (1u64 << 20) as f64;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(path)
}

/// A figure from an XProf oracle file, in bytes.
fn oracle_bytes(oracle: &str, key: &str) -> i64 {
    let json: Value = serde_json::from_slice(&std::fs::read(fixture(oracle)).unwrap()).unwrap();
    (json[key].as_f64().unwrap() * MIB) as i64
}

fn report_json(args: &[&str]) -> Value {
    let output = cargo_bin_cmd!("xmem").arg("report").args(args).arg("--format").arg("json").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

const TRAIN_STEP_ORACLE: &str = "profiles/mlp_train/oracle/memory_viewer/jit_train_step(44).memory_space_0.json";

#[test]
fn text_report_leads_with_the_largest_module_and_its_peak() {
    let peak = oracle_bytes(TRAIN_STEP_ORACLE, "peakHeapMib");
    cargo_bin_cmd!("xmem")
        .args(["report", fixture("profiles/mlp_train/profile").to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("jit_train_step(44) · hbm (color 0)"))
        .stdout(predicate::str::contains(format!("({peak} bytes) at event 2 (ynn_fusion.6)")))
        .stdout(predicate::str::contains("multiply_add_fusion.8  f32[2048,2048]{1,0}"))
        .stdout(predicate::str::contains("jit(train_step)/add  wl_mlp_train.py:36"));
}

#[test]
fn json_report_follows_the_schema_with_exact_bytes() {
    let json = report_json(&[fixture("profiles/mlp_train/profile").to_str().unwrap()]);
    assert_eq!(json["schema"], "xmem.report/1");
    let module = &json["modules"][0];
    assert_eq!(module["name"], "jit_train_step");
    assert_eq!(module["program_id"], 44);
    let space = &module["memory_spaces"][0];
    assert_eq!(space["color"], 0);
    assert_eq!(space["peak_bytes"], oracle_bytes(TRAIN_STEP_ORACLE, "peakHeapMib"));
    assert_eq!(space["peak_position"], 2);
    assert_eq!(space["heap_bytes"].as_array().unwrap().len(), 7);
    let buffer =
        space["at_peak"].as_array().unwrap().iter().find(|b| b["instruction"] == "multiply_add_fusion.8").unwrap();
    assert_eq!(buffer["shape"], "f32[2048,2048]{1,0}");
    assert_eq!(buffer["size_bytes"], 16 << 20);
    assert_eq!(buffer["category"], "output");
    assert_eq!(buffer["op_name"], "jit(train_step)/add");
    assert_eq!(buffer["source"], "/home/user/models/wl_mlp_train.py:36");
}

#[test]
fn every_input_form_gives_the_same_module() {
    let run_dir = fixture("profiles/pair_base/profile/plugins/profile/2026_11_22_07_55_28");
    let xplane = run_dir.join("vm.xplane.pb");
    let dump = fixture("profiles/pair_base/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb");
    let expected = oracle_bytes(
        "profiles/pair_base/oracle/memory_viewer/jit_wide_mlp_step(40).memory_space_0.json",
        "peakHeapMib",
    );
    for input in
        [fixture("profiles/pair_base/profile"), run_dir, xplane, dump.clone(), dump.parent().unwrap().to_path_buf()]
    {
        let json = report_json(&[input.to_str().unwrap(), "--module", "jit_wide_mlp_step"]);
        assert_eq!(json["modules"][0]["memory_spaces"][0]["peak_bytes"], expected, "{}", input.display());
    }
}

#[test]
fn gzipped_xplane_is_read_directly() {
    let dir = tempfile::tempdir().unwrap();
    let xplane = fixture("profiles/pair_base/profile/plugins/profile/2026_11_22_07_55_28/vm.xplane.pb");
    let gz = dir.path().join("vm.xplane.pb.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut encoder, &std::fs::read(xplane).unwrap()).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let json = report_json(&[gz.to_str().unwrap(), "--module", "40"]);
    assert_eq!(json["modules"][0]["name"], "jit_wide_mlp_step");
}

#[test]
fn module_selection_by_name_id_and_regex() {
    let profile = fixture("profiles/mlp_train/profile");
    let profile = profile.to_str().unwrap();
    for selector in ["jit_train_step", "jit_train_step(44)", "44", "/train_st/"] {
        let json = report_json(&[profile, "--module", selector]);
        let modules = json["modules"].as_array().unwrap();
        assert_eq!(modules.len(), 1, "{selector}");
        assert_eq!(modules[0]["program_id"], 44, "{selector}");
    }
    let json = report_json(&[profile, "--module", "/^jit__normal/"]);
    assert_eq!(json["modules"].as_array().unwrap().len(), 5);
}

#[test]
fn host_memory_space_is_found_from_layouts() {
    let json = report_json(&[fixture("profiles/host_offload/profile").to_str().unwrap(), "--module", "jit_host_io"]);
    let colors: Vec<i64> =
        json["modules"][0]["memory_spaces"].as_array().unwrap().iter().map(|s| s["color"].as_i64().unwrap()).collect();
    assert_eq!(colors, [0, 5]);
    let only_host = report_json(&[
        fixture("profiles/host_offload/profile").to_str().unwrap(),
        "--module",
        "jit_host_io",
        "--memory-space",
        "host",
    ]);
    assert_eq!(only_host["modules"][0]["memory_spaces"][0]["name"], "host");
}

#[test]
fn a_module_without_heap_trace_says_so() {
    // TensorFlow's xplane copy of the HLO lacks the heap-simulator trace.
    cargo_bin_cmd!("xmem")
        .args(["report", fixture("profiles/tf_keras_xla/profile").to_str().unwrap(), "--all"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no heap-simulator trace"))
        .stdout(predicate::str::contains("--xla_dump_hlo_as_proto"));
    let json = report_json(&[fixture("profiles/tf_keras_xla/profile").to_str().unwrap()]);
    assert_eq!(json["modules"][0]["memory_spaces"][0]["heap_simulation"], "missing");
    let json = report_json(&[fixture("profiles/tf_keras_xla/xla_dump").to_str().unwrap()]);
    assert_eq!(json["modules"][0]["memory_spaces"][0]["heap_simulation"], "simulated");
}

#[test]
fn markdown_report_has_tables() {
    cargo_bin_cmd!("xmem")
        .args(["report", fixture("profiles/pair_new/profile").to_str().unwrap(), "--format", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains("## xmem report"))
        .stdout(predicate::str::contains("| Module"))
        .stdout(predicate::str::contains("### jit_wide_mlp_step(40) · hbm (color 0)"));
}

#[test]
fn list_shows_modules_and_memory_spaces() {
    cargo_bin_cmd!("xmem")
        .args(["list", fixture("profiles/host_offload/profile").to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"jit_host_io\s+22\s+host").unwrap());
}

fn assert_exit_2_naming(path: &Path, args: &[&str], needle: &str) {
    let output = cargo_bin_cmd!("xmem").arg("report").arg(path).args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", path.display());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(&path.display().to_string()), "names the file: {stderr}");
    assert!(stderr.contains(needle), "says what was wrong ({needle}): {stderr}");
}

#[test]
fn bad_inputs_exit_2_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_exit_2_naming(&dir.path().join("missing.xplane.pb"), &[], "No such file");
    let empty = dir.path().join("empty.xplane.pb");
    std::fs::write(&empty, b"").unwrap();
    assert_exit_2_naming(&empty, &[], "empty");
    let png = dir.path().join("chart.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    assert_exit_2_naming(&png, &[], "expected an XProf profile");
    let text = dir.path().join("notes.xplane.pb");
    std::fs::write(&text, "this is a text file, not a profile\n").unwrap();
    assert_exit_2_naming(&text, &[], "expected an XProf profile");
    let nothing = dir.path().join("nothing");
    std::fs::create_dir(&nothing).unwrap();
    std::fs::write(nothing.join("README.txt"), "no profile here").unwrap();
    assert_exit_2_naming(&nothing, &[], "holds no profile");
    let truncated = dir.path().join("truncated.xplane.pb");
    let xplane =
        std::fs::read(fixture("profiles/pair_base/profile/plugins/profile/2026_11_22_07_55_28/vm.xplane.pb")).unwrap();
    // Cut in half, it still has 13 whole modules: a warning, or with --strict one line.
    std::fs::write(&truncated, &xplane[..xplane.len() / 2]).unwrap();
    assert_exit_2_naming(&truncated, &["--strict"], "at byte");
    let lenient = cargo_bin_cmd!("xmem").arg("report").arg(&truncated).output().unwrap();
    assert_eq!(lenient.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&lenient.stderr).starts_with("xmem: warning:"));
}

#[test]
fn an_hlo_proto_without_buffer_assignment_says_how_to_get_one() {
    let module = HloModuleProto {
        name: "jit_f".into(),
        entry_computation_name: "main".into(),
        computations: vec![HloComputationProto {
            name: "main".into(),
            instructions: vec![HloInstructionProto {
                name: "p0".into(),
                opcode: "parameter".into(),
                id: 1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("module_0001.jit_f.before_optimizations.hlo.pb");
    std::fs::write(&before, HloProto { hlo_module: Some(module.clone()), buffer_assignment: None }.encode_to_vec())
        .unwrap();
    assert_exit_2_naming(&before, &[], "--xla_dump_hlo_as_proto");
    let bare = dir.path().join("jit_f.hlo_module.pb");
    std::fs::write(&bare, module.encode_to_vec()).unwrap();
    assert_exit_2_naming(&bare, &[], "no buffer assignment");
}

#[test]
fn unknown_module_is_a_usage_error() {
    cargo_bin_cmd!("xmem")
        .args(["report", fixture("profiles/mlp_train/profile").to_str().unwrap(), "--module", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no module matches"));
}

#[test]
fn version_and_completions() {
    cargo_bin_cmd!("xmem").arg("--version").assert().success().stdout(predicate::str::starts_with("xmem "));
    cargo_bin_cmd!("xmem").args(["completions", "bash"]).assert().success().stdout(predicate::str::contains("_xmem()"));
    cargo_bin_cmd!("xmem").args(["report"]).assert().code(2);
}

#[test]
fn text_report_snapshot() {
    let output = cargo_bin_cmd!("xmem")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["report", "fixtures/profiles/pair_base/profile", "--top", "8"])
        .output()
        .unwrap();
    assert!(output.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn a_report_of_two_inputs_names_each_rows_input_and_says_once_that_there_are_no_allocator_events() {
    let (a, b) = ("fixtures/profiles/pair_base/profile", "fixtures/profiles/pair_new/profile");
    let output =
        cargo_bin_cmd!("xmem").current_dir(env!("CARGO_MANIFEST_DIR")).args(["report", a, b]).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.matches("no allocator events").count(), 1, "{stdout}");
    let header = stdout.lines().find(|l| l.starts_with("Module")).unwrap();
    assert!(header.ends_with("Input"), "{header}");
    for input in [a, b] {
        assert!(stdout.lines().any(|l| l.starts_with("jit_wide_mlp_step") && l.ends_with(input)), "{stdout}");
    }
}

/// XProf's answer for a Pallas matmul on TPU v6e: the largest scoped-VMEM
/// allocation and its instruction, shown in every format (the profile is
/// third-party: read from `../shared/corpus/external`, skipped without it).
#[test]
fn scoped_vmem_is_shown_in_every_format() {
    let Some(external) = common::shared_external() else { return };
    let input = external.join("xprof-cli/v6e_pallas_matmul/profile");
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "tests/oracle-external/xprof-cli/v6e_pallas_matmul/profile/plugins/profile/testrun/memory_viewer/\
         jit_matmul_optimized(17342868964687645945).memory_space_1.json",
    );
    let oracle: Value = serde_json::from_slice(&std::fs::read(oracle).unwrap()).unwrap();
    let bytes = (oracle["maxScopedVmemAllocationMib"].as_f64().unwrap() * MIB) as i64;
    let instruction = oracle["maxScopedVmemInstructionName"].as_str().unwrap();
    let report = report_json(&[input.to_str().unwrap(), "--memory-space", "vmem"]);
    let vmem = &report["modules"][0]["memory_spaces"][0];
    assert_eq!(
        (vmem["max_scoped_vmem_bytes"].as_i64(), vmem["max_scoped_vmem_instruction"].as_str()),
        (Some(bytes), Some(instruction))
    );
    let shown = format!("9.0 MiB ({bytes} bytes) in {instruction}");
    for format in ["text", "markdown", "html"] {
        cargo_bin_cmd!("xmem")
            .arg("report")
            .arg(&input)
            .args(["--memory-space", "vmem", "--format", format])
            .assert()
            .success()
            .stdout(predicate::str::contains("Scoped VMEM").and(predicate::str::contains(shown.as_str())));
    }
}

//! Modules are named as XProf names them, `name(program_id)`: the names XProf
//! gave the fixtures' modules (its oracle files), id 0 included, the id taken
//! from `<name>(<id>).hlo_proto.pb` file names, and the programs of several
//! hosts kept apart as XProf keeps them.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

use crate::common::{fixture, profile};

fn xmem_json(command: &str, args: &[&str]) -> Value {
    let output = cargo_bin_cmd!("xmem").arg(command).args(args).args(["--format", "json"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn listed_names(input: &Path) -> BTreeSet<String> {
    let json = xmem_json("list", &[input.to_str().unwrap()]);
    json["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}({})", m["name"].as_str().unwrap(), m["program_id"]))
        .collect()
}

/// The modules XProf named, from its oracle files `<module>.memory_space_<n>.json`.
fn oracle_names(oracle: &Path) -> BTreeSet<String> {
    let Ok(files) = std::fs::read_dir(oracle.join("memory_viewer")) else { return BTreeSet::new() };
    files
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            Some(name.strip_suffix(".json")?.rsplit_once(".memory_space_")?.0.to_string())
        })
        .filter(|name| name != "NO_MODULE")
        .collect()
}

#[test]
fn every_fixture_module_has_the_name_xprof_gave_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles");
    let mut checked = 0;
    for workload in std::fs::read_dir(&root).unwrap() {
        let dir = workload.unwrap().path();
        let expected = oracle_names(&dir.join("oracle"));
        if expected.is_empty() {
            continue;
        }
        assert_eq!(listed_names(&dir.join("profile")), expected, "{}", dir.display());
        checked += 1;
    }
    assert!(checked >= 8, "{checked} fixtures with modules");
}

/// The TPU, AMD GPU and standalone-HloProto inputs of the external corpus,
/// against the module names XProf 2.24.2 gives them (`xspace_to_tool_names`,
/// see the corpus README).
#[test]
fn external_modules_have_the_names_xprof_gives_them() {
    let Some(external) = common::shared_external() else { return };
    let expected: [(&str, &[&str]); 4] = [
        (
            "xprof/tpu_inference_2_v1/profile",
            &[
                "jit__psum(9646411105960254074)",
                "jit_broadcast_in_dim(11287434908481120160)",
                "jit_convert_element_type(2433868464432466958)",
                "jit_f(12190760917235803885)",
            ],
        ),
        ("xprof-cli/v6e_pallas_matmul/profile", &["jit_matmul_optimized(17342868964687645945)"]),
        ("xprof-cli/hlo_proto", &["jit_matmul_optimized(17342868964687645945)"]),
        (
            "TraceLens/hlo_protos_jax_conv_minimal",
            &[
                "jit__multi_slice(13)",
                "jit__normal(11)",
                "jit__normal(9)",
                "jit__threefry_seed(3)",
                "jit__threefry_split(5)",
                "jit__unstack(7)",
                "jit_convert_element_type(1)",
                "jit_forward_3d_conv(15)",
            ],
        ),
    ];
    for (input, names) in expected {
        let names: BTreeSet<String> = names.iter().map(|n| n.to_string()).collect();
        assert_eq!(listed_names(&external.join(input)), names, "{input}");
    }
    // The AMD GPU profiles: how many modules XProf lists, and the last compiled.
    let amd = [
        ("jax08_attention", 31, "jit_matmul(98)"),
        ("jax08_conv", 8, "jit_forward_3d_conv(15)"),
        ("jax08_elementwise", 16, "jit__reduce_sum(32)"),
        ("jax08_gemm", 16, "jit_dot(79)"),
        ("jax_conv_minimal_legacy", 8, "jit_forward_3d_conv(15)"),
        ("jax_te_fused_attn", 9, "jit_loss_fn(17)"),
    ];
    for (workload, count, last) in amd {
        let names = listed_names(&external.join("TraceLens").join(workload).join("profile"));
        assert_eq!(names.len(), count, "{workload}");
        assert!(names.contains(last), "{workload}: {names:?}");
    }
    // The 20-digit fingerprint is one cell of the text tables, never wrapped.
    let tpu_text =
        cargo_bin_cmd!("xmem").arg("list").arg(external.join("xprof/tpu_inference_2_v1/profile")).output().unwrap();
    let tpu_text = String::from_utf8(tpu_text.stdout).unwrap();
    assert!(
        tpu_text.lines().any(|l| l.trim_start().starts_with("jit_f ") && l.contains(" 12190760917235803885 ")),
        "{tpu_text}"
    );
    // The TPU module's HloModuleProto.id selects it as well as its fingerprint.
    let tpu = external.join("xprof/tpu_inference_2_v1/profile");
    for selector in ["12", "12190760917235803885"] {
        let json = xmem_json("report", &[tpu.to_str().unwrap(), "--module", selector]);
        let modules = json["modules"].as_array().unwrap();
        assert_eq!(modules.len(), 1, "{selector}");
        assert_eq!(
            (modules[0]["program_id"].as_u64(), modules[0]["module_id"].as_u64()),
            (Some(12190760917235803885), Some(12))
        );
    }
}

#[test]
fn module_id_zero_is_an_id() {
    let input = profile("torch_xla_small");
    let input = input.to_str().unwrap();
    let json = xmem_json("report", &[input, "--module", "0"]);
    let modules = json["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 1);
    assert_eq!(modules[0]["name"], "SyncTensorsGraph.397");
    assert_eq!((modules[0]["program_id"].as_u64(), modules[0]["module_id"].as_u64()), (Some(0), Some(0)));

    let text = cargo_bin_cmd!("xmem").args(["list", input]).output().unwrap();
    let row = String::from_utf8(text.stdout)
        .unwrap()
        .lines()
        .find(|l| l.contains("SyncTensorsGraph.397"))
        .unwrap()
        .to_string();
    assert_eq!(row.split_whitespace().nth(1), Some("0"), "the Id column: {row}");

    let out = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("xmem").args(["plot", input, "--module", "0", "-o"]).arg(out.path()).assert().success();
    let charts: Vec<String> =
        std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!charts.is_empty() && charts.iter().all(|c| c.starts_with("SyncTensorsGraph_397_0.")), "{charts:?}");
}

/// XProf writes `<name>(<program_id>).hlo_proto.pb`; read alone, the file
/// name is what says the program id, and `--module` takes either id.
#[test]
fn the_program_id_comes_from_an_hlo_proto_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("jit_wide_mlp_step(17).hlo_proto.pb");
    std::fs::copy(fixture("pair_base/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb"), &named)
        .unwrap();
    for input in [dir.path().to_path_buf(), named] {
        for selector in ["17", "40", "jit_wide_mlp_step(17)"] {
            let json = xmem_json("report", &[input.to_str().unwrap(), "--module", selector]);
            let module = &json["modules"][0];
            assert_eq!(
                (module["program_id"].as_u64(), module["module_id"].as_u64()),
                (Some(17), Some(40)),
                "{selector}"
            );
        }
    }
}

fn run_of_hosts(hosts: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (n, workload) in hosts.iter().enumerate() {
        let run = std::fs::read_dir(profile(workload).join("plugins/profile")).unwrap().next().unwrap().unwrap().path();
        std::fs::copy(run.join("vm.xplane.pb"), dir.path().join(format!("host{n}.xplane.pb"))).unwrap();
    }
    dir
}

/// Two hosts whose programs share ids: XProf 2.24.2 lists 30 modules for
/// mlp_train's host beside pair_base's (`xspace_to_tool_names` on both), as
/// many as there are distinct `name(id)`; the 12 that both hosts name alike
/// but hold differently are the first host's, and xmem says so.
#[test]
fn hosts_whose_programs_share_ids_keep_every_program() {
    let run = run_of_hosts(&["mlp_train", "pair_base"]);
    let mut expected = oracle_names(&fixture("mlp_train/oracle"));
    expected.extend(oracle_names(&fixture("pair_base/oracle")));
    assert_eq!(expected.len(), 30);
    assert_eq!(listed_names(run.path()), expected);

    let output = cargo_bin_cmd!("xmem").args(["list", run.path().to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let warning =
        stderr.lines().find(|l| l.contains("host1.xplane.pb: an earlier host")).unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(warning.matches(')').count(), 12, "{warning}");
    assert!(warning.contains("jit__normal(8)") && warning.ends_with("as XProf does"), "{warning}");
}

/// The same program on every host of a run is one module, said once.
#[test]
fn the_same_program_on_several_hosts_is_one_module() {
    let run = run_of_hosts(&["pair_new", "pair_new"]);
    assert_eq!(listed_names(run.path()), oracle_names(&fixture("pair_new/oracle")));
    let output = cargo_bin_cmd!("xmem").args(["list", run.path().to_str().unwrap()]).output().unwrap();
    assert!(!String::from_utf8_lossy(&output.stderr).contains("earlier host"));
}

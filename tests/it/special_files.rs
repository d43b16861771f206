//! Inputs that never end or change under the reader: a FIFO or a device
//! inside a directory is skipped with a warning; one given directly (a FIFO,
//! `/dev/zero`, process substitution) is read as a stream counted against
//! `--max-input-size`; a glob walks a directory symlink cycle once; a file
//! truncated while it is read is an error naming it, never SIGBUS.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;

use crate::common::profile;
use crate::synthetic;

/// Long enough for any of these on a loaded machine; a blocked or endless read takes forever.
const PATIENCE: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The run directory of a fixture's profile.
fn run_dir(workload: &str) -> std::path::PathBuf {
    let runs = profile(workload).join("plugins/profile");
    std::fs::read_dir(runs).unwrap().next().unwrap().unwrap().path()
}

#[test]
fn a_fifo_named_like_a_profile_in_a_run_dir_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    for host in std::fs::read_dir(run_dir("mlp_train")).unwrap() {
        let host = host.unwrap().path();
        std::fs::copy(&host, dir.path().join(host.file_name().unwrap())).unwrap();
    }
    let fifo = dir.path().join("zz.xplane.pb");
    mkfifo(&fifo);
    cargo_bin_cmd!("xmem")
        .arg("report")
        .arg(dir.path())
        .timeout(PATIENCE)
        .assert()
        .success()
        .stdout(predicate::str::contains("jit_train_step"))
        .stderr(predicate::str::contains(format!("skipped {}: is a FIFO, not a regular file", fifo.display())));
}

#[test]
fn dev_zero_stops_at_the_input_limit() {
    for command in [&["report"][..], &["oom"][..]] {
        cargo_bin_cmd!("xmem")
            .args(command)
            .args(["--max-input-size", "1MiB", "/dev/zero"])
            .timeout(PATIENCE)
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("xmem: /dev/zero: ").and(predicate::str::contains("limit")));
    }
}

#[test]
fn process_substitution_and_a_fifo_are_read_as_streams() {
    let host = std::fs::read_dir(run_dir("mlp_train")).unwrap().next().unwrap().unwrap().path();
    let script = r#"exec "$0" report --format json <(cat "$1")"#;
    let substituted =
        Command::new("bash").args(["-c", script]).arg(env!("CARGO_BIN_EXE_xmem")).arg(&host).output().unwrap();
    assert_eq!(substituted.status.code(), Some(0), "{}", String::from_utf8_lossy(&substituted.stderr));
    let direct = cargo_bin_cmd!("xmem").args(["report", "--format", "json"]).arg(&host).output().unwrap();
    // The modules, without the name of the input they were read from.
    let modules = |stdout: &[u8]| -> serde_json::Value {
        let mut modules = serde_json::from_slice::<serde_json::Value>(stdout).unwrap()["modules"].take();
        modules.as_array_mut().unwrap().iter_mut().for_each(|m| drop(m["input"].take()));
        modules
    };
    assert_eq!(modules(&substituted.stdout), modules(&direct.stdout), "the same report as from the file");

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("host.xplane.pb");
    mkfifo(&fifo);
    let writer = {
        let (fifo, host) = (fifo.clone(), host.clone());
        std::thread::spawn(move || std::fs::write(fifo, std::fs::read(host).unwrap()).unwrap())
    };
    let piped =
        cargo_bin_cmd!("xmem").args(["report", "--format", "json"]).arg(&fifo).timeout(PATIENCE).output().unwrap();
    writer.join().unwrap();
    assert_eq!(piped.status.code(), Some(0), "{}", String::from_utf8_lossy(&piped.stderr));
    assert_eq!(modules(&piped.stdout), modules(&direct.stdout));
}

#[test]
fn a_glob_visits_each_log_once_through_symlink_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(logs.join("a/b")).unwrap();
    let fixture = |name: &str| Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs").join(name);
    std::fs::copy(fixture("A-01.txt"), logs.join("a/one.log")).unwrap();
    std::fs::copy(fixture("A-02.txt"), logs.join("a/b/two.log")).unwrap();
    // A link to the directory itself, one back up, one across: cycles and a second path to each log.
    std::os::unix::fs::symlink(".", logs.join("a/self")).unwrap();
    std::os::unix::fs::symlink("..", logs.join("a/b/up")).unwrap();
    std::os::unix::fs::symlink("../a", logs.join("a/b/again")).unwrap();
    mkfifo(&logs.join("a/b/pipe.log"));
    let pattern = format!("{}/**/*.log", logs.display());
    let output = cargo_bin_cmd!("xmem").args(["oom", "--format", "json", &pattern]).timeout(PATIENCE).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "memory errors found: {stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let inputs: Vec<&str> =
        report["reports"].as_array().unwrap().iter().map(|r| r["input"].as_str().unwrap()).collect();
    let expected = [logs.join("a/b/two.log"), logs.join("a/one.log")];
    assert_eq!(inputs, expected.iter().map(|p| p.to_str().unwrap()).collect::<Vec<_>>());
    assert!(stderr.contains("pipe.log: is a FIFO, not a regular file"), "{stderr}");
}

/// The file is cut to a megabyte while xmem reads it: exit code 2 naming the
/// file (or 0, when the read was done first), never SIGBUS. A race: the
/// deterministic check is `source::tests::a_file_truncated_while_it_is_read_…`.
#[test]
fn a_profile_truncated_while_it_is_read_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = synthetic::xspace(1, synthetic::ModuleSize { live_at_peak: 50_000, transient: 50_000 }, 0);
    for delay_ms in [50, 150, 400] {
        let path = dir.path().join("growing.xplane.pb");
        std::fs::write(&path, &bytes).unwrap();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_xmem"))
            .args(["report", "--format", "json", "-o", "/dev/null"])
            .arg(&path)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(1 << 20).unwrap();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        match output.status.code() {
            Some(0) => {}
            Some(2) => assert!(
                stderr.contains(&format!("{}: the file shrank while xmem read it", path.display()))
                    || stderr.contains(&path.display().to_string()),
                "{stderr}"
            ),
            other => panic!("cut after {delay_ms} ms: {other:?} ({:?}) {stderr}", output.status),
        }
    }
}

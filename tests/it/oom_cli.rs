//! `xmem oom` run as a user runs it: on a file, on several and on globs, on
//! standard input as a stream, as JSON, and on logs with nothing to report or
//! nothing to read, with the exit codes it documents (1 when it found a memory
//! error, 0 when none, 2 on bad input). The text output is pinned for one log of each kind.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;

fn xmem() -> assert_cmd::Command {
    let mut command = cargo_bin_cmd!("xmem");
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

fn text_of(log: &str) -> String {
    let output = xmem().args(["oom", log]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn compile_time_oom_text() {
    insta::assert_snapshot!("compile_time_oom", text_of("fixtures/oom-logs/A-06.txt"));
}

#[test]
fn sparsecore_allocation_text() {
    insta::assert_snapshot!("sparsecore_allocation", text_of("fixtures/oom-logs/E-01.txt"));
}

#[test]
fn buffer_assignment_oom_text() {
    insta::assert_snapshot!("buffer_assignment_oom", text_of("fixtures/oom-logs/C-02.txt"));
}

#[test]
fn bfc_allocator_oom_text() {
    insta::assert_snapshot!("bfc_allocator_oom", text_of("fixtures/oom-logs/D-14.txt"));
}

#[test]
fn runtime_allocation_failure_text() {
    insta::assert_snapshot!("runtime_allocation_failure", text_of("fixtures/oom-logs/H-03.txt"));
}

#[test]
fn triton_out_of_resources_text() {
    insta::assert_snapshot!("triton_out_of_resources", text_of("fixtures/oom-logs/F-07.txt"));
}

#[test]
fn pytorch_cuda_oom_text() {
    insta::assert_snapshot!("pytorch_cuda_oom", text_of("fixtures/oom-logs/G-01.txt"));
}

#[test]
fn unrecognised_text() {
    insta::assert_snapshot!("host_oom", text_of("fixtures/oom-logs-extra/slurm-cgroup-oom.txt"));
}

#[test]
fn markdown_report() {
    let output = xmem().args(["oom", "fixtures/oom-logs/A-09.txt", "--format", "markdown"]).output().unwrap();
    insta::assert_snapshot!("compile_time_oom_markdown", String::from_utf8(output.stdout).unwrap());
}

#[test]
fn stdin_reads_like_a_file() {
    let log = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/oom-logs/B-04.txt")).unwrap();
    let from_stdin = xmem().args(["oom", "-"]).write_stdin(log).output().unwrap();
    assert_eq!(from_stdin.status.code(), Some(1));
    let from_stdin = String::from_utf8(from_stdin.stdout).unwrap();
    let from_file = text_of("fixtures/oom-logs/B-04.txt");
    assert!(from_stdin.starts_with("xmem oom: <stdin>\n"), "{from_stdin}");
    // Past the title (the input's name and its underline), the reports are the same.
    let body = |text: &str| text.lines().skip(2).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&from_stdin), body(&from_file));
    assert!(from_stdin.contains("compile-time VMEM OOM (E1001): needs 76.58 MiB of 64.00 MiB — 12.58 MiB over"));
}

#[test]
fn json_follows_the_contract() {
    let output = xmem().args(["oom", "fixtures/oom-logs/A-05.txt", "--format", "json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["schema"], "xmem.oom/1");
    let event = &json["events"][0];
    for key in [
        "kind",
        "error_code",
        "memory_space",
        "used_bytes",
        "capacity_bytes",
        "exceeded_by_bytes",
        "requested_bytes",
        "free_bytes",
        "allocations",
        "truncated",
        "advice",
    ] {
        assert!(event.get(key).is_some(), "missing {key}");
    }
    assert_eq!(event["kind"], "compile-time-oom");
    assert_eq!(event["error_code"], "E1000");
    assert_eq!(event["memory_space"], "hbm");
    // 41.74G, 16.00G and 25.74G, in bytes.
    assert_eq!(event["used_bytes"], 44_817_983_734u64);
    assert_eq!(event["capacity_bytes"], 17_179_869_184u64);
    assert_eq!(event["exceeded_by_bytes"], 27_638_114_550u64);
    assert!(event["requested_bytes"].is_null() && event["free_bytes"].is_null(), "not in the log, so null");
    assert_eq!(event["truncated"], true);
    let allocation = &event["allocations"][0];
    for key in ["size_bytes", "unpadded_bytes", "op_name", "shape", "xla_label", "allocation_type"] {
        assert!(allocation.get(key).is_some(), "missing allocations[].{key}");
    }
    assert_eq!(allocation["size_bytes"], 34_359_738_368u64);
    assert_eq!(allocation["unpadded_bytes"], 1_073_741_824u64);
    assert!(allocation["allocation_type"].is_null(), "the excerpt stops before 'Allocation type'");
    assert!(event["advice"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a.as_str().unwrap().contains("--xla_tpu_rematerialization_algo=PEAK_PRIORITY")));
}

#[test]
fn output_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("oom.json");
    xmem().args(["oom", "fixtures/oom-logs/G-06.txt", "--format", "json", "-o"]).arg(&path).assert().code(1).stdout("");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["events"][0]["kind"], "pytorch-cuda-oom");
    assert_eq!(json["events"][0]["requested_bytes"], 24_459_838_751u64);
}

#[test]
fn a_log_without_memory_errors_says_so_in_one_line() {
    xmem().args(["oom", "fixtures/profiles/mlp_train/oracle/README.md"]).assert().success().stdout(
        predicate::str::is_match(
            r"^No memory error found in fixtures/profiles/mlp_train/oracle/README.md \(\d+ lines read\)\.\n$",
        )
        .unwrap(),
    );
    xmem()
        .args(["oom", "-"])
        .write_stdin("")
        .assert()
        .success()
        .stdout("No memory error found in <stdin> (0 lines read).\n");
}

#[test]
fn an_unreadable_log_is_one_line_and_exit_2() {
    xmem()
        .args(["oom", "fixtures/oom-logs/no-such-log.txt"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::is_match(r"^xmem: fixtures/oom-logs/no-such-log.txt: .+\n$").unwrap());
}

#[test]
fn html_is_refused() {
    xmem()
        .args(["oom", "fixtures/oom-logs/A-02.txt", "--format", "html"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'html' for '--format <FORMAT>'"))
        .stderr(predicate::str::contains("[possible values: text, json, markdown]"));
}

#[test]
fn a_gzipped_log_reads_like_the_plain_one() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.log.gz");
    let log = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/oom-logs/D-14.txt")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&log).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let output = xmem().args(["oom", "--format", "json"]).arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["lines"], 71);
    assert_eq!(json["events"][0]["allocator"], "GPU_0_bfc");
    assert_eq!(json["events"][0]["capacity_bytes"], 285_474_816u64);
}

#[test]
fn json_groups_events_into_incidents() {
    // C-07: the BFC allocator's warning, then XLA's BufferAssignment report of the same failure.
    let output = xmem().args(["oom", "fixtures/oom-logs/C-07.txt", "--format", "json"]).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let kinds: Vec<&str> = json["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["bfc-allocator-oom", "buffer-assignment-oom"]);
    let incidents = json["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1);
    assert_eq!(incidents[0]["events"], serde_json::json!([0, 1]));
    assert_eq!(incidents[0]["primary"], 1);
    assert_eq!(incidents[0]["title"], json["events"][1]["summary"]);
}

#[test]
fn exit_codes() {
    xmem().args(["oom", "fixtures/oom-logs/A-02.txt"]).assert().code(1);
    xmem().args(["oom", "fixtures/profiles/mlp_train/oracle/README.md"]).assert().code(0);
    xmem().args(["oom", "fixtures/oom-logs/no-such-log.txt"]).assert().code(2);
    let help = xmem().args(["oom", "--help"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(
        help.contains("Exit codes: 0 no memory error found, 1 at least one memory error found, 2 bad usage"),
        "{help}"
    );
}

#[test]
fn several_logs_and_globs() {
    let output = xmem()
        .args(["oom", "fixtures/oom-logs/A-02.txt", "fixtures/oom-logs-2/F-0*.txt", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["schema"], "xmem.oom/1");
    let inputs: Vec<&str> = json["reports"].as_array().unwrap().iter().map(|r| r["input"].as_str().unwrap()).collect();
    assert_eq!(
        inputs,
        [
            "fixtures/oom-logs/A-02.txt",
            "fixtures/oom-logs-2/F-02.txt",
            "fixtures/oom-logs-2/F-05.txt",
            "fixtures/oom-logs-2/F-09.txt"
        ]
    );
    // A log that cannot be read among readable ones: the others are reported, and the exit is 2.
    let output = xmem().args(["oom", "fixtures/oom-logs/A-02.txt", "fixtures/oom-logs/missing.txt"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8(output.stdout).unwrap().contains("xmem oom: fixtures/oom-logs/A-02.txt"));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("fixtures/oom-logs/missing.txt") && stderr.contains("1 of 2 logs could not be read"),
        "{stderr}"
    );
    xmem()
        .args(["oom", "fixtures/oom-logs/nothing-*.txt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no file matches"));
}

/// `kubectl logs -f | xmem oom -`: an incident is printed while the log is
/// still open, as soon as the log has moved past it.
#[test]
fn stdin_is_read_as_a_stream() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("xmem"))
        .args(["oom", "-"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let log = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/oom-logs/G-01.txt")).unwrap();
    stdin.write_all(&log).unwrap();
    for step in 0..60 {
        writeln!(stdin, "step {step}: loss 0.5").unwrap();
    }
    stdin.flush().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if line.starts_with("Incident 1:") {
                let _ = sender.send(line);
            }
        }
    });
    let incident = receiver.recv_timeout(std::time::Duration::from_secs(60));
    drop(stdin);
    child.wait().unwrap();
    let incident = incident.expect("the incident is printed before the log ends");
    assert!(incident.contains("22.00 MiB requested"), "{incident}");
}

#[test]
fn allocation_sources_are_shown() {
    // A-06's first allocation comes from source_file="…/flax/linen/linear.py" source_line=…
    let text = text_of("fixtures/oom-logs/A-06.txt");
    assert!(text.contains("Source"), "{text}");
    assert!(text.contains(".py:"), "{text}");
}

/// Issue 24: a directory is read as the logs in it (its files, in name
/// order; not hidden files, nor those in subdirectories).
#[test]
fn a_directory_is_read_as_the_logs_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs");
    std::fs::copy(root.join("D-14.txt"), dir.path().join("b-job.err")).unwrap();
    std::fs::copy(root.join("A-06.txt"), dir.path().join("a-job.out")).unwrap();
    std::fs::copy(root.join("C-02.txt"), dir.path().join(".hidden")).unwrap();
    std::fs::create_dir(dir.path().join("profile")).unwrap();
    std::fs::copy(root.join("C-02.txt"), dir.path().join("profile/nested.log")).unwrap();
    let output = xmem().args(["oom", "--format", "json"]).arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let inputs: Vec<&str> = json["reports"].as_array().unwrap().iter().map(|r| r["input"].as_str().unwrap()).collect();
    let names: Vec<&str> = inputs.iter().map(|i| i.rsplit('/').next().unwrap()).collect();
    assert_eq!(names, ["a-job.out", "b-job.err"]);
    let empty = tempfile::tempdir().unwrap();
    xmem().arg("oom").arg(empty.path()).assert().code(2).stderr(predicate::str::contains("holds no log file"));
}

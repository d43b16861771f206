//! `xmem run -- CMD`, run as a user runs it, around children that stand for
//! real jobs: one that prints a real OOM log (`fixtures/oom-gpu/adam_nodonate`)
//! and writes the real XLA dump of the program that died into the directory
//! XLA_FLAGS names, one that succeeds, one a signal kills, one that cannot
//! start. The job's output must come through byte for byte, as it is printed.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use assert_cmd::cargo::cargo_bin_cmd;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-gpu")
}

/// A job that prints what it prints to stdout, the real log to stderr, copies
/// the real dump where XLA_FLAGS says, and exits 1, as the JAX job did.
const DYING_JOB: &str = r#"
import os, shutil, sys
flags = os.environ["XLA_FLAGS"].split()
dump = [f.split("=", 1)[1] for f in flags if f.startswith("--xla_dump_to=")][-1]
assert "--xla_dump_hlo_as_proto" in flags, flags
fixtures = sys.argv[1]
for name in os.listdir(os.path.join(fixtures, "adam_nodonate/xla_dump")):
    shutil.copy(os.path.join(fixtures, "adam_nodonate/xla_dump", name), dump)
sys.stdout.write("step 0 loss 1.0\nstep 1 loss 0.9\n")
sys.stdout.flush()
sys.stderr.buffer.write(open(os.path.join(fixtures, "adam_nodonate/output.log"), "rb").read())
sys.exit(1)
"#;

fn xmem() -> assert_cmd::Command {
    cargo_bin_cmd!("xmem")
}

#[test]
fn a_job_that_runs_out_of_memory_gets_its_post_mortem_after_its_own_output() {
    let work = tempfile::tempdir().unwrap();
    let dump = work.path().join("dump");
    let output = xmem()
        .args(["run", "--dump-dir", dump.to_str().unwrap(), "--", "python3", "-c", DYING_JOB])
        .arg(fixtures())
        .env("XLA_FLAGS", "--xla_gpu_autotune_level=0")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "the job's own exit code");
    assert_eq!(output.stdout, b"step 0 loss 1.0\nstep 1 loss 0.9\n");
    let log = std::fs::read(fixtures().join("adam_nodonate/output.log")).unwrap();
    assert!(output.stderr.starts_with(&log), "the job's stderr comes first, unchanged");
    let post_mortem = String::from_utf8(output.stderr[log.len()..].to_vec()).unwrap();
    assert!(post_mortem.starts_with("\nxmem: the job's output shows a memory error"), "{post_mortem}");
    assert!(post_mortem.contains("Incident 1: jit_train_step needs 9.84 GiB"), "{post_mortem}");
    assert!(post_mortem.contains("The failed program: jit_train_step(11275)"), "{post_mortem}");
    assert!(post_mortem.contains("Top change            Donate the 24 parameters"), "{post_mortem}");
    // A directory the user named is theirs: kept, and not announced.
    assert!(dump.join("module_11275.jit_train_step.sm_9.0a_gpu_after_optimizations.hlo.pb").is_file());
}

#[test]
fn the_post_mortem_as_json_into_a_file() {
    let work = tempfile::tempdir().unwrap();
    let report = work.path().join("oom.json");
    let output = xmem()
        .args(["run", "--format", "json", "-o", report.to_str().unwrap(), "--", "python3", "-c", DYING_JOB])
        .arg(fixtures())
        .env("TMPDIR", work.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let log = std::fs::read(fixtures().join("adam_nodonate/output.log")).unwrap();
    let stderr = String::from_utf8(output.stderr[log.len()..].to_vec()).unwrap();
    // Only where the dump was kept: the default one, under the temp dir.
    let kept = stderr.trim().strip_prefix("xmem: XLA dump kept in ").unwrap_or_else(|| panic!("{stderr}"));
    assert!(Path::new(kept).starts_with(work.path()), "{kept}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(doc["schema"], "xmem.oom/1");
    assert_eq!(doc["incidents"][0]["program"], "jit_train_step");
    assert_eq!(doc["incidents"][0]["program_report"]["module"], "jit_train_step(11275)");
    assert_eq!(doc["incidents"][0]["program_report"]["input"], kept);
}

#[test]
fn a_job_without_memory_errors_passes_through_untouched_and_its_dump_goes() {
    let work = tempfile::tempdir().unwrap();
    let dump = work.path().join("dump");
    // Bytes that are not UTF-8, a line without its newline, both streams.
    let job =
        r#"import sys; sys.stdout.buffer.write(b"\xff\xfeout\r\nno newline"); sys.stderr.buffer.write(b"err\x00\n")"#;
    for dump_dir in [Some(&dump), None] {
        let mut command = xmem();
        command.arg("run");
        if let Some(dir) = dump_dir {
            command.args(["--dump-dir", dir.to_str().unwrap()]);
        }
        let output = command.args(["--", "python3", "-c", job]).env("TMPDIR", work.path()).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(output.stdout, b"\xff\xfeout\r\nno newline");
        assert_eq!(output.stderr, b"err\x00\n");
    }
    assert!(!dump.exists(), "a dump directory xmem made is removed");
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0, "nothing left under the temp dir");
    // --keep-dump keeps it, and says where.
    let output = xmem().args(["run", "--keep-dump", "--", "true"]).env("TMPDIR", work.path()).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let kept = stderr.trim().strip_prefix("xmem: XLA dump kept in ").unwrap_or_else(|| panic!("{stderr}"));
    assert!(Path::new(kept).is_dir());
}

#[test]
fn the_users_own_xla_flags_are_kept() {
    let work = tempfile::tempdir().unwrap();
    let job = r#"import os; print(os.environ["XLA_FLAGS"])"#;
    let output = xmem()
        .args(["run", "--", "python3", "-c", job])
        .env("XLA_FLAGS", "--xla_gpu_autotune_level=0")
        .env("TMPDIR", work.path())
        .output()
        .unwrap();
    let flags = String::from_utf8(output.stdout).unwrap();
    let flags: Vec<&str> = flags.split_whitespace().collect();
    assert_eq!(flags[0], "--xla_gpu_autotune_level=0");
    assert!(flags.iter().any(|f| f.starts_with(&format!("--xla_dump_to={}", work.path().display()))), "{flags:?}");
    assert!(flags.contains(&"--xla_dump_hlo_as_proto"), "{flags:?}");
    // A dump the user already asks for is the one used, and left alone.
    let theirs = work.path().join("theirs");
    let their_flags = format!("--xla_dump_to={}", theirs.display());
    let output = xmem().args(["run", "--", "python3", "-c", job]).env("XLA_FLAGS", &their_flags).output().unwrap();
    let flags = String::from_utf8(output.stdout).unwrap();
    assert_eq!(flags.trim(), format!("{their_flags} --xla_dump_hlo_as_proto"));
}

#[test]
fn a_job_killed_by_a_signal_exits_128_plus_the_signal() {
    let output = xmem().args(["run", "--", "sh", "-c", "kill -KILL $$"]).output().unwrap();
    assert_eq!(output.status.code(), Some(128 + 9));
    let output = xmem().args(["run", "--", "sh", "-c", "echo started; kill -TERM $$"]).output().unwrap();
    assert_eq!(output.status.code(), Some(128 + 15));
    assert_eq!(output.stdout, b"started\n");
}

#[test]
fn a_job_that_cannot_start_is_one_line_and_exit_2() {
    let output = xmem().args(["run", "--", "no-such-command-for-xmem"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("xmem: cannot run no-such-command-for-xmem: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let output = xmem().args(["run"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "a command is required");
}

/// The job's output reaches the user while it runs, and the user's input reaches the job.
#[test]
fn output_is_live_and_input_reaches_the_job() {
    // No flush: a Python job's prints come as they happen, as on a terminal.
    let job = r#"print("ready"); line = input(); print("got", line)"#;
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("xmem"))
        .args(["run", "--", "python3", "-c", job])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // The job is waiting for input: "ready" can only have come while it runs.
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"hello\n").unwrap();
    drop(stdin);
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "got hello\n");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// A SIGTERM for xmem (a scheduler stopping the job) is passed on to the job.
#[test]
fn a_terminate_signal_reaches_the_job() {
    let job = r#"import time; print("ready", flush=True); time.sleep(60)"#;
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("xmem"))
        .args(["run", "--", "python3", "-c", job])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    // Had it not reached the job, the job would have slept on and exited 0.
    assert_eq!(child.wait().unwrap().code(), Some(128 + 15), "the job died of the signal, xmem reports it");
}

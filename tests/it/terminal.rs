//! Text output where it is read: a terminal of 80 and of 200 columns (a real
//! pseudo-terminal, through `script`), a pipe, and a pipe closed early.
//! On a terminal no line is wider than it, no line ends in a space, and no
//! word is broken: each word of the output is one of the piped output's
//! words, or the start of one cut with `…`.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_xmem");

/// One invocation of each command with text output, on shipped fixtures.
const COMMANDS: [&[&str]; 6] = [
    &["report", "fixtures/profiles/mlp_train/profile", "--top", "8"],
    &["report", "fixtures/profiles/tf_keras_fit/profile", "--top", "8"],
    &["report", "fixtures/pprof/donation/device_memory_after_updates.prof"],
    &["list", "fixtures/profiles/tf_keras_fit/profile"],
    &["diff", "fixtures/profiles/pair_base/profile", "fixtures/profiles/pair_new/profile", "--all"],
    &["oom", "fixtures/oom-logs/D-14.txt"],
];

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn piped(args: &[&str]) -> String {
    let output = Command::new(BIN).args(args).current_dir(manifest_dir()).output().unwrap();
    assert!(matches!(output.status.code(), Some(0 | 1)), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The output of `xmem ARGS` on a pseudo-terminal `columns` wide, or `None`
/// where `script` (util-linux) is missing.
fn on_terminal(args: &[&str], columns: usize, env: &[(&str, &str)]) -> Option<String> {
    let command = format!("stty cols {columns} rows 50; exec {BIN} {}", args.join(" "));
    let output = Command::new("script")
        .args(["--quiet", "--return", "--command", &command, "/dev/null"])
        .current_dir(manifest_dir())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .ok()?;
    assert!(matches!(output.status.code(), Some(0 | 1)), "{args:?}: {}", String::from_utf8_lossy(&output.stdout));
    Some(String::from_utf8(output.stdout).unwrap().replace("\r\n", "\n"))
}

fn words(text: &str) -> HashSet<&str> {
    text.split_whitespace().collect()
}

fn check_fits(args: &[&str], columns: usize) {
    let Some(shown) = on_terminal(args, columns, &[]) else {
        eprintln!("skipped: no `script` command");
        return;
    };
    let shown = anstream::adapter::strip_str(&shown).to_string();
    let whole = piped(args);
    let whole_words = words(&whole);
    for line in shown.lines() {
        let width = unicode_width::UnicodeWidthStr::width(line);
        assert!(width <= columns, "{args:?} at {columns} columns: {width} wide: {line:?}");
        assert!(!line.ends_with(' '), "{args:?} at {columns} columns: trailing space: {line:?}");
        for word in line.split_whitespace() {
            let rule = word.chars().all(|c| c == '-' || c == '=');
            let cut = word.strip_suffix('…').is_some_and(|start| whole_words.iter().any(|w| w.starts_with(start)));
            assert!(
                rule || cut || whole_words.contains(word),
                "{args:?} at {columns} columns: {word:?} is a broken word, in {line:?}"
            );
        }
    }
}

#[test]
fn text_fits_a_terminal_of_80_columns() {
    for args in COMMANDS {
        check_fits(args, 80);
    }
}

#[test]
fn text_fits_a_terminal_of_200_columns() {
    for args in COMMANDS {
        check_fits(args, 200);
    }
}

#[test]
fn piped_text_does_not_wrap_and_ends_no_line_in_a_space() {
    let output = piped(COMMANDS[4]);
    assert!(!output.contains('\x1b'), "no colour into a pipe");
    for line in output.lines() {
        assert!(!line.ends_with(' '), "{line:?}");
    }
    // A shape and its op name stay on one line, however long.
    assert!(output.lines().any(|l| l.contains("f32[1024,1024]{1,0} →") && l.contains("jit(wide_mlp_step)/")));
    let narrow = piped(&[COMMANDS[4], &["--width", "80"]].concat());
    assert!(narrow.lines().all(|l| unicode_width::UnicodeWidthStr::width(l) <= 80), "{narrow}");
}

#[test]
fn colour_on_a_terminal_unless_no_color_or_never() {
    let args = COMMANDS[4];
    let Some(coloured) = on_terminal(args, 120, &[("TERM", "xterm")]) else { return };
    assert!(coloured.contains("\x1b["), "{coloured}");
    let plain = on_terminal(args, 120, &[("TERM", "xterm"), ("NO_COLOR", "1")]).unwrap();
    assert!(!plain.contains("\x1b["), "{plain}");
    let never = on_terminal(&[args, &["--color", "never"]].concat(), 120, &[("TERM", "xterm")]).unwrap();
    assert!(!never.contains("\x1b["), "{never}");
    assert!(piped(&[args, &["--color", "always"]].concat()).contains("\x1b["));
}

/// `xmem ARGS | true`: the reader is gone before xmem writes.
fn into_a_closed_pipe(args: &[&str], cwd: &Path) -> std::process::Output {
    let mut child =
        Command::new(BIN).args(args).current_dir(cwd).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(matches!(output.status.code(), Some(0..=2)), "{args:?}: {:?} {stderr}", output.status);
    output
}

#[test]
fn no_command_panics_on_a_closed_pipe() {
    // The exit code is what the command found, whatever became of its output:
    // `oom` exits 1 for the memory error in the log.
    let commands: [(&[&str], i32); 9] = [
        (&["report", "fixtures/profiles/mlp_train/profile", "--all"], 0),
        (&["report", "fixtures/profiles/mlp_train/profile", "--format", "json"], 0),
        (&["report", "fixtures/profiles/mlp_train/profile", "--format", "html"], 0),
        (&["report", "fixtures/profiles/mlp_train/profile", "--format", "markdown", "--all"], 0),
        (&["list", "fixtures/profiles/mlp_train/profile", "--format", "json"], 0),
        (&["diff", "fixtures/profiles/pair_base/profile", "fixtures/profiles/pair_new/profile", "--all"], 0),
        (&["oom", "fixtures/oom-logs/D-14.txt"], 1),
        (&["completions", "bash"], 0),
        (&["--help"], 0),
    ];
    for (args, code) in commands {
        let output = into_a_closed_pipe(args, manifest_dir());
        assert_eq!(output.status.code(), Some(code), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
}

#[test]
fn plot_writes_every_chart_into_a_closed_pipe() {
    let profile = manifest_dir().join("fixtures/profiles/mlp_train/profile");
    let listed = tempfile::tempdir().unwrap();
    let all = Command::new(BIN).arg("plot").arg(&profile).arg("--all").arg("-o").arg(listed.path()).output().unwrap();
    let charts = String::from_utf8(all.stdout).unwrap().lines().count();
    assert!(charts > 30, "{charts} charts");

    let closed = tempfile::tempdir().unwrap();
    let args = ["plot", profile.to_str().unwrap(), "--all", "-o", closed.path().to_str().unwrap()];
    let output = into_a_closed_pipe(&args, manifest_dir());
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(std::fs::read_dir(closed.path()).unwrap().count(), charts);
}

#[test]
fn names_that_match_nothing_list_what_exists_closest_first() {
    let run = |args: &[&str]| Command::new(BIN).args(args).current_dir(manifest_dir()).output().unwrap();
    let profile = "fixtures/profiles/mlp_train/profile";
    let typo = run(&["report", profile, "--modul", "jit_train_step"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("a similar argument exists: '--module'"));

    let module = run(&["report", profile, "--module", "jit_train_stp"]);
    assert_eq!(module.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&module.stderr);
    assert!(stderr.contains("modules here: jit_train_step, "), "{stderr}");

    let runs = manifest_dir().join(profile).join("plugins/profile");
    let existing = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap().file_name();
    let wrong_run = run(&["list", profile, "--run", "nosuch"]);
    assert_eq!(wrong_run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&wrong_run.stderr);
    assert!(stderr.contains(&format!("runs there: {}", existing.to_string_lossy())), "{stderr}");
}

#[test]
fn a_dash_reads_standard_input_by_content() {
    let run_dir = manifest_dir().join("fixtures/profiles/mlp_train/profile/plugins/profile");
    let run = std::fs::read_dir(&run_dir).unwrap().next().unwrap().unwrap().path();
    let xplane = std::fs::read(run.join("vm.xplane.pb")).unwrap();
    let pprof = std::fs::read(manifest_dir().join("fixtures/pprof/donation/device_memory_after_updates.prof")).unwrap();
    for (args, input, expected) in [
        (&["report", "-", "--format", "json"][..], &xplane, "\"name\": \"jit_train_step\""),
        (&["list", "-"][..], &xplane, "jit_train_step"),
        (&["report", "-"][..], &pprof, "Device memory: <stdin>"),
        (&["diff", "-", "fixtures/pprof/donation/device_memory_after_updates.prof"][..], &pprof, "Live"),
    ] {
        let mut child = Command::new(BIN)
            .args(args)
            .current_dir(manifest_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let bytes = input.clone();
        let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &bytes));
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains(expected), "{args:?}: {stdout}");
    }
}

#[test]
fn list_carries_its_warnings_in_every_format() {
    // A run whose second host file was cut short: read with a warning.
    let dir = tempfile::tempdir().unwrap();
    let run_dir = manifest_dir().join("fixtures/profiles/pair_base/profile/plugins/profile");
    let run = std::fs::read_dir(&run_dir).unwrap().next().unwrap().unwrap().path();
    let good = std::fs::read(run.join("vm.xplane.pb")).unwrap();
    std::fs::write(dir.path().join("a.xplane.pb"), &good).unwrap();
    std::fs::write(dir.path().join("b.xplane.pb"), &good[..good.len() / 3]).unwrap();
    for format in ["text", "markdown", "json"] {
        let output = Command::new(BIN).args(["list", "--format", format]).arg(dir.path()).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("warning") && stdout.contains("b.xplane.pb"), "{format}: {stdout}");
    }
}

/// On 80 columns the summary's module names stay whole while the number
/// columns have room: their headers wrap (`Temp at` over `peak`) first.
#[test]
fn module_names_keep_room_that_number_headers_give_up() {
    let summary = piped(&["report", "fixtures/profiles/gpu_mlp_adam/profile", "--width", "80"]);
    for line in summary.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    let names: Vec<&str> = summary
        .lines()
        .skip_while(|l| !l.starts_with("Module"))
        .skip(2)
        .take(19)
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    // 20 columns are left for names: 80, less the gaps and the numbers at their narrowest.
    assert!(names.contains(&"jit_broadcast_in_dim"), "{summary}");
    assert!(names.iter().all(|name| name.chars().count() <= 20), "{summary}");
}

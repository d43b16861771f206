//! Every `$ xmem …` example in README.md, run: its output must match the
//! README byte for byte, where a line `...` stands for lines left out.
//! `$ echo $?` checks the exit code of the command before it.

use std::path::Path;
use std::process::Command;

use crate::common;

struct Example {
    args: Vec<String>,
    expected: Vec<String>,
    exit_code: Option<i32>,
}

/// The examples: code blocks whose first line starts with `$ xmem`.
fn examples(readme: &str) -> Vec<Example> {
    let mut examples = Vec::new();
    let mut in_block = false;
    let mut lines = readme.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        // Examples inside a list item are indented with it.
        let indent = line.len() - line.trim_start().len();
        let Some(command) = line.trim_start().strip_prefix("$ xmem ").filter(|_| in_block) else { continue };
        let mut command = command.to_string();
        while command.ends_with('\\') {
            command.pop();
            command.push_str(lines.next().unwrap_or_default());
        }
        let mut example = Example {
            args: command.split_whitespace().map(String::from).collect(),
            expected: Vec::new(),
            exit_code: None,
        };
        while let Some(&next) = lines.peek() {
            let next = next.get(indent..).unwrap_or(next.trim_start());
            // Another command (`$ go tool pprof …`) ends the example; `$ echo $?` checks it.
            if next.starts_with("```") || (next.starts_with("$ ") && next != "$ echo $?") {
                break;
            }
            lines.next();
            if next == "$ echo $?" {
                example.exit_code = lines.next().and_then(|code| code.trim().parse().ok());
            } else {
                example.expected.push(next.to_string());
            }
        }
        examples.push(example);
    }
    examples
}

/// Whether `actual` is `expected` with each `...` line standing for any lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => (0..=actual.len()).any(|skip| matches(rest, &actual[skip..])),
        Some((first, rest)) => actual.first() == Some(&first.as_str()) && matches(rest, &actual[1..]),
    }
}

/// The shared external corpus's folders of third-party profiles that README examples name.
const THIRD_PARTY_FOLDERS: [&str; 3] = ["xprof/", "xprof-cli/", "TraceLens/"];

#[test]
fn readme_examples_are_real_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let examples = examples(&readme);
    assert!(examples.len() >= 8, "found {} examples", examples.len());
    // Charts go into a scratch directory; the fixtures are reached by the README's paths.
    let scratch = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root.join("fixtures"), scratch.path().join("fixtures")).unwrap();
    for example in examples {
        // Third-party profiles, named by their folder in the shared external corpus, are read from
        // there, never copied into the repo: their examples are skipped without it.
        let args = example.args.iter().map(|arg| {
            if THIRD_PARTY_FOLDERS.iter().any(|folder| arg.starts_with(folder)) {
                common::shared_external().map(|external| external.join(arg).display().to_string())
            } else {
                Some(arg.clone())
            }
        });
        let Some(args) = args.collect::<Option<Vec<String>>>() else { continue };
        let output = Command::new(env!("CARGO_BIN_EXE_xmem")).args(&args).current_dir(scratch.path()).output().unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        let actual: Vec<&str> = stdout.lines().collect();
        assert!(
            matches(&example.expected, &actual),
            "xmem {}: the README shows\n{}\nbut xmem printed\n{stdout}",
            example.args.join(" "),
            example.expected.join("\n")
        );
        assert_eq!(output.status.code(), Some(example.exit_code.unwrap_or(0)), "xmem {}", example.args.join(" "));
    }
}

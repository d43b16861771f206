//! No text from an input reaches a terminal or a log raw: module, op,
//! instruction, allocator, function and file names and log lines holding
//! ESC, OSC, BEL, a carriage return, a newline and a bidi override, in every
//! input format, through every command and every format but JSON, on
//! standard output and standard error. The newline would forge a line of
//! xmem's own (`xmem: error: …`) in a CI log; the OSC would retitle the
//! terminal.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use prost::Message;
use xmem::ingest::proto::pprof::Profile;
use xmem::ingest::proto::xplane::{x_stat, XSpace};

use crate::synthetic;

/// What a hostile name holds: an OSC that retitles the terminal, BEL, a
/// colour, a carriage return and a newline starting a forged error line, a
/// bidi override.
const FORGED: &str = "jit\u{1b}]0;retitled\u{7}\u{1b}[31m\r\nxmem: error: forged\u{202e}";

/// `text` with xmem's own colours (`ESC [ … m`, asked for with `--color always`) taken out.
fn without_styles(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\u{1b}[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find(|c: char| !(c.is_ascii_digit() || c == ';')).unwrap_or(after.len());
        if after[end..].starts_with('m') {
            rest = &after[end + 1..];
        } else {
            // Not a style: keep the ESC, for the check to find.
            out.push('\u{1b}');
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// `bytes` hold no control character but line breaks and tabs (and xmem's
/// own colours), and no line that begins with the forged error.
fn assert_clean(what: &str, bytes: &[u8]) {
    let text = without_styles(&String::from_utf8_lossy(bytes));
    let bad = text.find(|c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    });
    if let Some(at) = bad {
        let from = (0..=at.saturating_sub(200)).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let to = (at + 200..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
        panic!("{what}: a raw control character at byte {at}: {:?}", &text[from..to]);
    }
    let forged = text.lines().find(|line| line.trim_start().starts_with("xmem: error: forged"));
    assert_eq!(forged, None, "{what}: a forged line");
}

/// Runs xmem; the exit code is 0, 1 or 2, and both streams are clean.
fn run(what: &str, args: &[&std::ffi::OsStr]) -> Output {
    let output = cargo_bin_cmd!("xmem").args(args).output().unwrap();
    assert!(matches!(output.status.code(), Some(0..=2)), "{what}: {:?}", output.status);
    assert_clean(&format!("{what}: stdout"), &output.stdout);
    assert_clean(&format!("{what}: stderr"), &output.stderr);
    output
}

fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
    args.iter().map(Into::into).collect()
}

/// Every command that reads `input` (as BASE and NEW of a diff against
/// `other`), in every format but JSON, and its charts.
fn every_command(input: &Path, other: &Path) {
    let formats: [&[&str]; 4] = [
        &["--format", "text"],
        &["--format", "text", "--color", "always"],
        &["--format", "markdown"],
        &["--format", "html"],
    ];
    for format in formats {
        for command in [&["report"][..], &["report", "--all", "--top", "3"][..]] {
            let mut args = os(command);
            args.extend(os(format));
            args.push(input.into());
            run(&format!("{command:?} {format:?}"), &args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
        }
        let mut args = os(&["diff"]);
        args.extend(os(format));
        args.extend([other.into(), input.into()]);
        run(&format!("diff {format:?}"), &args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
        if format[1] != "html" {
            let mut args = os(&["list"]);
            args.extend(os(&format[..2]));
            args.push(input.into());
            run(&format!("list {format:?}"), &args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
        }
    }
    let charts = tempfile::tempdir().unwrap();
    let args = [std::ffi::OsStr::new("plot"), input.as_os_str(), "-o".as_ref(), charts.path().as_os_str()];
    run("plot", &args);
    for chart in std::fs::read_dir(charts.path()).unwrap() {
        let chart = chart.unwrap().path();
        let svg = std::fs::read(&chart).unwrap();
        assert_clean(&chart.display().to_string(), &svg);
        roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", chart.display()));
    }
}

/// An HloProto whose module, instruction, op, file and function names are forged.
fn forged_hlo(colors: usize) -> Vec<u8> {
    let mut proto = synthetic::hlo_proto_with_colors_and_stacks(colors, 3);
    let instruction_name = |name: &str| name.replacen("fusion.", &format!("{FORGED}."), 1);
    if let Some(module) = proto.hlo_module.as_mut() {
        module.name = FORGED.to_string();
        for instruction in module.computations.iter_mut().flat_map(|c| c.instructions.iter_mut()) {
            instruction.name = instruction_name(&instruction.name);
            if let Some(metadata) = instruction.metadata.as_mut() {
                metadata.op_name = format!("jit(step)/{FORGED}/dot_general");
            }
        }
        if let Some(index) = module.stack_frame_index.as_mut() {
            index.file_names = vec![format!("{FORGED}.py")];
            index.function_names = vec![FORGED.to_string()];
        }
    }
    if let Some(assignment) = proto.buffer_assignment.as_mut() {
        for event in assignment.heap_simulator_traces.iter_mut().flat_map(|t| t.events.iter_mut()) {
            event.instruction_name = instruction_name(&event.instruction_name);
        }
    }
    proto.encode_to_vec()
}

/// An XSpace whose allocator and ops are forged.
fn forged_allocators(allocations: usize) -> Vec<u8> {
    let mut space = XSpace::decode(&synthetic::allocator_xspace(2, allocations)[..]).unwrap();
    for plane in &mut space.planes {
        for metadata in plane.stat_metadata.values_mut() {
            if metadata.name == "GPU_0_bfc" {
                metadata.name = FORGED.to_string();
            }
        }
        for stat in plane.lines.iter_mut().flat_map(|l| l.events.iter_mut()).flat_map(|e| e.stats.iter_mut()) {
            if let Some(x_stat::Value::StrValue(op)) = stat.value.as_mut() {
                *op = format!("model/{FORGED}/MatMul");
            }
        }
    }
    space.encode_to_vec()
}

/// A JAX device memory profile whose functions and file are forged.
fn forged_pprof(lines: usize) -> Vec<u8> {
    let mut profile = Profile::decode(&synthetic::pprof_inlined_location(lines)[..]).unwrap();
    for entry in profile.string_table.iter_mut().skip(9) {
        *entry = format!("{FORGED}{entry}");
    }
    profile.encode_to_vec()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// [`every_command`] on two inputs from `generate` at sizes `n` and `base_n`,
/// the first named `name` (the second `base` and its extension).
fn every_command_on(name: &str, generate: fn(usize) -> Vec<u8>, n: usize, base_n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let extension = name.split_once('.').map_or("", |(_, extension)| extension);
    let base = write(dir.path(), &format!("base.{extension}"), &generate(base_n));
    every_command(&write(dir.path(), name, &generate(n)), &base);
}

#[test]
fn names_in_an_hlo_proto_are_escaped_everywhere() {
    every_command_on("new.hlo.pb", forged_hlo, 6, 4);
}

#[test]
fn names_in_a_profile_and_its_file_name_are_escaped_everywhere() {
    // The host is named after its file.
    every_command_on(&format!("{FORGED}.xplane.pb"), forged_allocators, 40, 30);
}

#[test]
fn names_in_a_device_memory_profile_are_escaped_everywhere() {
    every_command_on("new.prof", forged_pprof, 12, 8);
}

#[test]
fn a_log_line_is_escaped_where_oom_quotes_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = format!(
        "step 1\nRESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes. {FORGED}\n\
         jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. \
         Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm. {FORGED}\n"
    );
    let log = write(dir.path(), &format!("{FORGED}.log"), log.as_bytes());
    for format in ["text", "markdown"] {
        let output =
            run(&format!("oom {format}"), &["oom".as_ref(), "--format".as_ref(), format.as_ref(), log.as_os_str()]);
        assert_eq!(output.status.code(), Some(1), "the log holds memory errors");
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(stdout.contains("\\x1b]0;retitled\\x07"), "the forged text is shown, escaped:\n{stdout}");
    }
}

#[test]
fn errors_and_warnings_naming_the_input_are_one_escaped_line() {
    let dir = tempfile::tempdir().unwrap();
    // An unreadable file, named with the forgery.
    let garbage = write(dir.path(), &format!("{FORGED}.hlo.pb"), b"\xff\xff\xff\xff not a profile");
    let output = run("garbage", &["report".as_ref(), garbage.as_os_str()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("\\x1b]0;retitled\\x07\\x1b[31m\\r\\nxmem: error: forged\\u{202e}"), "{stderr}");
    // A module that cannot be read, named with the forgery: a warning, and the other module's report.
    let mut space =
        XSpace::decode(&synthetic::xspace(2, synthetic::ModuleSize { live_at_peak: 2, transient: 2 }, 0)[..]).unwrap();
    let metadata = &mut space.planes[0];
    let broken = metadata.event_metadata.values_mut().next().unwrap();
    broken.name = format!("{FORGED}(0)");
    if let Some(x_stat::Value::BytesValue(hlo)) = broken.stats[0].value.as_mut() {
        hlo.truncate(hlo.len() / 2);
    }
    let profile = write(dir.path(), "vm.xplane.pb", &space.encode_to_vec());
    let output = run("broken module", &["report".as_ref(), profile.as_os_str()]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("xmem: warning: ") && stderr.contains("xmem: error: forged"), "{stderr}");
}

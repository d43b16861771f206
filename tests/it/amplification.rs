//! What `xmem plot` and `xmem report --format html` write is bounded by what
//! they can show, not by what the input holds (design.md, "Charts and pages
//! are bounded"): inputs from benches/support/synthetic.rs whose memory
//! spaces, stacks, buffers or names made the output grow far faster than
//! the input (a 199 KB HloProto gave 16,000 charts, 3.2 GB).

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use xmem::analysis::chart_plan::{MAX_CHARTED, MAX_ICICLE_FRAMES, MAX_LIFETIME_BOXES, MAX_STACK_FRAMES};

use crate::common::bytes_under;
use crate::synthetic;

/// What one run wrote.
struct Written {
    /// Holds the input and the output until the test is done with them.
    dir: tempfile::TempDir,
    /// The input's file name.
    name: String,
    bytes: u64,
    files: Vec<PathBuf>,
    stderr: String,
}

/// Runs `xmem ARGS... -o OUT INPUT` with `input` as the input, named `name`.
fn written(args: &[&str], name: &str, input: &[u8]) -> Written {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, input).unwrap();
    let out = dir.path().join("out");
    let output = cargo_bin_cmd!("xmem").args(args).arg("-o").arg(&out).arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{args:?} {name}: {stderr}");
    let files = if out.is_dir() {
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect()
    } else {
        vec![out.clone()]
    };
    Written { bytes: bytes_under(&out), files, stderr, dir, name: name.to_string() }
}

impl Written {
    fn input(&self) -> PathBuf {
        self.dir.path().join(&self.name)
    }
}

const PLOT: &[&str] = &["plot"];
const HTML: &[&str] = &["report", "--format", "html"];

/// Memory spaces times stack depth multiplied the charts written: now,
/// with both four times as large, the output grows by no more than the input.
#[test]
fn charts_and_pages_do_not_grow_with_memory_spaces_times_stack_depth() {
    let encoded =
        |colors: usize| prost::Message::encode_to_vec(&synthetic::hlo_proto_with_colors_and_stacks(colors, colors / 4));
    let (small, large) = (200, 800);
    let (small_input, large_input) = (encoded(small), encoded(large));
    for command in [PLOT, HTML] {
        let before = written(command, "colors.hlo.pb", &small_input);
        let after = written(command, "colors.hlo.pb", &large_input);
        let input_growth = (large_input.len() - small_input.len()) as u64;
        assert!(
            after.bytes <= before.bytes + input_growth,
            "{command:?}: {} bytes for {} input bytes, {} for {}",
            before.bytes,
            small_input.len(),
            after.bytes,
            large_input.len()
        );
        assert!(after.bytes <= synthetic::output_bound(large_input.len() as u64), "{command:?}: {} bytes", after.bytes);
        assert!(after.bytes <= synthetic::OUTPUT_SEEN, "{command:?}: {} bytes", after.bytes);
        // Every colour has a buffer live at its peak (colour 0's too: its
        // buffer and instruction have id 0, absent on the wire).
        let folded = format!(
            "{} memory spaces not charted one by one (only the {MAX_CHARTED} with the largest peaks of each kind are); \
             one chart shows their peaks",
            large - MAX_CHARTED
        );
        if command == PLOT {
            // Four charts for each of the largest memory spaces, one for the peaks of the rest.
            assert_eq!(after.files.len(), 4 * MAX_CHARTED + 1, "{:?}", after.files);
            assert!(after.files.iter().any(|f| f.ends_with("not-charted.summary.svg")), "{:?}", after.files);
            assert!(after.stderr.contains(&folded), "{}", after.stderr);
        } else {
            let page = std::fs::read_to_string(&after.files[0]).unwrap();
            // A section per memory space charted; the rest are in the summary.
            assert_eq!(page.matches("<section>").count(), MAX_CHARTED, "sections");
            assert!(page.contains(&folded), "the page says what it does not chart");
        }
    }
}

/// `<title>` elements of an SVG: one per frame of an icicle graph, plus the chart's own.
fn titles(svg: &Path) -> usize {
    std::fs::read_to_string(svg).unwrap().matches("<title>").count()
}

fn chart<'a>(written: &'a Written, suffix: &str) -> &'a Path {
    let files = &written.files;
    files.iter().find(|f| f.to_string_lossy().ends_with(suffix)).unwrap_or_else(|| panic!("no {suffix} in {files:?}"))
}

/// A Python stack 20,000 frames deep under every buffer: the icicle draws
/// its outer and inner ends and one frame counting the rest.
#[test]
fn an_icicle_of_a_deep_stack_draws_its_ends_and_counts_the_middle() {
    let depth = 20_000;
    let plot = written(PLOT, "stack.hlo.pb", &prost::Message::encode_to_vec(&synthetic::stack_chain_hlo(depth)));
    let flame = chart(&plot, ".flame.svg");
    // The stack cut to its ends, then the op-name scopes and the instruction of each buffer at the peak.
    let frames = titles(flame);
    assert!(frames <= MAX_STACK_FRAMES + 16, "{frames} frames");
    // Under the Python frames, each buffer's three op-name scopes and its instruction are frames too.
    let left_out = depth + 4 - (MAX_STACK_FRAMES - 1);
    let svg = std::fs::read_to_string(flame).unwrap();
    assert!(svg.contains(&format!("… {left_out} frames …")), "no frame counting the {left_out} left out");
}

/// 20,000 buffers in one memory space: the lifetimes chart draws the
/// largest and says how many it leaves out; the icicle folds the lightest stacks.
#[test]
fn a_memory_space_of_many_buffers_draws_the_largest_and_counts_the_rest() {
    let buffers = 20_000;
    let plot = written(PLOT, "buffers.hlo.pb", &prost::Message::encode_to_vec(&synthetic::many_buffers_hlo(buffers)));
    let report = cargo_bin_cmd!("xmem").args(["report", "--format", "json"]).arg(plot.input()).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let spans = report["modules"][0]["memory_spaces"][0]["lifetimes"].as_array().unwrap().len();
    assert!(spans > 2 * MAX_LIFETIME_BOXES, "{spans} buffers with a lifetime");
    let lifetimes = std::fs::read_to_string(chart(&plot, ".lifetimes.svg")).unwrap();
    assert_eq!(lifetimes.matches("(buffer ").count(), MAX_LIFETIME_BOXES);
    let note = format!("not drawn: {} smaller buffers", spans - MAX_LIFETIME_BOXES);
    assert!(lifetimes.contains(&note), "no {note:?}");
    let flame = std::fs::read_to_string(chart(&plot, ".flame.svg")).unwrap();
    assert!(flame.matches("<title>").count() <= MAX_ICICLE_FRAMES + 3);
    assert!(flame.contains("smaller stacks ("), "the lightest stacks are one frame");
}

/// Module, file, function and op names of up to 64,000 characters, each
/// shown in every caption, row, tooltip and frame: the output stays the same
/// size as the names grow.
#[test]
fn long_names_are_cut_where_charts_and_pages_show_them() {
    for command in [PLOT, HTML] {
        let [small, large] = [4_000, 64_000].map(|n| {
            let input = prost::Message::encode_to_vec(&synthetic::hlo_proto_with_long_names(n));
            let out = written(command, "names.hlo.pb", &input).bytes;
            assert!(out <= synthetic::output_bound(input.len() as u64), "{command:?} n = {n}: {out} bytes");
            assert!(out <= synthetic::OUTPUT_SEEN, "{command:?} n = {n}: {out} bytes");
            out
        });
        assert!(large <= small + small / 10, "{command:?}: {small} bytes, then {large} for names 16 times as long");
    }
}

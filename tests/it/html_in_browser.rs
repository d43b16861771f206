//! Opens the HTML report in headless Chromium, as a user's browser would:
//! every chart must be laid out with a size, and the page must not be blank.
//!
//! Needs the `chromium` command (see [`crate::browser`]).

use std::path::Path;
use std::process::Command;

use crate::browser::{browser_available, BROWSER, FLAGS};
use crate::common::{allocator_oracles, expected_charts, oracles, profile};
use assert_cmd::cargo::cargo_bin_cmd;

/// Runs headless Chromium on a file with a fresh profile, stopped after two
/// minutes should it hang; returns its standard output.
fn chromium(profile_dir: &Path, page: &Path, action: &[String]) -> String {
    let output = Command::new("timeout")
        .arg("120")
        .arg(BROWSER)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile_dir.display()))
        .args(action)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("running chromium");
    assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Appended to a copy of the report, never to the report itself: writes the
/// laid-out size of every chart into the DOM, where `--dump-dom` shows it.
const MEASURE: &str = r#"<script>
// The page's script shows one module at a time; the charts of all are measured.
const every = document.querySelector("input.every-module");
if (every && !every.checked) every.click();
const sizes = [...document.querySelectorAll("figure.chart > svg")].map(svg => {
  const box = svg.getBoundingClientRect();
  return svg.closest("figure").classList[1] + " " + Math.round(box.width) + " " + Math.round(box.height);
});
const out = document.createElement("pre");
out.id = "chart-sizes";
out.textContent = sizes.join("\n");
document.body.appendChild(out);
</script>"#;

/// Opens the HTML report of `workload` in the browser: the charts in the DOM
/// are `expected` (by kind), each is laid out with a size, and a screenshot
/// of the top of the page shows text and colours, and `band` (a chart's
/// filled area, as the browser paints it) over at least 10 000 pixels.
fn check_in_browser(workload: &str, expected: &[&str], band: [u8; 3]) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    cargo_bin_cmd!("xmem")
        .arg("report")
        .arg(profile(workload))
        .args(["--format", "html", "-o"])
        .arg(&report)
        .assert()
        .success();
    check_page(workload, dir.path(), &report, "<h1>xmem report: ", expected, band);
}

/// Checks a page written into `dir` as [`check_in_browser`] says.
fn check_page(workload: &str, dir: &Path, report: &Path, heading: &str, expected: &[&str], band: [u8; 3]) {
    let report = report.to_path_buf();
    // The DOM as the browser built it from the page, untouched.
    let dom = chromium(&dir.join("profile-dom"), &report, &["--dump-dom".into()]);
    assert_eq!(dom.matches("<figure class=\"chart ").count(), expected.len(), "{workload}: charts in the DOM");
    assert!(dom.contains(heading), "{workload}: the page has its heading");

    // Each chart's laid-out size, measured in a copy.
    let html = std::fs::read_to_string(&report).unwrap();
    let measured = dir.join("measured.html");
    std::fs::write(&measured, html.replace("</body>", &format!("{MEASURE}\n</body>"))).unwrap();
    let dom = chromium(&dir.join("profile-measure"), &measured, &["--dump-dom".into()]);
    let sizes = dom
        .split_once("<pre id=\"chart-sizes\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .map(|(sizes, _)| sizes.to_string())
        .expect("the measuring script ran");
    let mut kinds: Vec<&str> = Vec::new();
    for line in sizes.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [kind, width, height] = fields[..] else { panic!("bad measurement {line:?}") };
        let (width, height): (u32, u32) = (width.parse().unwrap(), height.parse().unwrap());
        // An icicle of one or two levels (buffers without a Python stack) is short.
        let min_height = if kind == "flame" { 60 } else { 100 };
        assert!(width > 100 && height > min_height, "{workload}: {kind} chart is {width}×{height}");
        kinds.push(kind);
    }
    let mut expected_sorted = expected.to_vec();
    expected_sorted.sort_unstable();
    kinds.sort_unstable();
    assert_eq!(kinds, expected_sorted, "{workload}: charts laid out");

    // A screenshot of the top of the page: text and coloured charts, not one colour.
    let screenshot = dir.join("page.png");
    chromium(
        &dir.join("profile-shot"),
        &report,
        &[format!("--screenshot={}", screenshot.display()), "--window-size=1100,1800".into()],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&screenshot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let channels = frame.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> =
        pixels[..frame.buffer_size()].chunks(channels).map(|p| &p[..3]).collect();
    assert!(colours.len() > 50, "{workload}: the screenshot has only {} colours: a blank page", colours.len());
    let band_pixels = pixels[..frame.buffer_size()]
        .chunks(channels)
        .filter(|p| p[..3].iter().zip(band).all(|(a, b)| a.abs_diff(b) <= 3))
        .count();
    assert!(band_pixels > 10_000, "{workload}: only {band_pixels} pixels of the band {band:?}");
}

#[test]
fn the_report_shows_every_chart_in_a_browser() {
    if !browser_available() {
        return;
    }
    let expected: Vec<&str> = oracles("memory_hungry").iter().flat_map(expected_charts).collect();
    // The temporaries band of the timeline: orange at 60% over white.
    check_in_browser("memory_hungry", &expected, [240, 197, 102]);
}

#[test]
fn an_allocators_timeline_shows_in_a_browser() {
    if !browser_available() {
        return;
    }
    let expected: Vec<&str> = allocator_oracles("tf_keras_fit").iter().map(|_| "timeline").collect();
    // The free band of the allocator's timeline: green at 60% over white.
    check_in_browser("tf_keras_fit", &expected, [102, 197, 171]);
}

#[test]
fn the_diff_page_overlays_both_runs_in_a_browser() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("diff.html");
    cargo_bin_cmd!("xmem")
        .arg("diff")
        .args([profile("pair_base"), profile("pair_new")])
        .args(["--fail-if-peak-grows", "5%", "--min-peak", "0", "--format", "html", "-o"])
        .arg(&page)
        .assert()
        .code(1);
    let html = std::fs::read_to_string(&page).unwrap();
    // 11 of the pair's 21 memory spaces changed: a section each, up to --top 20, with
    // both runs' timelines where a run has heap-simulator events.
    assert_eq!(html.matches("<section>").count(), 11);
    let charts = html.matches("<figure class=\"chart overlay\">").count();
    let without = html.matches("No heap-simulator events in either run").count();
    assert!(charts >= 1 && charts + without == 11, "{charts} charts, {without} without");
    assert!(html.contains("<p class=\"fail\"><strong>Verdict: FAIL, 11 limits crossed (--fail-if-peak-grows 5%)"));
    assert!(html.contains("base: peak 41.8 MiB") && html.contains("new: peak 86.4 MiB"), "the legend names both peaks");
    // The new run's heap: orange at 60% over white.
    check_page("pair", dir.path(), &page, "<h1>xmem diff: ", &vec!["overlay"; charts], [240, 197, 102]);
}

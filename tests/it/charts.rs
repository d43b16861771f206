//! Honest charts, read back as SVG: an allocator's timeline is drawn as
//! steps with the training steps marked and its legend above the data; the
//! lifetimes chart marks the peak at the level it names and says what it
//! leaves out; every bar at the peak names its source line.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::{allocator_oracles, oracles, profile};
use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// Runs `xmem plot` on a fixture workload; the charts written, by path.
fn plot(workload: &str) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let out = cargo_bin_cmd!("xmem")
        .arg("plot")
        .arg(profile(workload))
        .arg("--all")
        .arg("-o")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = String::from_utf8(out.stdout).unwrap().lines().map(PathBuf::from).collect();
    (dir, written)
}

fn chart<'a>(written: &'a [PathBuf], suffix: &str) -> &'a Path {
    written.iter().find(|p| p.to_string_lossy().ends_with(suffix)).unwrap_or_else(|| panic!("no {suffix}"))
}

fn points(attribute: &str) -> Vec<(i32, i32)> {
    attribute
        .split_whitespace()
        .map(|pair| {
            let (x, y) = pair.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

fn number(node: roxmltree::Node, attribute: &str) -> i32 {
    node.attribute(attribute).unwrap_or_else(|| panic!("no {attribute}")).parse().unwrap()
}

fn report_json(workload: &str) -> Value {
    let out = cargo_bin_cmd!("xmem").args(["report", "--format", "json"]).arg(profile(workload)).output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn an_allocator_timeline_is_drawn_in_steps_with_its_training_steps_marked() {
    let (_dir, written) = plot("tf_keras_fit");
    let source = std::fs::read_to_string(chart(&written, ".timeline.svg")).unwrap();
    let svg = roxmltree::Document::parse(&source).unwrap();
    // The series: the in-use line and the stacked bands, each many points long.
    let series: Vec<Vec<(i32, i32)>> = svg
        .descendants()
        .filter(|n| n.has_tag_name("polyline") || n.has_tag_name("polygon"))
        .map(|n| points(n.attribute("points").unwrap()))
        .filter(|p| p.len() > 100)
        .collect();
    assert!(series.len() >= 4, "{} series", series.len());
    for line in &series {
        // A step chart only runs across or up and down, never slanted.
        for pair in line.windows(2) {
            let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
            assert!(x0 == x1 || y0 == y1, "a ramp from {:?} to {:?}", pair[0], pair[1]);
        }
    }
    // One boundary where each training step after the first begins.
    let report = report_json("tf_keras_fit");
    let steps = report["allocators"][0]["steps"].as_array().unwrap().len();
    let boundaries = svg.descendants().filter(|n| n.attribute("class") == Some("step-boundary")).count();
    assert_eq!(boundaries, steps - 1);
    assert!(steps > 10, "{steps} steps");
    // XProf's peak step is named where its boundary is.
    let peak_step = allocator_oracles("tf_keras_fit")[0].peak_step();
    let labels: Vec<&str> =
        svg.descendants().filter(|n| n.attribute("class") == Some("step-label")).filter_map(|n| n.text()).collect();
    assert!(labels.contains(&format!("step {peak_step}").as_str()), "{labels:?}");

    // The legend's box lies above every point of every series.
    let legend = svg
        .descendants()
        .find(|n| n.has_tag_name("rect") && n.attribute("opacity") == Some("0.85"))
        .expect("a legend box");
    let legend_bottom = number(legend, "y") + number(legend, "height");
    let (left, right) = (number(legend, "x"), number(legend, "x") + number(legend, "width"));
    for line in &series {
        for &(x, y) in line {
            assert!(x < left || x > right || y > legend_bottom, "({x}, {y}) under the legend");
        }
    }
}

#[test]
fn the_lifetimes_chart_marks_the_peak_at_the_top_of_what_is_live_there() {
    let (_dir, written) = plot("memory_hungry");
    let oracles = oracles("memory_hungry");
    let (mut checked, mut named) = (0, 0);
    for path in written.iter().filter(|p| p.to_string_lossy().ends_with(".lifetimes.svg")) {
        let source = std::fs::read_to_string(path).unwrap();
        let svg = roxmltree::Document::parse(&source).unwrap();
        let circle = svg.descendants().find(|n| n.has_tag_name("circle")).expect("the peak's dot");
        let (cx, cy) = (number(circle, "cx"), number(circle, "cy"));
        let boxes: Vec<(i32, i32, i32)> = svg
            .descendants()
            .filter(|n| {
                n.has_tag_name("rect")
                    && n.first_element_child().and_then(|t| t.text()).is_some_and(|t| t.contains("(buffer "))
            })
            .map(|n| (number(n, "x"), number(n, "x") + number(n, "width"), number(n, "y")))
            .collect();
        // The highest box that crosses the peak line has its top where the dot is.
        let crossing_top = boxes.iter().filter(|(x0, x1, _)| *x0 <= cx && cx < *x1).map(|b| b.2).min();
        assert_eq!(crossing_top, Some(cy), "{}", path.display());
        let label = svg.descendants().find(|n| n.attribute("class") == Some("peak-label")).unwrap();
        assert_eq!(number(label, "y"), cy - 8, "the label sits at the dot");
        // The note names what the boxes leave out, with XProf's always-live bytes.
        let title = svg.root_element().children().find(|n| n.has_tag_name("title")).unwrap().text().unwrap();
        let oracle = common::oracle_for_title(&oracles, title);
        let always_live = common::mib_to_bytes(&oracle.json["indefiniteBufferAllocationMib"]);
        let note = svg.descendants().find(|n| n.attribute("class") == Some("always-live-note")).unwrap();
        let expected = format!("not drawn: {} of always-live", bytesize_text(always_live));
        assert!(note.text().unwrap().starts_with(&expected), "{:?}", note.text());
        named += usize::from(svg.descendants().any(|n| n.attribute("class") == Some("box-label")));
        checked += 1;
    }
    assert!(checked >= 2, "{checked} lifetimes charts");
    // Boxes get names where they are large enough to hold one, as in the two big modules.
    assert!(named >= 2, "{named} charts name their largest boxes");
}

fn bytesize_text(bytes: i64) -> String {
    xmem::render::table::bytes(bytes)
}

#[test]
fn every_bar_at_the_peak_names_its_source_line_and_no_empty_field() {
    let (_dir, written) = plot("memory_hungry");
    let oracles = oracles("memory_hungry");
    let mut with_source = 0;
    for path in written.iter().filter(|p| p.to_string_lossy().ends_with(".peak.svg")) {
        let source = std::fs::read_to_string(path).unwrap();
        let svg = roxmltree::Document::parse(&source).unwrap();
        let title = svg.root_element().children().find(|n| n.has_tag_name("title")).unwrap().text().unwrap();
        let oracle = common::oracle_for_title(&oracles, title);
        let labels: Vec<&str> =
            svg.descendants().filter(|n| n.attribute("class") == Some("bar-label")).filter_map(|n| n.text()).collect();
        for label in &labels {
            assert!(!label.contains("·  ·") && !label.trim_end().ends_with('·'), "dangling separator in {label:?}");
        }
        for buffer in oracle.buffers_at_peak() {
            let (Some(file), Some(line)) =
                (buffer["sourceInfo"]["fileName"].as_str(), buffer["sourceInfo"]["lineNumber"].as_i64())
            else {
                continue;
            };
            let name = buffer["instructionName"].as_str().unwrap();
            let Some(label) = labels.iter().find(|l| l.starts_with(&format!("{name} · "))) else { continue };
            let short = format!("{}:{line}", file.rsplit('/').next().unwrap());
            assert!(label.contains(&short), "{label:?} lacks {short}");
            with_source += 1;
        }
    }
    assert!(with_source >= 6, "{with_source} bars with a source line");
}

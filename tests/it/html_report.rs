//! `xmem report --format html`: one self-contained page with a section and
//! the charts of every module and memory space XProf reports.

use crate::common;

use crate::common::{expected_charts, oracles, profile};
use assert_cmd::cargo::cargo_bin_cmd;
use xmem::units::human_bytes;

fn html_report(workload: &str) -> String {
    let out = cargo_bin_cmd!("xmem")
        .arg("report")
        .arg(profile(workload))
        .args(["--format", "html"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_page_needs_nothing_from_outside() {
    let html = html_report("memory_hungry");
    assert!(html.starts_with("<!DOCTYPE html>"));
    for external in ["src=", "url(", "@import", "@font-face", "<link", "<iframe", "<img"] {
        assert!(!html.contains(external), "the page holds {external}");
    }
    // Links go only to the page's own sections.
    assert!(html.contains("href=\"#"));
    assert_eq!(html.matches("href=").count(), html.matches("href=\"#").count());
    // Two scripts, inline: the data, which a browser does not run, and the script that reads it.
    assert_eq!(html.matches("<script").count(), 2);
    assert_eq!(html.matches("</script>").count(), 2);
    assert!(html.contains("<script type=\"application/json\" id=\"xmem-data\">{"));
    let script = html.rsplit_once("<script>").map(|(_, rest)| rest).unwrap_or_default();
    for request in
        ["fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "import(", "new Image", "sendBeacon", ".src"]
    {
        assert!(!script.contains(request), "the script could make a request: {request}");
    }
}

#[test]
fn no_id_repeats_in_the_page() {
    for workload in ["memory_hungry", "host_offload", "tf_keras_fit"] {
        let html = html_report(workload);
        let mut seen = std::collections::HashSet::new();
        let mut ids = 0;
        for (at, _) in html.match_indices(" id=\"") {
            let id = html[at + 5..].split('"').next().unwrap_or_default();
            assert!(seen.insert(id.to_string()), "{workload}: the id {id:?} repeats");
            ids += 1;
        }
        // Every section can be linked to, and the flame graphs' elements are not.
        let sections = html.matches("<section>").count();
        assert!(ids > sections, "{workload}: {ids} ids for {sections} sections");
        assert!(!html.contains("id=\"frames\"") && !html.contains("id=\"title\""), "{workload}: inferno's ids");
    }
}

#[test]
fn every_module_and_memory_space_has_its_section_charts_and_peak() {
    for workload in ["memory_hungry", "host_offload"] {
        let html = html_report(workload);
        let oracles = oracles(workload);
        assert_eq!(html.matches("<section>").count(), oracles.len(), "{workload}: sections");
        let charts: usize = oracles.iter().map(|o| expected_charts(o).len()).sum();
        assert_eq!(html.matches("<figure class=\"chart ").count(), charts, "{workload}: charts");
        for oracle in &oracles {
            let heading = format!("\">{} · ", html_escape::encode_text(&oracle.module));
            assert!(html.contains(&heading), "{workload}: no section for {}", oracle.module);
            let peak = format!("{} ({} bytes)", human_bytes(oracle.peak_bytes() as u64), oracle.peak_bytes());
            assert!(html.contains(&peak), "{workload}: {} peak {peak}", oracle.module);
        }
    }
}

#[test]
fn an_allocator_section_has_its_timeline_inline() {
    let html = html_report("tf_keras_fit");
    let oracle = &common::allocator_oracles("tf_keras_fit")[0];
    let heading = format!("\">Allocator {} on vm</h2>", oracle.name);
    let section = html
        .split_once(&heading)
        .and_then(|(_, rest)| rest.split_once("</section>"))
        .map(|(section, _)| section)
        .unwrap_or_else(|| panic!("no section {heading}"));
    assert_eq!(html.matches("<figure class=\"chart ").count(), 1, "one chart in the page");
    assert_eq!(section.matches("<figure class=\"chart timeline\">\n<svg ").count(), 1, "the chart is in the section");
    let title = format!("<title>Allocator {} on vm: heap, stack and free memory over time</title>", oracle.name);
    assert!(section.contains(&title), "{title}");
    let peak = format!("peak {} at ", human_bytes(oracle.peak_bytes() as u64));
    assert!(section.contains(&peak), "the peak label {peak}");
    // The chart comes before the table of allocations live at the peak.
    assert!(section.find("<svg ") < section.find("<table>"));
}

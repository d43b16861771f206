//! The HTML report explored in headless Chromium as a reader explores it:
//! pick a module and a memory space, move along the heap chart, read what is
//! live there; zoom a flame graph; filter a table. What the page shows at a
//! point must be what `xmem report --at POINT --format json` gives, buffer
//! for buffer; and the page must ask for nothing but itself.
//!
//! `XMEM_SCREENSHOTS=DIR` also writes the screenshots the README shows into DIR.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

use crate::browser::{browser_available, Browser};
use crate::common::profile;

fn report_json(workload: &str, args: &[&str]) -> Value {
    let output = cargo_bin_cmd!("xmem")
        .arg("report")
        .arg(profile(workload))
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn write_page(workload: &str, dir: &Path) -> PathBuf {
    let page = dir.join(format!("{workload}.html"));
    cargo_bin_cmd!("xmem")
        .arg("report")
        .arg(profile(workload))
        .args(["--format", "html", "-o"])
        .arg(&page)
        .assert()
        .success();
    page
}

/// What `--at` gives for a module's first memory space: the heap after the
/// event, and the buffers (instruction, bytes) largest first, as the page lists them.
fn live_set_by_cli(workload: &str, module: &str, at: usize) -> (i64, Vec<(String, i64)>) {
    let json = report_json(workload, &["--module", module, "--at", &at.to_string()]);
    let live = &json["modules"][0]["memory_spaces"][0]["at"];
    let mut buffers: Vec<(i64, i64, String)> = live["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["size_bytes"].as_i64().unwrap(),
                b["logical_buffer_id"].as_i64().unwrap(),
                b["instruction"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    buffers.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    (live["heap_bytes"].as_i64().unwrap(), buffers.into_iter().map(|(size, _, name)| (name, size)).collect())
}

/// The live set the page shows in the panel of section `id`: the event, the
/// heap after it, and every buffer row (instruction, bytes), after "show all".
fn live_set_on_page(browser: &mut Browser, id: &str) -> (usize, i64, Vec<(String, i64)>) {
    let shown = browser.eval(&format!(
        r#"(() => {{
            const panel = document.querySelector('.live-panel[data-section="{id}"]');
            const all = panel.querySelector('button.show-all');
            if (!all.hidden && all.textContent.startsWith('show all')) all.click();
            const title = panel.querySelector('.live-title');
            const rows = [...panel.querySelectorAll('table.live-buffers tr[data-buffer]')]
                .filter(row => !row.hidden)
                .map(row => [row.cells[3].textContent, Number(row.cells[0].dataset.bytes)]);
            return [Number(title.dataset.position), Number(title.dataset.heapBytes), rows];
        }})()"#
    ));
    let rows = shown[2]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
        .collect();
    (shown[0].as_u64().unwrap() as usize, shown[1].as_i64().unwrap(), rows)
}

/// The viewport point over `expression` (an element), scrolled into view: `[x, y]`.
fn center_of(browser: &mut Browser, expression: &str) -> (f64, f64) {
    let point = browser.eval(&format!(
        "(() => {{ const e = {expression}; e.scrollIntoView({{ block: 'center' }}); const b = e.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; }})()"
    ));
    (point[0].as_f64().unwrap(), point[1].as_f64().unwrap())
}

/// Types `text` into the element `selector` after focusing it.
fn type_into(browser: &mut Browser, selector: &str, text: &str) {
    browser.eval(&format!("document.querySelector(`{selector}`).focus()"));
    browser.type_text(text);
}

/// The selected module's sections: each visible section's heading.
fn visible_headings(browser: &mut Browser) -> Vec<String> {
    let headings = browser.eval("[...document.querySelectorAll('h2[data-module]')].filter(h => !h.closest('section').hidden).map(h => h.textContent)");
    headings.as_array().unwrap().iter().map(|h| h.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_reader_moves_along_the_timeline_and_sees_what_report_at_prints() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut browser = Browser::start(1100, 1400);

    // A memory space of another module: host_offload's jit_host_io has HBM and host memory.
    let page = write_page("host_offload", dir.path());
    browser.open(&page);
    type_into(&mut browser, "input.module-filter", "host_io");
    assert_eq!(browser.eval("document.querySelector('select.module').value"), "jit_host_io(22)");
    let spaces = browser.eval("[...document.querySelector('select.space').options].map(o => o.textContent)");
    assert_eq!(spaces, serde_json::json!(["hbm", "host"]));
    browser.eval("(() => { const s = document.querySelector('select.space'); s.selectedIndex = 1; s.dispatchEvent(new Event('change')); })()");
    let visible = visible_headings(&mut browser);
    assert_eq!(visible.len(), 1, "{visible:?}");
    assert!(visible[0].starts_with("jit_host_io(22) · host"), "{visible:?}");
    assert_eq!(browser.requests(), [format!("file://{}", page.display())], "the page asked for nothing else");

    // The live set of jit_keep_everything (not the largest module) before, at and after its peak.
    let page = write_page("memory_hungry", dir.path());
    browser.open(&page);
    type_into(&mut browser, "input.module-filter", "18");
    assert_eq!(browser.eval("document.querySelector('select.module').value"), "jit_keep_everything(18)");
    browser.eval("(() => { const s = document.querySelector('select.space'); s.value = s.options[0].value; s.dispatchEvent(new Event('change')); })()");
    let id = browser.eval("document.querySelector('select.space').value").as_str().unwrap().to_string();
    assert_eq!(visible_headings(&mut browser), ["jit_keep_everything(18) · hbm (color 0)"]);
    let space = &report_json("memory_hungry", &["--module", "jit_keep_everything"])["modules"][0]["memory_spaces"][0];
    let peak = space["peak_position"].as_u64().unwrap() as usize;
    let events = space["heap_bytes"].as_array().unwrap().len() - 1;
    let (before, after) = (peak / 2, peak + (events - peak) / 2);
    assert!(0 < before && before < peak && peak < after && after < events, "{before} {peak} {after} of {events}");

    // Before the peak: a click on the heap chart at that event.
    let svg = format!("document.getElementById('{id}').closest('section').querySelector('figure.chart.timeline svg')");
    let point = browser.eval(&format!(
        "(() => {{ const svg = {svg}; svg.scrollIntoView({{ block: 'center' }}); const area = svg.querySelector('rect.plot-area');
            const b = area.getBoundingClientRect(), from = +area.dataset.xFrom, to = +area.dataset.xTo;
            return [b.left + ({before} + 1 - from) / (to - from) * b.width, b.top + b.height / 2]; }})()"
    ));
    browser.click(point[0].as_f64().unwrap(), point[1].as_f64().unwrap());
    // At the peak: `p`; after it: → from there.
    let mut seen = Vec::new();
    seen.push((before, live_set_on_page(&mut browser, &id)));
    browser.key("p", "KeyP", 80);
    seen.push((peak, live_set_on_page(&mut browser, &id)));
    for _ in peak..after {
        browser.key("ArrowRight", "ArrowRight", 39);
    }
    seen.push((after, live_set_on_page(&mut browser, &id)));
    for (at, (position, heap, rows)) in seen {
        assert_eq!(position, at, "the page shows event {position}, not {at}");
        let (expected_heap, expected_rows) = live_set_by_cli("memory_hungry", "jit_keep_everything", at);
        assert_eq!(heap, expected_heap, "heap after event {at}");
        assert_eq!(rows, expected_rows, "buffers live after event {at}");
    }

    // The filter keeps the rows that name what it is given, as --at lists them.
    type_into(&mut browser, &format!(".live-panel[data-section='{id}'] input.table-filter"), "sin");
    let (_, _, rows) = live_set_on_page(&mut browser, &id);
    let json = report_json("memory_hungry", &["--module", "jit_keep_everything", "--at", &after.to_string()]);
    let buffers = json["modules"][0]["memory_spaces"][0]["at"]["buffers"].as_array().unwrap().clone();
    let naming = buffers
        .iter()
        .filter(|b| {
            ["instruction", "op_name", "shape", "category"].iter().any(|k| b[k].as_str().unwrap_or("").contains("sin"))
        })
        .count();
    assert!(naming > 0 && naming < buffers.len(), "{naming} of {}", buffers.len());
    assert_eq!(rows.len(), naming, "rows left by the filter");

    // The flame graph zooms into a frame, and back.
    let flame = format!("document.getElementById('{id}').closest('section').querySelector('svg.flame')");
    let frame = format!("[...{flame}.querySelectorAll('svg.frames g')].find(g => g.querySelector('title').textContent.startsWith('jit(keep_everything) '))");
    let (x, y) = center_of(&mut browser, &format!("{frame}.querySelector('rect')"));
    let width_before = browser.eval(&format!("{frame}.querySelector('rect').getAttribute('width')"));
    assert_ne!(width_before, "100.0000%");
    browser.click(x, y);
    assert_eq!(browser.eval(&format!("{flame}.dataset.zoomed")), "jit(keep_everything)");
    assert_eq!(browser.eval(&format!("{frame}.querySelector('rect').getAttribute('width')")), "100.0000%");
    let hidden = browser.eval(&format!("{flame}.querySelectorAll('g.hide').length")).as_u64().unwrap();
    assert!(hidden > 0, "frames beside the zoomed one are hidden");
    browser.eval(&format!("{flame}.parentNode.querySelector('button.unzoom').click()"));
    assert_eq!(browser.eval(&format!("{frame}.querySelector('rect').getAttribute('width')")), width_before);

    assert!(browser.exceptions().is_empty(), "{:?}", browser.exceptions());
    let pages: Vec<String> = ["host_offload", "memory_hungry"]
        .iter()
        .map(|w| format!("file://{}", dir.path().join(format!("{w}.html")).display()))
        .collect();
    assert_eq!(browser.requests(), pages, "the pages asked for nothing else");
}

/// With JavaScript off the page is what it was before it had a script: every
/// section shown with its charts and tables, nothing added.
#[test]
fn without_javascript_the_page_shows_everything_statically() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = write_page("memory_hungry", dir.path());
    let html = std::fs::read_to_string(&page).unwrap();
    let mut browser = Browser::start(1100, 1400);
    browser.page("Emulation.setScriptExecutionDisabled", serde_json::json!({ "value": true }));
    browser.open(&page);
    let state = browser.eval(
        "[document.querySelectorAll('section').length, [...document.querySelectorAll('section')].filter(s => s.hidden).length,
          document.querySelectorAll('figure.chart > svg').length, document.querySelectorAll('nav, .live-panel, .table-tools, .flame-tools').length,
          document.documentElement.classList.contains('js')]",
    );
    let figures = html.matches("<figure class=\"chart ").count();
    assert_eq!(state, serde_json::json!([html.matches("<section>").count(), 0, figures, 0, false]));
}

/// The README's screenshot: memory_hungry's page at its largest module's peak,
/// as it opens. Written only when `XMEM_SCREENSHOTS` names a directory.
#[test]
fn screenshots_for_the_readme() {
    let Some(out) = std::env::var_os("XMEM_SCREENSHOTS") else { return };
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = write_page("memory_hungry", dir.path());
    let mut browser = Browser::start(1100, 1400);
    browser.open(&page);
    let region = browser.eval(
        "(() => { const id = document.querySelector('select.space').value; const heading = document.getElementById(id);
            const panel = document.querySelector(`.live-panel[data-section='${id}']`);
            const top = heading.getBoundingClientRect().top + scrollY - 8, bottom = panel.getBoundingClientRect().bottom + scrollY + 8;
            return [0, top, 1100, bottom - top]; })()",
    );
    let clip: Vec<f64> = region.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let png = browser.screenshot([clip[0], clip[1], clip[2], clip[3]], 0.75);
    std::fs::write(Path::new(&out).join("html-report-at-the-peak.png"), png).unwrap();
}

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

/// What `xmem report --at` prints and gives for a module's first memory
/// space after event `at`: the title line of the text, the buffers
/// (instruction, bytes) largest first as the page lists them, and the groups
/// by source line (named as the text names them, bytes, buffers).
struct LiveByCli {
    title: String,
    buffers: Vec<(String, i64)>,
    by_source: Vec<(String, i64, u64)>,
}

fn live_set_by_cli(workload: &str, module: &str, at: usize) -> LiveByCli {
    let at = at.to_string();
    let json = report_json(workload, &["--module", module, "--at", &at]);
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
    let by_source = live["groups"]["by_source"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let key = g["key"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
            (key, g["bytes"].as_i64().unwrap(), g["count"].as_u64().unwrap())
        })
        .collect();
    let text =
        cargo_bin_cmd!("xmem").arg("report").arg(profile(workload)).args(["--module", module, "--at", &at]).output();
    let text = String::from_utf8(text.unwrap().stdout).unwrap();
    let title = text.lines().find(|l| l.starts_with("Live after event")).expect("the --at title").to_string();
    LiveByCli { title, buffers: buffers.into_iter().map(|(size, _, name)| (name, size)).collect(), by_source }
}

/// What the page shows in the panel of section `id`: the event, its title,
/// every buffer row (instruction, bytes) after "show all", and the groups by
/// source line (source line, bytes, buffers).
struct LiveOnPage {
    position: usize,
    title: String,
    buffers: Vec<(String, i64)>,
    by_source: Vec<(String, i64, u64)>,
}

fn live_set_on_page(browser: &mut Browser, id: &str) -> LiveOnPage {
    let shown = browser.eval(&format!(
        r#"(() => {{
            const panel = document.querySelector('.live-panel[data-section="{id}"]');
            const all = panel.querySelector('button.show-all');
            if (!all.hidden && all.textContent.startsWith('show all')) all.click();
            const title = panel.querySelector('.live-title');
            const rows = [...panel.querySelectorAll('table.live-buffers tr[data-buffer]')]
                .filter(row => !row.hidden)
                .map(row => [row.cells[3].textContent, Number(row.cells[0].dataset.bytes)]);
            const groups = [...panel.querySelectorAll('table.groups tr')].slice(1)
                .map(row => [row.cells[3].textContent, Number(row.cells[0].dataset.bytes), Number(row.cells[2].textContent)]);
            return [Number(title.dataset.position), title.textContent, rows, groups];
        }})()"#
    ));
    let text = |v: &Value| v.as_str().unwrap().to_string();
    let rows = |v: &Value| v.as_array().unwrap().clone();
    LiveOnPage {
        position: shown[0].as_u64().unwrap() as usize,
        title: text(&shown[1]),
        buffers: rows(&shown[2]).iter().map(|r| (text(&r[0]), r[1].as_i64().unwrap())).collect(),
        by_source: rows(&shown[3])
            .iter()
            .map(|r| (text(&r[0]), r[1].as_i64().unwrap(), r[2].as_u64().unwrap()))
            .collect(),
    }
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
    for (at, page) in seen {
        assert_eq!(page.position, at, "the page shows event {}, not {at}", page.position);
        let cli = live_set_by_cli("memory_hungry", "jit_keep_everything", at);
        // The text's title, with the heap after the event as the text writes it.
        assert!(page.title.starts_with(&cli.title), "{:?} is not {:?}", page.title, cli.title);
        assert_eq!(page.buffers, cli.buffers, "buffers live after event {at}");
        assert_eq!(page.by_source, cli.by_source, "by source line after event {at}");
    }

    // The filter keeps the rows that name what it is given, as --at lists them.
    type_into(&mut browser, &format!(".live-panel[data-section='{id}'] input.table-filter"), "sin");
    let rows = live_set_on_page(&mut browser, &id).buffers;
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

/// An allocation row: op name, one allocation's bytes, requested bytes, count.
type AllocationRow = (String, i64, i64, u64);

/// What an allocator's panel shows at a point of its timeline: the event,
/// the title, the allocation rows sorted, and what it says was allocated
/// before the capture.
fn allocations_on_page(browser: &mut Browser) -> (usize, String, Vec<AllocationRow>, Option<i64>) {
    let shown = browser.eval(
        r#"(() => {
            const panel = document.querySelector('.live-panel');
            const all = panel.querySelector('button.show-all');
            if (!all.hidden && all.textContent.startsWith('show all')) all.click();
            const rows = [...panel.querySelectorAll('table.live-allocations tr')].slice(1).filter(r => !r.classList.contains('summary'))
                .map(r => [r.cells[7].textContent, Number(r.cells[0].dataset.bytes), Number(r.cells[1].dataset.bytes), Number(r.cells[2].textContent)]);
            const before = [...panel.querySelectorAll('table.live-allocations tr.summary')]
                .filter(r => r.cells[7].textContent === '(allocated before the capture started)').map(r => Number(r.cells[3].dataset.bytes));
            const title = panel.querySelector('.live-title');
            return [Number(title.dataset.position), title.textContent, rows, before[0] ?? null];
        })()"#,
    );
    let mut rows: Vec<AllocationRow> = shown[2]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap(), r[2].as_i64().unwrap(), r[3].as_u64().unwrap())
        })
        .collect();
    rows.sort();
    (shown[0].as_u64().unwrap() as usize, shown[1].as_str().unwrap().to_string(), rows, shown[3].as_i64())
}

#[test]
fn an_allocators_panel_lists_what_was_live_at_its_peak_and_at_any_event() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = write_page("tf_keras_fit", dir.path());
    let allocator = report_json("tf_keras_fit", &[])["allocators"][0].clone();
    let mut browser = Browser::start(1100, 1400);
    browser.open(&page);
    // It opens at the peak, with the allocations the report lists there.
    let (position, _, rows, before) = allocations_on_page(&mut browser);
    let heap = allocator["timeline"]["heap_bytes"].as_array().unwrap();
    assert_eq!(heap[position], allocator["peak_heap_bytes"]);
    let mut expected: Vec<AllocationRow> = allocator["at_peak"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            // What made it: the op TensorFlow recorded, or what the thread was doing outside any program.
            let op = r["op_name"].as_str().unwrap();
            let made_by = match (op, r["made_in"].as_str()) {
                ("", Some(made_in)) => format!("in {made_in}, outside any program"),
                ("", None) => "outside any program".to_string(),
                (op, _) => op.to_string(),
            };
            (
                made_by,
                r["allocation_bytes"].as_i64().unwrap(),
                r["requested_bytes"].as_i64().unwrap(),
                r["occurrences"].as_u64().unwrap(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(rows, expected, "allocations live at the peak");
    assert_eq!(before, allocator["unattributed_at_peak_bytes"].as_i64().filter(|&b| b != 0));
    // A step back (◀): the heap after that event, as the report's timeline holds it.
    browser.eval("document.querySelector('.live-panel .live-controls button').click()");
    let (earlier, title, _, _) = allocations_on_page(&mut browser);
    assert_eq!(earlier, position - 1);
    let bytes = heap[earlier].as_i64().unwrap();
    assert!(title.contains(&format!("heap {} ({bytes} bytes)", xmem::units::human_bytes(bytes as u64))), "{title}");
    assert!(browser.exceptions().is_empty(), "{:?}", browser.exceptions());
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

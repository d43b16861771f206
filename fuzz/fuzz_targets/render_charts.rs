//! Any bytes as a profile file (as `decode_profile`), then everything `xmem
//! plot` and `xmem report --format html` would write: every chart of the
//! chart plan and the page, rendered in memory. No panic, no control
//! character but line breaks and tabs in what is written (texts from the
//! input are escaped), and no amplification: far below design.md's bound
//! (`2 × input + 1 GiB`), the output stays within `2 × input + 16 MiB`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use xmem::analysis::chart_plan::ChartPlan;

mod proto_mutator;

/// What these inputs may make charts and pages write, beside twice their size.
const BUDGET: usize = 16 << 20;

fn assert_escaped(what: &str, text: &str) {
    let raw = text.chars().find(|&c| c.is_control() && c != '\n' && c != '\t');
    assert!(raw.is_none(), "{what}: a raw {raw:?}");
}

fn render(capture: &xmem::model::Capture, input: usize) {
    let report = xmem::analysis::analyze(std::slice::from_ref(capture));
    let plan = ChartPlan::of(&report, 20);
    let mut written = 0;
    let charted = xmem::cli::plot::draw_charts(&report, &plan, |_, svg| {
        assert_escaped("a chart", &svg);
        written += svg.len();
        Ok(())
    });
    charted.expect("drawing a chart");
    assert!(written <= 2 * input + BUDGET, "{input} bytes in, {written} bytes of charts");
    let mut page = Vec::new();
    xmem::render::html::write(&mut page, &report, 20).expect("writing the page");
    assert!(page.len() <= 2 * input + BUDGET, "{input} bytes in, a page of {} bytes", page.len());
    assert_escaped("the page", &String::from_utf8(page).expect("the page is UTF-8"));
}

fuzz_target!(|data: &[u8]| {
    let bytes = bytes::Bytes::copy_from_slice(data);
    if let Ok(capture) = xmem::ingest::load_bytes(Path::new("fuzz.pb"), bytes, &Default::default()) {
        render(&capture, data.len());
    }
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    proto_mutator::mutate(data, size, max_size, seed)
});

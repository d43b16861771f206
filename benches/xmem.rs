//! Benchmarks: `cargo bench -p xmem-benches`. The synthetic cases double one dimension at a
//! time, so each pair of rows shows how the cost grows (it should double,
//! not quadruple); BENCHMARKS.md records a run.

#[path = "support/synthetic.rs"]
mod synthetic;

use std::path::Path;

use bytes::Bytes;
use divan::Bencher;
use prost::Message;
use synthetic::ModuleSize;
use xmem::analysis;
use xmem::ingest::{self, hlo, ReadOptions};
use xmem::render::table::{self, Flavor};

fn main() {
    divan::main();
}

/// Buffers live at the peak (and as many transient ones): 2× per row.
const LIVE_AT_PEAK: &[usize] = &[25_000, 50_000, 100_000, 200_000];
/// Modules in one xplane: 2× per row.
const MODULES: &[usize] = &[50, 100, 200, 400];
/// Host events a report skips: 2× per row.
const HOST_EVENTS: &[usize] = &[250_000, 500_000, 1_000_000, 2_000_000];
/// Allocator events over 100 steps, half allocations and half frees: 2× per row.
const ALLOCATOR_EVENTS: &[usize] = &[100_000, 200_000, 400_000, 800_000];
/// Distinct sections in one TPU OOM report: 2× per row.
const OOM_SECTIONS: &[usize] = &[500, 1_000, 2_000, 4_000, 8_000];
/// Bytes in one log line: 2× per row.
const OOM_LINE_BYTES: &[usize] = &[64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20];

/// Entries of a PyTorch memory snapshot's trace: 2× per row, to a million.
const TORCH_TRACE_ENTRIES: &[usize] = &[125_000, 250_000, 500_000, 1_000_000];

/// Inlined lines in one pprof location, and samples allocated from it: 2× per row.
const INLINED_LINES: &[usize] = &[2_000, 4_000, 8_000, 16_000, 32_000, 64_000];

/// Bytes of one text-table cell: 2× per row, up to 1 MiB.
const CELL_BYTES: &[usize] = &[128 << 10, 256 << 10, 512 << 10, 1 << 20];

/// A text table with one huge cell, laid out for a 100-column terminal
/// (wrapped) and for a pipe (unwrapped).
#[divan::bench(args = CELL_BYTES, consts = [0, 100], sample_count = 5)]
fn table_with_a_long_cell<const WIDTH: usize>(bencher: Bencher, cell_bytes: usize) {
    let cell = synthetic::long_cell(cell_bytes);
    bencher.bench(|| {
        let mut t = table::table(Flavor::Text, &["Size", "Op name"]).with_width(Some(WIDTH).filter(|&w| w > 0));
        t.add_row(["1.0 MiB", cell.as_str()]);
        t.to_string()
    });
}

#[divan::bench(args = LIVE_AT_PEAK, sample_count = 5)]
fn heap_simulation(bencher: Bencher, live_at_peak: usize) {
    let size = ModuleSize { live_at_peak, transient: live_at_peak * 2 };
    let bytes = Bytes::from(synthetic::hlo_proto("jit_synthetic", size).encode_to_vec());
    let module = hlo::decode(Path::new("synthetic.hlo.pb"), &bytes, 0, None).unwrap().module;
    bencher.bench(|| analysis::analyze_module(&module, &Default::default()));
}

#[divan::bench(args = LIVE_AT_PEAK, sample_count = 5)]
fn hlo_decode(bencher: Bencher, live_at_peak: usize) {
    let size = ModuleSize { live_at_peak, transient: live_at_peak * 2 };
    let bytes = Bytes::from(synthetic::hlo_proto("jit_synthetic", size).encode_to_vec());
    bencher.bench(|| hlo::decode(Path::new("synthetic.hlo.pb"), &bytes, 0, None).unwrap().module);
}

fn report_on_file(bencher: Bencher, bytes: Vec<u8>) {
    report_on_named_file(bencher, "synthetic.xplane.pb", bytes);
}

fn report_on_named_file(bencher: Bencher, name: &str, bytes: Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    bencher.bench(|| {
        let capture = ingest::load(&path, &ReadOptions::default()).unwrap();
        analysis::analyze(std::slice::from_ref(&capture))
    });
}

#[divan::bench(args = MODULES, sample_count = 5)]
fn report_modules(bencher: Bencher, modules: usize) {
    report_on_file(bencher, synthetic::xspace(modules, ModuleSize { live_at_peak: 500, transient: 500 }, 0));
}

#[divan::bench(args = HOST_EVENTS, sample_count = 5)]
fn report_skipping_host_events(bencher: Bencher, host_events: usize) {
    report_on_file(bencher, synthetic::xspace(1, ModuleSize { live_at_peak: 100, transient: 100 }, host_events));
}

#[divan::bench(args = ALLOCATOR_EVENTS, sample_count = 5)]
fn report_allocator_events(bencher: Bencher, events: usize) {
    report_on_file(bencher, synthetic::allocator_xspace(100, events / 200));
}

#[divan::bench(args = INLINED_LINES, sample_count = 5)]
fn report_pprof_inlined_lines(bencher: Bencher, lines: usize) {
    report_on_named_file(bencher, "synthetic.prof", synthetic::pprof_inlined_location(lines));
}

/// A PyTorch memory snapshot read and analysed: the pickle, the replay and the live sets.
#[divan::bench(args = TORCH_TRACE_ENTRIES, sample_count = 3)]
fn report_torch_snapshot(bencher: Bencher, entries: usize) {
    report_on_named_file(bencher, "synthetic.pickle", synthetic::torch_snapshot(entries));
}

/// A hostile shape of `HOSTILE_SHAPES`, loaded and analysed at size `n`.
fn hostile_shape(bencher: Bencher, name: &str, n: usize) {
    let shape = synthetic::HOSTILE_SHAPES.iter().find(|s| s.name == name).unwrap();
    report_on_file(bencher, (shape.generate)(n));
}

/// A stack-frame chain, with a sixteenth as many instructions under it: 2× per row.
#[divan::bench(args = [64_000, 128_000, 256_000, 512_000], sample_count = 3)]
fn hostile_stack_chain(bencher: Bencher, n: usize) {
    hostile_shape(bencher, "stack-chain", n);
}

/// Tuple elements of one instruction, each a buffer: 2× per row.
#[divan::bench(args = [25_000, 50_000, 100_000, 200_000], sample_count = 3)]
fn hostile_tuple_indices(bencher: Bencher, n: usize) {
    hostile_shape(bencher, "tuple-indices", n);
}

/// Step roots under a chain of as many nested events: 2× per row.
#[divan::bench(args = [40_000, 80_000, 160_000, 320_000], sample_count = 3)]
fn hostile_nested_step_roots(bencher: Bencher, n: usize) {
    hostile_shape(bencher, "nested-step-roots", n);
}

#[divan::bench(sample_count = 10)]
fn report_fixture_mlp_train(bencher: Bencher) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles/mlp_train/profile");
    bencher.bench(|| {
        let capture = ingest::load(&path, &ReadOptions::default()).unwrap();
        analysis::analyze(std::slice::from_ref(&capture))
    });
}

#[divan::bench(args = OOM_SECTIONS, sample_count = 5)]
fn oom_report_sections(bencher: Bencher, sections: usize) {
    let log = synthetic::tpu_oom_log_with_sections(sections);
    bencher.bench(|| xmem::oom::scan("log", log.as_bytes()).unwrap());
}

#[divan::bench(args = OOM_LINE_BYTES, sample_count = 5)]
fn oom_long_line(bencher: Bencher, bytes: usize) {
    let log = synthetic::oom_log_line(bytes);
    bencher.bench(|| xmem::oom::scan("log", log.as_bytes()).unwrap());
}

/// Memory spaces in one heap trace, one buffer each: 2× per row.
const COLORS: &[usize] = &[2_000, 4_000, 8_000, 16_000];
/// Buffers in one SHARE_WITH chain: 2× per row.
const SHARE_CHAIN: &[usize] = &[25_000, 50_000, 100_000, 200_000];

fn analyze_proto(bencher: Bencher, proto: xmem::ingest::proto::xla::HloProto) {
    let bytes = Bytes::from(proto.encode_to_vec());
    let module = hlo::decode(Path::new("synthetic.hlo.pb"), &bytes, 0, None).unwrap().module;
    bencher.bench(|| analysis::analyze_module(&module, &Default::default()));
}

#[divan::bench(args = COLORS, sample_count = 5)]
fn heap_simulation_many_colors(bencher: Bencher, colors: usize) {
    analyze_proto(bencher, synthetic::hlo_proto_with_colors(colors));
}

#[divan::bench(args = SHARE_CHAIN, sample_count = 5)]
fn heap_simulation_share_chain(bencher: Bencher, buffers: usize) {
    analyze_proto(bencher, synthetic::hlo_proto_with_share_chain(buffers, false));
}

#[divan::bench(args = SHARE_CHAIN, sample_count = 5)]
fn heap_simulation_share_cycle(bencher: Bencher, buffers: usize) {
    analyze_proto(bencher, synthetic::hlo_proto_with_share_chain(buffers, true));
}

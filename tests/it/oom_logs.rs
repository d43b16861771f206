//! One test per log of `fixtures/oom-logs/`: each asserts the facts that
//! `fixtures/oom-logs/INDEX.md` lists for that file. Expected sizes are the
//! log's own figures converted here, independently of xmem's parser, by the
//! rule xmem documents: binary units, rounded to the nearest byte.

use std::path::Path;

use xmem::oom::{Cause, Kind, OomEvent, OomReport};

use crate::common;

fn scan(dir: &str, name: &str) -> OomReport {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(dir).join(name);
    let log = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    xmem::oom::scan(name, &log[..]).unwrap()
}

fn events(name: &str) -> Vec<OomEvent> {
    scan("oom-logs", name).events
}

fn only(name: &str) -> OomEvent {
    let mut events = events(name);
    let summaries: Vec<&str> = events.iter().map(|e| e.summary.as_str()).collect();
    assert_eq!(events.len(), 1, "{name}: {summaries:#?}");
    events.remove(0)
}

fn scaled(value: f64, shift: u32) -> u64 {
    (value * (1u64 << shift) as f64).round() as u64
}
fn kib(value: f64) -> u64 {
    scaled(value, 10)
}
fn mib(value: f64) -> u64 {
    scaled(value, 20)
}
fn gib(value: f64) -> u64 {
    scaled(value, 30)
}

/// The bytes of breakdown item `name` under `section`.
fn figure(event: &OomEvent, section: &str, name: &str) -> Option<i64> {
    item(event, section, name).bytes
}

fn item<'a>(event: &'a OomEvent, section: &str, name: &str) -> &'a xmem::oom::Item {
    let found =
        event.breakdown.iter().find(|s| s.name == section).and_then(|s| s.items.iter().find(|i| i.name == name));
    found.unwrap_or_else(|| panic!("no '{name}' under '{section}' in {:#?}", event.breakdown))
}

fn section_bytes(event: &OomEvent, section: &str) -> Option<i64> {
    event.breakdown.iter().find(|s| s.name == section).and_then(|s| s.bytes)
}

fn has_section(event: &OomEvent, section: &str) -> bool {
    event.breakdown.iter().any(|s| s.name == section)
}

fn b(value: u64) -> Option<i64> {
    Some(value as i64)
}

fn header(event: &OomEvent, space: &str, used: u64, capacity: u64, exceeded: u64) {
    assert_eq!(event.kind, Kind::CompileTimeOom);
    assert_eq!(event.memory_space.as_deref(), Some(space));
    assert_eq!(event.used_bytes, Some(used), "used");
    assert_eq!(event.capacity_bytes, Some(capacity), "capacity");
    assert_eq!(event.exceeded_by_bytes, Some(exceeded), "exceeded by");
}

#[test]
fn sizes_round_to_the_nearest_byte() {
    // 21.95 × 2^30 = 23568633036.8
    assert_eq!(gib(21.95), 23_568_633_037);
    assert_eq!(only("A-01.txt").used_bytes, Some(23_568_633_037));
}

#[test]
fn a01_header_wrapped_before_exceeded_and_total_usage_only() {
    let e = only("A-01.txt");
    header(&e, "hbm", gib(21.95), gib(15.48), gib(6.47));
    assert_eq!(e.error_code.as_deref(), Some("E1000"));
    assert_eq!(section_bytes(&e, "Total hbm usage"), b(gib(22.47)));
    assert_eq!(figure(&e, "Total hbm usage", "reserved"), b(mib(530.0)));
    assert_eq!(figure(&e, "Total hbm usage", "program"), b(gib(21.95)));
    assert_eq!(figure(&e, "Total hbm usage", "arguments"), Some(0));
    assert!(!has_section(&e, "Program hbm requirement"));
    assert!(e.allocations.is_empty());
    assert!(e.truncated, "the log ends inside the report");
    assert_eq!(e.summary, "compile-time HBM OOM (E1000): needs 21.95 GiB of 15.48 GiB — 6.47 GiB over");
}

#[test]
fn a02_single_line_header() {
    let e = only("A-02.txt");
    header(&e, "hbm", gib(21.90), gib(7.48), gib(14.42));
    assert!(e.breakdown.is_empty() && e.allocations.is_empty());
    assert!(!e.truncated, "nothing of a report began");
}

#[test]
fn a04_mixed_units_after_a_status_line() {
    let e = only("A-04.txt");
    header(&e, "hbm", gib(8.38), gib(8.00), mib(385.25));
    assert_eq!(e.line, 2);
    assert!(e.allocations.is_empty());
}

#[test]
fn a05_unknown_sizes_and_one_allocation_without_its_type() {
    let e = only("A-05.txt");
    header(&e, "hbm", gib(41.74), gib(16.00), gib(25.74));
    assert_eq!(section_bytes(&e, "Total hbm usage"), b(gib(41.74)));
    assert_eq!(figure(&e, "Total hbm usage", "reserved"), b(mib(528.0)));
    assert_eq!(figure(&e, "Total hbm usage", "program"), b(gib(41.22)));
    assert_eq!(figure(&e, "Total hbm usage", "arguments"), None);
    assert_eq!(item(&e, "Total hbm usage", "arguments").note.as_deref(), Some("unknown size"));
    assert_eq!(item(&e, "Output", "size").note.as_deref(), Some("unknown"));
    assert_eq!(section_bytes(&e, "Program hbm requirement"), b(gib(41.22)));
    assert_eq!(figure(&e, "Program hbm requirement", "reserved"), b(kib(4.0)));
    assert_eq!(figure(&e, "Program hbm requirement", "global"), b(mib(29.82)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp"), b(gib(41.19)));
    assert_eq!(item(&e, "Program hbm requirement", "HLO temp").note.as_deref(), Some("24.2% utilization"));
    assert_eq!(item(&e, "Program hbm requirement", "HLO temp fragmentation").note.as_deref(), Some("0.7%"));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp fragmentation"), b(mib(293.84)));
    assert_eq!(e.allocations.len(), 1);
    let a = &e.allocations[0];
    assert_eq!(a.size_bytes, Some(gib(32.0)));
    assert_eq!(a.op_type.as_deref(), Some("FloorMod"));
    assert_eq!(a.op_name.as_deref(), Some("slicewise_79/cic_update/FloorMod"));
    assert_eq!(a.shape.as_deref(), Some("s32[8388608,8,4]{2,1,0:T(8,128)}"));
    assert_eq!(a.unpadded_bytes, Some(gib(1.0)));
    assert_eq!(a.padding_bytes, Some(gib(31.0)));
    assert_eq!(a.expansion, Some(32.0));
    assert_eq!(a.instruction.as_deref(), Some("%copy.40488"));
    assert_eq!(a.allocation_type, None);
    assert!(e.truncated);
}

#[test]
fn a06_full_breakdown_and_the_first_allocation() {
    let e = only("A-06.txt");
    header(&e, "hbm", gib(63.80), gib(30.75), gib(33.05));
    assert_eq!(section_bytes(&e, "Total hbm usage"), b(gib(65.05)));
    assert_eq!(figure(&e, "Total hbm usage", "reserved"), b(gib(1.25)));
    assert_eq!(figure(&e, "Total hbm usage", "program"), b(gib(63.80)));
    assert_eq!(figure(&e, "Total hbm usage", "arguments"), Some(0));
    assert_eq!(figure(&e, "Output", "size"), Some(0));
    assert_eq!(section_bytes(&e, "Program hbm requirement"), b(gib(63.80)));
    assert_eq!(figure(&e, "Program hbm requirement", "global"), b(mib(1.14)));
    assert_eq!(figure(&e, "Program hbm requirement", "scoped"), b(mib(4.56)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp"), b(gib(63.79)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp unpadded"), b(gib(63.58)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp padded"), b(gib(63.58)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp fragmentation"), b(mib(210.89)));
    assert_eq!(e.allocations.len(), 1);
    let a = &e.allocations[0];
    assert_eq!(a.size_bytes, Some(gib(2.0)));
    let op = a.op_name.as_deref().unwrap();
    assert!(
        op.starts_with("jit(casual_language_model_train_step)/jit(main)/") && op.contains("/self_attention/"),
        "{op}"
    );
    assert_eq!(a.shape.as_deref(), Some("f32[32,4096,4096]{1,2,0:T(8,128)}"));
    assert_eq!(a.unpadded_bytes, Some(gib(2.0)));
    assert_eq!(a.padding_bytes, None);
    assert_eq!(a.instruction.as_deref(), Some("fusion.1265.remat3"));
    assert_eq!(a.allocation_type.as_deref(), Some("HLO temp"));
    assert!(a
        .source
        .as_deref()
        .unwrap()
        .starts_with("/home/air/workspace/EasyDel/src/easydel/modules/attention_module.py:"));
    assert!(e.truncated, "the issue lists more allocations than the excerpt");
}

#[test]
fn a08_no_compile_prefix_and_an_allocation_without_operator() {
    let e = only("A-08.txt");
    header(&e, "hbm", gib(9.08), gib(7.48), gib(1.60));
    assert_eq!(section_bytes(&e, "Total hbm usage"), b(gib(9.60)));
    assert_eq!(figure(&e, "Total hbm usage", "reserved"), b(mib(530.0)));
    assert_eq!(figure(&e, "Program hbm requirement", "global"), b(kib(420.0)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp"), b(gib(9.08)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp unpadded"), b(gib(8.65)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp padded"), b(gib(9.06)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp fragmentation"), Some(0));
    let a = &e.allocations[..];
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].size_bytes, Some(mib(124.0)));
    assert_eq!((a[0].op_name.as_deref(), a[0].op_type.as_deref()), (None, None));
    assert_eq!(a[0].shape.as_deref(), Some("f32[512,245,256]{2,1,0:T(8,128)}"));
    assert_eq!(a[0].unpadded_bytes, Some(mib(122.50)));
    assert_eq!(a[0].padding_bytes, Some(mib(1.50)));
    assert_eq!(a[0].expansion, Some(1.0));
    assert!(e.truncated);
}

#[test]
fn a09_complete_report_with_twenty_allocations() {
    let e = only("A-09.txt");
    header(&e, "hbm", gib(17.60), gib(16.00), gib(1.60));
    assert_eq!(section_bytes(&e, "Total hbm usage"), b(gib(17.60)));
    assert_eq!(figure(&e, "Total hbm usage", "reserved"), b(mib(528.0)));
    assert_eq!(figure(&e, "Total hbm usage", "program"), b(gib(17.08)));
    assert_eq!(figure(&e, "Total hbm usage", "arguments"), None);
    assert_eq!(figure(&e, "Program hbm requirement", "reserved"), b(kib(12.0)));
    assert_eq!(figure(&e, "Program hbm requirement", "global"), b(kib(980.0)));
    assert_eq!(figure(&e, "Program hbm requirement", "scoped"), b(mib(5.41)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp"), b(gib(17.08)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp fragmentation"), b(mib(53.61)));
    assert_eq!(e.allocations.len(), 20);
    let first = &e.allocations[0];
    assert_eq!(first.size_bytes, Some(mib(512.0)));
    assert_eq!(first.op_type.as_deref(), Some("OneHot"));
    assert_eq!(first.op_name.as_deref(), Some("one_hot"));
    assert_eq!(first.shape.as_deref(), Some("f32[4,128,128,9,18]{4,3,0,2,1:T(8,128)}"));
    assert_eq!(first.unpadded_bytes, Some(mib(40.50)));
    assert_eq!(first.padding_bytes, Some(mib(471.50)));
    assert_eq!(first.expansion, Some(12.6));
    assert_eq!(first.instruction.as_deref(), Some("%fusion.1668"));
    assert_eq!(first.allocation_type.as_deref(), Some("HLO temp"));
    assert_eq!(e.allocations[1].size_bytes, Some(mib(256.0)));
    assert_eq!(e.allocations[1].op_name, None);
    assert_eq!(e.allocations[19].op_name.as_deref(), Some("resnet152/MaxPool_36"));
    assert!(!e.truncated, "the report is followed by 'TPU compilation failed'");
    assert!(e.advice.iter().any(|a| a.starts_with("Padding: f32[4,128,128,9,18]")), "{:#?}", e.advice);
}

#[test]
fn a11_breakdown_without_header_and_an_empty_list() {
    let e = only("A-11.txt");
    assert_eq!(e.kind, Kind::CompileTimeOom);
    assert_eq!(e.memory_space.as_deref(), Some("hbm"));
    assert_eq!((e.used_bytes, e.capacity_bytes, e.exceeded_by_bytes), (None, None, None));
    assert_eq!(section_bytes(&e, "Total hbm usage"), b(gib(9.50)));
    assert_eq!(figure(&e, "Total hbm usage", "reserved"), b(mib(530.0)));
    assert_eq!(figure(&e, "Total hbm usage", "program"), b(gib(8.98)));
    assert_eq!(figure(&e, "Total hbm usage", "arguments"), Some(0));
    assert_eq!(figure(&e, "Output", "size"), Some(0));
    assert_eq!(section_bytes(&e, "Program hbm requirement"), b(gib(8.98)));
    assert_eq!(figure(&e, "Program hbm requirement", "global"), b(kib(241.0)));
    assert_eq!(figure(&e, "Program hbm requirement", "scoped"), b(mib(9.56)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp"), b(gib(8.97)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp unpadded"), b(gib(8.94)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp fragmentation"), b(mib(36.60)));
    assert!(e.allocations.is_empty());
    assert!(e.truncated, "the list header is the last thing in the log");
}

#[test]
fn b01_vmem_header_without_final_period() {
    let e = only("B-01.txt");
    header(&e, "vmem", mib(32.42), mib(16.00), mib(16.42));
    assert_eq!(e.error_code.as_deref(), Some("E1001"));
    assert!(e.allocations.is_empty());
    assert!(e.advice.iter().any(|a| a.contains("--xla_tpu_scoped_vmem_limit_kib")));
    assert!(e.advice.iter().any(|a| a.contains("vmem_limit_bytes")));
}

#[test]
fn b03_program_vmem_requirement() {
    let e = only("B-03.txt");
    header(&e, "vmem", mib(29.96), mib(16.00), mib(13.96));
    assert_eq!(section_bytes(&e, "Program vmem requirement"), b(mib(29.96)));
    assert!(e.allocations.is_empty());
    assert!(e.truncated);
}

#[test]
fn b04_vllm_prefix_on_every_line() {
    let e = only("B-04.txt");
    header(&e, "vmem", mib(76.58), mib(64.00), mib(12.58));
    assert_eq!(section_bytes(&e, "Program vmem requirement"), b(mib(76.58)));
    assert_eq!(figure(&e, "Program vmem requirement", "scoped"), b(mib(76.58)));
    assert_eq!(e.exception.as_deref(), Some("jax.errors.JaxRuntimeError"));
    assert!(e.allocations.is_empty());
    assert!(e.truncated);
}

#[test]
fn b05_coded_e1001_split_over_lines_and_cut() {
    let e = only("B-05.txt");
    assert_eq!(e.kind, Kind::CompileTimeOom);
    assert_eq!(e.error_code.as_deref(), Some("E1001"));
    assert_eq!(e.memory_space.as_deref(), Some("vmem"));
    assert_eq!(e.op.as_deref(), Some("%flash_attention.27"));
    assert!(e.shape.as_deref().unwrap().starts_with("bf16[1,2,37888,72]"));
    assert_eq!((e.used_bytes, e.capacity_bytes, e.exceeded_by_bytes), (None, None, None));
    assert!(e.truncated, "the second line is cut mid-way");
}

#[test]
fn b06_single_line_ring_attention() {
    let e = only("B-06.txt");
    header(&e, "vmem", mib(59.79), mib(16.00), mib(43.79));
    assert!(e.allocations.is_empty());
}

#[test]
fn b08_unnumbered_scoped_allocations_without_header() {
    let e = only("B-08.txt");
    assert_eq!(e.kind, Kind::CompileTimeOom);
    assert_eq!(e.memory_space, None, "the excerpt never names the memory space");
    assert_eq!(e.allocations.len(), 2);
    let (spill, kernel) = (&e.allocations[0], &e.allocations[1]);
    assert_eq!(spill.size_bytes, Some(mib(50.23)));
    assert_eq!(spill.xla_label.as_deref(), Some("register allocator spill slots call depth 2"));
    assert_eq!(spill.allocation_type.as_deref(), Some("scoped"));
    assert_eq!(kernel.size_bytes, Some(mib(1.00)));
    assert!(kernel.op_name.as_deref().unwrap().ends_with("/RPA-bq_32-bkvp_16-p_128/pallas_call"));
    assert_eq!(kernel.shape.as_deref(), Some("bf16[2,32,32,1,2,128]{5,4,3,2,1,0:T(2,128)(2,1)}"));
    assert_eq!(kernel.unpadded_bytes, Some(mib(1.00)));
    assert_eq!(kernel.instruction.as_deref(), Some("RPA-bq_32-bkvp_16-p_128.32"));
    assert!(kernel.xla_label.as_deref().unwrap().contains("custom_call_target=\"tpu_custom_call\""));
    assert_eq!(kernel.allocation_type.as_deref(), Some("scoped"));
    assert!(e.truncated);
}

/// The stats block every BufferAssignment report starts with.
fn stats(e: &OomEvent, name: &str) -> Option<i64> {
    figure(e, "BufferAssignment stats", name)
}

#[test]
fn c01_glog_prefix_fragmentation_rows_and_one_buffer() {
    let e = only("C-01.txt");
    assert_eq!(e.kind, Kind::BufferAssignmentOom);
    assert_eq!(e.requested_bytes, Some(49_592_744));
    assert_eq!(stats(&e, "parameter allocation"), b(mib(2.72)));
    assert_eq!(stats(&e, "constant allocation"), b(kib(2.8)));
    assert_eq!(stats(&e, "maybe_live_out allocation"), b(kib(386.5)));
    assert_eq!(stats(&e, "preallocated temp allocation"), b(mib(47.29)));
    assert_eq!(stats(&e, "preallocated temp fragmentation"), b(mib(3.50)));
    assert_eq!(item(&e, "BufferAssignment stats", "preallocated temp fragmentation").note.as_deref(), Some("7.40%"));
    assert_eq!(stats(&e, "total allocation"), b(mib(50.40)));
    assert_eq!(stats(&e, "total fragmentation"), b(mib(3.86)));
    assert_eq!(item(&e, "BufferAssignment stats", "total fragmentation").note.as_deref(), Some("7.66%"));
    assert_eq!(e.allocations.len(), 1);
    let a = &e.allocations[0];
    assert_eq!(a.size_bytes, Some(mib(4.0)));
    assert_eq!(a.op_name.as_deref(), Some("pmap(render_eval_fn)/jit(main)/Model/NerfMLP_0/select_n"));
    assert!(a.source.as_deref().unwrap().ends_with("/models.py:457"));
    assert_eq!(a.xla_label.as_deref(), Some("fusion"));
    assert_eq!(a.shape.as_deref(), Some("f32[4096,256]"));
    assert!(e.truncated);
}

#[test]
fn c02_entry_parameter_buffer_and_no_temp_fragmentation_row() {
    let e = only("C-02.txt");
    assert_eq!(e.kind, Kind::BufferAssignmentOom);
    assert_eq!(e.exception.as_deref(), Some("jaxlib.xla_extension.XlaRuntimeError"));
    assert_eq!(e.requested_bytes, Some(6_291_456));
    assert_eq!(stats(&e, "parameter allocation"), b(mib(6.0)));
    assert_eq!(stats(&e, "constant allocation"), Some(0));
    assert_eq!(stats(&e, "maybe_live_out allocation"), b(mib(6.0)));
    assert_eq!(stats(&e, "preallocated temp allocation"), Some(0));
    assert_eq!(stats(&e, "total allocation"), b(mib(12.0)));
    assert_eq!(stats(&e, "total fragmentation"), Some(0));
    let section = e.breakdown.iter().find(|s| s.name == "BufferAssignment stats").unwrap();
    assert!(!section.items.iter().any(|i| i.name == "preallocated temp fragmentation"));
    assert_eq!(e.allocations.len(), 2);
    let (concat, parameter) = (&e.allocations[0], &e.allocations[1]);
    assert_eq!(concat.size_bytes, Some(mib(6.0)));
    assert_eq!(concat.op_name.as_deref(), Some("jit(concatenate)/jit(main)/concatenate[dimension=0]"));
    assert_eq!(concat.xla_label.as_deref(), Some("concatenate"));
    assert_eq!(concat.shape.as_deref(), Some("f32[4096,128,3]"));
    assert_eq!(parameter.size_bytes, Some(kib(384.0)));
    assert_eq!(parameter.shape.as_deref(), Some("f32[256,128,3]"));
    assert_eq!(parameter.allocation_type.as_deref(), Some("entry parameter"));
    assert_eq!((parameter.op_name.as_deref(), parameter.xla_label.as_deref()), (None, None));
}

#[test]
fn c03_stats_without_peak_buffers() {
    let e = only("C-03.txt");
    assert_eq!(e.kind, Kind::BufferAssignmentOom);
    assert_eq!(e.requested_bytes, Some(4_770_354_232));
    assert_eq!(stats(&e, "parameter allocation"), b(mib(372.76)));
    assert_eq!(stats(&e, "constant allocation"), b(kib(48.5)));
    assert_eq!(stats(&e, "maybe_live_out allocation"), b(gib(9.64)));
    assert_eq!(stats(&e, "preallocated temp allocation"), b(gib(4.44)));
    assert_eq!(stats(&e, "total allocation"), b(gib(14.44)));
    assert_eq!(stats(&e, "total fragmentation"), b(mib(680.30)));
    assert_eq!(item(&e, "BufferAssignment stats", "total fragmentation").note.as_deref(), Some("4.60%"));
    assert!(e.allocations.is_empty());
    assert!(e.truncated);
}

#[test]
fn c05_rocm_driver_failure_and_op_names_wrapped_mid_token() {
    let events = events("C-05.txt");
    assert_eq!(events.len(), 2);
    let driver = &events[0];
    assert_eq!(driver.kind, Kind::RuntimeAllocationFailure);
    assert_eq!(driver.requested_bytes, Some(165_425_291_480));
    assert!(driver.summary.contains("HIP_ERROR_OutOfMemory"), "{}", driver.summary);
    let e = &events[1];
    assert_eq!(e.kind, Kind::BufferAssignmentOom);
    assert_eq!(e.requested_bytes, Some(165_425_291_480));
    assert_eq!(e.memory_space.as_deref(), Some("device ordinal 0"));
    assert_eq!(stats(e, "parameter allocation"), b(gib(10.04)));
    assert_eq!(stats(e, "constant allocation"), b(kib(24.6)));
    assert_eq!(stats(e, "maybe_live_out allocation"), b(gib(28.74)));
    assert_eq!(stats(e, "preallocated temp allocation"), b(gib(154.06)));
    assert_eq!(stats(e, "preallocated temp fragmentation"), b(mib(24.75)));
    assert_eq!(stats(e, "total allocation"), b(gib(192.84)));
    assert_eq!(stats(e, "total fragmentation"), b(gib(9.71)));
    assert_eq!(item(e, "BufferAssignment stats", "total fragmentation").note.as_deref(), Some("5.03%"));
    assert_eq!(e.allocations.len(), 3);
    let first = &e.allocations[0];
    assert_eq!(first.size_bytes, Some(gib(38.10)));
    assert_eq!(first.xla_label.as_deref(), Some("fusion"));
    assert_eq!(first.shape.as_deref(), Some("f32[39955041,256]"));
    assert_eq!(first.instruction.as_deref(), Some("fusion.664"));
    let op = first.op_name.as_deref().unwrap();
    assert_eq!(op.split(';').count(), 8, "{op}");
    assert!(op.contains("/extra_msa_stack/triangle_multiplication_outgoing/div;jit(apply_fn)/jit(main)/alphafold/"));
    assert!(op.ends_with("/evoformer_iteration/triangle_multiplication_incoming/div"), "{op}");
    assert_eq!(
        (e.allocations[1].size_bytes, e.allocations[1].shape.as_deref()),
        (Some(gib(38.10)), Some("f32[256,6321,6321]"))
    );
    assert_eq!(e.allocations[1].source.as_deref(), Some("/opt/miniconda3/bin/colabfold_batch:8"));
    let third = &e.allocations[2];
    assert_eq!((third.size_bytes, third.xla_label.as_deref()), (Some(gib(19.05)), Some("custom-call")));
    assert_eq!(third.shape.as_deref(), Some("bf16[39955048,256]"));
    assert!(third.op_name.as_deref().unwrap().ends_with(
        "/dot_general[dimension_numbers=(((2,), (0,)), ((), ())) precision=None preferred_element_type=bfloat16]"
    ));
}

#[test]
fn c07_bfc_warning_then_complete_buffer_assignment() {
    let events = events("C-07.txt");
    assert_eq!(events.len(), 2);
    let bfc = &events[0];
    assert_eq!(bfc.kind, Kind::BfcAllocatorOom);
    assert_eq!(bfc.allocator.as_deref(), Some("GPU_0_bfc"));
    assert_eq!(bfc.requested_bytes, Some(gib(1.97)));
    assert_eq!(figure(bfc, "Request", "rounded to"), Some(2_110_783_744));
    assert_eq!(bfc.op.as_deref(), Some(""), "requested by op with an empty name");
    let e = &events[1];
    assert_eq!(e.kind, Kind::BufferAssignmentOom);
    assert_eq!(e.requested_bytes, Some(2_110_783_616));
    assert_eq!(stats(e, "parameter allocation"), b(gib(1.02)));
    assert_eq!(stats(e, "constant allocation"), Some(0));
    assert_eq!(stats(e, "maybe_live_out allocation"), b(gib(4.89)));
    assert_eq!(stats(e, "preallocated temp allocation"), b(gib(1.97)));
    assert_eq!(stats(e, "preallocated temp fragmentation"), Some(0));
    assert_eq!(stats(e, "total allocation"), b(gib(7.88)));
    assert_eq!(stats(e, "total fragmentation"), Some(112));
    assert_eq!(e.allocations.len(), 6);
    let first = &e.allocations[0];
    assert_eq!(first.size_bytes, Some(gib(4.89)));
    assert!(first.op_name.as_deref().unwrap().starts_with("jit(dot)/jit(main)/dot_general[dimension_numbers="));
    assert!(first.source.as_deref().unwrap().ends_with("/gemma.py:175"));
    assert_eq!(first.xla_label.as_deref(), Some("custom-call"));
    assert_eq!(first.shape.as_deref(), Some("f32[5104,257152]"));
    let third = &e.allocations[2];
    assert_eq!(third.size_bytes, Some(mib(1004.50)));
    assert_eq!(third.shape.as_deref(), Some("f16[2048,257152]"));
    assert_eq!(third.allocation_type.as_deref(), Some("entry parameter"));
    assert_eq!(e.allocations[5].size_bytes, Some(16));
    assert_eq!(e.allocations[5].shape.as_deref(), Some("(f32[5104,257152], s8[4194304])"));
}

#[test]
fn d01_modern_bfc_header_and_first_bin() {
    let e = only("D-01.txt");
    assert_eq!(e.kind, Kind::BfcAllocatorOom);
    assert_eq!(e.allocator.as_deref(), Some("GPU_0_bfc"));
    assert_eq!(e.requested_bytes, Some(mib(18.0)));
    assert_eq!(figure(&e, "Request", "rounded to"), Some(18_874_368));
    assert_eq!(e.op.as_deref(), Some("Mul"));
    assert_eq!(e.bins.len(), 1);
    let bin = &e.bins[0];
    assert_eq!((bin.bin_bytes, bin.total_chunks, bin.chunks_in_use), (256, 64, 64));
    assert_eq!(bin.allocated_bytes, Some(kib(16.0)));
    assert_eq!(bin.in_use_bytes, Some(kib(16.0)));
    assert_eq!(bin.requested_in_use_bytes, Some(kib(14.0)));
    assert!(!has_section(&e, "Stats"));
    assert!(e.truncated);
    assert!(e.advice.iter().any(|a| a.contains("TF_GPU_ALLOCATOR=cuda_malloc_async")));
}

/// D-01, D-02, D-03 and D-07 are excerpts that end inside the allocator's report: no error follows, so the
/// incident says the excerpt does not tell whether the job failed, and keeps the allocator's own advice.
#[test]
fn an_excerpt_cut_inside_the_allocators_report_does_not_say_the_job_failed() {
    for (folder, name) in
        [("oom-logs", "D-01.txt"), ("oom-logs", "D-02.txt"), ("oom-logs", "D-03.txt"), ("oom-logs-2", "D-07.txt")]
    {
        let report = scan(folder, name);
        let incident = &report.incidents[0];
        assert_eq!(incident.cause, Some(Cause::NoErrorFollowed), "{name}: {}", incident.title);
        assert!(
            incident.title.ends_with(
                "and the log holds only part of its report, with no error after it: whether the job failed is not in this log"
            ),
            "{name}: {}",
            incident.title
        );
        assert!(incident.advice[1..] == report.events[0].advice[..], "{name}: {:?}", incident.advice);
    }
    // D-14 ends with TensorFlow's own error: a failure.
    let report = scan("oom-logs", "D-14.txt");
    assert!(report.incidents[0].is_failure());
}

#[test]
fn d02_pinned_host_allocator_old_bin_format() {
    let e = only("D-02.txt");
    assert_eq!(e.allocator.as_deref(), Some("cuda_host_bfc"));
    assert_eq!(e.requested_bytes, Some(gib(3.72)));
    assert!(!has_section(&e, "Request"), "no rounded size in this version");
    assert_eq!(e.op, None);
    assert_eq!(e.bins.iter().map(|b| (b.bin_bytes, b.total_chunks)).collect::<Vec<_>>(), [(256, 0), (512, 0)]);
    assert!(e.truncated);
    assert!(e.advice.iter().any(|a| a.contains("pinned host memory")));
}

#[test]
fn d03_dump_tail_without_header() {
    let e = only("D-03.txt");
    assert_eq!(e.kind, Kind::BfcAllocatorOom);
    let largest = &e.allocations[0];
    assert_eq!((largest.count, largest.size_bytes), (2, Some(3_576_881_152)));
    assert_eq!(figure(&e, "Chunks", "in use (sum)"), b(gib(7.09)));
    assert_eq!(figure(&e, "Stats", "Limit"), Some(10_925_244_416));
    assert_eq!(figure(&e, "Stats", "InUse"), Some(7_613_320_960));
    assert_eq!(figure(&e, "Stats", "MaxInUse"), Some(7_613_320_960));
    assert_eq!((e.capacity_bytes, e.used_bytes), (Some(10_925_244_416), Some(7_613_320_960)));
    let stats = e.breakdown.iter().find(|s| s.name == "Stats").unwrap();
    assert!(!stats.items.iter().any(|i| i.name == "NumAllocs" || i.name == "MaxAllocSize"));
    assert!(e.truncated, "the Stats block is cut after MaxInUse");
}

#[test]
fn d05_empty_op_name_and_a_duplicated_error_line() {
    let events = events("D-05.txt");
    assert_eq!(events.len(), 2);
    let bfc = &events[0];
    assert_eq!(bfc.allocator.as_deref(), Some("GPU_0_bfc"));
    assert_eq!(bfc.requested_bytes, Some(mib(6.0)));
    assert_eq!(figure(bfc, "Request", "rounded to"), Some(6_291_456));
    assert_eq!(bfc.op.as_deref(), Some(""));
    let xla = &events[1];
    assert_eq!(xla.kind, Kind::BufferAssignmentOom);
    assert_eq!(xla.requested_bytes, Some(6_291_456));
    assert_eq!(xla.occurrences, 2, "the same line printed twice is one error");
    assert_eq!(stats(xla, "parameter allocation"), b(mib(6.0)));
    assert_eq!(stats(xla, "constant allocation"), Some(0));
    assert!(xla.truncated);
}

#[test]
fn d06_cuda_driver_failure_then_bfc() {
    let events = events("D-06.txt");
    assert_eq!(events.len(), 2);
    let driver = &events[0];
    assert_eq!(driver.kind, Kind::RuntimeAllocationFailure);
    assert_eq!(driver.requested_bytes, Some(9_029_127_168), "the exact count wins over 8.41G");
    assert!(driver.summary.contains("CUDA_ERROR_OUT_OF_MEMORY"));
    let bfc = &events[1];
    assert_eq!(bfc.allocator.as_deref(), Some("GPU_0_bfc"));
    assert_eq!(bfc.requested_bytes, Some(mib(560.44)));
    assert_eq!(figure(bfc, "Request", "rounded to"), Some(587_661_312));
    assert_eq!(bfc.op.as_deref(), Some("_EagerConst"));
    assert!(bfc.truncated);
}

#[test]
fn d08_non_fatal_freed_by_count() {
    let e = only("D-08.txt");
    assert_eq!(e.allocator.as_deref(), Some("GPU_0_bfc"));
    assert_eq!(e.requested_bytes, Some(gib(4.64)));
    assert_eq!(item(&e, "Request", "freed_by_count").count, Some(0));
    assert!(e.non_fatal);
    assert!(e.advice[0].contains("not a failure"));
}

#[test]
fn d09_runtime_one_liner() {
    let e = only("D-09.txt");
    assert_eq!(e.kind, Kind::RuntimeAllocationFailure);
    assert_eq!(e.requested_bytes, Some(50_331_648));
    assert!(e.breakdown.is_empty());
    assert!(!e.truncated);
}

#[test]
fn d11_two_non_fatal_warnings_then_bins() {
    let events = events("D-11.txt");
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.non_fatal && e.allocator.is_none()));
    assert_eq!(events[0].requested_bytes, Some(gib(1.09)));
    assert_eq!(events[1].requested_bytes, Some(mib(589.50)));
    let bins = &events[1].bins;
    assert_eq!(bins.len(), 4);
    assert_eq!((bins[0].bin_bytes, bins[0].total_chunks, bins[0].chunks_in_use), (256, 2, 0));
    assert_eq!((bins[0].allocated_bytes, bins[0].requested_bytes), (Some(512), Some(16)));
    assert!(bins[1..].iter().all(|b| b.total_chunks == 0));
    assert_eq!(bins.iter().map(|b| b.bin_bytes).collect::<Vec<_>>(), [256, 512, 1024, 2048]);
}

#[test]
fn d12_cpu_failed_to_allocate_request() {
    let e = only("D-12.txt");
    assert_eq!(e.kind, Kind::RuntimeAllocationFailure);
    assert_eq!(e.requested_bytes, Some(60_096_009_848));
    assert_eq!(e.memory_space.as_deref(), Some("device ordinal 0"));
}

#[test]
fn d14_complete_classic_bfc_dump() {
    let e = only("D-14.txt");
    assert_eq!(e.allocator.as_deref(), Some("GPU_0_bfc"));
    assert_eq!(e.requested_bytes, Some(mib(74.16)));
    assert_eq!(e.op, None);
    assert_eq!(figure(&e, "Chunk state", "bin"), b(mib(64.0)));
    assert_eq!(figure(&e, "Chunk state", "chunk"), b(mib(66.42)));
    assert_eq!(item(&e, "Chunk state", "chunk").note.as_deref(), Some("free"));
    assert_eq!(e.bins.len(), 21);
    let bin = e.bins.iter().find(|b| b.bin_bytes == 67_108_864).unwrap();
    assert_eq!((bin.total_chunks, bin.chunks_in_use), (3, 2));
    assert_eq!(bin.allocated_bytes, Some(mib(255.74)));
    assert_eq!(bin.in_use_bytes, Some(mib(189.32)));
    assert_eq!(bin.requested_in_use_bytes, Some(mib(171.50)));
    assert_eq!(item(&e, "Chunks", "chunks in use (listed)").count, Some(20));
    assert_eq!(item(&e, "Chunks", "free chunks (listed)").count, Some(4));
    assert_eq!(e.allocations[0].size_bytes, Some(121_448_704));
    assert_eq!(figure(&e, "Chunks", "in use (sum)"), b(mib(198.75)));
    assert_eq!(figure(&e, "Stats", "Limit"), Some(285_474_816));
    assert_eq!(figure(&e, "Stats", "InUse"), Some(208_404_480));
    assert_eq!(figure(&e, "Stats", "MaxInUse"), Some(208_404_480));
    assert_eq!(item(&e, "Stats", "NumAllocs").count, Some(26));
    assert_eq!(figure(&e, "Stats", "MaxAllocSize"), Some(121_448_704));
    assert_eq!(e.shape.as_deref(), Some("[128,225,225,3]"));
    assert!(!e.truncated, "the dump ends with the occupancy map and TensorFlow's message");
}

#[test]
fn e01_sparsecore_allocation_in_tilespmem() {
    let e = only("E-01.txt");
    assert_eq!(e.kind, Kind::SparsecoreAllocation);
    assert_eq!(e.error_code.as_deref(), Some("E3000"));
    assert_eq!(e.op.as_deref(), Some("result.1:279:1"));
    assert_eq!(e.memory_space.as_deref(), Some("tilespmem"));
    let section = "SparseCore allocation (4-byte words)";
    assert_eq!(item(&e, section, "memory space").count, Some(201));
    assert_eq!(item(&e, section, "current allocation offset upper bound").count, Some(140_704));
    assert_eq!(item(&e, section, "user allocatable offset upper bound").count, Some(131_071));
    assert_eq!(item(&e, section, "allocating").count, Some(23_440));
    assert_eq!(
        (e.used_bytes, e.capacity_bytes, e.requested_bytes),
        (Some(140_704 * 4), Some(131_071 * 4), Some(23_440 * 4))
    );
    assert_eq!(e.exceeded_by_bytes, Some((140_704 - 131_071) * 4));
    assert_eq!(e.shape.as_deref(), Some("memref<23440xf32, 201>"));
    assert!(e.advice.iter().any(|a| a.contains("--xla_sc_dump_mlir_to")));
}

fn triton(name: &str, exception: &str, required: u64, limit: u64) -> OomEvent {
    let e = only(name);
    assert_eq!(e.kind, Kind::TritonOutOfResources);
    assert_eq!(e.exception.as_deref(), Some(exception));
    assert_eq!(e.memory_space.as_deref(), Some("shared memory"));
    // Triton's `Required` is what the kernel requests; `Hardware limit` is the capacity.
    assert_eq!((e.requested_bytes, e.capacity_bytes), (Some(required), Some(limit)));
    assert_eq!(e.used_bytes, None);
    assert_eq!(e.exceeded_by_bytes, Some(required - limit));
    assert!(e.advice.iter().any(|a| a.contains("num_stages")));
    e
}

#[test]
fn f01_legacy_module_and_fields_run_together() {
    triton("F-01.txt", "triton.code_gen.OutOfResources", 110_592, 101_376);
}

#[test]
fn f03_autotuner_module() {
    triton("F-03.txt", "triton.runtime.autotuner.OutOfResources", 663_808, 101_376);
}

#[test]
fn f04_amd_lds_limit_at_the_end_of_a_traceback() {
    let e = triton("F-04.txt", "triton.runtime.errors.OutOfResources", 131_072, 65_536);
    assert_eq!(e.line, 4);
}

#[test]
fn f06_pascal_limit() {
    triton("F-06.txt", "triton.runtime.errors.OutOfResources", 98_304, 49_152);
}

#[test]
fn f07_app_prefixes_and_a_collapsed_repeat() {
    let e = triton("F-07.txt", "triton.runtime.errors.OutOfResources", 98_304, 65_536);
    assert_eq!(e.occurrences, 6, "one line, then the same message marked (×5)");
}

#[test]
fn f08_hint_without_backticks() {
    triton("F-08.txt", "triton.runtime.errors.OutOfResources", 589_824, 101_376);
}

fn pytorch(name: &str, exception: Option<&str>, requested: u64, capacity: u64, free: u64) -> OomEvent {
    let e = only(name);
    assert_eq!(e.kind, Kind::PytorchCudaOom);
    assert_eq!(e.exception.as_deref(), exception);
    assert_eq!(e.memory_space.as_deref(), Some("GPU 0"));
    assert_eq!((e.requested_bytes, e.capacity_bytes, e.free_bytes), (Some(requested), Some(capacity), Some(free)));
    assert!(e.advice.iter().any(|a| a.contains("expandable_segments:True") && a.contains("max_split_size_mb")));
    e
}

#[test]
fn g01_current_wording() {
    let e = pytorch("G-01.txt", Some("torch.cuda.OutOfMemoryError"), mib(22.0), gib(23.65), mib(11.06));
    assert_eq!(e.used_bytes, Some(gib(23.60)));
    assert_eq!(figure(&e, "PyTorch", "allocated by PyTorch"), b(gib(22.90)));
    assert_eq!(figure(&e, "PyTorch", "reserved by PyTorch but unallocated"), b(mib(194.87)));
}

#[test]
fn g02_legacy_parenthesised_format() {
    let e = pytorch("G-02.txt", None, gib(2.26), gib(6.00), gib(3.03));
    assert_eq!(figure(&e, "PyTorch", "already allocated"), b(mib(781.59)));
    assert_eq!(figure(&e, "PyTorch", "reserved in total by PyTorch"), b(gib(1.24)));
    assert_eq!(e.used_bytes, Some(mib(781.59)), "what is already allocated is in use");
}

#[test]
fn g04_capacty_typo_and_kib_units() {
    let e = pytorch("G-04.txt", Some("torch.cuda.OutOfMemoryError"), gib(3.50), gib(23.69), gib(3.09));
    assert_eq!(e.used_bytes, Some(gib(20.57)));
    assert_eq!(figure(&e, "PyTorch", "allocated by PyTorch"), b(gib(20.13)));
    assert_eq!(figure(&e, "PyTorch", "reserved by PyTorch but unallocated"), b(kib(755.50)));
}

#[test]
fn g05_pytorch_2_0_wording() {
    let e = pytorch("G-05.txt", Some("torch.cuda.OutOfMemoryError"), gib(1.63), gib(44.56), mib(565.31));
    assert_eq!(figure(&e, "PyTorch", "already allocated"), b(gib(27.91)));
    assert_eq!(figure(&e, "PyTorch", "reserved in total by PyTorch"), b(gib(27.93)));
}

#[test]
fn g06_newest_exception_class() {
    let e = pytorch("G-06.txt", Some("torch.OutOfMemoryError"), gib(22.78), gib(31.47), gib(12.73));
    assert_eq!(e.used_bytes, Some(gib(18.73)));
    assert_eq!(figure(&e, "PyTorch", "allocated by PyTorch"), b(gib(9.08)));
    assert_eq!(figure(&e, "PyTorch", "reserved by PyTorch but unallocated"), b(gib(9.35)));
    assert!(e.advice.iter().any(|a| a.contains("over half of the GPU")), "{:#?}", e.advice);
}

#[test]
fn g08_cached_wording() {
    let e = pytorch("G-08.txt", Some("RuntimeError"), kib(1024.0), gib(11.17), kib(576.0));
    assert_eq!(figure(&e, "PyTorch", "already allocated"), b(gib(10.90)));
    assert_eq!(figure(&e, "PyTorch", "cached"), b(mib(30.96)));
}

#[test]
fn h01_reservation_failure_with_hbm_breakdown() {
    let e = only("H-01.txt");
    assert_eq!(e.kind, Kind::RuntimeAllocationFailure);
    assert_eq!(e.error_code.as_deref(), Some("E0101"));
    assert_eq!(e.requested_bytes, Some(gib(3.95)));
    assert_eq!(e.free_bytes, Some(gib(1.92)));
    assert_eq!(figure(&e, "Program reservation", "reserved"), Some(0));
    assert_eq!(figure(&e, "Program reservation", "reservable"), b(gib(1.92)));
    assert_eq!(e.capacity_bytes, Some(gib(8.00)));
    assert_eq!(e.memory_space.as_deref(), Some("hbm"));
    assert_eq!(figure(&e, "HBM capacity", "Top-of-Memory reserved"), Some(554_696_704));
    assert_eq!(figure(&e, "HBM capacity", "Currently allocated"), Some(6_532_939_776));
    assert_eq!(figure(&e, "HBM capacity", "Program requirement"), Some(4_237_689_856));
    assert_eq!(figure(&e, "HBM capacity", "Available after request"), Some(-2_735_391_744));
    assert_eq!(section_bytes(&e, "Total hbm usage"), b(gib(10.94)));
    assert_eq!(figure(&e, "Total hbm usage", "reserved(Infeed/Outfeed/Continuations)"), b(mib(529.0)));
    assert_eq!(figure(&e, "Total hbm usage", "heap allocations (without fragmentation)"), b(gib(6.08)));
    assert_eq!(figure(&e, "Total hbm usage", "program"), b(gib(4.34)));
    assert_eq!(figure(&e, "Heap allocator status", "Max free chunk"), b(gib(1.92)));
    assert_eq!(item(&e, "Heap allocator status", "Max free chunk").note.as_deref(), Some("0.0% fragmentation"));
    assert_eq!(figure(&e, "Persistent allocations", "arguments"), b(mib(478.07)));
    assert_eq!(item(&e, "Persistent allocations", "arguments").note.as_deref(), Some("89.4% utilization"));
    assert_eq!(figure(&e, "Persistent allocations", "output"), b(gib(5.06)));
    assert_eq!(section_bytes(&e, "Program hbm requirement"), b(gib(4.34)));
    assert_eq!(figure(&e, "Program hbm requirement", "reserved"), b(kib(4.0)));
    assert_eq!(figure(&e, "Program hbm requirement", "global"), b(kib(4.0)));
    assert_eq!(figure(&e, "Program hbm requirement", "scoped"), b(mib(17.43)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp"), b(gib(3.93)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp unpadded"), b(gib(3.81)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp padded"), b(gib(3.92)));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp fragmentation"), b(mib(14.68)));
    assert!(e.truncated, "the overlays line and the allocation list follow in the issue");
}

#[test]
fn h03_fragmentation_and_the_same_error_in_recent_logs() {
    let e = only("H-03.txt");
    assert_eq!(e.error_code.as_deref(), Some("E0101"));
    assert_eq!(e.requested_bytes, Some(gib(6.48)));
    assert_eq!(e.free_bytes, Some(gib(6.78)));
    assert_eq!(figure(&e, "Program reservation", "reserved"), Some(0));
    assert_eq!(figure(&e, "Program reservation", "reservable"), b(gib(3.33)));
    assert_eq!(e.occurrences, 2);
    assert!(!e.truncated);
    assert!(e.advice[0].contains("fragmentation, not capacity"), "{:#?}", e.advice);
}

#[test]
fn h05_pod_prefix_and_hbm1_of_core_3() {
    let e = only("H-05.txt");
    assert_eq!(e.error_code.as_deref(), Some("E0100"));
    assert_eq!(e.requested_bytes, Some(mib(180.59)));
    assert_eq!(e.free_bytes, Some(mib(142.58)));
    assert_eq!(e.memory_space.as_deref(), Some("hbm"));
    assert_eq!(item(&e, "Device buffer", "location").note.as_deref(), Some("0x3x0_HBM1"));
}

#[test]
fn h06_device_buffer_commented_out_with_hash() {
    let e = only("H-06.txt");
    assert_eq!(e.error_code.as_deref(), Some("E0100"));
    assert_eq!(e.requested_bytes, Some(gib(4.39)));
    assert_eq!(e.free_bytes, Some(gib(2.30)));
    assert_eq!(item(&e, "Device buffer", "location").note.as_deref(), Some("0x0x0_HBM0"));
    assert!(e.advice.iter().any(|a| a.contains("tpu_log_allocations_on_oom")));
}

#[test]
fn h08_allocation_descriptor() {
    let e = only("H-08.txt");
    assert_eq!(e.kind, Kind::RuntimeAllocationFailure);
    assert_eq!(e.requested_bytes, Some(107_374_182_400));
    assert_eq!(e.capacity_bytes, Some(17_179_869_184));
    assert_eq!(e.memory_space.as_deref(), Some("hbm"));
    assert_eq!(e.op.as_deref(), Some("<no-hlo-instruction>"));
    assert_eq!(item(&e, "Allocation", "size field").note.as_deref(), Some("0xffffffffffffffff"));
    let a = &e.allocations[0];
    assert_eq!(a.instruction.as_deref(), Some("#allocation7"));
    assert_eq!(a.shape.as_deref(), Some("u8[327680,327680]{1,0:T(8,128)(4,1)}"));
    assert_eq!(a.xla_label.as_deref(), Some("output of xor_convert_fusion@{}"));
}

#[test]
fn h09_tensorcore_and_sparsecore_hbm_budget() {
    let e = only("H-09.txt");
    assert_eq!(e.kind, Kind::CompileTimeOom);
    assert_eq!(e.error_code.as_deref(), Some("E1000"));
    assert_eq!(figure(&e, "HBM usage", "TensorCore"), b(gib(34.82)));
    assert_eq!(figure(&e, "HBM usage", "SparseCore"), b(gib(174.10)));
    assert_eq!(e.capacity_bytes, Some(gib(95.74)));
    assert_eq!(e.used_bytes, None, "the message gives the two parts, not their sum");
    assert!(e.advice[0].contains("--xla_sc_num_serialized_tables_to_optimize_hbm"));
}

#[test]
fn slurm_oom_kill_is_a_host_oom() {
    let report = scan("oom-logs-extra", "slurm-cgroup-oom.txt");
    let shown: Vec<(u64, &str)> = report.events.iter().map(|e| (e.line, e.message.as_str())).collect();
    assert_eq!(
        shown,
        [
            (1, "srun: error: tiger-i23g11: task 0: Out Of Memory"),
            (3, "slurmstepd: error: Detected 1 oom-kill event(s) in step 3955284.0 cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler."),
        ]
    );
    assert!(report.events.iter().all(|e| e.kind == Kind::HostOom && e.memory_space.as_deref() == Some("host")));
    assert_eq!(report.events[1].op.as_deref(), Some("3955284.0"));
    assert_eq!(report.incidents.len(), 1, "Slurm's two lines are one failure");
    assert!(report.events[0].advice.iter().any(|a| a.contains("--mem")));
}

#[test]
fn every_log_of_the_corpus_is_explained() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs");
    let mut logs = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "txt") {
            logs += 1;
            let report = xmem::oom::scan("log", &std::fs::read(&path).unwrap()[..]).unwrap();
            assert!(!report.events.is_empty(), "{}", path.display());
            for event in &report.events {
                assert_ne!(event.kind, Kind::Unrecognised, "{}: {}", path.display(), event.message);
                assert!(!event.advice.is_empty(), "{}", path.display());
            }
        }
    }
    assert_eq!(logs, 48);
}

/// A real log made messy the ways logs get messy: every line behind a Ray
/// actor prefix, colour codes whose escape byte a copy lost, a terminal
/// hard wrap every 80 characters, and the whole message printed twice.
#[test]
fn messy_copy_of_a_real_log_gives_the_same_facts() {
    let clean =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs/G-01.txt")).unwrap();
    let line = format!("[31m{}[0m", clean.trim_end());
    let wrapped: Vec<String> = line.chars().collect::<Vec<_>>().chunks(80).map(|c| c.iter().collect()).collect();
    let mut messy = String::new();
    for _ in 0..2 {
        messy.push_str(&format!("(RayWorker pid=4242) {}\n", wrapped[0]));
        for rest in &wrapped[1..] {
            messy.push_str(rest);
            messy.push('\n');
        }
    }
    let report = xmem::oom::scan("messy", messy.as_bytes()).unwrap();
    assert_eq!(report.events.len(), 1, "{:#?}", report.events);
    let e = &report.events[0];
    assert_eq!(e.occurrences, 2);
    assert_eq!(
        (e.requested_bytes, e.capacity_bytes, e.free_bytes),
        (Some(mib(22.0)), Some(gib(23.65)), Some(mib(11.06)))
    );
    assert_eq!(e.used_bytes, Some(gib(23.60)));
    assert_eq!(figure(e, "PyTorch", "reserved by PyTorch but unallocated"), b(mib(194.87)));
}

/// A real TPU report with its indentation turned into tabs and its blank lines lost.
#[test]
fn tabs_and_lost_blank_lines_do_not_matter() {
    let clean =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs/A-09.txt")).unwrap();
    let messy: String = clean
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| format!("{}\n", line.replacen("    ", "\t", 1)))
        .collect();
    let e = xmem::oom::scan("messy", messy.as_bytes()).unwrap().events.remove(0);
    header(&e, "hbm", gib(17.60), gib(16.00), gib(1.60));
    assert_eq!(figure(&e, "Program hbm requirement", "HLO temp"), b(gib(17.08)));
    assert_eq!(e.allocations.len(), 20);
    assert_eq!(e.allocations[0].instruction.as_deref(), Some("%fusion.1668"));
    assert!(!e.truncated);
}

/// A complete report cut at any line, from the first line of its breakdown
/// to its last allocation, is marked truncated; whole, it is not.
#[test]
fn a_report_cut_anywhere_is_truncated() {
    let log =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs/A-09.txt")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let breakdown = lines.iter().position(|l| l.starts_with("Total hbm usage")).unwrap();
    // The report ends with two blank lines before "TPU compilation failed".
    let end = lines.iter().position(|l| l.trim() == "TPU compilation failed").unwrap() - 2;
    for keep in breakdown + 1..end {
        let cut = lines[..keep].join("\n") + "\n";
        let event = xmem::oom::scan("cut", cut.as_bytes()).unwrap().events.remove(0);
        assert!(event.truncated, "cut after line {keep}: {}", lines[keep - 1]);
    }
    assert!(!xmem::oom::scan("whole", log.as_bytes()).unwrap().events[0].truncated);
}

/// Logs cut at arbitrary bytes (mid-line, mid-character) still give events
/// with a verdict and advice.
#[test]
fn logs_cut_mid_line_still_explain_what_is_there() {
    for name in ["A-09.txt", "C-05.txt", "D-14.txt", "H-01.txt", "G-01.txt"] {
        let log = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs").join(name)).unwrap();
        for cut in (1..log.len()).step_by(53) {
            for event in xmem::oom::scan(name, &log[..cut]).unwrap().events {
                assert!(!event.summary.is_empty() && !event.advice.is_empty(), "{name} cut at {cut}");
            }
        }
    }
}

fn extra(name: &str) -> OomReport {
    scan("oom-logs-extra", name)
}

fn text_of(dir: &str, name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(dir).join(name)).unwrap()
}

/// Every fact of `fixtures/oom-logs-2/expected.json` (22 real logs from
/// public issue threads, with the facts each states), checked as
/// `oom-facts-check.py` checks them: expected events match, in order, a
/// subsequence of the events, by kind and every stated fact.
#[test]
fn every_fact_of_the_second_corpus_holds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs-2");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut logs = 0;
    for (name, wanted) in expected.as_object().unwrap().iter().filter(|(name, _)| !name.starts_with('_')) {
        logs += 1;
        let report = scan("oom-logs-2", name);
        let emitted = serde_json::to_value(&report.events).unwrap();
        let emitted = emitted.as_array().unwrap();
        let mut from = 0;
        for want in wanted.as_array().unwrap() {
            let at = (from..emitted.len()).find(|&at| common::oom_event_holds(&emitted[at], want));
            let at = at.unwrap_or_else(|| panic!("{name}: no event from {from} on holds {want}: {emitted:#?}"));
            from = at + 1;
        }
    }
    assert_eq!(logs, 22);
}

// Logs as they travel: every prefix style, from real logs.

#[test]
fn editor_line_numbers_before_every_line() {
    // F-02: the user pasted lines 85 to 93 of their editor.
    let e = scan("oom-logs-2", "F-02.txt").events.remove(0);
    assert_eq!(e.exception.as_deref(), Some("triton.runtime.autotuner.OutOfResources"));
    assert_eq!((e.requested_bytes, e.capacity_bytes, e.exceeded_by_bytes), (Some(131_072), Some(98_304), Some(32_768)));
    assert_eq!(e.line, 9);
}

#[test]
fn ray_worker_prefix_with_colour_codes_that_lost_their_escape_byte() {
    // C-06: `71[2m[36m(MeshHostWorker pid=489)[0m BufferAssignment stats:`, an excerpt from the stats on.
    let report = scan("oom-logs-2", "C-06.txt");
    assert_eq!(report.events.len(), 1, "{:#?}", report.events);
    let e = &report.events[0];
    assert_eq!(e.kind, Kind::BufferAssignmentOom);
    assert_eq!(figure(e, "BufferAssignment stats", "parameter allocation"), b(gib(7.78)));
    assert_eq!(figure(e, "BufferAssignment stats", "total allocation"), b(gib(11.90)));
    assert_eq!(e.requested_bytes, None, "the excerpt has no request line");
    let buffer = &e.allocations[0];
    assert_eq!(buffer.size_bytes, Some(gib(3.83)));
    assert_eq!(buffer.shape.as_deref(), Some("f32[250880,4096]"));
    assert!(buffer
        .source
        .as_deref()
        .is_some_and(|s| s.starts_with("/home/ray/anaconda3/lib/python3.8/site-packages/flax/linen/d")));
}

#[test]
fn glog_and_torch_compile_prefixes() {
    // F-09: `E0912 11:54:57.366000 1121181 torch/_inductor/select_algorithm.py:2100] [7/0] No valid triton configs. …`
    let report = scan("oom-logs-2", "F-09.txt");
    let found: Vec<(Option<u64>, bool)> = report.events.iter().map(|e| (e.requested_bytes, e.non_fatal)).collect();
    assert_eq!(found, [(Some(131_072), true), (Some(147_456), true)]);
    for e in &report.events {
        assert_eq!(e.advice.len(), 1, "a choice the autotuner drops gets no remedies: {:?}", e.advice);
        assert!(e.advice[0].contains("not a failure"));
    }
}

#[test]
fn vllm_and_python_logging_prefixes() {
    // G-03: `ERROR 03-13 09:00:43 [core.py:330] torch.OutOfMemoryError: CUDA out of memory. …`
    let e = scan("oom-logs-2", "G-03.txt").events.remove(0);
    assert_eq!(e.exception.as_deref(), Some("torch.OutOfMemoryError"));
    assert_eq!(
        (e.requested_bytes, e.capacity_bytes, e.free_bytes),
        (Some(gib(1.16)), Some(gib(7.75)), Some(gib(1.17)))
    );
    assert_eq!(e.used_bytes, Some(gib(5.02)), "this process has 5.02 GiB in use");
    assert_eq!(e.framework, Some(xmem::oom::Framework::PyTorch));
    assert!(e.advice.iter().all(|a| !a.contains("XLA_PYTHON_CLIENT")), "{:?}", e.advice);
}

#[test]
fn elixir_logger_prefixes() {
    // C-04: `[error] …` and `[warning] …` before every line of an EXLA run.
    let report = scan("oom-logs-2", "C-04.txt");
    let e = report.events.iter().find(|e| e.kind == Kind::BufferAssignmentOom).unwrap();
    assert_eq!(e.requested_bytes, Some(117_964_800));
    assert_eq!(e.allocations[0].shape.as_deref(), Some("f32[29491200]"));
    assert_eq!(report.incidents.len(), 1, "the BFC warning and XLA's report are one failure");
}

#[test]
fn timestamps_of_docker_kubernetes_and_github_actions() {
    let message = text_of("oom-logs", "G-01.txt");
    let message = message.trim_end();
    for prefix in [
        "2024-03-14T09:21:07.123456789Z ",
        "2026-04-29T01:46:33.4647732Z ",
        "[pod/trainer-0/main] ",
        "2024-03-14 09:21:07,123 - trainer.py - train - ERROR - ",
        "> ",
    ] {
        let e = xmem::oom::scan("log", format!("{prefix}{message}\n").as_bytes()).unwrap().events.remove(0);
        assert_eq!((e.requested_bytes, e.capacity_bytes), (Some(mib(22.0)), Some(gib(23.65))), "{prefix}");
    }
}

#[test]
fn code_fences_and_shell_transcripts_around_a_message() {
    let e = extra("hip-rocm.txt").events.remove(0);
    assert_eq!(e.kind, Kind::PytorchCudaOom);
    assert!(e.summary.starts_with("PyTorch HIP OOM"), "{}", e.summary);
    assert_eq!(
        (e.requested_bytes, e.capacity_bytes, e.free_bytes),
        (Some(gib(16.0)), Some(gib(15.24)), Some(gib(15.09)))
    );
    assert!(e.advice[0].starts_with("Capacity, not fragmentation"), "{:?}", e.advice);
}

// Hard wraps.

#[test]
fn a_header_a_person_wrapped_at_a_word() {
    // B-07: `… Ran out of memory in` / `memory space vmem. Used 65.05M of 64.00M vmem. …`
    let e = scan("oom-logs-2", "B-07.txt").events.remove(0);
    header(&e, "vmem", mib(65.05), mib(64.0), mib(1.05));
    assert_eq!(e.line, 1);
}

#[test]
fn a_message_a_terminal_wrapped_after_a_space() {
    // D-10: `… Resource exhausted: Out ` / `of memory while trying to allocate 5520758552 bytes.`
    let report = scan("oom-logs-2", "D-10.txt");
    assert_eq!(report.events.len(), 1, "{:#?}", report.events);
    let e = &report.events[0];
    assert_eq!((e.kind, e.requested_bytes, e.line), (Kind::RuntimeAllocationFailure, Some(5_520_758_552), 1));
}

#[test]
fn a_pytorch_message_split_after_allocated() {
    let message = text_of("oom-logs", "G-02.txt");
    let message = message.trim_end();
    let at = message.find("allocated;").unwrap() + "allocated;".len();
    let split = format!("{}\n{}\n", &message[..at], message[at..].trim_start());
    let e = xmem::oom::scan("split", split.as_bytes()).unwrap().events.remove(0);
    let whole = only("G-02.txt");
    assert_eq!(
        (e.requested_bytes, e.capacity_bytes, e.free_bytes),
        (whole.requested_bytes, whole.capacity_bytes, whole.free_bytes)
    );
    assert!(e.free_bytes.is_some());
}

// Fragments.

#[test]
fn a_report_cut_inside_an_operator_keeps_what_is_there() {
    // the excerpt ends inside allocation 1's op_name.
    let e = scan("oom-logs-2", "A-12.txt").events.remove(0);
    let op = e.allocations[0].op_name.as_deref().unwrap();
    assert!(op.starts_with("jit(conv_general_dilated)/conv_general_dilated["), "{op}");
    assert!(e.truncated);
    assert_eq!(e.allocations[0].size_bytes, Some(gib(8.77)));
}

#[test]
fn talk_about_memory_is_not_an_event() {
    let talk = "I ran out of memory quickly with batch 64.\nThis issue occurs literally due to insufficient memory. Please use a smaller model.\nthe oom killer is not involved here\n";
    let report = xmem::oom::scan("talk", talk.as_bytes()).unwrap();
    assert!(report.events.is_empty(), "{:#?}", report.events);
    assert!(!report.found_errors());
}

// Wordings.

#[test]
fn mps_in_gib_and_in_gb() {
    let e = extra("mps-gib.txt").events.remove(0);
    assert_eq!(e.kind, Kind::PytorchCudaOom);
    assert_eq!(e.memory_space.as_deref(), Some("mps"));
    assert_eq!(
        (e.used_bytes, e.capacity_bytes, e.requested_bytes),
        (Some(gib(9.57)), Some(gib(27.20)), Some(mib(292.50)))
    );
    assert_eq!(figure(&e, "PyTorch", "other allocations"), b(gib(17.35)));
    let e = extra("mps-gb.txt").events.remove(0);
    assert_eq!(e.exception.as_deref(), Some("RuntimeError"));
    assert_eq!(
        (e.used_bytes, e.capacity_bytes, e.requested_bytes),
        (Some(gib(8.89)), Some(gib(9.07)), Some(mib(6.25)))
    );
    assert!(e.summary.starts_with("PyTorch MPS OOM"), "{}", e.summary);
}

#[test]
fn xpu_in_both_eras() {
    let e = extra("xpu-parenthesised.txt").events.remove(0);
    assert_eq!((e.requested_bytes, e.capacity_bytes, e.free_bytes), (Some(gib(1.71)), Some(gib(15.56)), None));
    assert_eq!(figure(&e, "PyTorch", "reserved in total by PyTorch"), b(mib(176.0)));
    // The same issue thread: IPEX refusing a block over 4 GB, with the same figures.
    let line = "RuntimeError: Current platform can NOT allocate memory block with size larger than 4GB! Tried to allocate 6.85 GiB (GPU  0; 15.56 GiB total capacity; 0 bytes already allocated; 0 bytes reserved in total by PyTorch)\n";
    let e = xmem::oom::scan("log", line.as_bytes()).unwrap().events.remove(0);
    assert_eq!(
        (e.kind, e.requested_bytes, e.capacity_bytes),
        (Kind::PytorchCudaOom, Some(gib(6.85)), Some(gib(15.56)))
    );
    let e = extra("xpu-sentences.txt").events.remove(0);
    assert_eq!(
        (e.requested_bytes, e.capacity_bytes, e.free_bytes),
        (Some(gib(4.66)), Some(gib(5.65)), Some(gib(5.65)))
    );
    assert!(e.summary.starts_with("PyTorch XPU OOM"), "{}", e.summary);
}

#[test]
fn thcudacheck_of_pytorch_before_1_0() {
    let e = extra("thcudacheck.txt").events.remove(0);
    assert_eq!(e.kind, Kind::PytorchCudaOom);
    assert_eq!(
        item(&e, "PyTorch", "raised at").note.as_deref(),
        Some("/opt/conda/conda-bld/pytorch_1513368888240/work/torch/lib/THC/generic/THCStorage.c:82")
    );
}

#[test]
fn cuda_driver_refusing_host_and_unified_memory() {
    let e = extra("cuda-host-alloc.txt").events.remove(0);
    assert_eq!((e.kind, e.requested_bytes), (Kind::RuntimeAllocationFailure, Some(34_359_738_368)));
    assert_eq!(e.memory_space.as_deref(), Some("host"));
    assert_eq!(item(&e, "Driver", "error").note.as_deref(), Some("CUDA_ERROR_OUT_OF_MEMORY: out of memory"));
    let report = extra("cuda-unified-alloc.txt");
    let requested: Vec<Option<u64>> = report.events.iter().map(|e| e.requested_bytes).collect();
    assert_eq!(requested, [Some(2_740_606_464), Some(2_466_545_664)]);
    assert_eq!(report.events[0].memory_space.as_deref(), Some("unified memory"));
}

#[test]
fn xla_runtime_and_compiler_wordings() {
    let log = concat!(
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 4194304 bytes.\n",
        "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
        "Aborting compilation early because it's unlikely to have enough memory. Requires 26.20G, has 15.48G available.\n",
        "Shared memory size limit exceeded: requested 262144, available: 232448\n",
    );
    let report = xmem::oom::scan("log", log.as_bytes()).unwrap();
    type Figures = (Kind, Option<u64>, Option<u64>, Option<u64>);
    let found: Vec<Figures> =
        report.events.iter().map(|e| (e.kind, e.used_bytes, e.requested_bytes, e.capacity_bytes)).collect();
    assert_eq!(
        found,
        [
            (Kind::RuntimeAllocationFailure, None, Some(4_194_304), None),
            (Kind::CompileTimeOom, Some(gib(26.20)), None, Some(gib(15.48))),
            (Kind::TritonOutOfResources, None, Some(262_144), Some(232_448)),
        ]
    );
    assert_eq!(report.events[0].exception.as_deref(), Some("jaxlib.xla_extension.XlaRuntimeError"));
    assert_eq!(report.incidents.len(), 2, "the first failure is over 50 lines before the next");
}

#[test]
fn bfc_exact_byte_count_wins_over_the_rounded_size() {
    let line = "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.46GiB (1567621120 bytes) (rounded to 1567621120)requested by op Conv2D\n";
    let e = xmem::oom::scan("log", line.as_bytes()).unwrap().events.remove(0);
    assert_eq!(e.requested_bytes, Some(1_567_621_120));
    // D-07 prints only the rounded size: the shown figure, not the rounded-up request.
    let e = scan("oom-logs-2", "D-07.txt").events.remove(0);
    assert_eq!(e.requested_bytes, Some(mib(34.10)));
    assert_eq!(e.framework, Some(xmem::oom::Framework::TensorFlow));
    assert!(e.advice.iter().all(|a| !a.contains("XLA_PYTHON_CLIENT")), "{:?}", e.advice);
    assert!(e.advice.iter().any(|a| a.contains("set_memory_growth")), "{:?}", e.advice);
}

#[test]
fn kernel_oom_killer_report_is_one_host_oom() {
    let report = extra("kernel-oom-killer.txt");
    assert_eq!(report.events.len(), 1, "{:#?}", report.events);
    let e = &report.events[0];
    assert_eq!((e.kind, e.op.as_deref()), (Kind::HostOom, Some("perl")));
    assert_eq!(e.used_bytes, Some(60_356_340 * 1024));
    assert_eq!(figure(e, "Killed process", "total-vm"), b(87_033_376 * 1024));
    assert_eq!(e.summary, "host out of memory: the kernel's OOM killer killed perl (57.56 GiB resident)");
    assert!(!e.truncated);
}

#[test]
fn kernel_kill_process_before_linux_4_19() {
    let report = extra("kernel-oom-kill-process.txt");
    let killed: Vec<Option<&str>> = report.events.iter().map(|e| e.op.as_deref()).collect();
    assert_eq!(killed, [Some("python"), Some("python")]);
    assert_eq!(report.incidents.len(), 1);
    assert_eq!(report.events[1].used_bytes, Some(0));
}

#[test]
fn kubernetes_oomkilled() {
    let report = extra("kubernetes-oomkilled.txt");
    assert_eq!(report.events.len(), 2);
    assert!(report.events.iter().all(|e| e.kind == Kind::HostOom));
    assert_eq!(report.incidents.len(), 1);
}

#[test]
fn python_memory_error_with_numpy_request() {
    let e = extra("numpy-array-memory-error.txt").events.remove(0);
    assert_eq!(e.kind, Kind::HostOom);
    assert_eq!(e.exception.as_deref(), Some("numpy.core._exceptions._ArrayMemoryError"));
    assert_eq!((e.requested_bytes, e.shape.as_deref()), (Some(gib(58.0)), Some("(176351, 176460)")));
    let e = extra("numpy-memory-error-trailing-dot.txt").events.remove(0);
    assert_eq!((e.requested_bytes, e.shape.as_deref()), (Some(gib(201.0)), Some("(2999, 2999, 2999)")));
}

// What the user sees.

#[test]
fn one_incident_per_failure() {
    // D-13: two driver failures, then the BFC allocator's non-fatal warning.
    let report = scan("oom-logs-2", "D-13.txt");
    let kinds: Vec<Kind> = report.events.iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&Kind::BfcAllocatorOom), "{kinds:?}");
    for incident in &report.incidents {
        let mut seen = Vec::new();
        for &at in &incident.events {
            let kind = report.events[at].kind;
            assert!(kind == Kind::Unrecognised || !seen.contains(&kind), "{incident:?}");
            seen.push(kind);
        }
        assert_eq!(incident.title, report.events[incident.primary].summary);
    }
    let grouped: usize = report.incidents.iter().map(|i| i.events.len()).sum();
    assert_eq!(grouped, report.events.len(), "every event is in one incident");
}

#[test]
fn many_sections_and_a_long_line_stay_bounded() {
    let mut log = String::from(
        "Ran out of memory in memory space hbm. Used 20.00G of 16.00G hbm. Exceeded hbm capacity by 4.00G.\n",
    );
    for i in 0..20_000 {
        log.push_str(&format!("Total hbm{i} usage >= 1.00G:\n    reserved        1.00M\n"));
    }
    let e = xmem::oom::scan("log", log.as_bytes()).unwrap().events.remove(0);
    assert_eq!(e.breakdown.len(), 10_000, "sections past the cap are not kept");
    let line =
        format!("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1024 bytes. {}\n", "x".repeat(1 << 20));
    let e = xmem::oom::scan("log", line.as_bytes()).unwrap().events.remove(0);
    assert_eq!(e.requested_bytes, Some(1024));
    assert!(e.message.chars().count() <= 601);
}

#[test]
fn one_line_wordings_of_pytorch_tensorflow_and_nccl() {
    let log = concat!(
        "RuntimeError: CUDA error: out of memory\n",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n",
    );
    let report = xmem::oom::scan("log", log.as_bytes()).unwrap();
    assert_eq!(report.events.len(), 1);
    assert_eq!(
        (report.events[0].kind, report.events[0].exception.as_deref()),
        (Kind::PytorchCudaOom, Some("RuntimeError"))
    );
    let line = "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 bytes.\n";
    let e = xmem::oom::scan("log", line.as_bytes()).unwrap().events.remove(0);
    assert_eq!((e.kind, e.requested_bytes), (Kind::HostOom, Some(1 << 30)));
    let line = "ResourceExhaustedError: failed to allocate memory [Op:AddV2]\n";
    let e = xmem::oom::scan("log", line.as_bytes()).unwrap().events.remove(0);
    assert_eq!((e.kind, e.op.as_deref()), (Kind::RuntimeAllocationFailure, Some("AddV2")));
    let line = "node-3:1234:1290 [0] NCCL WARN Cuda failure 'out of memory'\n";
    let e = xmem::oom::scan("log", line.as_bytes()).unwrap().events.remove(0);
    assert_eq!(e.kind, Kind::RuntimeAllocationFailure, "the device (Cuda) ran out, not the host node-3");
    assert_eq!(e.failure_words, ["out of memory"]);
}

#[test]
fn largest_contiguous_free_region_says_fragmentation() {
    // H-04: 58.64M free, but the largest contiguous region is 30.56M, below the 31.06M requested.
    let e = scan("oom-logs-2", "H-04.txt").events.remove(0);
    assert_eq!((e.requested_bytes, e.free_bytes), (Some(mib(31.06)), Some(mib(58.64))));
    assert_eq!(figure(&e, "Device buffer", "largest contiguous free"), b(mib(30.56)));
    assert_eq!(e.memory_space.as_deref(), Some("hbm"));
    assert!(e.advice[0].contains("only 30.56 MiB of it is usable in one piece"), "{:?}", e.advice);
}

#[test]
fn pytorch_allocation_beyond_the_allowed_memory() {
    // One figure per line, aligned, as PyTorch prints it…
    let report = extra("pytorch-allocation-on-device.txt");
    assert_eq!(report.events.len(), 1, "{:#?}", report.events);
    let e = &report.events[0];
    assert_eq!((e.kind, e.memory_space.as_deref()), (Kind::PytorchCudaOom, Some("GPU 0")));
    assert_eq!(e.exception.as_deref(), Some("torch.cuda.OutOfMemoryError"));
    assert_eq!(
        (e.used_bytes, e.requested_bytes, e.capacity_bytes, e.free_bytes),
        (Some(gib(6.89)), Some(mib(320.0)), Some(gib(23.69)), Some(mib(2.94)))
    );
    // … and run together on one line by a web UI.
    let e = extra("pytorch-allocation-on-device-one-line.txt").events.remove(0);
    assert_eq!((e.requested_bytes, e.capacity_bytes, e.free_bytes), (Some(gib(1.88)), Some(gib(16.0)), Some(0)));
}

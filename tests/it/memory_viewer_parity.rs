//! Parity with XProf 2.24.2's Memory Viewer: every module and memory space of
//! every oracle file (`oracle/memory_viewer*/<module>(<id>).memory_space_<c>.json`)
//! against xmem's analysis of the same profile, figure by figure.
//!
//! It runs over `fixtures/profiles/` always, and over the whole shared corpus
//! too when it is present (`../shared/corpus/profiles`, or `XMEM_CORPUS`).
//! The third-party profiles of `../shared/corpus/external` are compared with
//! XProf's output for them kept in `tests/oracle-external/` (only the figures
//! compared here; `tests/oracle-external/README.md` says how it was made).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use xmem::analysis::{self, MemorySpaceReport, ModuleReport, TraceStatus};
use xmem::ingest::{self, ReadOptions};

const MIB: f64 = (1u64 << 20) as f64;
const SMALL: i64 = 16 * 1024;

fn mib_to_bytes(value: Option<&Value>) -> f64 {
    value.and_then(Value::as_f64).unwrap_or(0.0) * MIB
}

fn category(group_name: &str) -> &'static str {
    match group_name {
        "Parameter" => "parameter",
        "Output" => "output",
        "Thread-local" => "thread-local",
        "Constant" => "constant",
        _ => "temporary",
    }
}

/// Compares one oracle file with xmem's memory space; returns the mismatches.
fn compare(oracle: &Value, space: &MemorySpaceReport) -> Vec<String> {
    let mut errors = Vec::new();
    let mut check_bytes = |label: &str, ours: i64, key: &str| {
        let theirs = mib_to_bytes(oracle.get(key));
        if ours as f64 != theirs {
            errors.push(format!("{label}: xmem {ours}, XProf {theirs}"));
        }
    };
    check_bytes("peak", space.peak_bytes, "peakHeapMib");
    check_bytes("unpadded peak", space.peak_unpadded_bytes, "peakUnpaddedHeapMib");
    check_bytes("indefinite", space.indefinite_bytes, "indefiniteBufferAllocationMib");
    check_bytes("total allocation", space.total_allocation_bytes, "totalBufferAllocationMib");
    check_bytes("entry parameters", space.entry_parameters_bytes, "entryComputationParametersMib");
    check_bytes("maybe live out", space.maybe_live_out_bytes, "maybeLiveOutMib");
    check_bytes("non-reusable", space.non_reusable_bytes, "nonReusableMib");

    let position = oracle.get("peakHeapSizePosition").and_then(Value::as_u64).unwrap_or(0);
    if space.peak_position as u64 != position {
        errors.push(format!("peak position: xmem {}, XProf {position}", space.peak_position));
    }
    let series = |key: &str| -> Vec<f64> {
        oracle
            .get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_f64().map(|m| m * MIB)).collect())
            .unwrap_or_default()
    };
    let ours: Vec<f64> = space.heap_bytes.iter().map(|&b| b as f64).collect();
    if ours != series("heapSizes") {
        errors.push(format!("heap series differ ({} vs {} points)", ours.len(), series("heapSizes").len()));
    }
    let ours: Vec<f64> = space.unpadded_heap_bytes.iter().map(|&b| b as f64).collect();
    if ours != series("unpaddedHeapSizes") {
        errors.push("unpadded heap series differ".into());
    }
    let names: Vec<String> = oracle
        .get("hloInstructionNames")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|v| v.as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default();
    if space.instructions.iter().ne(names.iter().map(String::as_str)) {
        errors.push("instruction names per event differ".into());
    }

    // XProf's UI fragmentation: (total − peak) / (total − indefinite).
    let total = mib_to_bytes(oracle.get("totalBufferAllocationMib"));
    let indefinite = mib_to_bytes(oracle.get("indefiniteBufferAllocationMib"));
    let peak = mib_to_bytes(oracle.get("peakHeapMib"));
    let fragmentation = if total > indefinite { (total - peak) / (total - indefinite) } else { 0.0 };
    if (space.fragmentation - fragmentation).abs() > 1e-12 {
        errors.push(format!("fragmentation: xmem {}, XProf {fragmentation}", space.fragmentation));
    }

    // Buffers at the peak: those of at least 16 KiB one by one; XProf folds
    // the rest into one "small" object, compared by its sum.
    let heap = oracle.get("maxHeap").and_then(Value::as_array).cloned().unwrap_or_default();
    let id_of = |object: &Value| object.get("logicalBufferId").and_then(Value::as_i64).unwrap_or(0);
    let theirs: BTreeMap<i64, &Value> = heap.iter().filter(|o| id_of(o) != -1).map(|o| (id_of(o), o)).collect();
    let small_theirs: f64 =
        heap.iter().filter(|o| id_of(o) == -1).map(|o| mib_to_bytes(o.get("logicalBufferSizeMib"))).sum();
    // XProf leaves always-live buffers outside HBM out of its list.
    let listed: Vec<_> = space.at_peak.iter().filter(|b| b.listed_by_xprof).collect();
    let ours: BTreeMap<i64, _> =
        listed.iter().filter(|b| b.size_bytes >= SMALL).map(|b| (b.logical_buffer_id, b)).collect();
    let small_ours: i64 = listed.iter().filter(|b| b.size_bytes < SMALL).map(|b| b.size_bytes).sum();
    if small_ours as f64 != small_theirs {
        errors.push(format!("small buffers: xmem {small_ours}, XProf {small_theirs}"));
    }
    if ours.keys().collect::<Vec<_>>() != theirs.keys().collect::<Vec<_>>() {
        errors.push(format!(
            "buffers at peak: xmem {:?}, XProf {:?}",
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>()
        ));
    }
    for (id, object) in &theirs {
        let Some(buffer) = ours.get(id) else { continue };
        let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        let source = object.get("sourceInfo");
        let file = source.and_then(|s| s.get("fileName")).and_then(Value::as_str);
        let line = source.and_then(|s| s.get("lineNumber")).and_then(Value::as_i64).unwrap_or(0);
        let expected_source = file.map(|f| format!("{f}:{line}"));
        let expected_stack = source.and_then(|s| s.get("stackFrame")).and_then(Value::as_str).map(str::to_string);
        let pairs = [
            ("instruction", buffer.instruction.to_string(), text("instructionName")),
            (
                "size",
                (buffer.size_bytes as f64).to_string(),
                mib_to_bytes(object.get("logicalBufferSizeMib")).to_string(),
            ),
            (
                "unpadded",
                (buffer.unpadded_bytes as f64).to_string(),
                mib_to_bytes(object.get("unpaddedShapeMib")).to_string(),
            ),
            ("shape", buffer.shape.to_string(), text("shapeString")),
            ("category", buffer.category.label().to_string(), category(&text("groupName")).to_string()),
            ("opcode", buffer.opcode.to_string(), text("opCode")),
            ("op name", buffer.op_name.to_string(), text("tfOpName")),
            ("source", format!("{:?}", buffer.source), format!("{expected_source:?}")),
            ("stack", format!("{:?}", buffer.stack), format!("{expected_stack:?}")),
        ];
        for (label, ours, theirs) in pairs {
            if ours != theirs {
                errors.push(format!("buffer {id} {label}: xmem {ours:?}, XProf {theirs:?}"));
            }
        }
    }

    // XProf's logicalBufferSpans: proto3 JSON leaves out a zero start or limit.
    let spans: BTreeMap<i64, (u64, u64)> = oracle
        .get("logicalBufferSpans")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(id, span)| {
            let at = |key: &str| span.get(key).and_then(Value::as_u64).unwrap_or(0);
            (id.parse().unwrap_or(i64::MIN), (at("start"), at("limit")))
        })
        .collect();
    let ours: BTreeMap<i64, (u64, u64)> =
        space.lifetimes.iter().map(|l| (l.logical_buffer_id, (l.start as u64, l.end as u64))).collect();
    if ours != spans {
        let differing: Vec<String> = spans
            .keys()
            .chain(ours.keys())
            .filter(|id| ours.get(id) != spans.get(id))
            .take(5)
            .map(|id| format!("{id}: xmem {:?}, XProf {:?}", ours.get(id), spans.get(id)))
            .collect();
        errors.push(format!(
            "lifetimes differ from logicalBufferSpans ({} vs {}): {}",
            ours.len(),
            spans.len(),
            differing.join("; ")
        ));
    }

    let scoped = mib_to_bytes(oracle.get("maxScopedVmemAllocationMib"));
    let scoped_instruction = oracle.get("maxScopedVmemInstructionName").and_then(Value::as_str);
    if space.max_scoped_vmem_bytes.unwrap_or(0) as f64 != scoped
        || space.max_scoped_vmem_instruction.as_deref() != scoped_instruction
    {
        errors.push(format!(
            "scoped VMEM: xmem {:?} in {:?}, XProf {scoped} in {scoped_instruction:?}",
            space.max_scoped_vmem_bytes, space.max_scoped_vmem_instruction
        ));
    }
    errors
}

/// `jit_step(22).memory_space_0.json` → ("jit_step", 22, 0).
fn parse_oracle_name(name: &str) -> Option<(String, u64, i64)> {
    let stem = name.strip_suffix(".json")?;
    let (module, color) = stem.rsplit_once(".memory_space_")?;
    let (base, id) = module.strip_suffix(')')?.rsplit_once('(')?;
    Some((base.to_string(), id.parse().ok()?, color.parse().ok()?))
}

/// The module XProf calls `name(id)`.
fn find_module<'a>(modules: &'a [ModuleReport], name: &str, id: u64) -> Option<&'a ModuleReport> {
    modules.iter().find(|m| m.name == name && m.program_id == id)
}

/// Runs every oracle file under `oracle_dir` against the analysis of `input`.
fn check_workload(input: &Path, oracle_dir: &Path) -> (usize, Vec<String>) {
    let capture = ingest::load(input, &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let report = analysis::analyze(std::slice::from_ref(&capture));
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(oracle_dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let Some((module, id, color)) = parse_oracle_name(&name) else { continue };
        let oracle: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        checked += 1;
        let Some(module) = find_module(&report.modules, &module, id) else {
            failures.push(format!("{}: module missing from xmem's report", file.display()));
            continue;
        };
        // The XProf-compatible report of a colour is the first one for it.
        let Some(space) = module.memory_spaces.iter().find(|s| s.color == color) else {
            failures.push(format!("{}: memory space {color} missing", file.display()));
            continue;
        };
        for error in compare(&oracle, space) {
            failures.push(format!("{}: {error}", file.display()));
        }
    }
    (checked, failures)
}

/// (input, oracle folder) pairs of a corpus laid out as `profiles/<workload>/`.
fn workloads(root: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else { return pairs };
    let mut dirs: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    for dir in dirs {
        if dir.join("oracle/memory_viewer").is_dir() {
            pairs.push((dir.join("profile"), dir.join("oracle/memory_viewer")));
        }
        // TF+XLA: XProf run again on the dump's protos, which carry the heap trace.
        if dir.join("oracle/memory_viewer_from_dump").is_dir() {
            pairs.push((dir.join("xla_dump"), dir.join("oracle/memory_viewer_from_dump")));
        }
    }
    pairs
}

fn external_oracles() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle-external")
}

/// (input, oracle folder) pairs for the external corpus: each
/// `tests/oracle-external/<path>/memory_viewer/` holds XProf's answer for
/// `<external>/<path>` (a run directory or a folder of `.hlo_proto.pb`).
fn external_workloads(external: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    let mut pending = vec![external_oracles()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for path in entries.map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
            if path.file_name().is_some_and(|n| n == "memory_viewer") {
                let relative = dir.strip_prefix(external_oracles()).unwrap();
                pairs.push((external.join(relative), path));
            } else {
                pending.push(path);
            }
        }
    }
    pairs.sort();
    pairs
}

fn run_parity(pairs: &[(PathBuf, PathBuf)]) -> usize {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (input, oracle) in pairs {
        let (n, errors) = check_workload(input, oracle);
        checked += n;
        failures.extend(errors);
    }
    assert!(failures.is_empty(), "{} of {checked} oracle files differ:\n{}", failures.len(), failures.join("\n"));
    println!("{checked} of {checked} oracle files match XProf");
    checked
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles")
}

#[test]
fn fixtures_match_xprof_memory_viewer() {
    let checked = run_parity(&workloads(&fixtures()));
    // 23 + 21 + 21 + 14 + 10 module × memory-space files, 2 + 2 for
    // tf_keras_xla, 1 for token_mixer, 2 + 2 for torch_xla_*, 2 for donation
    // and 19 for gpu_mlp_adam.
    assert_eq!(checked, 119);
}

#[test]
fn shared_corpus_matches_xprof_memory_viewer() {
    let Some(root) = common::shared_corpus() else { return };
    assert!(run_parity(&workloads(&root)) > 0);
}

#[test]
fn gpu_corpus_matches_xprof_memory_viewer() {
    let Some(root) = common::shared_corpus_folder("gpu") else { return };
    assert!(run_parity(&workloads(&root)) > 0);
}

#[test]
fn external_corpus_matches_xprof_memory_viewer() {
    let Some(external) = common::shared_external() else { return };
    let pairs = external_workloads(&external);
    assert!(pairs.len() >= 10, "{pairs:?}");
    assert!(run_parity(&pairs) > 0);
}

/// Every input a parity test reads, for checks that need no oracle.
fn every_input() -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = workloads(&fixtures()).into_iter().map(|(input, _)| input).collect();
    for root in [common::shared_corpus(), common::shared_corpus_folder("gpu")].into_iter().flatten() {
        inputs.extend(workloads(&root).into_iter().map(|(input, _)| input));
    }
    if let Some(external) = common::shared_external() {
        inputs.extend(external_workloads(&external).into_iter().map(|(input, _)| input));
    }
    inputs.sort();
    inputs.dedup();
    inputs
}

/// In every replayed memory space the buffers listed at the peak add up to
/// the peak, as XProf's do. Outside HBM XProf lists only temporaries (its
/// always-live buffers there are not placed by XLA), so there the list adds
/// up to the peak less the always-live bytes.
#[test]
fn buffers_at_the_peak_add_up_to_the_peak() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for input in every_input() {
        let capture = ingest::load(&input, &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let report = analysis::analyze(std::slice::from_ref(&capture));
        for module in &report.modules {
            for space in module.memory_spaces.iter().filter(|s| s.heap_simulation == TraceStatus::Simulated) {
                checked += 1;
                let listed: i64 = space.at_peak.iter().map(|b| b.size_bytes).sum();
                if listed != space.peak_bytes {
                    failures.push(format!(
                        "{} {} colour {} trace {:?}: buffers at the peak sum to {listed}, peak {}",
                        input.display(),
                        module.display_name(),
                        space.color,
                        space.trace_index,
                        space.peak_bytes
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {checked} memory spaces:\n{}", failures.len(), failures.join("\n"));
    println!("{checked} of {checked} replayed memory spaces: buffers at the peak add up to the peak");
    // The fixtures alone replay 38 memory spaces.
    assert!(checked >= 38, "only {checked} replayed memory spaces");
}

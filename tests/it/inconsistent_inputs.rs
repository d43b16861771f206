//! Inputs that contradict themselves give no silent wrong numbers: each
//! kind below, built small from a sound synthetic module, is reported as a
//! warning naming the module (or allocator) and what is wrong, the memory
//! space it touches carries it in JSON (`inconsistencies`) and in text
//! ("Inconsistent input"), and `--strict` fails.

use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;
use prost::Message;
use serde_json::Value;
use xmem::ingest::proto::xla::{buffer_allocation_proto::Assigned, heap_simulator_trace::Event, HloProto};
use xmem::ingest::proto::xplane::{x_stat, XSpace};

use crate::synthetic::{self, ModuleSize};

const MIB: i64 = 1 << 20;

/// A module of 2 buffers live at the peak and 2 transient ones, sound.
fn module() -> HloProto {
    synthetic::hlo_proto("jit_step", ModuleSize { live_at_peak: 2, transient: 2 })
}

fn changed(change: impl FnOnce(&mut HloProto)) -> Vec<u8> {
    let mut proto = module();
    change(&mut proto);
    proto.encode_to_vec()
}

fn events(proto: &mut HloProto) -> &mut Vec<Event> {
    &mut proto.buffer_assignment.as_mut().unwrap().heap_simulator_traces[0].events
}

/// One kind of inconsistency: a file, and what the warning must say.
struct Case {
    name: &'static str,
    file_name: &'static str,
    bytes: Vec<u8>,
    /// In the warning and in the JSON's `inconsistencies`.
    says: &'static str,
}

fn cases() -> Vec<Case> {
    let hlo = |name, bytes, says| Case { name, file_name: "module.hlo.pb", bytes, says };
    vec![
        hlo(
            "a negative buffer size",
            changed(|p| p.buffer_assignment.as_mut().unwrap().logical_buffers[2].size = -3 * MIB),
            "logical buffer 2 has a negative size (-3145728 bytes)",
        ),
        hlo(
            "a negative allocation size (the peak read -3.0 MiB)",
            changed(|p| p.buffer_assignment.as_mut().unwrap().buffer_allocations[0].size = -3 * MIB),
            "buffer allocation 0 has a negative size",
        ),
        hlo(
            "a repeated buffer id (a 65 MiB peak in a 3 MiB allocation)",
            changed(|p| {
                let assignment = p.buffer_assignment.as_mut().unwrap();
                let mut twin = assignment.logical_buffers[1].clone();
                twin.size = 65 * MIB;
                assignment.logical_buffers.push(twin);
            }),
            "logical buffer id 1 is listed 2 times",
        ),
        hlo(
            "a buffer past its allocation",
            changed(|p| {
                let temp = &mut p.buffer_assignment.as_mut().unwrap().buffer_allocations[1];
                temp.assigned[0].offset = temp.size;
            }),
            "logical buffer 0 lies at bytes",
        ),
        hlo(
            "sums past 2^63 - 1 (they saturated)",
            changed(|p| {
                let assignment = p.buffer_assignment.as_mut().unwrap();
                let half = i64::MAX / 2 + 1;
                for buffer in &mut assignment.logical_buffers[..2] {
                    buffer.size = half;
                }
                let temp = &mut assignment.buffer_allocations[1];
                temp.size = half;
                temp.assigned.retain(|a| a.logical_buffer_id != 1);
                temp.assigned[0].size = half;
                assignment.buffer_allocations.push(xmem::ingest::proto::xla::BufferAllocationProto {
                    index: 2,
                    size: half,
                    assigned: vec![Assigned { logical_buffer_id: 1, offset: 0, size: half }],
                    ..Default::default()
                });
            }),
            "add up to more than 2^63 - 1 bytes",
        ),
        hlo(
            "heap events naming a buffer the assignment does not define",
            changed(|p| events(p).insert(1, Event { kind: 0, buffer_id: 999, ..Default::default() })),
            "event 1 names buffer 999, which the assignment does not define",
        ),
        hlo(
            "heap events naming a buffer no allocation holds",
            changed(|p| {
                let temp = &mut p.buffer_assignment.as_mut().unwrap().buffer_allocations[1];
                temp.assigned.retain(|a| a.logical_buffer_id != 3);
            }),
            "names buffer 3, which no allocation holds",
        ),
        hlo(
            "a buffer allocated twice (counted twice)",
            changed(|p| events(p).insert(1, Event { kind: 0, buffer_id: 0, ..Default::default() })),
            "event 1 allocates buffer 0 again while it is live",
        ),
        Case {
            name: "two modules with one program id on one host (the second vanished)",
            file_name: "vm.xplane.pb",
            bytes: {
                let mut space =
                    XSpace::decode(&synthetic::xspace(2, ModuleSize { live_at_peak: 1, transient: 1 }, 0)[..]).unwrap();
                for metadata in space.planes[0].event_metadata.values_mut() {
                    metadata.stats[1].value = Some(x_stat::Value::Uint64Value(7));
                }
                space.encode_to_vec()
            },
            says: "have one program id",
        },
        Case {
            name: "a negative allocator total",
            file_name: "vm.xplane.pb",
            bytes: {
                let mut space = XSpace::decode(&synthetic::allocator_xspace(1, 4)[..]).unwrap();
                let host = &mut space.planes[0];
                let in_use = host.stat_metadata.values().find(|m| m.name == "bytes_allocated").unwrap().id;
                let event = &mut host.lines[1].events[3];
                let stat = event.stats.iter_mut().find(|s| s.metadata_id == in_use).unwrap();
                stat.value = Some(x_stat::Value::Int64Value(-3 * MIB));
                space.encode_to_vec()
            },
            says: "states a negative bytes in use (-3145728)",
        },
    ]
}

fn run(file: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = cargo_bin_cmd!("xmem").args(args).arg(file).output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every `inconsistencies` entry of the report, wherever it is.
fn inconsistencies(json: &Value) -> Vec<String> {
    let spaces = json["modules"].as_array().into_iter().flatten().flat_map(|m| m["memory_spaces"].as_array().unwrap());
    let allocators = json["allocators"].as_array().into_iter().flatten();
    spaces
        .chain(allocators)
        .flat_map(|part| part["inconsistencies"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn each_inconsistency_is_a_warning_marks_its_figures_and_fails_strict() {
    let dir = tempfile::tempdir().unwrap();
    let sound = dir.path().join("sound.hlo.pb");
    std::fs::write(&sound, module().encode_to_vec()).unwrap();
    let (code, stdout, stderr) = run(&sound, &["report", "--format", "json", "--strict"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "the sound module is sound");
    assert!(inconsistencies(&serde_json::from_str(&stdout).unwrap()).is_empty());

    for case in cases() {
        let file = dir.path().join(case.file_name);
        std::fs::write(&file, &case.bytes).unwrap();
        let (code, stdout, stderr) = run(&file, &["report", "--format", "json"]);
        assert_eq!(code, Some(0), "{}: {stderr}", case.name);
        let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("xmem: warning:")).collect();
        assert!(
            warnings.iter().any(|w| w.contains(case.says)),
            "{}: a warning says {:?}: {stderr}",
            case.name,
            case.says
        );
        let names_its_part =
            |w: &&&str| w.contains("module jit_") || w.contains("allocator ") || w.contains("vm.xplane.pb");
        assert!(
            warnings.iter().any(|w| names_its_part(&w)),
            "{}: the warning names what it touches: {stderr}",
            case.name
        );
        let json: Value = serde_json::from_str(&stdout).unwrap();
        if !case.name.contains("program id") {
            let found = inconsistencies(&json);
            assert!(found.iter().any(|f| f.contains(case.says)), "{}: JSON marks it: {found:?}", case.name);
            let (_, text, _) = run(&file, &["report"]);
            assert!(
                text.contains("Inconsistent input") && text.contains(case.says),
                "{}: text marks it:\n{text}",
                case.name
            );
        }
        let (strict, _, stderr) = run(&file, &["report", "--strict"]);
        assert_eq!(strict, Some(2), "{}: --strict fails: {stderr}", case.name);
        assert!(stderr.contains("(--strict)"), "{}: {stderr}", case.name);
    }
}

//! `xmem report` of an HloModuleProto and its BufferAssignmentProto saved
//! apart, as JAX gives them (`hlo_modules()[0].as_serialized_hlo_module_proto()`
//! and `memory_analysis().serialized_buffer_assignment_proto`): the pair is
//! the HloProto of both, as two inputs or in one directory, and a pair that
//! does not belong together is an error naming both. The pairs are cut from
//! the dumps' HloProtos (`hlo_module` = 1, `buffer_assignment` = 3).

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

const BASE: &str = "profiles/pair_base/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb";
const NEW: &str = "profiles/pair_new/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb";
const DONATED: &str = "profiles/donation/xla_dump/module_0018.jit_update_donated.cpu_after_optimizations.hlo.pb";
const COPIED: &str = "profiles/donation/xla_dump/module_0020.jit_update_copy.cpu_after_optimizations.hlo.pb";

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(path)
}

fn varint(bytes: &[u8], at: &mut usize) -> usize {
    let mut value = 0;
    for shift in (0..64).step_by(7) {
        let byte = bytes[*at];
        *at += 1;
        value |= usize::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
    }
    value
}

/// The HloProto's two fields, byte for byte as they are in the dump, written
/// to `<stem>.module.pb` and `<stem>.assignment.pb` in `dir`.
fn split(hlo_proto: &str, dir: &Path, stem: &str) -> (PathBuf, PathBuf) {
    let bytes = std::fs::read(fixture(hlo_proto)).unwrap();
    let paths = (dir.join(format!("{stem}.module.pb")), dir.join(format!("{stem}.assignment.pb")));
    let mut at = 0;
    while at < bytes.len() {
        let key = varint(&bytes, &mut at);
        assert_eq!(key & 7, 2, "an HloProto holds only messages");
        let length = varint(&bytes, &mut at);
        let field = &bytes[at..at + length];
        at += length;
        match key >> 3 {
            1 => std::fs::write(&paths.0, field).unwrap(),
            3 => std::fs::write(&paths.1, field).unwrap(),
            _ => {}
        }
    }
    paths
}

fn report(inputs: &[&Path]) -> Value {
    let output = cargo_bin_cmd!("xmem").arg("report").args(inputs).args(["--format", "json"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut json: Value = serde_json::from_slice(&output.stdout).unwrap();
    json.as_object_mut().unwrap().remove("inputs");
    for module in json["modules"].as_array_mut().unwrap() {
        module.as_object_mut().unwrap().remove("input");
    }
    json
}

#[test]
fn a_module_and_its_assignment_are_the_hlo_proto_of_both() {
    let dir = tempfile::tempdir().unwrap();
    let (module, assignment) = split(BASE, dir.path(), "step");
    let expected = report(&[&fixture(BASE)]);
    assert!(expected["modules"][0]["memory_spaces"][0]["peak_bytes"].as_i64().unwrap() > 0);
    assert_eq!(report(&[&module, &assignment]), expected);
    assert_eq!(report(&[&assignment, &module]), expected);
    // In a directory of their own, with nothing else that is a profile.
    let saved = dir.path().join("saved");
    std::fs::create_dir(&saved).unwrap();
    std::fs::copy(&module, saved.join("jit_step.hlo_module.pb")).unwrap();
    std::fs::copy(&assignment, saved.join("jit_step.buffer_assignment.pb")).unwrap();
    std::fs::write(saved.join("notes.txt"), "saved from a notebook").unwrap();
    assert_eq!(report(&[&saved]), expected);
}

#[test]
fn each_assignment_finds_its_own_module_among_several() {
    let dir = tempfile::tempdir().unwrap();
    let (donated, donated_assignment) = split(DONATED, dir.path(), "donated");
    let (copied, copied_assignment) = split(COPIED, dir.path(), "copied");
    let got = report(&[&copied_assignment, &donated, &copied, &donated_assignment]);
    let names: Vec<&str> = got["modules"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    for (hlo_proto, name) in [(DONATED, "jit_update_donated"), (COPIED, "jit_update_copy")] {
        let expected = report(&[&fixture(hlo_proto)]);
        let module = got["modules"].as_array().unwrap().iter().find(|m| m["name"] == name).unwrap();
        assert_eq!(module, &expected["modules"][0]);
    }
}

fn refused(inputs: &[&Path]) -> String {
    let output = cargo_bin_cmd!("xmem").arg("report").args(inputs).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{inputs:?}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr
}

#[test]
fn an_assignment_of_another_program_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let (base, base_assignment) = split(BASE, dir.path(), "base");
    let (new, new_assignment) = split(NEW, dir.path(), "new");
    let (donated, donated_assignment) = split(DONATED, dir.path(), "donated");
    let (copied, copied_assignment) = split(COPIED, dir.path(), "copied");
    // The same program for other shapes (pair_new widens the MLP), and with or without
    // donation: the instruction ids agree, the sizes do not.
    for (module, assignment) in [
        (&base, &new_assignment),
        (&new, &base_assignment),
        (&donated, &copied_assignment),
        (&copied, &donated_assignment),
    ] {
        let stderr = refused(&[module, assignment]);
        for named in [module, assignment] {
            let file = named.file_name().unwrap().to_str().unwrap();
            assert!(stderr.contains(file), "names {file}: {stderr}");
        }
        assert!(stderr.contains("is not the buffer assignment of that HloModuleProto"), "{stderr}");
        assert!(stderr.contains("bytes, but the module's instruction id"), "{stderr}");
    }
    // Another program altogether: its buffers are defined by instructions this module lacks.
    let stderr = refused(&[&base, &donated_assignment]);
    assert!(stderr.contains("which the module does not have"), "{stderr}");
    // Of two modules, an assignment that fits neither names them.
    let stderr = refused(&[&base, &new, &donated_assignment]);
    assert!(stderr.contains("none of the HloModuleProtos given") && stderr.contains("new.module.pb"), "{stderr}");
}

#[test]
fn an_assignment_alone_says_what_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let (_, assignment) = split(BASE, dir.path(), "step");
    let stderr = refused(&[&assignment]);
    assert!(stderr.contains("step.assignment.pb") && stderr.contains("pass the HloModuleProto"), "{stderr}");
    assert!(stderr.contains("as_serialized_hlo_module_proto()"), "{stderr}");
}

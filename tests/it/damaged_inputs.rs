//! Damaged profiles keep what is whole: a file cut at 50, 90 or 98% (raw or
//! gzip) and a file with one module's metadata corrupted still report every
//! module whose bytes are intact, with one warning naming where the damage
//! starts and what it cost. What is intact is worked out here with a walker
//! of its own, from where each module's bytes lie in the file. A corrupt
//! length byte loses only its own module, named; a host plane cut short or
//! damaged in one thread keeps the allocator events before the damage and
//! says the rest were lost (not that the profile records none); an HloProto
//! or pprof profile with garbage after it, or cut short, keeps what decodes.

use std::io::{Read, Write};
use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;
use flate2::{read::GzDecoder, write::GzEncoder, Compression};

/// 21 modules in `/host:metadata`, then `/host:CPU` and `Task Environment`.
const PROFILE: &str = "fixtures/profiles/pair_base/profile/plugins/profile/2026_11_22_07_55_28/vm.xplane.pb";
const METADATA_PLANE: &[u8] = b"/host:metadata";

/// One protobuf field: its number, where it starts, where its payload
/// starts and ends; `end` past the buffer when the field is cut short.
struct Field {
    number: u64,
    start: usize,
    payload: usize,
    end: usize,
}

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// The fields of `bytes[from..to]`; the last one may run past `to`.
fn fields(bytes: &[u8], from: usize, to: usize) -> Vec<Field> {
    let window = &bytes[..to];
    let mut out = Vec::new();
    let mut at = from;
    while at < to {
        let start = at;
        let Some(key) = varint(window, &mut at) else { break };
        let (payload, end) = match key & 7 {
            0 => match varint(window, &mut at) {
                Some(_) => (at, at),
                None => (at, usize::MAX),
            },
            1 => (at, at + 8),
            5 => (at, at + 4),
            2 => match varint(window, &mut at) {
                Some(len) => (at, at + len as usize),
                None => (at, usize::MAX),
            },
            _ => panic!("unexpected wire type at {start}"),
        };
        out.push(Field { number: key >> 3, start, payload, end });
        if end > to {
            break;
        }
        at = end;
    }
    out
}

/// What a reader must keep of `bytes`: the `name(id)` of every module whose
/// metadata entry is whole, and the offset of the first field that is not
/// (the innermost, when a plane is cut), if any.
fn intact(bytes: &[u8]) -> (Vec<String>, Option<usize>) {
    let mut modules = Vec::new();
    let mut damage = None;
    for plane in fields(bytes, 0, bytes.len()).iter().filter(|f| f.number == 1) {
        let plane_end = plane.end.min(bytes.len());
        let parts = fields(bytes, plane.payload, plane_end);
        let name = parts.iter().find(|p| p.number == 2 && p.end <= plane_end).map(|p| &bytes[p.payload..p.end]);
        if plane.end > bytes.len() {
            damage = Some(parts.iter().find(|p| p.end > plane_end).map_or(bytes.len(), |p| p.start));
        }
        if name != Some(METADATA_PLANE) {
            continue;
        }
        for entry in parts.iter().filter(|p| p.number == 4 && p.end <= plane_end) {
            let value = fields(bytes, entry.payload, entry.end).into_iter().find(|f| f.number == 2).unwrap();
            let metadata = fields(bytes, value.payload, value.end);
            let has_hlo = metadata.iter().filter(|f| f.number == 5).any(|stat| {
                fields(bytes, stat.payload, stat.end).iter().any(|v| v.number == 6 && v.end - v.payload > 100)
            });
            if has_hlo {
                let name = metadata.iter().find(|f| f.number == 2).unwrap();
                modules.push(String::from_utf8(bytes[name.payload..name.end].to_vec()).unwrap());
            }
        }
    }
    modules.sort();
    (modules, damage)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// What a gzip stream cut short decompresses to.
fn gunzip_prefix(gz: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = GzDecoder::new(gz).read_to_end(&mut out);
    out
}

struct Listed {
    modules: Vec<String>,
    warnings: Vec<String>,
}

fn list(file: &Path, strict: bool) -> (Option<i32>, Listed) {
    let mut command = cargo_bin_cmd!("xmem");
    command.arg("list").arg(file).args(["--format", "json"]);
    if strict {
        command.arg("--strict");
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings = stderr.lines().filter(|l| l.starts_with("xmem: warning:")).map(str::to_string).collect();
    let modules = match serde_json::from_slice::<serde_json::Value>(&output.stdout) {
        Ok(json) => {
            let mut modules: Vec<String> = json["modules"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| format!("{}({})", m["name"].as_str().unwrap(), m["program_id"]))
                .collect();
            modules.sort();
            modules
        }
        Err(_) => Vec::new(),
    };
    (output.status.code(), Listed { modules, warnings })
}

fn assert_keeps_what_is_intact(file: &Path, original: &[u8], label: &str) {
    let (modules, damage) = intact(original);
    let (code, listed) = list(file, false);
    assert_eq!(code, Some(0), "{label}: {:?}", listed.warnings);
    assert_eq!(listed.modules, modules, "{label}: every intact module, and only those");
    let [warning] = listed.warnings.as_slice() else { panic!("{label}: one warning, got {:?}", listed.warnings) };
    let offset = damage.expect("the cut falls inside a plane");
    assert!(warning.contains(&format!("at byte {offset}:")), "{label}: the warning names byte {offset}: {warning}");
}

#[test]
fn a_profile_cut_short_keeps_every_intact_module_with_one_warning() {
    let whole = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(PROFILE)).unwrap();
    let (modules, damage) = intact(&whole);
    assert_eq!((modules.len(), damage), (21, None));
    let dir = tempfile::tempdir().unwrap();
    let compressed = gzip(&whole);
    for percent in [50, 90, 98] {
        let raw = &whole[..whole.len() * percent / 100];
        let file = dir.path().join(format!("cut{percent}.xplane.pb"));
        std::fs::write(&file, raw).unwrap();
        assert_keeps_what_is_intact(&file, raw, &format!("raw cut at {percent}%"));

        let gz = &compressed[..compressed.len() * percent / 100];
        let file = dir.path().join(format!("cut{percent}.xplane.pb.gz"));
        std::fs::write(&file, gz).unwrap();
        assert_keeps_what_is_intact(&file, &gunzip_prefix(gz), &format!("gzip cut at {percent}%"));
    }
    // Cut at 50%, the stat metadata that names the HLO stat is gone: the
    // modules are still found, under their own program ids.
    let (modules, _) = intact(&whole[..whole.len() / 2]);
    assert!(modules.len() > 5 && modules.len() < 21, "{modules:?}");

    let strict = list(&dir.path().join("cut90.xplane.pb"), true).0;
    assert_eq!(strict, Some(2), "--strict turns the damage into an error");
}

#[test]
fn a_gzip_missing_only_its_trailer_keeps_the_whole_host() {
    let whole = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(PROFILE)).unwrap();
    let compressed = gzip(&whole);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vm.xplane.pb.gz");
    let cut = compressed.len() - 8;
    std::fs::write(&file, &compressed[..cut]).unwrap();
    let (code, listed) = list(&file, false);
    assert_eq!(code, Some(0));
    assert_eq!(listed.modules, intact(&whole).0);
    let [warning] = listed.warnings.as_slice() else { panic!("one warning, got {:?}", listed.warnings) };
    assert!(warning.contains(&format!("at byte {cut}:")) && warning.contains("gzip"), "{warning}");
}

#[test]
fn one_corrupt_module_metadata_loses_only_that_module() {
    let mut bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(PROFILE)).unwrap();
    let all = intact(&bytes).0;
    // The sixth module's XEventMetadata: its first key becomes wire type 7,
    // which no decoder accepts, while every length around it still holds.
    let plane = fields(&bytes, 0, bytes.len()).into_iter().next().unwrap();
    let entry = fields(&bytes, plane.payload, plane.end).into_iter().filter(|f| f.number == 4).nth(5).unwrap();
    let value = fields(&bytes, entry.payload, entry.end).into_iter().find(|f| f.number == 2).unwrap();
    let metadata = fields(&bytes, value.payload, value.end);
    let name = metadata.iter().find(|f| f.number == 2).unwrap();
    let lost = String::from_utf8(bytes[name.payload..name.end].to_vec()).unwrap();
    bytes[value.payload] = 0x0f;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vm.xplane.pb");
    std::fs::write(&file, &bytes).unwrap();
    let (code, listed) = list(&file, false);
    assert_eq!(code, Some(0));
    let expected: Vec<String> = all.into_iter().filter(|m| *m != lost).collect();
    assert_eq!(listed.modules.len(), 20);
    assert_eq!(listed.modules, expected);
    let [warning] = listed.warnings.as_slice() else { panic!("one warning, got {:?}", listed.warnings) };
    assert!(warning.contains(&format!("at byte {}:", value.payload)), "{warning}");
}

/// A TensorFlow profile with allocator events on `/host:CPU` and its XLA
/// modules in `/host:metadata` before it.
const ALLOCATOR_PROFILE: &str =
    "fixtures/profiles/tf_keras_xla/profile/plugins/profile/2026_11_22_07_55_25/vm.xplane.pb";

fn read_fixture(relative: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)).unwrap()
}

/// `xmem report --format json FILE`: exit code, JSON (if any) and warnings.
fn report(file: &Path) -> (Option<i32>, serde_json::Value, Vec<String>) {
    let output = cargo_bin_cmd!("xmem").args(["report", "--format", "json"]).arg(file).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings = stderr.lines().filter(|l| l.starts_with("xmem: warning:")).map(str::to_string).collect();
    let json = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (output.status.code(), json, warnings)
}

fn allocator_events(json: &serde_json::Value) -> u64 {
    let allocators = json["allocators"].as_array().unwrap();
    allocators.iter().map(|a| a["num_allocations"].as_u64().unwrap() + a["num_deallocations"].as_u64().unwrap()).sum()
}

/// The allocator events of the host plane, line by line: each line's
/// allocator events as the offsets where they start.
fn allocator_events_by_line(bytes: &[u8]) -> Vec<Vec<usize>> {
    let planes = fields(bytes, 0, bytes.len());
    let host = planes
        .iter()
        .filter(|p| p.number == 1)
        .find(|p| {
            let parts = fields(bytes, p.payload, p.end);
            parts.iter().any(|f| f.number == 2 && &bytes[f.payload..f.end] == b"/host:CPU")
        })
        .unwrap();
    let parts = fields(bytes, host.payload, host.end);
    let mut allocator_ids = Vec::new();
    for entry in parts.iter().filter(|f| f.number == 4) {
        let entry_fields = fields(bytes, entry.payload, entry.end);
        let value = entry_fields.iter().find(|f| f.number == 2).unwrap();
        let metadata = fields(bytes, value.payload, value.end);
        let name = metadata.iter().find(|f| f.number == 2).map(|f| &bytes[f.payload..f.end]);
        if matches!(name, Some(b"MemoryAllocation" | b"MemoryDeallocation")) {
            allocator_ids.push(varint_value(bytes, metadata.iter().find(|f| f.number == 1).unwrap()));
        }
    }
    let mut lines = Vec::new();
    for line in parts.iter().filter(|f| f.number == 3) {
        let mut events = Vec::new();
        for event in fields(bytes, line.payload, line.end).iter().filter(|f| f.number == 4) {
            let id = fields(bytes, event.payload, event.end).into_iter().find(|f| f.number == 1);
            if id.is_some_and(|id| allocator_ids.contains(&varint_value(bytes, &id))) {
                events.push(event.start);
            }
        }
        lines.push(events);
    }
    lines
}

/// The value of a varint field.
fn varint_value(bytes: &[u8], field: &Field) -> u64 {
    let mut at = field.start;
    varint(bytes, &mut at).unwrap();
    varint(bytes, &mut at).unwrap()
}

#[test]
fn a_host_plane_cut_short_says_its_allocator_events_were_lost_not_that_none_were_recorded() {
    let whole = read_fixture(ALLOCATOR_PROFILE);
    let (_, sound, _) = report(Path::new(env!("CARGO_MANIFEST_DIR")).join(ALLOCATOR_PROFILE).as_path());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vm.xplane.pb");
    std::fs::write(&file, &whole[..whole.len() * 99 / 100]).unwrap();
    let (code, json, warnings) = report(&file);
    assert_eq!(code, Some(0), "{warnings:?}");
    let modules = |json: &serde_json::Value| -> Vec<(String, i64)> {
        let modules = json["modules"].as_array().unwrap().iter();
        modules
            .map(|m| (m["name"].as_str().unwrap().to_string(), m["memory_spaces"][0]["peak_bytes"].as_i64().unwrap()))
            .collect()
    };
    assert_eq!(modules(&json), modules(&sound), "the modules before the cut are kept");
    let notes: Vec<&str> = json["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(!notes.iter().any(|n| n.contains("record none")), "not a profile that records none: {notes:?}");
    assert!(notes.iter().any(|n| n.contains("allocator events were in damaged /host:CPU")), "{notes:?}");
    let [warning] = warnings.as_slice() else { panic!("one warning, got {warnings:?}") };
    assert!(warning.contains("lost the allocator events of plane /host:CPU"), "{warning}");
}

#[test]
fn a_damaged_thread_keeps_every_allocator_event_before_the_damage() {
    let whole = read_fixture(ALLOCATOR_PROFILE);
    let (_, json, _) = report(Path::new(env!("CARGO_MANIFEST_DIR")).join(ALLOCATOR_PROFILE).as_path());
    let lines = allocator_events_by_line(&whole);
    let all: usize = lines.iter().map(Vec::len).sum();
    assert_eq!(allocator_events(&json), all as u64);
    // In the thread with the most allocator events, the key of the middle
    // one becomes wire type 7, which no decoder accepts.
    let busiest = lines.iter().max_by_key(|events| events.len()).unwrap();
    let damaged_at = busiest[busiest.len() / 2];
    let mut bytes = whole.clone();
    bytes[damaged_at] = 0x0f;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vm.xplane.pb");
    std::fs::write(&file, &bytes).unwrap();
    let (code, json, warnings) = report(&file);
    assert_eq!(code, Some(0), "{warnings:?}");
    let lost = busiest.len() - busiest.len() / 2;
    assert_eq!(allocator_events(&json), (all - lost) as u64, "every allocator event but those after the damage");
    let [warning] = warnings.as_slice() else { panic!("one warning, got {warnings:?}") };
    assert!(
        warning.contains(&format!("at byte {damaged_at}:"))
            && warning.contains("in the damaged thread of plane /host:CPU"),
        "{warning}"
    );
}

#[test]
fn one_corrupt_length_byte_loses_one_module_and_names_it() {
    let mut bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(PROFILE)).unwrap();
    let all = intact(&bytes).0;
    let plane = fields(&bytes, 0, bytes.len()).into_iter().next().unwrap();
    let entries: Vec<Field> = fields(&bytes, plane.payload, plane.end).into_iter().filter(|f| f.number == 4).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vm.xplane.pb");
    // The length of the sixth module's map entry, one longer and one shorter.
    let entry = &entries[5];
    let value = fields(&bytes, entry.payload, entry.end).into_iter().find(|f| f.number == 2).unwrap();
    let name = fields(&bytes, value.payload, value.end).into_iter().find(|f| f.number == 2).unwrap();
    let lost = String::from_utf8(bytes[name.payload..name.end].to_vec()).unwrap();
    let length_byte = entry.start + 1;
    for delta in [1u8, 255] {
        let original = bytes[length_byte];
        bytes[length_byte] = original.wrapping_add(delta);
        std::fs::write(&file, &bytes).unwrap();
        bytes[length_byte] = original;
        let (code, listed) = list(&file, false);
        assert_eq!(code, Some(0), "{:?}", listed.warnings);
        let expected: Vec<String> = all.iter().filter(|m| **m != lost).cloned().collect();
        assert_eq!(listed.modules, expected, "only the damaged module is lost");
        let [warning] = listed.warnings.as_slice() else { panic!("one warning, got {:?}", listed.warnings) };
        assert!(warning.contains(&format!("lost 1 module entry of /host:metadata (20 read): {lost}")), "{warning}");
    }
}

#[test]
fn an_hlo_proto_with_garbage_after_it_or_cut_short_keeps_what_decodes() {
    let whole = read_fixture(
        "fixtures/profiles/pair_base/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("module.hlo.pb");
    std::fs::write(&file, &whole).unwrap();
    let (_, sound, _) = report(&file);
    let peak = |json: &serde_json::Value| json["modules"][0]["memory_spaces"][0]["peak_bytes"].as_i64().unwrap();

    // 1 KiB of garbage: a field 15 group start (wire type 3), then bytes.
    let mut garbage = whole.clone();
    garbage.extend((0..1024u32).map(|i| if i == 0 { 0x7b } else { (i * 37 % 251) as u8 }));
    std::fs::write(&file, &garbage).unwrap();
    let (code, json, warnings) = report(&file);
    assert_eq!(code, Some(0), "{warnings:?}");
    assert_eq!(peak(&json), peak(&sound), "the whole proto is read as it was");
    let [warning] = warnings.as_slice() else { panic!("one warning, got {warnings:?}") };
    assert!(warning.contains(&format!("at byte {}:", whole.len())) && warning.contains("left out"), "{warning}");

    // Cut inside the buffer assignment: the module, marked.
    std::fs::write(&file, &whole[..whole.len() - 200]).unwrap();
    let (code, json, warnings) = report(&file);
    assert_eq!(code, Some(0), "{warnings:?}");
    assert_eq!(json["modules"][0]["name"], "jit_wide_mlp_step");
    let marks = json["modules"][0]["memory_spaces"][0]["inconsistencies"].as_array().unwrap();
    assert!(marks.iter().any(|m| m.as_str().unwrap().contains("inside its buffer assignment")), "{marks:?}");
    assert!(warnings.iter().any(|w| w.contains("the file ends inside its buffer assignment")), "{warnings:?}");

    // Cut inside the module: its name is kept, and the reason nothing can be analysed.
    std::fs::write(&file, &whole[..whole.len() / 2]).unwrap();
    let output = cargo_bin_cmd!("xmem").args(["list", "--format", "json"]).arg(&file).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["modules"][0]["name"], "jit_wide_mlp_step");
    let problem = json["modules"][0]["problem"].as_str().unwrap();
    assert!(
        problem.contains(&format!("the file ends at byte {}, inside its HLO module", whole.len() / 2)),
        "{problem}"
    );
}

#[test]
fn a_pprof_with_garbage_after_it_or_cut_in_its_string_table_keeps_its_samples() {
    let gz = read_fixture("fixtures/pprof/mlp_train/device_memory_after_training.prof");
    let whole = gunzip_prefix(&gz);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.prof");
    std::fs::write(&file, &whole).unwrap();
    let (_, sound, _) = report(&file);
    let total = |json: &serde_json::Value| json["device_memory"][0]["total_bytes"].as_i64().unwrap();
    let mut garbage = whole.clone();
    garbage.extend((0..1024u32).map(|i| if i == 0 { 0x7b } else { (i * 37 % 251) as u8 }));
    // The string table is the profile's second half: cut in it, and past it.
    for (label, bytes) in [("cut", &whole[..whole.len() * 4 / 5]), ("garbage", &garbage[..])] {
        std::fs::write(&file, bytes).unwrap();
        let (code, json, warnings) = report(&file);
        assert_eq!(code, Some(0), "{label}: {warnings:?}");
        assert_eq!(total(&json), total(&sound), "{label}: every sample is kept");
        let [warning] = warnings.as_slice() else { panic!("{label}: one warning, got {warnings:?}") };
        assert!(warning.contains("samples kept"), "{label}: {warning}");
    }
    let (_, _, warnings) = report(&file);
    assert!(!warnings[0].contains(CUT_OFF_NAME), "garbage after the profile loses no name: {warnings:?}");
}

const CUT_OFF_NAME: &str = "(cut off)";

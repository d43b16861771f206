//! Damaged profiles keep what is whole: a file cut at 50, 90 or 98% (raw or
//! gzip) and a file with one module's metadata corrupted still report every
//! module whose bytes are intact, with one warning naming where the damage
//! starts. What is intact is worked out here with a walker of its own, from
//! where each module's bytes lie in the file.

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

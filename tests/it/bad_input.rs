//! xmem on files from crashed jobs: every fixture truncated at many offsets
//! and with bytes flipped, run through the binary. Each run must end with
//! exit code 0 (something usable was read) or 2 (a one-line reason), never
//! a panic (101) or a signal.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(path)
}

/// A small deterministic generator, so a failure names a reproducible case.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// Truncations at the start, spread over the file, and near the end; then
/// single-byte and burst corruptions at pseudo-random places.
fn mutations(original: &[u8], seed: u64) -> Vec<(String, Vec<u8>)> {
    let len = original.len();
    let mut cases = Vec::new();
    let mut cuts: Vec<usize> = (0..16).chain((1..40).map(|i| i * len / 40)).chain(len.saturating_sub(8)..len).collect();
    cuts.dedup();
    for cut in cuts {
        cases.push((format!("truncated at {cut}"), original[..cut.min(len)].to_vec()));
    }
    let mut rng = Lcg(seed);
    for i in 0..40 {
        let mut data = original.to_vec();
        let at = rng.below(len);
        let burst = if i % 4 == 0 { 16 } else { 1 };
        for b in data.iter_mut().skip(at).take(burst) {
            *b ^= 1 << rng.below(8);
        }
        cases.push((format!("bit flips at {at} (x{burst})"), data));
    }
    cases
}

fn assert_never_panics(args: &[&str], name: &str, original: &[u8], seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    for (case, data) in mutations(original, seed) {
        std::fs::write(&path, &data).unwrap();
        let output = cargo_bin_cmd!("xmem").args(args).arg(&path).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            matches!(output.status.code(), Some(0 | 2)) && !stderr.contains("panicked"),
            "{name}, {case}: {:?}\n{stderr}",
            output.status
        );
        if output.status.code() == Some(2) {
            assert!(stderr.contains(name), "{name}, {case}: the error names the file: {stderr}");
        }
    }
}

#[test]
fn mutated_xplane_never_panics() {
    let xplane =
        std::fs::read(fixture("profiles/pair_base/profile/plugins/profile/2026_11_22_07_55_28/vm.xplane.pb")).unwrap();
    assert_never_panics(&["report", "--format", "json", "-o", "/dev/null"], "vm.xplane.pb", &xplane, 1);
}

/// A TensorFlow profile: its host plane's allocator events and step grouping are decoded.
#[test]
fn mutated_xplane_with_allocator_events_never_panics() {
    let xplane =
        std::fs::read(fixture("profiles/tf_keras_fit/profile/plugins/profile/2026_11_22_07_55_18/vm.xplane.pb"))
            .unwrap();
    assert_never_panics(&["report", "--format", "json", "-o", "/dev/null"], "vm.xplane.pb", &xplane, 3);
}

#[test]
fn mutated_hlo_proto_never_panics() {
    let hlo = std::fs::read(fixture(
        "profiles/pair_base/xla_dump/module_0040.jit_wide_mlp_step.cpu_after_optimizations.hlo.pb",
    ))
    .unwrap();
    assert_never_panics(&["report", "--format", "json", "-o", "/dev/null"], "module.hlo.pb", &hlo, 2);
}

#[test]
fn mutated_gzip_never_panics() {
    let xplane =
        std::fs::read(fixture("profiles/pair_base/profile/plugins/profile/2026_11_22_07_55_28/vm.xplane.pb")).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut encoder, &xplane).unwrap();
    let gz = encoder.finish().unwrap();
    assert_never_panics(&["report", "--format", "json", "-o", "/dev/null"], "vm.xplane.pb.gz", &gz, 3);
}

#[test]
fn mutated_device_memory_profile_never_panics() {
    let compressed = std::fs::read(fixture("pprof/mlp_train/device_memory_after_training.prof")).unwrap();
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(compressed.as_slice()), &mut plain).unwrap();
    let args = ["report", "--format", "json", "-o", "/dev/null"];
    assert_never_panics(&args, "memory.prof", &plain, 4);
    assert_never_panics(&args, "memory.prof.gz", &compressed, 5);
}

fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    cargo_bin_cmd!("xmem").args(args).output().unwrap()
}

#[test]
fn gzip_bomb_stops_at_the_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.xplane.pb.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut encoder, &vec![0u8; 64 << 20]).unwrap();
    std::fs::write(&bomb, encoder.finish().unwrap()).unwrap();
    let output = run(&["report".as_ref(), bomb.as_os_str(), "--max-input-size".as_ref(), "1MiB".as_ref()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bomb.xplane.pb.gz") && stderr.contains("limit reached: more than 1048576 bytes"),
        "{stderr}"
    );
}

#[test]
fn one_corrupt_host_is_skipped_with_a_warning_unless_strict() {
    let dir = tempfile::tempdir().unwrap();
    let good =
        std::fs::read(fixture("profiles/pair_base/profile/plugins/profile/2026_11_22_07_55_28/vm.xplane.pb")).unwrap();
    std::fs::write(dir.path().join("host0.xplane.pb"), &good).unwrap();
    std::fs::write(dir.path().join("host1.xplane.pb"), &good[..good.len() / 3]).unwrap();
    let output = run(&["report".as_ref(), dir.path().as_os_str(), "--format".as_ref(), "json".as_ref()]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning") && stderr.contains("host1.xplane.pb"), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["modules"][0]["name"], "jit_wide_mlp_step");
    let strict = run(&["report".as_ref(), dir.path().as_os_str(), "--strict".as_ref()]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("host1.xplane.pb"));
}

#[test]
fn huge_declared_lengths_and_deep_nesting_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Field 1, length-delimited, declaring 2^62 bytes.
    let huge = dir.path().join("huge.xplane.pb");
    std::fs::write(&huge, [0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x08]).unwrap();
    let output = run(&["report".as_ref(), huge.as_os_str()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("runs past the end"));

    // An HloProto whose first instruction's shape nests tuples 5,000 deep.
    let mut shape = vec![0x10, 0x0b]; // element_type: F32
    for _ in 0..5000 {
        shape = [vec![0x10, 0x0d], field(4, shape)].concat(); // element_type: TUPLE, tuple_shapes
    }
    let instruction = [field(1, b"p".to_vec()), field(3, shape)].concat(); // name, shape
    let computation = field(2, instruction); // instructions
    let module = [field(1, b"m".to_vec()), field(3, computation)].concat(); // name, computations
    let proto = field(1, module); // hlo_module
    let deep = dir.path().join("deep.hlo.pb");
    std::fs::write(&deep, proto).unwrap();
    let output = run(&["report".as_ref(), deep.as_os_str()]);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
}

/// A length-delimited protobuf field: key, varint length, payload.
fn field(number: u8, payload: Vec<u8>) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2];
    let mut len = payload.len() as u64;
    while len >= 0x80 {
        out.push((len as u8) | 0x80);
        len >>= 7;
    }
    out.push(len as u8);
    out.extend(payload);
    out
}

/// Found by fuzz/fuzz_targets/render_charts.rs: a buffer whose size is
/// near `i64::MIN` gave a heap far below a chart's axis, and plotters'
/// pixel arithmetic overflowed (a panic where overflow is checked).
#[test]
fn charts_of_a_buffer_of_negative_size_are_drawn() {
    let mut proto = crate::synthetic::many_buffers_hlo(4);
    let assignment = proto.buffer_assignment.as_mut().unwrap();
    assignment.logical_buffers[1].size = i64::MIN + 4096;
    for assigned in assignment.buffer_allocations.iter_mut().flat_map(|a| a.assigned.iter_mut()) {
        if assigned.logical_buffer_id == 1 {
            assigned.size = i64::MIN + 4096;
        }
    }
    charts_and_page_end_with_an_exit_code("negative.hlo.pb", &prost::Message::encode_to_vec(&proto));
}

/// `xmem plot` and `xmem report --format html` on `bytes`, written as
/// `file_name`, end with exit code 0 or 2 (not a panic).
fn charts_and_page_end_with_an_exit_code(file_name: &str, bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(file_name);
    std::fs::write(&input, bytes).unwrap();
    let charts = dir.path().join("charts");
    for args in [&["plot", "-o", charts.to_str().unwrap()][..], &["report", "--format", "html", "-o", "/dev/null"]] {
        let output = cargo_bin_cmd!("xmem").args(args).arg(&input).output().unwrap();
        assert!(matches!(output.status.code(), Some(0 | 2)), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
}

/// Found by fuzz/fuzz_targets/render_charts.rs: an allocator event whose
/// `fragmentation` stat is far outside 0 to 1 (here -1e105) went onto the
/// chart's percent axis and overflowed plotters' pixel arithmetic.
#[test]
fn an_allocator_fragmentation_far_outside_its_axis_is_drawn() {
    use prost::Message;
    use xmem::ingest::proto::xplane::{x_stat, XSpace};
    let host = std::fs::read_dir(crate::common::profile("tf_keras_fit").join("plugins/profile"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("vm.xplane.pb");
    let mut space = XSpace::decode(&std::fs::read(host).unwrap()[..]).unwrap();
    let mut changed = 0;
    for plane in &mut space.planes {
        let Some(id) = plane.stat_metadata.values().find(|m| m.name == "fragmentation").map(|m| m.id) else { continue };
        for stat in plane.lines.iter_mut().flat_map(|l| l.events.iter_mut()).flat_map(|e| e.stats.iter_mut()) {
            if stat.metadata_id == id {
                stat.value = Some(x_stat::Value::DoubleValue(-1e105));
                changed += 1;
            }
        }
    }
    assert!(changed > 0, "the fixture records fragmentation");
    charts_and_page_end_with_an_exit_code("vm.xplane.pb", &space.encode_to_vec());
}

/// Found by fuzzing the heap simulation: a buffer that shares memory and then
/// names itself as the buffer it shares with made every later lookup of it
/// loop for ever. The replay now stops there with a note, and the memory
/// space is marked inconsistent.
#[test]
fn a_buffer_sharing_with_itself_ends_the_replay_not_the_run() {
    use prost::Message;
    use xmem::ingest::proto::xla::heap_simulator_trace::Event;
    let mut proto =
        crate::synthetic::hlo_proto("jit_self_share", crate::synthetic::ModuleSize { live_at_peak: 2, transient: 0 });
    let events = &mut proto.buffer_assignment.as_mut().unwrap().heap_simulator_traces[0].events;
    let share = |buffer_id, share_with_canonical_id| Event {
        kind: 2,
        buffer_id,
        share_with_canonical_id,
        ..Default::default()
    };
    events.splice(1..1, [share(1, 0), share(1, 1)]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("self_share.hlo.pb");
    std::fs::write(&file, proto.encode_to_vec()).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_xmem"))
        .args(["report", "--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("buffer 1 shares memory with itself"));
}

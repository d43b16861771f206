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

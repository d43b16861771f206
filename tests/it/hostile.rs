//! No input ends in a signal: every hostile shape (benches/support/synthetic.rs,
//! `HOSTILE_SHAPES`) at a size that used to exhaust memory or run for
//! minutes, and a gzip bomb under the default ceiling, each run under a
//! 4 GiB address-space limit, end with exit code 0 or 2 (`xmem oom`: 0, 1 or 2).

use crate::synthetic;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use flate2::{write::GzEncoder, Compression};

/// Runs xmem with `args` under `ulimit -v 4194304` (4 GiB).
fn xmem_within_4_gib(args: &[&str], file: &Path) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 4194304 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_xmem"))
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn hostile_shapes_end_with_an_exit_code_within_4_gib() {
    let dir = tempfile::tempdir().unwrap();
    for shape in synthetic::HOSTILE_SHAPES {
        let file = dir.path().join(shape.file_name);
        std::fs::write(&file, (shape.generate)(shape.hostile_n)).unwrap();
        let output = xmem_within_4_gib(shape.args, &file);
        // `xmem oom` exits 1 when it finds a memory error: that is its answer.
        let answers = if shape.args[0] == "oom" { [0, 1, 2].as_slice() } else { [0, 2].as_slice() };
        assert!(
            output.status.code().is_some_and(|code| answers.contains(&code)),
            "{} at n = {}: {:?}\n{}",
            shape.name,
            shape.hostile_n,
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::remove_file(&file).unwrap();
    }
}

#[test]
fn a_gzip_bomb_stops_at_the_default_ceiling_within_4_gib() {
    // 64 members of 64 MiB of zeros: 4 GiB once decompressed, from 4 MB.
    let mut member = GzEncoder::new(Vec::new(), Compression::best());
    member.write_all(&vec![0u8; 64 << 20]).unwrap();
    let member = member.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.xplane.pb.gz");
    std::fs::write(&bomb, member.repeat(64)).unwrap();
    let output = xmem_within_4_gib(&["report"], &bomb);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bomb.xplane.pb.gz: limit reached") && stderr.contains("--max-input-size"), "{stderr}");
}

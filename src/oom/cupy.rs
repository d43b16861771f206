//! CuPy's memory pool: `cupy.cuda.memory.OutOfMemoryError: Out of memory
//! allocating 322,122,547,200 bytes (allocated so far: 0 bytes)` (CuPy 7 and
//! later; `, limit set to: N bytes` when the pool has a limit), and the
//! wording before it, `out of memory to allocate N bytes (total M bytes)`.
//! Every figure is an exact byte count.

use super::block::Detected;
use super::event::{Framework, Kind, OomEvent};
use super::line::Line;
use super::size;

const POOL: &str = "CuPy memory pool";

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    let found = regex!(
        r"(?i:out of memory allocating) ([\d,]+) bytes \(allocated so far: ([\d,]+) bytes(?:, limit set to: ([\d,]+) bytes)?\)|out of memory to allocate (\d+) bytes \(total (\d+) bytes\)"
    )
    .captures(text)?;
    let bytes = |at: usize| found.get(at).and_then(|n| size::unsigned(size::parse_exact(n.as_str())));
    let mut event = OomEvent::new(Kind::RuntimeAllocationFailure, line);
    event.framework = Some(Framework::CuPy);
    event.requested_bytes = bytes(1).or_else(|| bytes(4));
    // What the pool had handed out before this request, and its limit when one is set.
    event.used_bytes = bytes(2).or_else(|| bytes(5));
    event.limit_bytes = bytes(3);
    for (name, value) in [("allocated so far", event.used_bytes), ("limit set to", event.limit_bytes)] {
        if let Some(value) = value {
            event.fact(POOL, name, i64::try_from(value).ok(), None);
        }
    }
    Some(Detected::at(event, text, &found))
}

#[cfg(test)]
mod tests {
    use crate::oom::{scan, Kind};

    #[test]
    fn every_wording_gives_exact_bytes() {
        let log = "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 322,122,547,200 bytes (allocated so far: 0 bytes).\n";
        let e = scan("log", log.as_bytes()).unwrap().events.remove(0);
        assert_eq!(e.kind, Kind::RuntimeAllocationFailure);
        assert_eq!((e.requested_bytes, e.used_bytes, e.limit_bytes), (Some(322_122_547_200), Some(0), None));
        assert_eq!(e.exception.as_deref(), Some("cupy.cuda.memory.OutOfMemoryError"));
        // cupy/cupy#2537 (Chainer on CuPy 7.0.0b4) and a pool with a limit.
        let log = "Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).\n";
        let e = scan("log", log.as_bytes()).unwrap().events.remove(0);
        assert_eq!((e.requested_bytes, e.used_bytes), (Some(25_600_000), Some(3_635_267_072)));
        let log = "OutOfMemoryError: Out of memory allocating 1,024 bytes (allocated so far: 2,048 bytes, limit set to: 2,560 bytes).\n";
        let e = scan("log", log.as_bytes()).unwrap().events.remove(0);
        assert_eq!((e.requested_bytes, e.limit_bytes), (Some(1024), Some(2560)));
        // cupy/cupy#1912 (CuPy 5).
        let log =
            "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 12373894656 bytes)\n";
        let e = scan("log", log.as_bytes()).unwrap().events.remove(0);
        assert_eq!((e.requested_bytes, e.used_bytes), (Some(1_073_741_824), Some(12_373_894_656)));
    }
}

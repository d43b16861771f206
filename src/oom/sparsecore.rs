//! SparseCore allocation failures from the SparseCore MLIR pipeline (E3000),
//! and the replica-count failure that is the same shortage seen earlier (E3001).
//! SparseCore counts in 4-byte words and names memory spaces by number.

use super::block::Detected;
use super::event::{Item, Kind, OomEvent};
use super::line::Line;

/// A SparseCore word.
const WORD_BYTES: u64 = 4;

/// SparseCore MLIR memory spaces (not HLO's `S(n)`).
fn space_name(id: u64) -> Option<&'static str> {
    Some(match id {
        0 => "smem",
        201 => "tilespmem",
        202 => "spmem",
        203 => "hbm",
        204 => "sync flags",
        _ => return None,
    })
}

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    if let Some(found) = regex!(
        r"'memref\.alloca' op (?:E3000: CompileTimeSparseCoreAllocationFailure:\s*)?current allocation offset upper bound \((\d+) words\) exceeds the legitimate user allocatable offset upper bound \((\d+) words\) in memory space (\d+) when allocating (\d+) words"
    )
    .captures(text)
    {
        let words = |i: usize| found[i].parse::<u64>().ok();
        let bytes = |w: Option<u64>| w.and_then(|w| w.checked_mul(WORD_BYTES));
        let (upper, limit, space, allocating) = (words(1), words(2), words(3), words(4));
        let mut event = OomEvent::new(Kind::SparsecoreAllocation, line);
        event.error_code = Some("E3000".to_string());
        event.used_bytes = bytes(upper);
        event.capacity_bytes = bytes(limit);
        event.requested_bytes = bytes(allocating);
        event.memory_space = space.and_then(space_name).map(str::to_string);
        event.op = regex!(r"Hlo-Op: (\S+?):? error").captures(text).map(|op| op[1].to_string());
        event.shape = regex!(r"memref<[^>]*>").find(text).map(|m| m.as_str().to_string());
        let section = "SparseCore allocation (4-byte words)";
        if let Some(space) = space {
            event.count(section, "memory space", space);
        }
        for (name, words) in [
            ("current allocation offset upper bound", upper),
            ("user allocatable offset upper bound", limit),
            ("allocating", allocating),
        ] {
            let bytes = bytes(words).and_then(|b| i64::try_from(b).ok());
            event.push_item(section, Item { name: name.to_string(), bytes, count: words, note: None });
        }
        return Some(Detected::at(event, text, &found));
    }
    if let Some(found) =
        regex!(r"Fixed size allocations \(([^)]*)\) do not fit in TileSpmem \(([^)]*)\)").captures(text)
    {
        let mut event = OomEvent::new(Kind::SparsecoreAllocation, line);
        event.error_code = Some("E3000".to_string());
        event.memory_space = Some("tilespmem".to_string());
        event.fact("TileSpmem", "fixed size allocations", None, Some(found[1].to_string()));
        event.fact("TileSpmem", "available", None, Some(found[2].to_string()));
        return Some(Detected::at(event, text, &found));
    }
    let found =
        regex!(r"No viable logical replica count for the embedding table with metadata: (.*)").captures(text)?;
    let mut event = OomEvent::new(Kind::SparsecoreAllocation, line);
    event.error_code = Some("E3001".to_string());
    for pair in regex!(r"(\w+) = (\d+)").captures_iter(&found[1]) {
        let (name, value) = (&pair[1], pair[2].parse::<u64>().ok());
        match (name.ends_with("_bytes"), value) {
            (true, Some(bytes)) => event.fact("Embedding table", name, i64::try_from(bytes).ok(), None),
            (false, Some(count)) => event.count("Embedding table", name, count),
            (_, None) => {}
        }
        if name == "total_spmem_size_bytes" {
            event.capacity_bytes = value;
        }
    }
    Some(Detected::at(event, text, &found))
}

//! Finds an order of the general OOM reader's anchors (`ANCHORS` in
//! `src/oom/vocabulary.rs`) that keeps their packed search cheap on the logs given:
//! `cargo run --release -p xmem-benches --bin anchor-order -- LOG...`.
//!
//! aho-corasick's packed (Teddy) searcher files each literal into a bucket by its place
//! in the list, and a bucket whose literals' first bytes have little in common turns many
//! plain bytes into candidates it must verify: adding one anchor can slow the scan of every
//! line by a tenth (BENCHMARKS.md). This swaps two anchors at a time, keeps a swap that
//! makes the search of the logs faster, and prints the list to paste back. The anchors named
//! by a constant at the list's end (`MEMORY_ANCHOR`, `ALLOCATION_ANCHOR`) stay last, in their
//! order: the reader relies on it.

use std::time::Instant;

use aho_corasick::{AhoCorasick, MatchKind};

/// Swaps tried.
const SWAPS: usize = 1500;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/../src/oom/vocabulary.rs");
    let text = std::fs::read_to_string(source)?;
    let (anchors, named_last) =
        anchors(&text).ok_or_else(|| format!("{source}: no `ANCHORS` list of literals, then named constants"))?;
    let mut lines = Vec::new();
    for path in std::env::args().skip(1) {
        let log = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
        lines.extend(log.split(|&b| b == b'\n').map(<[u8]>::to_ascii_lowercase));
    }
    if lines.is_empty() {
        return Err("usage: anchor-order LOG... (the logs to keep the search cheap on)".into());
    }
    let mut order = anchors;
    let last: Vec<String> = named_last.iter().map(|(_, value)| value.clone()).collect();
    let with_last = |order: &[String]| order.iter().chain(&last).cloned().collect::<Vec<_>>();
    let start = cost(&with_last(&order), &lines)?;
    let mut best = start;
    // A fixed xorshift: the same logs give the same order.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..SWAPS {
        let (i, j) = (next(order.len()), next(order.len()));
        order.swap(i, j);
        let tried = cost(&with_last(&order), &lines)?;
        // (A swap must win by more than the timer's noise.)
        if tried < best * 0.995 {
            best = tried;
        } else {
            order.swap(i, j);
        }
    }
    eprintln!("search of the logs: {:.2} ms in the present order, {:.2} ms in this one", start * 1e3, best * 1e3);
    for anchor in &order {
        println!("    {anchor:?},");
    }
    for (name, _) in &named_last {
        println!("    {name},");
    }
    Ok(())
}

/// A constant's name and its value.
type Named = (String, String);

/// The literals of `ANCHORS`, and the constants named at its end with their values.
fn anchors(source: &str) -> Option<(Vec<String>, Vec<Named>)> {
    let list = source.split_once("pub(super) const ANCHORS: &[&str] = &[")?.1.split_once("];")?.0;
    let mut literals = Vec::new();
    let mut named = Vec::new();
    for entry in list.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with("//")) {
        let entry = entry.strip_suffix(',')?;
        match entry.strip_prefix('"') {
            // (A literal after a named constant would be moved before it.)
            Some(literal) if named.is_empty() => literals.push(literal.strip_suffix('"')?.to_string()),
            Some(_) => return None,
            None => {
                let value = source.split_once(&format!("pub(super) const {entry}: &str = \""))?.1.split_once('"')?.0;
                named.push((entry.to_string(), value.to_string()));
            }
        }
    }
    (!named.is_empty()).then_some((literals, named))
}

/// The least time of three to search every line for the anchors in this order.
fn cost(anchors: &[String], lines: &[Vec<u8>]) -> Result<f64, aho_corasick::BuildError> {
    let searcher = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(anchors.iter().map(|anchor| anchor.to_ascii_lowercase()))?;
    let mut least = f64::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let found: usize = lines.iter().map(|line| searcher.find_iter(line.as_slice()).count()).sum();
        std::hint::black_box(found);
        least = least.min(started.elapsed().as_secs_f64());
    }
    Ok(least)
}

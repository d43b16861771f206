//! PyTorch's CUDA (and HIP) caching allocator, in every wording since 1.x:
//! the parenthesised `(GPU 0; 6.00 GiB total capacity; … cached)` form, the
//! `reserved in total by PyTorch` form, and the current sentences
//! (`GPU 0 has a total capacity of …`, including the `capacty` typo of 2.1).

use super::line::Line;
use super::scanner::Detected;
use super::size;
use super::{Kind, OomEvent};

/// PyTorch's `format_size`: `1.50 GiB`, `755.50 KiB`, `1024 bytes`.
const P: &str = r"\d+(?:\.\d+)? (?:bytes|KiB|MiB|GiB|TiB)";

const SECTION: &str = "PyTorch";

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let start = regex!(r"(?:CUDA|HIP) out of memory\. Tried to allocate").find(&line.text)?.start();
    Some(Detected::message(Kind::PytorchCudaOom, line, start, fill))
}

/// Reads every figure the message gives; true once its last figure is there.
fn fill(event: &mut OomEvent, text: &str) -> bool {
    let bytes = |s: &str| size::parse(s);
    event.breakdown.clear();
    event.requested_bytes =
        regex!(&format!(r"Tried to allocate ({P})")).captures(text).and_then(|c| size::unsigned(bytes(&c[1])));
    let mut complete = false;
    if let Some(found) =
        regex!(&format!(r"GPU (\d+) has a total capac(?:i)?ty of ({P}) of which ({P}) is free")).captures(text)
    {
        event.memory_space = Some(format!("GPU {}", &found[1]));
        event.capacity_bytes = size::unsigned(bytes(&found[2]));
        event.free_bytes = size::unsigned(bytes(&found[3]));
        if let Some(allowed) = regex!(&format!(r"({P}) allowed;")).captures(text) {
            event.fact(SECTION, "allowed", bytes(&allowed[1]), None);
        }
    } else if let Some(found) = regex!(&format!(
        r"\(GPU (\d+); ({P}) total capacity; ({P}) already allocated; ({P}) free; (?:({P}) allowed; )?({P}) (reserved in total by PyTorch|cached)\)"
    ))
    .captures(text)
    {
        event.memory_space = Some(format!("GPU {}", &found[1]));
        event.capacity_bytes = size::unsigned(bytes(&found[2]));
        event.free_bytes = size::unsigned(bytes(&found[4]));
        event.fact(SECTION, "already allocated", bytes(&found[3]), None);
        if let Some(allowed) = found.get(5) {
            event.fact(SECTION, "allowed", bytes(allowed.as_str()), None);
        }
        event.fact(SECTION, &found[7], bytes(&found[6]), None);
        complete = true;
    }
    for found in regex!(&format!(r"Process (\d+) has ({P}) memory in use")).captures_iter(text) {
        event.fact(SECTION, &format!("process {}", &found[1]), bytes(&found[2]), None);
    }
    if let Some(found) =
        regex!(&format!(r"Including non-PyTorch memory, this process has ({P}) memory in use")).captures(text)
    {
        event.used_bytes = size::unsigned(bytes(&found[1]));
        event.fact(SECTION, "this process, including non-PyTorch memory", bytes(&found[1]), None);
    }
    if let Some(found) = regex!(&format!(
        r"Of the allocated memory ({P}) is allocated by PyTorch, (?:with ({P}) allocated in private pools \(e\.g\., CUDA Graphs\), )?and ({P}) is reserved by PyTorch but unallocated"
    ))
    .captures(text)
    {
        event.fact(SECTION, "allocated by PyTorch", bytes(&found[1]), None);
        if let Some(private) = found.get(2) {
            event.fact(SECTION, "in private pools", bytes(private.as_str()), None);
        }
        event.fact(SECTION, "reserved by PyTorch but unallocated", bytes(&found[3]), None);
        complete = true;
    }
    complete
}

//! PyTorch's caching allocators, in every wording since 0.x: CUDA's
//! `THCudaCheck FAIL … out of memory` and `cuda runtime error (2) : out of
//! memory`, the parenthesised `(GPU 0; 6.00 GiB total capacity; … cached)`
//! form, the `reserved in total by PyTorch` form, the current sentences
//! (`GPU 0 has a total capacity of …`, including the `capacty` typo of 2.1),
//! the same from HIP (ROCm) and XPU, and Apple's MPS backend
//! (`MPS backend out of memory (MPS allocated: …, other allocations: …, max allowed: …)`);
//! and the count of failures in its memory summary, pasted without the message.

use super::block::Detected;
use super::event::{Kind, OomEvent};
use super::line::Line;
use super::size;

/// PyTorch's `format_size`: `1.50 GiB`, `755.50 KiB`, `1024 bytes`; MPS
/// prints the same binary sizes as `KB`, `MB`, `GB` before PyTorch 2.3.
const P: &str = r"\d+(?:\.\d+)? (?:bytes|KiB|MiB|GiB|TiB|KB|MB|GB|TB)";

const SECTION: &str = "PyTorch";

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    // IPEX refuses blocks over 4 GB before trying: `Current platform can NOT allocate memory block with size larger than 4GB! Tried to allocate …`.
    if let Some(found) =
        regex!(r"(?:CUDA|HIP|XPU|NPU) out of memory\. Tried to allocate|can NOT allocate memory block with size larger than \w+! Tried to allocate").find(text)
    {
        return Some(Detected::message(Kind::PytorchCudaOom, line, found.start(), fill));
    }
    if let Some(found) = regex!(r"Allocation on device \d+ would exceed allowed memory").find(text) {
        return Some(Detected::message(Kind::PytorchCudaOom, line, found.start(), allowed));
    }
    if let Some(found) = regex!(r"(?i)MPS backend out of memory").find(text) {
        return Some(Detected::message(Kind::PytorchCudaOom, line, found.start(), mps));
    }
    // The count of the allocator's failures in its memory summary (`torch.cuda.memory_summary()`:
    // `|   CUDA OOMs: 1   |   cudaMalloc retries: 1   |`): above zero, a failure whose message
    // was not pasted, or that the message just before it was.
    if let Some(found) = regex!(r"\bCUDA OOMs: +([1-9]\d*) +\|").captures(text) {
        let mut event = OomEvent::new(Kind::PytorchCudaOom, line);
        event.truncated = true;
        event.fact(SECTION, "CUDA OOMs in the memory summary", None, Some(found[1].to_string()));
        return Some(Detected::at(event, text, &found));
    }
    // PyTorch before 1.0 (the THC library's check) and a failed CUDA call since: no figures.
    let found = regex!(
        r"THCudaCheck FAIL file=(\S+) line=(\d+) error=2 : out of memory|cuda runtime error \(2\) : out of memory(?: at (\S+?):(\d+))?|(?:CUDA|HIP) error: out of memory"
    )
    .captures(text)?;
    let mut event = OomEvent::new(Kind::PytorchCudaOom, line);
    if let (Some(file), Some(at)) = (found.get(1).or(found.get(3)), found.get(2).or(found.get(4))) {
        event.fact(SECTION, "raised at", None, Some(format!("{}:{}", file.as_str(), at.as_str())));
    }
    // Since PyTorch 1.0 the caching allocator says `CUDA out of memory. Tried to allocate`:
    // `CUDA error: out of memory` is a CUDA call's own, outside the allocator.
    if found[0].ends_with("error: out of memory") {
        event.fact("Driver", "error", None, Some(found[0].to_string()));
    }
    Some(Detected::at(event, text, &found))
}

/// PyTorch's message when the allocator's limit (a memory fraction, or
/// ComfyUI's) is reached, one figure per line or all on one:
/// `Allocation on device 0 would exceed allowed memory. (out of memory)` /
/// `Currently allocated : 6.89 GiB` / `Requested : 320.00 MiB` /
/// `Device limit : 23.69 GiB` / `Free (according to CUDA): 2.94 MiB`.
fn allowed(event: &mut OomEvent, text: &str) -> bool {
    let Some(found) = regex!(&format!(
        r"Allocation on device (\d+) would exceed allowed memory\. \(out of memory\)\s*Currently allocated\s*: ({P})\s*Requested\s*: ({P})\s*Device limit\s*: ({P})\s*Free \(according to CUDA\)\s*: ({P})"
    ))
    .captures(text) else {
        return false;
    };
    event.memory_space = Some(format!("GPU {}", &found[1]));
    event.used_bytes = size::unsigned(size::parse(&found[2]));
    event.requested_bytes = size::unsigned(size::parse(&found[3]));
    event.capacity_bytes = size::unsigned(size::parse(&found[4]));
    event.device_bytes = event.capacity_bytes;
    event.free_bytes = size::unsigned(size::parse(&found[5]));
    // Without a fraction set, PyTorch prints a limit far above any device: there is no cap then.
    let fraction_limit = regex!(&format!(r"PyTorch limit \(set by user-supplied memory fraction\)\s*:\s*({P})"))
        .captures(text)
        .and_then(|limit| size::unsigned(size::parse(&limit[1])));
    event.limit_bytes = fraction_limit.filter(|&limit| event.device_bytes.is_none_or(|device| limit < device));
    true
}

/// `MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB,
/// max allowed: 27.20 GiB). Tried to allocate 292.50 MiB on private pool.`
fn mps(event: &mut OomEvent, text: &str) -> bool {
    let Some(found) = regex!(&format!(
        r"MPS allocated: ({P}), other allocations: ({P}), max allowed: ({P})\)\.?\s*Tried to allocate ({P})(?: on (\w+) pool)?"
    ))
    .captures(text) else {
        return false;
    };
    event.clear_breakdown();
    event.memory_space = Some("mps".to_string());
    event.used_bytes = size::unsigned(size::parse(&found[1]));
    event.capacity_bytes = size::unsigned(size::parse(&found[3]));
    event.requested_bytes = size::unsigned(size::parse(&found[4]));
    event.fact(SECTION, "MPS allocated", size::parse(&found[1]), None);
    event.fact(SECTION, "other allocations", size::parse(&found[2]), None);
    event.fact(SECTION, "max allowed", size::parse(&found[3]), None);
    if let Some(pool) = found.get(5) {
        event.fact(SECTION, "pool", None, Some(pool.as_str().to_string()));
    }
    true
}

/// Reads every figure the message gives; true once its last figure is there.
fn fill(event: &mut OomEvent, text: &str) -> bool {
    let bytes = |s: &str| size::parse(s);
    event.clear_breakdown();
    event.requested_bytes =
        regex!(&format!(r"Tried to allocate ({P})")).captures(text).and_then(|c| size::unsigned(bytes(&c[1])));
    let mut complete = false;
    if let Some(found) =
        // (`is free` may be joined without its space where a terminal's wrap fell between the
        // words: DRGN-AI's `… of which 3.11 GiB is` / `free. Including …`.)
        regex!(&format!(r"GPU (\d+) has a total capac(?:i)?ty of ({P})(?: of which ({P}) is ?free)?")).captures(text)
    {
        event.memory_space = Some(format!("GPU {}", &found[1]));
        event.capacity_bytes = size::unsigned(bytes(&found[2]));
        event.device_bytes = event.capacity_bytes;
        event.free_bytes = found.get(3).and_then(|free| size::unsigned(bytes(free.as_str())));
        if let Some(allowed) = regex!(&format!(r"({P}) allowed;")).captures(text) {
            event.fact(SECTION, "allowed", bytes(&allowed[1]), None);
            event.limit_bytes = size::unsigned(bytes(&allowed[1]));
        }
    } else if let Some(found) = regex!(&format!(
        r"\(\s*(GPU|NPU|XPU)\s+(\d+);\s*({P}) total capacity;\s*({P}) already allocated;\s*(?:({P}) free;\s*)?(?:({P}) allowed;\s*)?(?:{P} current active;\s*)?({P}) (reserved in total by PyTorch|cached)\s*\)"
    ))
    .captures(text)
    {
        event.memory_space = Some(format!("{} {}", &found[1], &found[2]));
        event.capacity_bytes = size::unsigned(bytes(&found[3]));
        event.device_bytes = event.capacity_bytes;
        event.free_bytes = found.get(5).and_then(|free| size::unsigned(bytes(free.as_str())));
        // What PyTorch holds is all this form says is in use.
        event.used_bytes = size::unsigned(bytes(&found[4]));
        event.fact(SECTION, "already allocated", bytes(&found[4]), None);
        if let Some(allowed) = found.get(6) {
            event.fact(SECTION, "allowed", bytes(allowed.as_str()), None);
            event.limit_bytes = size::unsigned(bytes(allowed.as_str()));
        }
        event.fact(SECTION, &found[8], bytes(&found[7]), None);
        complete = true;
    }
    let mut processes = Vec::new();
    for found in regex!(&format!(r"Process (\d+) has ({P}) memory in use")).captures_iter(text) {
        event.fact(SECTION, &format!("process {}", &found[1]), bytes(&found[2]), None);
        processes.push(bytes(&found[2]));
    }
    if let Some(found) =
        regex!(&format!(r"Including non-PyTorch memory, this process has ({P}) memory in use")).captures(text)
    {
        event.used_bytes = size::unsigned(bytes(&found[1]));
        event.fact(SECTION, "this process, including non-PyTorch memory", bytes(&found[1]), None);
    }
    // (A wrapper may cut the message after its first clause: TabPFN's `Of the allocated memory
    // 47.18 GiB is allocated by PyTorch.`)
    if let Some(found) = regex!(&format!(
        r"Of the allocated memory ({P}) is allocated by PyTorch(?:, (?:with ({P}) allocated in private pools \(e\.g\., CUDA Graphs\), )?and ({P}) is reserved by PyTorch but unallocated)?"
    ))
    .captures(text)
    {
        event.fact(SECTION, "allocated by PyTorch", bytes(&found[1]), None);
        // The device's use is this process's (`this process has N memory in use`); without
        // it, the one process the message lists, or else what PyTorch allocated (ROCm's
        // message lists no process).
        if event.used_bytes.is_none() {
            let only_process = if let [only] = processes[..] { only } else { None };
            event.used_bytes = size::unsigned(only_process.or_else(|| bytes(&found[1])));
        }
        if let Some(private) = found.get(2) {
            event.fact(SECTION, "in private pools", bytes(private.as_str()), None);
        }
        if let Some(unallocated) = found.get(3) {
            event.fact(SECTION, "reserved by PyTorch but unallocated", bytes(unallocated.as_str()), None);
            complete = true;
        }
    }
    complete
}

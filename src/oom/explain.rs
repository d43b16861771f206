//! From the facts of an event to what a reader needs first: the error code
//! its kind implies, the excess when the log gives both sides, a one-sentence
//! verdict, and the advice.

use super::advice;
use super::event::{Framework, Kind, OomEvent, Phase};
use super::gpu::{ARGUMENTS, REMAT};
use crate::interner::Interner;
use crate::units::human_bytes_precise as size;

/// `texts` holds the advice already given, so events that get the same
/// advice share it.
pub(super) fn explain(event: &mut OomEvent, texts: &mut Interner) {
    if event.phase.is_none() {
        event.phase = phase(event.kind);
    }
    if event.error_code.is_none() {
        event.error_code = implied_code(event).map(str::to_string);
    }
    // What a message says exceeds the capacity: the usage it reports, or for
    // a kernel (Triton, XLA GPU shared memory) the amount it requested.
    let over = match event.kind {
        Kind::CompileTimeOom | Kind::SparsecoreAllocation => event.used_bytes.or(event.requested_bytes),
        Kind::TritonOutOfResources => event.requested_bytes,
        _ => None,
    };
    if event.exceeded_by_bytes.is_none() {
        if let (Some(over), Some(capacity)) = (over, event.capacity_bytes) {
            event.exceeded_by_bytes = over.checked_sub(capacity).filter(|&over| over > 0);
        }
    }
    event.summary = summary(event);
    event.advice = advice::advice(event).iter().map(|text| texts.text(text)).collect();
}

/// When a kind of failure happens, unless the log says otherwise (autotuning).
fn phase(kind: Kind) -> Option<Phase> {
    match kind {
        Kind::CompileTimeOom | Kind::SparsecoreAllocation | Kind::TritonOutOfResources => Some(Phase::Compile),
        Kind::BufferAssignmentOom | Kind::BfcAllocatorOom | Kind::RuntimeAllocationFailure | Kind::PytorchCudaOom => {
            Some(Phase::Runtime)
        }
        Kind::HostOom => Some(Phase::Host),
        Kind::Unrecognised => None,
    }
}

/// The code XLA gives this kind of failure when the log does not print one:
/// E1000 for a compile-time HBM OOM, E1001 for scoped VMEM.
fn implied_code(event: &OomEvent) -> Option<&'static str> {
    match (event.kind, event.memory_space.as_deref()) {
        (Kind::CompileTimeOom, Some("hbm")) => Some("E1000"),
        (Kind::CompileTimeOom, Some("vmem")) => Some("E1001"),
        _ => None,
    }
}

/// The kind as a reader names it, with the space and the code:
/// `compile-time HBM OOM (E1000)`.
fn title(event: &OomEvent) -> String {
    let name = match event.kind {
        Kind::CompileTimeOom if event.find_section(REMAT).is_some() => "XLA rematerialization warning".to_string(),
        Kind::CompileTimeOom if event.find_section(ARGUMENTS).is_some() => "XLA memory limit warning".to_string(),
        Kind::CompileTimeOom if event.phase == Some(Phase::Autotune) => "autotuning OOM".to_string(),
        Kind::CompileTimeOom => match &event.memory_space {
            Some(space) => format!("compile-time {} OOM", space.to_uppercase()),
            None => "compile-time OOM".to_string(),
        },
        Kind::SparsecoreAllocation => "SparseCore allocation failure".to_string(),
        Kind::BufferAssignmentOom => "XLA GPU OOM".to_string(),
        Kind::BfcAllocatorOom if event.non_fatal => "BFC allocator OOM, not fatal".to_string(),
        Kind::BfcAllocatorOom => "BFC allocator OOM".to_string(),
        Kind::RuntimeAllocationFailure if event.framework == Some(Framework::CuPy) => "CuPy OOM".to_string(),
        Kind::RuntimeAllocationFailure if event.phase == Some(Phase::Autotune) => {
            "allocation failure while autotuning".to_string()
        }
        Kind::RuntimeAllocationFailure => "runtime allocation failure".to_string(),
        Kind::TritonOutOfResources => "Triton out of resources".to_string(),
        Kind::PytorchCudaOom => match event.memory_space.as_deref() {
            Some("mps") => "PyTorch MPS OOM".to_string(),
            _ => format!("PyTorch {} OOM", event.exception_device().unwrap_or("CUDA")),
        },
        Kind::HostOom => "host out of memory".to_string(),
        Kind::Unrecognised => "unrecognised memory error".to_string(),
    };
    match &event.error_code {
        Some(code) => format!("{name} ({code})"),
        None => name,
    }
}

fn summary(event: &OomEvent) -> String {
    let detail = match event.kind {
        Kind::CompileTimeOom => compile_time(event),
        Kind::SparsecoreAllocation => needs(event).map(|needs| match &event.memory_space {
            Some(space) => format!("{space} {needs}"),
            None => needs,
        }),
        Kind::BufferAssignmentOom => {
            let total = event.figure("BufferAssignment stats", "total allocation");
            match (could_not(event, "allocate"), total) {
                (Some(failed), Some(total)) => Some(format!("{failed}; the program's buffers total {}", size(total))),
                (Some(failed), None) => Some(failed),
                (None, Some(total)) => Some(format!("the program's buffers total {}", size(total))),
                (None, None) => None,
            }
        }
        Kind::BfcAllocatorOom => bfc(event),
        Kind::RuntimeAllocationFailure => runtime(event),
        Kind::TritonOutOfResources => triton(event),
        Kind::PytorchCudaOom => could_not(event, "allocate").map(|mut text| {
            if let Some(limit) = event.limit_bytes {
                text.push_str(&format!("; the process may use {} (a cap below the device)", size(limit)));
            }
            text
        }),
        Kind::HostOom => host(event),
        // Sizes the general reader found say more than the message, which the event's line shows.
        Kind::Unrecognised => could_not(event, "allocate").or_else(|| Some(event.message.clone())),
    };
    match detail {
        Some(detail) => format!("{}: {detail}", title(event)),
        None => title(event),
    }
}

/// `needs 21.95 GiB of 15.48 GiB — 6.47 GiB over`.
fn needs(event: &OomEvent) -> Option<String> {
    let (used, capacity) = (event.used_bytes?, event.capacity_bytes?);
    let mut text = format!("needs {} of {}", size(used), size(capacity));
    if let Some(over) = event.exceeded_by_bytes {
        text.push_str(&format!(" — {} over", size(over)));
    }
    if let Some(requested) = event.requested_bytes {
        text.push_str(&format!(", while allocating {}", size(requested)));
    }
    Some(text)
}

/// `could not allocate 22.00 MiB on GPU 0: 11.06 MiB free of 23.65 GiB`.
fn could_not(event: &OomEvent, verb: &str) -> Option<String> {
    let mut text = format!("could not {verb} {}", size(event.requested_bytes?));
    if let Some(space) = &event.memory_space {
        // A numbered device (`GPU 0`, `device ordinal 0`) is a place; `hbm` is a memory.
        let preposition = if space.contains(|c: char| c.is_ascii_digit()) { "on" } else { "in" };
        text.push_str(&format!(" {preposition} {space}"));
    }
    match (event.free_bytes, event.capacity_bytes) {
        (Some(free), Some(capacity)) => text.push_str(&format!(": {} free of {}", size(free), size(capacity))),
        (Some(free), None) => text.push_str(&format!(": {} free", size(free))),
        (None, Some(capacity)) => text.push_str(&format!(" of {}", size(capacity))),
        (None, None) => {}
    }
    Some(text)
}

fn compile_time(event: &OomEvent) -> Option<String> {
    if event.find_section(REMAT).is_some() {
        let (used, capacity) = (event.used_bytes?, event.capacity_bytes?);
        return Some(format!(
            "the program needs {} after rematerialization, more than the {} limit it is compiled for — {} over; \
             XLA compiles it anyway",
            size(used),
            size(capacity),
            size(used.saturating_sub(capacity))
        ));
    }
    if event.find_section(ARGUMENTS).is_some() {
        let limit = match event.capacity_bytes {
            Some(capacity) => format!("the {} memory limit", size(capacity)),
            None => "the memory limit".to_string(),
        };
        return Some(format!(
            "the program's arguments and outputs take {}, more than {limit}",
            size(event.used_bytes?)
        ));
    }
    if event.phase == Some(Phase::Autotune) {
        let count = |name: &str| event.breakdown.iter().flat_map(|s| &s.items).find(|i| i.name == name)?.count;
        return Some(format!(
            "the autotuner found no config for {} of {} instructions: their candidate kernels ran out of memory",
            count("instructions without a config")?,
            count("instructions tuned")?
        ));
    }
    if let Some(needs) = needs(event) {
        return Some(needs);
    }
    if let (Some(tc), Some(sc), Some(available)) =
        (event.figure("HBM usage", "TensorCore"), event.figure("HBM usage", "SparseCore"), event.capacity_bytes)
    {
        return Some(format!(
            "TensorCore {} + SparseCore {} of HBM exceed the {} available",
            size(tc),
            size(sc),
            size(available)
        ));
    }
    if let (Some(requested), Some(capacity)) = (event.requested_bytes, event.capacity_bytes) {
        return Some(format!("an allocation of {} would exceed the {} of memory", size(requested), size(capacity)));
    }
    if let Some(op) = &event.op {
        return Some(format!("ran out while allocating on stack for {op}"));
    }
    if let Some(total) = event.breakdown.first().and_then(|section| Some((&section.name, section.bytes?))) {
        return Some(format!("{} >= {} (the log does not show the capacity)", total.0, size(total.1)));
    }
    let largest = event.allocations.first()?.size_bytes?;
    Some(format!("the log holds only part of the allocation list; the first is {}", size(largest)))
}

fn bfc(event: &OomEvent) -> Option<String> {
    let allocator = event.allocator.as_deref().unwrap_or("the allocator");
    let mut parts = Vec::new();
    if let Some(requested) = event.requested_bytes {
        let mut failed = format!("{allocator} could not allocate {}", size(requested));
        if let Some(rounded) = event.figure("Request", "rounded to") {
            failed.push_str(&format!(" (rounded to {rounded} bytes)"));
        }
        if let Some(op) = event.op.as_deref().filter(|op| !op.is_empty()) {
            failed.push_str(&format!(" for op {op}"));
        }
        parts.push(failed);
    } else if let Some(shape) = &event.shape {
        parts.push(format!("{allocator} could not allocate a tensor of shape {shape}"));
    }
    if let (Some(used), Some(capacity)) = (event.used_bytes, event.capacity_bytes) {
        parts.push(format!("{} in use of a {} limit", size(used), size(capacity)));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn runtime(event: &OomEvent) -> Option<String> {
    if event.error_code.as_deref() == Some("E0101") {
        let mut text = format!("could not reserve {} for the program", size(event.requested_bytes?));
        if let Some(program) = &event.op {
            text.push_str(&format!(" '{program}'"));
        }
        if let Some(free) = event.free_bytes {
            text.push_str(&format!(": {} free", size(free)));
            if let Some(reservable) = event.figure("Program reservation", "reservable") {
                text.push_str(&format!(", {} reservable", size(reservable)));
            }
        }
        return Some(text);
    }
    if !event.allocations.is_empty() {
        let (requested, capacity) = (event.requested_bytes?, event.capacity_bytes?);
        let space = event.memory_space.as_deref().unwrap_or("device");
        return Some(format!("an allocation of {} would exceed the {} of {space}", size(requested), size(capacity)));
    }
    let Some(mut text) = could_not(event, "allocate") else {
        if event.note("Driver", "error").is_some_and(|e| e.contains("loading the program's code")) {
            let program = event.program.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
            return Some(format!("CUDA could not load the program{program}'s code: memory outside XLA's pool ran out"));
        }
        return event.shape.as_ref().map(|shape| format!("could not allocate a tensor of shape {shape}"));
    };
    if let Some(error) = event.note("Driver", "error") {
        text.push_str(&format!(" ({error})"));
    }
    if event.phase == Some(Phase::Autotune) {
        if let Some(op) = &event.op {
            let shape = event.shape.as_deref().map(|shape| format!(" ({shape})")).unwrap_or_default();
            text.push_str(&format!(" for a candidate kernel of {op}{shape}"));
        }
    }
    if event.framework == Some(Framework::CuPy) {
        match (event.used_bytes, event.limit_bytes) {
            (Some(used), Some(limit)) => {
                text.push_str(&format!("; the pool had {} allocated of its {} limit", size(used), size(limit)))
            }
            (Some(0), None) => text
                .push_str("; the pool had allocated nothing before: this request alone is more than the GPU had free"),
            (Some(used), None) => text.push_str(&format!("; the pool had {} allocated", size(used))),
            _ => {}
        }
    }
    if let Some(program) = &event.program {
        text.push_str(&format!(" in {program}"));
    }
    Some(text)
}

fn host(event: &OomEvent) -> Option<String> {
    if let Some(process) = &event.op {
        if event.breakdown.iter().any(|s| s.name == "Killed process") {
            let mut text = format!("the kernel's OOM killer killed {process}");
            if let Some(used) = event.used_bytes {
                text.push_str(&format!(" ({} resident)", size(used)));
            }
            return Some(text);
        }
    }
    if let Some(kills) = event.find_section("cgroup").and_then(|s| s.items.first()).and_then(|i| i.count) {
        let place = event.op.as_deref().map(|step| format!(" in step {step}")).unwrap_or_default();
        return Some(format!("the cgroup's limit was reached: {kills} oom-kill event(s){place}"));
    }
    if let Some(requested) = event.requested_bytes {
        let shape = event.shape.as_deref().map(|shape| format!(" for an array of shape {shape}")).unwrap_or_default();
        return Some(format!("could not allocate {}{shape} in host memory", size(requested)));
    }
    Some(event.message.clone())
}

fn triton(event: &OomEvent) -> Option<String> {
    let space = event.memory_space.as_deref()?;
    match (event.requested_bytes, event.capacity_bytes) {
        (Some(required), Some(limit)) => {
            let mut text =
                format!("the kernel needs {} of {space}, the hardware limit is {}", size(required), size(limit));
            if let Some(over) = event.exceeded_by_bytes {
                text.push_str(&format!(" — {} over", size(over)));
            }
            Some(text)
        }
        _ => {
            let count = |name: &str| event.breakdown.iter().flat_map(|s| &s.items).find(|i| i.name == name)?.count;
            Some(format!(
                "the kernel needs {} of {space}, the hardware limit is {}",
                count("required")?,
                count("hardware limit")?
            ))
        }
    }
}

//! The verdict on one incident: the facts of all its events together (the
//! allocator's pool and holders from its dump, the program from the
//! framework's error, XLA's estimate from its warning, the cap from
//! PyTorch's message) decide which cause the title names, and the advice
//! fits that cause. Causes are weighed in a fixed order, the first one the
//! facts support wins:
//!
//! 1. one request larger than the device, then than the whole pool;
//! 2. a cap set below the device (a per-process fraction, a pool limit) while the device had room;
//! 3. the program's own need above the limit it was compiled for;
//! 4. enough free in total but no piece large enough (fragmentation);
//! 5. memory held by live arrays of programs (the allocator's chunk annotations);
//! 6. autotuning during compilation.
//!
//! Advice that the facts rule out (an allocator setting for a request larger
//! than the device, a larger memory fraction when the device is smaller than
//! the request) is never given.

use super::event::{Cause, Framework, Holder, Kind, OomEvent, Phase, UserFrame};
use super::gpu::{ARGUMENTS, REMAT};
use crate::units::human_bytes_precise as size;

/// The advice that asks for the program's dump: dropped once `--with` joins it.
pub(super) const JOIN_HINT: &str = "Run `xmem oom LOG --with DUMP_DIR`";

/// How many holders the title names.
const NAMED_HOLDERS: usize = 3;

/// JAX's default share of GPU memory for its pool (`XLA_PYTHON_CLIENT_MEM_FRACTION`).
const JAX_DEFAULT_FRACTION: f64 = 0.75;

/// What the verdict says about an incident.
pub(super) struct Verdict {
    pub cause: Option<Cause>,
    /// `None` when no cause is singled out: the primary event's summary stands.
    pub title: Option<String>,
    pub advice: Vec<String>,
    pub program: Option<String>,
    pub user_frame: Option<UserFrame>,
}

/// The facts of one incident, each from the event that states it.
struct Facts<'a> {
    events: Vec<&'a OomEvent>,
    /// The allocation that failed: the first fatal runtime message with a request.
    failure: Option<&'a OomEvent>,
    request: Option<u64>,
    /// The most the failing allocator may use: its pool, or a cap.
    pool: Option<u64>,
    device: Option<u64>,
    free: Option<u64>,
    largest_free: Option<u64>,
    used: Option<u64>,
    /// XLA's own estimate against its limit: a compile-time message whose need is above its capacity.
    need: Option<&'a OomEvent>,
    holders: &'a [Holder],
    autotune: Option<&'a OomEvent>,
    program: Option<String>,
    allocator: Option<&'a str>,
    framework: Option<Framework>,
}

impl<'a> Facts<'a> {
    fn of(events: Vec<&'a OomEvent>) -> Facts<'a> {
        let failure = events
            .iter()
            .copied()
            .find(|e| !e.non_fatal && e.requested_bytes.is_some() && e.phase != Some(Phase::Compile));
        let first = |f: &dyn Fn(&OomEvent) -> Option<u64>| -> Option<u64> {
            failure.and_then(f).or_else(|| events.iter().find_map(|e| f(e)))
        };
        let pool = events
            .iter()
            .filter_map(|e| e.limit_bytes)
            .min()
            .or_else(|| events.iter().find(|e| e.kind == Kind::BfcAllocatorOom).and_then(|e| e.capacity_bytes));
        let device = events.iter().find_map(|e| e.device_bytes);
        let largest_free = events.iter().find_map(|e| {
            [
                ("Stats", "LargestFreeBlock"),
                ("Memory summary", "largest free chunk"),
                ("Chunks", "largest free chunk"),
                ("Device buffer", "largest contiguous free"),
            ]
            .iter()
            .find_map(|(section, name)| e.figure(section, name))
            .and_then(|b| u64::try_from(b).ok())
        });
        let need = events
            .iter()
            .copied()
            .filter(|e| e.kind == Kind::CompileTimeOom || e.kind == Kind::SparsecoreAllocation)
            .filter(|e| matches!((e.used_bytes, e.capacity_bytes), (Some(u), Some(c)) if u > c))
            .max_by_key(|e| e.used_bytes.unwrap_or(0).saturating_sub(e.capacity_bytes.unwrap_or(0)));
        Facts {
            failure,
            request: failure.and_then(|e| e.requested_bytes),
            pool,
            device,
            free: first(&|e| e.free_bytes.filter(|_| e.kind != Kind::CompileTimeOom)),
            largest_free,
            used: failure.and_then(|e| {
                // PyTorch's older wording gives what its allocator holds instead of the process's total.
                let held = ["reserved in total by PyTorch", "cached", "already allocated"]
                    .iter()
                    .find_map(|name| e.figure("PyTorch", name))
                    .and_then(|b| u64::try_from(b).ok());
                e.used_bytes.or(held)
            }),
            need,
            holders: events.iter().map(|e| e.held_by.as_slice()).find(|h| !h.is_empty()).unwrap_or_default(),
            autotune: events.iter().copied().find(|e| e.phase == Some(Phase::Autotune)),
            program: events.iter().find_map(|e| e.program.clone()),
            allocator: events.iter().find_map(|e| e.allocator.as_deref()),
            framework: events.iter().find_map(|e| e.framework),
            events,
        }
    }

    /// `jit_step` or, unnamed, `the program`.
    fn who(&self) -> String {
        self.program.clone().unwrap_or_else(|| "the program".to_string())
    }

    /// The failing allocator works under a cap set below the device while the
    /// device had room (PyTorch's `… allowed`, CuPy's `limit set to`).
    fn capped(&self) -> Option<u64> {
        let failure = self.failure?;
        let (request, limit) = (self.request?, failure.limit_bytes?);
        match failure.framework {
            Some(Framework::CuPy) => (self.used.unwrap_or(0).saturating_add(request) > limit).then_some(limit),
            _ if failure.kind == Kind::PytorchCudaOom => {
                let (device, free) = (self.device?, failure.free_bytes?);
                (limit < device && free >= request).then_some(limit)
            }
            _ => None,
        }
    }
}

/// The verdict on one incident's events; `exit_code` is how the job ended,
/// when `xmem run` saw it (a log alone cannot tell).
pub(super) fn verdict(events: Vec<&OomEvent>, exit_code: Option<u8>) -> Verdict {
    let facts = Facts::of(events);
    let user_frame = facts.events.iter().rev().find_map(|e| e.user_frame.clone());
    let decision = match exit_code {
        Some(0) => Some(survived(&facts)),
        _ => decide(&facts, exit_code),
    };
    let (cause, title, advice) = match decision {
        Some((cause, title, advice)) => (Some(cause), Some(title), advice),
        None => (None, None, Vec::new()),
    };
    Verdict { cause, title, advice, program: facts.program.clone(), user_frame }
}

type Decision = (Cause, String, Vec<String>);

/// What the log says (and, when the job failed, its exit code).
fn decide(facts: &Facts, exit_code: Option<u8>) -> Option<Decision> {
    if facts.events.iter().all(|e| e.non_fatal) {
        return not_a_failure(facts);
    }
    if !facts.events.iter().any(|e| is_error(e)) {
        return no_error_followed(facts, exit_code);
    }
    request_above_device(facts)
        .or_else(|| request_above_pool(facts))
        .or_else(|| cap(facts))
        .or_else(|| program_need(facts))
        .or_else(|| fragmentation(facts))
        .or_else(|| other_holders(facts))
        .or_else(|| autotuning(facts))
}

fn not_a_failure(facts: &Facts) -> Option<Decision> {
    let need = facts.need?;
    let (used, capacity) = (need.used_bytes?, need.capacity_bytes?);
    Some((
        Cause::NotAFailure,
        format!(
            "Only a warning: XLA estimates {} needs {}, more than the {} limit it compiles for, and compiled it \
             anyway; no memory error follows in this log",
            facts.who(),
            size(used),
            size(capacity)
        ),
        vec![format!(
            "If this program runs out of memory later, this is why: lower its peak by at least {} \
             (jax.jit(..., donate_argnums=...), jax.checkpoint, a smaller batch).",
            size(used - capacity)
        )],
    ))
}

/// A message that is an error in its own right: not a warning the log marks
/// as one, nor the allocator's warning that it ran out (a job survives that
/// when memory is freed and the allocation retried).
fn is_error(event: &OomEvent) -> bool {
    !event.non_fatal && !event.allocator_warning
}

/// The allocator said it ran out, and nothing after it says the job failed.
fn no_error_followed(facts: &Facts, exit_code: Option<u8>) -> Option<Decision> {
    let warning = facts.events.iter().copied().find(|e| e.allocator_warning)?;
    let (after, first) = match exit_code {
        // Part of the allocator's report (a pasted excerpt: cut at its end, or
        // without its header) says nothing of what came before or after it.
        None if warning.truncated => (
            "and the log holds only part of its report, with no error after it: whether the job failed is not in this log"
                .to_string(),
            "If the job died, the error that ended it is not in this excerpt.".to_string(),
        ),
        None => (
            "but no error follows in the log: the job may have recovered (the allocator frees memory and retries), \
             or the log stops before its error"
                .to_string(),
            format!(
                "See whether the job went on (its later output, its exit code; `xmem run -- CMD` reports it). If it \
                 went on, {} If it died, the error that ended it is not in this log.",
                CLOSE_TO_THE_LIMIT
            ),
        ),
        Some(code) => (
            format!(
                "and no memory error follows in the job's output, yet it exited {code}: it died of something else, or \
                 of this without saying so"
            ),
            format!(
                "Look for what ended the job (exit {code}) in its output; a job the kernel killed (exit 137) is named \
                 in `dmesg`."
            ),
        ),
    };
    let title = format!("{}, {after}{}", ran_out(warning), warned(facts));
    Some((Cause::NoErrorFollowed, title, then(first, "To make room:", room(facts, warning))))
}

/// `xmem run` saw the job exit 0 after this incident: what the log shows is
/// what it survived, and advice is for headroom, not for a failure.
fn survived(facts: &Facts) -> Decision {
    if facts.events.iter().any(|e| is_error(e)) {
        let (title, advice) = match decide(facts, None) {
            Some((_, title, advice)) => (title, advice),
            None => (facts.events.first().map(|e| e.summary.clone()).unwrap_or_default(), Vec::new()),
        };
        let first = "The job handled this error itself (it went on and exited 0): nothing needs fixing unless what \
                     it did instead matters (a retry with less, work it skipped)."
            .to_string();
        let advice = then(first, "To avoid the error:", advice);
        return (Cause::Survived, format!("The job went on after this and exited 0: {title}"), advice);
    }
    let warning = facts.events.iter().copied().find(|e| e.allocator_warning);
    let what = match warning {
        Some(warning) => format!("{} and the job went on (exit 0){}", ran_out(warning), warned(facts)),
        None if facts.need.is_some() => {
            format!("{}, and the job went on (exit 0)", capitalised_first(warned(facts).trim_start_matches("; ")))
        }
        None => format!(
            "{}; the job went on (exit 0)",
            facts.events.first().map(|e| e.summary.as_str()).unwrap_or_default()
        ),
    };
    let room = warning.or(facts.need).or(facts.events.first().copied()).map(|e| room(facts, e)).unwrap_or_default();
    let advice = then(capitalised_first(CLOSE_TO_THE_LIMIT), "To make room:", room);
    (Cause::Survived, format!("{what}: warnings it survived"), advice)
}

/// `lead`, then `intro` and the advice it introduces, when there is any.
fn then(lead: String, intro: &str, advice: Vec<String>) -> Vec<String> {
    if advice.is_empty() {
        return vec![lead];
    }
    [vec![format!("{lead} {intro}")], advice].concat()
}

/// What surviving the allocator's shortage means.
const CLOSE_TO_THE_LIMIT: &str = "it ran close to its memory limit: the allocator waited for memory to be freed and \
    retried, which can slow a step, and a larger batch or model may die here.";

/// What makes room when XLA's warning or `event` shows what ran short: the
/// program's own need first, else the event's own advice.
fn room(facts: &Facts, event: &OomEvent) -> Vec<String> {
    match facts.need {
        Some(need) => program_room(facts, need),
        None => event.advice.iter().map(|advice| advice.to_string()).collect(),
    }
}

/// `GPU_0_bfc ran out of memory trying to allocate 1.00 GiB`, as the allocator's warning says it.
fn ran_out(warning: &OomEvent) -> String {
    match (warning.requested_bytes, warning.allocator.as_deref()) {
        (Some(request), Some(allocator)) => {
            format!("{allocator} ran out of memory trying to allocate {}", size(request))
        }
        (Some(request), None) => format!("The allocator ran out of memory trying to allocate {}", size(request)),
        (None, _) => warning.summary.clone(),
    }
}

/// `; XLA had warned that the program's arguments and outputs, 36.25 GiB, exceed its 27.96 GiB limit`.
fn warned(facts: &Facts) -> String {
    let Some(need) = facts.need else { return String::new() };
    let (Some(used), Some(capacity)) = (need.used_bytes, need.capacity_bytes) else { return String::new() };
    if need.find_section(ARGUMENTS).is_some() {
        format!(
            "; XLA had warned that {}'s arguments and outputs, {}, exceed its {} limit",
            facts.who(),
            size(used),
            size(capacity)
        )
    } else {
        format!("; XLA had warned that {} needs {} against a {} limit", facts.who(), size(used), size(capacity))
    }
}

fn request_above_device(facts: &Facts) -> Option<Decision> {
    let (request, device) = (facts.request?, facts.device?);
    if request <= device {
        return None;
    }
    let title = request_above(facts, request, "device", device);
    Some((Cause::RequestAboveDevice, with_context(facts, title), array_too_large(facts, true)))
}

/// `jit_step requested 3.00 GiB in one allocation, more than the whole GPU_0_bfc pool (2.80 GiB): 208.00 MiB over`.
fn request_above(facts: &Facts, request: u64, memory: &str, bytes: u64) -> String {
    format!(
        "{} requested {} in one allocation, more than the whole {memory} ({}): {} over",
        capitalised(&facts.who()),
        size(request),
        size(bytes),
        size(request - bytes)
    )
}

fn request_above_pool(facts: &Facts) -> Option<Decision> {
    let (request, pool) = (facts.request?, facts.pool?);
    if request <= pool || facts.capped().is_some() {
        return None;
    }
    let pool_name = match facts.allocator {
        Some(allocator) => format!("{allocator} pool"),
        None => "pool".to_string(),
    };
    let title = request_above(facts, request, &pool_name, pool);
    let mut advice = Vec::new();
    let in_host_pool = facts.events.iter().any(|e| e.memory_space.as_deref() == Some("host"));
    match facts.framework {
        // PJRT's pinned host pool (`Out of host memory … with allocator xla_gpu_host_bfc`).
        _ if in_host_pool => advice.push(format!(
            "This pool is JAX's pinned host memory, capped by XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB: a larger cap helps \
             only if the machine has more than {} of RAM free.",
            size(request)
        )),
        Some(Framework::PyTorch) | Some(Framework::CuPy) => {}
        Some(Framework::TensorFlow) => advice.push(format!(
            "TensorFlow's pool is a share of the GPU (per_process_gpu_memory_fraction, or \
             tf.config.set_logical_device_configuration(memory_limit=...)): a larger one helps only if the GPU has \
             more than {}.",
            size(request)
        )),
        Some(Framework::Jax) | None => {
            advice.push(format!(
                "The pool is the share of the GPU that XLA_PYTHON_CLIENT_MEM_FRACTION gives JAX (75% by default; \
                 XLA_CLIENT_MEM_FRACTION in newer JAX): a larger share helps only if the GPU has more than {} free.",
                size(request)
            ));
            let default_device = (pool as f64 / JAX_DEFAULT_FRACTION) as u64;
            if request > default_device {
                advice.push(format!(
                    "If this pool is JAX's default 75% of the GPU, the GPU has about {}, less than the request: then no \
                     setting makes room.",
                    size(default_device)
                ));
            }
        }
    }
    advice.extend(array_too_large(facts, false));
    Some((Cause::RequestAbovePool, with_context(facts, title), advice))
}

/// A single array larger than the memory: only a smaller or split array
/// helps, and when it is larger than the device, nothing else does.
fn array_too_large(facts: &Facts, beyond_device: bool) -> Vec<String> {
    let shape = facts.failure.and_then(|e| e.shape.as_deref()).map(|s| format!(" ({s})")).unwrap_or_default();
    let split = match facts.framework {
        Some(Framework::PyTorch) => "shard it (FSDP, tensor parallelism) or process it in chunks",
        Some(Framework::CuPy) => "process it in chunks",
        _ => "shard it over several devices (jax.sharding.NamedSharding), or process it in chunks (jax.lax.map)",
    };
    let lead = if beyond_device {
        format!("One array{shape} is larger than the device: no allocator setting or memory fraction can make room.")
    } else {
        format!("Or make that array{shape} smaller.")
    };
    vec![format!(
        "{lead} Check its shape (batch, sequence length, an unintended broadcast or outer product), use a smaller \
         dtype, {split}."
    )]
}

fn cap(facts: &Facts) -> Option<Decision> {
    let limit = facts.capped()?;
    let (request, used) = (facts.request?, facts.used.unwrap_or(0));
    let room = match (facts.free, facts.device) {
        (Some(free), Some(device)) => format!(", while {} of the {} device is free", size(free), size(device)),
        _ => String::new(),
    };
    let in_use = facts.used.map(|used| format!("{} in use and ", size(used))).unwrap_or_default();
    let title = format!(
        "The {} cap was reached: {in_use}{} more requested{room}; the cap, not the device, is the limit",
        size(limit),
        size(request)
    );
    let needed = used.saturating_add(request);
    let advice = if facts.failure.is_some_and(|f| f.kind == Kind::PytorchCudaOom) {
        let fraction = facts.device.map(|device| ((needed as f64 / device as f64) * 100.0).ceil() / 100.0);
        let at_least = fraction.map(|f| format!(" (at least {:.2} for this step)", f.min(1.0))).unwrap_or_default();
        vec![
            format!(
                "Raise the cap: torch.cuda.set_per_process_memory_fraction(...){at_least}, or \
                 per_process_memory_fraction in PYTORCH_CUDA_ALLOC_CONF; remove it if the GPU is not shared."
            ),
            "If the cap is there to share the GPU, lower this process's peak instead: a smaller batch, activation \
             checkpointing (torch.utils.checkpoint), mixed precision (torch.autocast)."
                .to_string(),
        ]
    } else {
        vec![format!(
            "Raise the pool's limit: cupy.get_default_memory_pool().set_limit(size=...) (at least {}), or \
             CUPY_GPU_MEMORY_LIMIT; free cached blocks with free_all_blocks() if they are not needed.",
            size(needed)
        )]
    };
    Some((Cause::Cap, with_context(facts, title), advice))
}

fn program_need(facts: &Facts) -> Option<Decision> {
    let need = facts.need?;
    let (used, capacity) = (need.used_bytes?, need.capacity_bytes?);
    if !need.non_fatal {
        // A compile-time failure (TPU) says it all in its own verdict, with its code; its advice is the kind's.
        let title = match &facts.program {
            Some(program) => format!("{} (program {program})", need.summary),
            None => need.summary.clone(),
        };
        return Some((Cause::ProgramNeed, title, Vec::new()));
    }
    let why = if need.find_section(REMAT).is_some() {
        "XLA compiled it for (rematerialization could not lower it)"
    } else {
        "of memory it may use (its arguments and outputs alone exceed it)"
    };
    let mut title = format!(
        "{} needs {}, {} more than the {} limit {why}: the program's own need, not fragmentation",
        capitalised(&facts.who()),
        size(used),
        size(used - capacity),
        size(capacity),
    );
    if let Some(request) = facts.request {
        title.push_str(&format!("; then a {} allocation failed", size(request)));
    }
    let advice = program_room(facts, need);
    Some((Cause::ProgramNeed, with_context(facts, title), advice))
}

/// What lowers a program's own need above its limit (XLA's warning `need`):
/// for JAX, donation, rematerialisation, a smaller step, and the dump that says which.
fn program_room(facts: &Facts, need: &OomEvent) -> Vec<String> {
    if facts.framework == Some(Framework::PyTorch) || need.memory_space.is_some() {
        return Vec::new();
    }
    vec![
        "Donate what the step replaces: jax.jit(step, donate_argnums=...) for the parameters and optimizer state it \
         returns updated, so XLA writes the new values over the old ones instead of beside them."
            .to_string(),
        "Rematerialise: wrap the largest blocks in jax.checkpoint (jax.remat) so activations are recomputed in the \
         backward pass instead of kept."
            .to_string(),
        "Shrink the step: a smaller batch (with gradient accumulation to keep the effective batch), bf16 instead of \
         f32, or shard parameters and optimizer state over more devices."
            .to_string(),
        format!(
            "{JOIN_HINT} (dump with XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto, or use `xmem run`) to see \
             which lines of your code own the peak and what donation saves."
        ),
    ]
}

fn fragmentation(facts: &Facts) -> Option<Decision> {
    let request = facts.request?;
    let failure = facts.failure?;
    let reserved_unused =
        failure.figure("PyTorch", "reserved by PyTorch but unallocated").and_then(|b| u64::try_from(b).ok());
    let mut title = match (facts.free, facts.largest_free, reserved_unused) {
        (Some(free), Some(largest), _) if free >= request && largest < request => format!(
            "Fragmentation: {} is free, more than the {} {} requested, but the largest free piece is {}",
            size(free),
            size(request),
            facts.who(),
            size(largest)
        ),
        // The pool's holes explain the failure only when the device could not
        // give a new segment: with the request free on the device, something else refused it.
        (_, _, Some(unused)) if unused >= request && facts.free.is_none_or(|free| free < request) => {
            let device_free =
                facts.free.map(|free| format!(", while the GPU has {} free", size(free))).unwrap_or_default();
            format!(
                "Fragmentation: PyTorch holds {} reserved but unallocated, more than the {} requested, in pieces too \
                 small for it{device_free}",
                size(unused),
                size(request)
            )
        }
        _ => return None,
    };
    if let Some(holders) = holders_clause(facts) {
        title.push_str(&format!("; {holders}"));
    }
    let mut advice = match facts.framework {
        Some(Framework::PyTorch) => {
            vec!["Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1 and later; max_split_size_mb:<MB> \
             before): segments then grow instead of leaving holes."
                .to_string()]
        }
        Some(Framework::TensorFlow) => vec![CUDA_MALLOC_ASYNC_TF.to_string()],
        _ => vec![
            "XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async (or TF_GPU_ALLOCATOR=cuda_malloc_async) replaces the BFC pool \
             with CUDA's own allocator, which fragments differently; XLA_PYTHON_CLIENT_PREALLOCATE=false starts \
             with an empty pool."
                .to_string(),
        ],
    };
    advice.push(
        "Free large arrays before the big allocation (drop the references to them), or allocate the largest \
         arrays first so smaller ones do not split the memory."
            .to_string(),
    );
    // When live arrays fill most of the pool, keeping fewer alive is what makes room.
    let held: u64 = facts.holders.iter().map(|h| h.bytes).sum();
    if facts.pool.is_some_and(|pool| held > pool / 2) {
        advice.extend(holders_advice(facts));
    }
    Some((Cause::Fragmentation, with_context(facts, title), advice))
}

const CUDA_MALLOC_ASYNC_TF: &str = "TF_GPU_ALLOCATOR=cuda_malloc_async replaces the BFC pool with CUDA's own \
    allocator, which fragments differently.";

fn other_holders(facts: &Facts) -> Option<Decision> {
    let Some(holders) = holders_clause(facts) else { return other_processes(facts) };
    let request = facts.request.map(|r| format!("the {} {} requested could not be allocated; ", size(r), facts.who()));
    let title = format!("{}{holders}", request.unwrap_or_default());
    let advice = holders_advice(facts);
    if advice.is_empty() {
        return None;
    }
    Some((Cause::OtherHolders, with_context(facts, capitalised(&title)), advice))
}

/// PyTorch names the other processes on the GPU (`Process 1246069 has 577.00 MiB
/// memory in use`): when they hold more than the request, they are why it failed.
/// Only when it also names this process (`this process has …`): in a container
/// it cannot tell itself apart, and lists itself as one more process.
fn other_processes(facts: &Facts) -> Option<Decision> {
    let failure = facts.failure.filter(|f| f.kind == Kind::PytorchCudaOom)?;
    let request = facts.request?;
    let section = failure.find_section("PyTorch")?;
    section.items.iter().find(|i| i.name == "this process, including non-PyTorch memory")?;
    let processes: Vec<(&str, u64)> = section
        .items
        .iter()
        .filter_map(|i| Some((i.name.strip_prefix("process ")?, u64::try_from(i.bytes?).ok()?)))
        .collect();
    let others: u64 = processes.iter().map(|(_, bytes)| bytes).sum();
    if others < request || facts.free.is_some_and(|free| free >= request) {
        return None;
    }
    let list: Vec<String> = processes.iter().map(|(pid, bytes)| format!("process {pid} {}", size(*bytes))).collect();
    let this = facts.used.map(|used| format!(" beside this process's {}", size(used))).unwrap_or_default();
    let free = facts.free.map(|free| format!(" ({} free)", size(free))).unwrap_or_default();
    let title = format!(
        "Other processes hold {} of the GPU ({}){this}: the {} requested did not fit{free}",
        size(others),
        list.join(", "),
        size(request)
    );
    let advice = vec![
        "Another process holds GPU memory (a notebook kernel, a data-loader worker that touched CUDA, an earlier \
         run): nvidia-smi shows it; stop it, or give each job its own GPU (CUDA_VISIBLE_DEVICES)."
            .to_string(),
        "Data-loader workers must not use CUDA: keep tensors on the CPU in the Dataset and move batches to the GPU \
         in the training loop."
            .to_string(),
    ];
    Some((Cause::OtherHolders, title, advice))
}

/// What to do about live arrays that fill the pool.
fn holders_advice(facts: &Facts) -> Vec<String> {
    let Some(largest) = facts.holders.iter().find(|h| h.program.is_some()) else { return Vec::new() };
    let name = largest.program.as_deref().unwrap_or_default();
    vec![
        format!(
            "The arrays {name} returned are still alive ({} of them, {}): drop the references you no longer need \
             (a list that keeps every result keeps them all), or donate them to the next step \
             (jax.jit(..., donate_argnums=...)).",
            largest.count,
            size(largest.bytes)
        ),
        "jax.live_arrays() lists what is alive; a device memory profile (jax.profiler.save_device_memory_profile) \
         read by `xmem report` names the lines of your code that made them."
            .to_string(),
    ]
}

/// `92.00 GiB of the 104.85 GiB pool is held by 13 arrays of jit_broadcast_in_dim`.
fn holders_clause(facts: &Facts) -> Option<String> {
    let named: Vec<&Holder> = facts.holders.iter().filter(|h| h.program.is_some()).take(NAMED_HOLDERS).collect();
    if named.is_empty() {
        return None;
    }
    let total: u64 = facts.holders.iter().map(|h| h.bytes).sum();
    let pool = facts.pool.map(|p| format!(" of the {} pool", size(p))).unwrap_or_default();
    let list: Vec<String> = named
        .iter()
        .map(|h| {
            let arrays = if h.count == 1 { "array" } else { "arrays" };
            format!("{} in {} {arrays} of {}", size(h.bytes), h.count, h.program.as_deref().unwrap_or_default())
        })
        .collect();
    let rest = facts.holders.len() - named.len();
    let more = if rest > 0 { format!(" and {rest} more") } else { String::new() };
    Some(format!("{}{pool} is held by live arrays: {}{more}", size(total), list.join(", ")))
}

fn autotuning(facts: &Facts) -> Option<Decision> {
    facts.autotune?;
    let kernel = facts.events.iter().find_map(|e| {
        let op = e.op.as_deref().filter(|_| e.phase == Some(Phase::Autotune))?;
        Some(match &e.shape {
            Some(shape) => format!("{op} ({shape})"),
            None => op.to_string(),
        })
    });
    let request = facts.events.iter().find_map(|e| e.requested_bytes.filter(|_| e.phase == Some(Phase::Autotune)));
    let mut title = format!(
        "Compilation of {} ran out of memory while autotuning{}",
        facts.who(),
        kernel.map(|k| format!(" {k}")).unwrap_or_default()
    );
    if let Some(request) = request {
        title.push_str(&format!(" ({} for a candidate kernel)", size(request)));
    }
    title.push_str(": the program's own buffers leave too little memory for the autotuner's scratch");
    let failed = facts
        .events
        .iter()
        .flat_map(|e| e.breakdown.iter().flat_map(|s| &s.items))
        .find(|i| i.name == "instructions without a config")
        .and_then(|i| i.count);
    if let Some(failed) = failed {
        title.push_str(&format!("; {failed} instruction(s) got no config"));
    }
    let advice = vec![
        "Skip or limit autotuning: XLA_FLAGS=--xla_gpu_autotune_level=0 compiles with default kernels (possibly \
         slower) and needs no scratch memory."
            .to_string(),
        "Or leave the autotuner room: a larger XLA_PYTHON_CLIENT_MEM_FRACTION if the GPU has memory to spare, or \
         fewer buffers alive while compiling (a smaller batch, donate_argnums)."
            .to_string(),
        "Reuse configs found once: XLA_FLAGS=--xla_gpu_per_fusion_autotune_cache_dir=DIR keeps them across runs."
            .to_string(),
    ];
    Some((Cause::Autotuning, title, advice))
}

/// The title, with the warning XLA gave before the failure when that warning is not its subject.
fn with_context(facts: &Facts, title: String) -> String {
    let mut title = title;
    if let Some(need) = facts.need.filter(|need| need.find_section(REMAT).is_some()) {
        if !title.contains("rematerialization") {
            if let (Some(used), Some(capacity)) = (need.used_bytes, need.capacity_bytes) {
                title.push_str(&format!(
                    "; XLA had warned that {} needs {} against a {} limit",
                    facts.who(),
                    size(used),
                    size(capacity)
                ));
            }
        }
    }
    if let Some(autotune) = facts.autotune {
        if !title.contains("autotun") && autotune.op.is_some() {
            title.push_str(" (while autotuning)");
        }
    }
    title
}

/// A sentence's first letter in upper case.
fn capitalised_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// `the program` at the start of a sentence.
fn capitalised(text: &str) -> String {
    match text.strip_prefix("the ") {
        Some(rest) => format!("The {rest}"),
        None => text.to_string(),
    }
}

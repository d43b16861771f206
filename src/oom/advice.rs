//! What to try, per kind of error, with the exact flags and parameters from
//! XLA's error pages (E0100, E0101, E1000, E1001, E3000, E3001), its flags
//! guidance, JAX's GPU memory notes, Triton's and PyTorch's own hints.
//! Advice that the event's figures single out comes first.

use super::event::{Framework, Kind, OomEvent, Phase};
use crate::units::human_bytes_precise as size;

/// A padded allocation this many times its data is worth pointing at.
const NOTABLE_EXPANSION: f64 = 1.5;

pub(super) fn advice(event: &OomEvent) -> Vec<String> {
    if event.non_fatal && event.kind == Kind::CompileTimeOom {
        return vec!["A warning: XLA compiles the program anyway. If a memory error follows, this is why: the \
             program itself needs more than it may use, so lower its peak (jax.jit(..., donate_argnums=...), \
             jax.checkpoint, a smaller batch)."
            .to_string()];
    }
    if event.non_fatal {
        // Remedies for something that did not fail would send the reader the wrong way.
        return vec!["The log says this is not a failure: the caller falls back to a slower path (or another \
             choice) and carries on. Act only if an error follows."
            .to_string()];
    }
    let mut advice = shortfall(event).into_iter().collect::<Vec<_>>();
    advice.extend(by_kind(event));
    advice
}

/// When less is free than the request, the memory is too small, whatever
/// the fragmentation: said first, so the reader does not chase fragmentation.
fn shortfall(event: &OomEvent) -> Option<String> {
    let (Some(free), Some(requested)) = (event.free_bytes, event.requested_bytes) else { return None };
    (free < requested).then(|| {
        format!(
            "Capacity, not fragmentation: {} requested, only {} free{}. Lower the peak or use more memory; \
             allocator settings cannot find what is not there.",
            size(requested),
            size(free),
            event.capacity_bytes.map(|c| format!(" of {}", size(c))).unwrap_or_default()
        )
    })
}

fn by_kind(event: &OomEvent) -> Vec<String> {
    match event.kind {
        Kind::CompileTimeOom if event.phase == Some(Phase::Autotune) => autotuning(),
        Kind::CompileTimeOom => match event.memory_space.as_deref() {
            Some("vmem") => scoped_vmem(event),
            Some("hbm") | None => compile_time_hbm(event),
            Some(_) => small_memory(event),
        },
        Kind::SparsecoreAllocation => sparsecore(event),
        Kind::BufferAssignmentOom => xla_gpu(event),
        Kind::BfcAllocatorOom => bfc(event),
        // A device's allocation failure in words no family knows, from no framework xmem knows either.
        Kind::RuntimeAllocationFailure if event.by_general_reader && event.framework.is_none() => device(event),
        Kind::RuntimeAllocationFailure => runtime(event),
        Kind::TritonOutOfResources => triton(event),
        Kind::PytorchCudaOom => pytorch(event),
        Kind::HostOom => host(event),
        Kind::Unrecognised => unrecognised(event),
    }
}

/// The GPU autotuner runs candidate kernels on the device: they need scratch
/// memory beside the program's own buffers.
fn autotuning() -> Vec<String> {
    vec![
        "XLA_FLAGS=--xla_gpu_autotune_level=0 compiles with default kernels and no autotuning scratch (the kernels \
         may be slower)."
            .to_string(),
        "Or leave the autotuner room: a larger XLA_PYTHON_CLIENT_MEM_FRACTION if the GPU has memory to spare, fewer \
         buffers alive while compiling; --xla_gpu_per_fusion_autotune_cache_dir=DIR reuses configs found once."
            .to_string(),
    ]
}

/// One request larger than the memory it may come from: no allocator setting helps.
fn larger_than_memory(event: &OomEvent) -> Option<String> {
    let requested = event.requested_bytes?;
    let (memory, what) = match (event.device_bytes, event.capacity_bytes) {
        (Some(device), _) if requested > device => (device, "the whole device"),
        (_, Some(capacity)) if requested > capacity => (capacity, "the whole pool"),
        _ => return None,
    };
    Some(format!(
        "The request alone ({}) is larger than {what} ({}): no allocator setting or fragmentation fix can help; \
         check that array's shape and dtype, or split it (sharding, chunks).",
        size(requested),
        size(memory)
    ))
}

fn compile_time_hbm(event: &OomEvent) -> Vec<String> {
    let mut advice = Vec::new();
    if let (Some(tc), Some(sc)) = (event.figure("HBM usage", "TensorCore"), event.figure("HBM usage", "SparseCore")) {
        if sc >= tc {
            advice.push(format!(
                "SparseCore uses more HBM ({}) than TensorCore ({}): serialise table processing with \
                 --xla_sc_num_serialized_tables_to_optimize_hbm (costs parallelism), lower maximum_parallel_iterations, \
                 check that embedding tables are mod-sharded across chips, and mind the 32-byte (8-float) row padding \
                 of narrow tables.",
                size(sc),
                size(tc)
            ));
        }
    }
    let largest = event.allocations.iter().filter_map(|a| Some((a.size_bytes?, a))).max_by_key(|(bytes, _)| *bytes);
    if let (Some((bytes, allocation)), Some(capacity)) = (largest, event.capacity_bytes) {
        if bytes > capacity / 2 {
            let what = allocation.op_name.as_deref().or(allocation.shape.as_deref()).unwrap_or("one allocation");
            advice.push(format!(
                "One allocation ({}, {what}) is over half of HBM: that is usually a configuration bug. Look for a \
                 leftover jax.debug.print() (it forces full materialisation) and for a missing sharding annotation \
                 (unannotated arrays are replicated on every chip); the XLA label leads to the JAX source.",
                size(bytes)
            ));
        }
    }
    if let Some(padded) = most_padded(event) {
        advice.push(padded);
    }
    advice.extend([
        "Shard more: spread parameters, optimizer state and large activations over more chips (FSDP-style \
         parameter sharding, sharding hints for big intermediates); this is the safe change with the biggest wins."
            .to_string(),
        "Shrink the step: a smaller batch (or micro-batching with gradient accumulation, which keeps the \
         effective batch), jax.jit(..., donate_argnums=...) for inputs you no longer need, bf16 instead of f32."
            .to_string(),
        "Rematerialise: wrap the largest blocks in jax.checkpoint (jax.remat), or make XLA remat harder with \
         --xla_tpu_rematerialization_algo=PEAK_PRIORITY and --xla_tpu_max_hbm_size_mib=<MiB below the capacity>; \
         --xla_tpu_rematerialization_max_block_size_limit=32, --xla_tpu_rematerialization_block_effort_factor=10.0 \
         and --xla_tpu_pre_fusion_remat=true try harder at the cost of compile time."
            .to_string(),
        "Memory flags, last resort (they may cost speed): --xla_latency_hiding_scheduler_rerun=5, \
         --xla_memory_scheduler=kBrkga, --xla_tpu_rwb_fusion=false, --xla_tpu_enable_latency_hiding_scheduler=false, \
         --xla_jf_spmd_threshold_for_windowed_einsum_mib=<10 to 1024>."
            .to_string(),
        "See every buffer at the peak: capture a profile (jax.profiler.trace) and run `xmem report` on it, or open \
         XProf's Memory Viewer (memory type HBM); offloading activations or optimizer state to host memory helps \
         when nothing else fits."
            .to_string(),
    ]);
    advice
}

/// TPU layouts pad; a listed allocation much larger than its data says where.
fn most_padded(event: &OomEvent) -> Option<String> {
    let allocation = event
        .allocations
        .iter()
        .filter(|a| a.expansion.is_some_and(|x| x >= NOTABLE_EXPANSION))
        .max_by_key(|a| a.padding_bytes.unwrap_or(0))?;
    Some(format!(
        "Padding: {} takes {} for {} of data ({}x). TPU layouts pad the minor dimension to a multiple of 128 and \
         the second-minor to 8; make large dimensions multiples of 128, or reorder them so the small one is not minor.",
        allocation.shape.as_deref().unwrap_or("an allocation"),
        allocation.size_bytes.map(size).unwrap_or_default(),
        allocation.unpadded_bytes.map(size).unwrap_or_default(),
        allocation.expansion.unwrap_or_default(),
    ))
}

fn scoped_vmem(event: &OomEvent) -> Vec<String> {
    let kernel = is_pallas_kernel(event);
    let mut advice = Vec::new();
    let kernel_advice = "For a Pallas/Mosaic kernel (custom_call_target=\"tpu_custom_call\"): use smaller block \
        shapes in its BlockSpecs, and give it more scoped VMEM with pltpu.CompilerParams(vmem_limit_bytes=...)."
        .to_string();
    if kernel {
        advice.push(kernel_advice.clone());
    }
    let needed = event.used_bytes.or(event.requested_bytes);
    let at_least = needed.map(|needed| format!("; this program needs at least {} KiB", needed.div_ceil(1024)));
    advice.push(format!(
        "Raise the scoped VMEM limit for the whole program: --xla_tpu_scoped_vmem_limit_kib=<KiB> (default 16384, \
         at most the chip's VMEM size minus 1024){}.",
        at_least.unwrap_or_default()
    ));
    if !kernel {
        advice.push(kernel_advice);
    }
    advice.push(
        "Pin operands to VMEM sparingly (pltpu.with_memory_space_constraint): every pinned operand and \
         double-buffered block takes scoped VMEM."
            .to_string(),
    );
    advice.push(
        "If the op is not a custom kernel, this is most likely an XLA bug: report it with an HLO dump \
         (XLA_FLAGS=--xla_dump_to=DIR)."
            .to_string(),
    );
    advice
}

fn is_pallas_kernel(event: &OomEvent) -> bool {
    let mentions = |text: &str| text.contains("tpu_custom_call") || text.contains("pallas_call");
    mentions(&event.message)
        || event
            .allocations
            .iter()
            .any(|a| a.xla_label.as_deref().is_some_and(mentions) || a.op_name.as_deref().is_some_and(mentions))
}

fn small_memory(event: &OomEvent) -> Vec<String> {
    let space = event.memory_space.as_deref().unwrap_or("this memory");
    vec![
        format!(
            "{space} is small and per core: in Pallas kernels request less of it (scalar prefetch, scratch_shapes such \
             as pltpu.SMEM(...))."
        ),
        "Otherwise this is most likely an XLA limitation: report it with an HLO dump (XLA_FLAGS=--xla_dump_to=DIR)."
            .to_string(),
    ]
}

fn sparsecore(event: &OomEvent) -> Vec<String> {
    if event.error_code.as_deref() == Some("E3001") {
        return vec![
            "Set max_nz_per_row and max_unique_nz_per_row to the real ID distribution (FDO can estimate them), \
             or reduce the batch size (sample_count)."
                .to_string(),
        ];
    }
    if event.memory_space.as_deref() == Some("hbm") {
        return vec!["Check the sharding of the embedding tables and of SparseCore collective operands; lower \
             max_ids_per_partition and max_unique_ids_per_partition to what the data needs."
            .to_string()];
    }
    vec![
        "In a Pallas SparseCore kernel, shrink scratch_shapes; with embeddings, a smaller batch or more chips \
         lowers the per-tile footprint."
            .to_string(),
        "Try without SparseCore collective offload: --xla_tpu_enable_sparse_core_collective_offload_all_gather=false \
         --xla_tpu_enable_sparse_core_collective_offload_all_reduce=false."
            .to_string(),
        "This is usually a compiler limitation: dump with --xla_sc_dump_mlir_to=DIR and --xla_mosaic_dump_to=DIR \
         and report it."
            .to_string(),
    ]
}

fn xla_gpu(event: &OomEvent) -> Vec<String> {
    let mut advice = gpu_pool(event);
    advice.push(CUDA_MALLOC_ASYNC.to_string());
    advice.push(
        "Lower the program's peak: a smaller batch, sharding over more devices, jax.checkpoint (jax.remat) on the \
         largest activations, jax.jit(..., donate_argnums=...); if XLA's automatic remat chooses badly, \
         jax.config.update('jax_compiler_enable_remat_pass', False) and remat by hand."
            .to_string(),
    );
    advice.push("--xla_debug_buffer_assignment_show_max=<N> lists more than the default 15 peak buffers.".to_string());
    advice
}

const CUDA_MALLOC_ASYNC: &str = "TF_GPU_ALLOCATOR=cuda_malloc_async replaces the BFC pool with CUDA's own \
    allocator, which fragments differently (the BFC allocator's own suggestion when fragmentation is the cause).";

/// How the framework sizes its GPU pool: JAX's GPU memory notes, or
/// TensorFlow's memory growth. PyTorch logs get neither (its own advice is in [`pytorch`]).
fn gpu_pool(event: &OomEvent) -> Vec<String> {
    match event.framework {
        Some(Framework::TensorFlow) => {
            return vec!["TensorFlow maps nearly all GPU memory at start: make sure no other process holds the GPU, \
                 and with tf.config.experimental.set_memory_growth(gpu, True) (allow_growth in TensorFlow 1.x's \
                 GPUOptions) it takes memory as needed instead."
                .to_string()]
        }
        Some(Framework::PyTorch) | Some(Framework::CuPy) => return Vec::new(),
        Some(Framework::Jax) | None => {}
    }
    vec![
        "JAX preallocates 75% of GPU memory: make sure no other process holds the GPU (another JAX process, or \
         TensorFlow: hide the GPU from it with tf.config.experimental.set_visible_devices([], \"GPU\")), and \
         give XLA a larger share with XLA_CLIENT_MEM_FRACTION=.95 (XLA_PYTHON_CLIENT_MEM_FRACTION on older JAX)."
            .to_string(),
        "XLA_PYTHON_CLIENT_PREALLOCATE=false allocates on demand; XLA_PYTHON_CLIENT_ALLOCATOR=platform allocates \
         exactly what is used (slow, but shows the real footprint)."
            .to_string(),
    ]
}

fn bfc(event: &OomEvent) -> Vec<String> {
    if let Some(too_large) = larger_than_memory(event) {
        let mut advice = vec![too_large];
        if event.device_bytes.is_none_or(|device| event.requested_bytes.is_some_and(|r| r <= device)) {
            advice.extend(gpu_pool(event).into_iter().take(1));
        }
        return advice;
    }
    let mut advice = Vec::new();
    if event.allocator.as_deref().is_some_and(|name| name.contains("host")) {
        advice.push(format!(
            "{} is pinned host memory, not device memory: shrink host-side staging and prefetch buffers.",
            event.allocator.as_deref().unwrap_or_default()
        ));
    }
    if let (Some(free), Some(requested)) = (event.free_bytes, event.requested_bytes) {
        if free >= requested {
            advice.push(format!(
                "The pool has {} free but no chunk of {}: fragmentation, not capacity.",
                size(free),
                size(requested)
            ));
        }
    }
    advice.push(CUDA_MALLOC_ASYNC.to_string());
    advice.push(
        "Lower the peak: a smaller batch, or fewer tensors alive at once; in TensorFlow add \
         report_tensor_allocations_upon_oom to RunOptions to list the tensors allocated when the OOM happens."
            .to_string(),
    );
    advice.extend(gpu_pool(event));
    advice
}

fn runtime(event: &OomEvent) -> Vec<String> {
    let tpu_leaks = "Drop references to arrays you no longer need (a leaked jax.Array keeps its memory), and set \
        the libtpu flag tpu_log_allocations_on_oom to list every live allocation at the next OOM.";
    match event.error_code.as_deref() {
        Some("E0100") => {
            let largest = event.figure("Device buffer", "largest contiguous free").and_then(|b| u64::try_from(b).ok());
            let mut advice = fragmentation(event, largest.or(event.free_bytes));
            advice.push(
                "Shrink what lives in HBM: a smaller batch, parameters sharded over more chips, shorter sequences, \
                 jax.jit(..., donate_argnums=...) for inputs you no longer need; TPU tiling pads small dimensions."
                    .to_string(),
            );
            advice.push(tpu_leaks.to_string());
            advice
        }
        Some("E0101") => {
            let reservable = event.figure("Program reservation", "reservable").and_then(|b| u64::try_from(b).ok());
            let mut advice = fragmentation(event, reservable.filter(|_| event.free_bytes >= event.requested_bytes));
            advice.push(
                "Loading a program reserves a contiguous region at the bottom of HBM, and live buffers come first: \
                 reduce buffers (batch, sharding, donation), keep fewer jitted programs loaded, or lower the program's \
                 temporaries with the tpu_shared_memory_percent flag (may cost speed)."
                    .to_string(),
            );
            advice.push(tpu_leaks.to_string());
            advice
        }
        _ if !event.allocations.is_empty() => vec![
            format!(
                "A single allocation{} is larger than the whole memory: check this array's shape and its sharding.",
                event.shape.as_deref().map(|shape| format!(" ({shape})")).unwrap_or_default()
            ),
            "Capture a profile (jax.profiler.trace) and open it in XProf's Memory Viewer or `xmem report` to see \
             what is live."
                .to_string(),
        ],
        _ if event.note("Driver", "error").is_some_and(|e| e.contains("loading the program's code")) => vec![
            "CUDA could not load the compiled program's code: that memory lives outside XLA's pool, and the pool left \
             too little of the GPU. Give the pool less, not more: a lower XLA_PYTHON_CLIENT_MEM_FRACTION \
             (XLA_CLIENT_MEM_FRACTION), or XLA_PYTHON_CLIENT_PREALLOCATE=false; large constants captured in the \
             program make its code larger (pass big arrays as arguments instead)."
                .to_string(),
        ],
        _ if event.phase == Some(Phase::Autotune) => autotuning(),
        _ if event.framework == Some(Framework::CuPy) => cupy(event),
        _ => {
            let mut advice = larger_than_memory(event).into_iter().collect::<Vec<_>>();
            if !advice.is_empty() {
                return advice;
            }
            if event.note("Driver", "error").is_some() {
                advice.push(
                    "The driver refused more device memory: another process may hold it (check nvidia-smi or \
                     rocm-smi)."
                        .to_string(),
                );
            }
            // Unless the rest of the log named the device after all.
            if !event.device_unnamed || names_a_device(event) {
                advice.extend(gpu_pool(event));
            } else {
                advice.push(
                    "The message names no device: XLA's CPU backend prints it when host RAM runs out, and other XLA \
                     runtimes when device memory does; jax.devices() shows where the program runs. On the CPU, \
                     look at what else the process holds (datasets loaded whole, copies with np.asarray)."
                        .to_string(),
                );
            }
            advice.push(
                "Lower the peak: a smaller batch, sharding over more devices, jax.checkpoint (jax.remat), \
                 donate_argnums."
                    .to_string(),
            );
            advice
        }
    }
}

/// Whether the event says a device's memory ran out, not possibly the host's: a device or
/// memory space named, an allocator's pool, the device's size, or the driver's error.
fn names_a_device(event: &OomEvent) -> bool {
    event.memory_space.as_deref().is_some_and(|space| space != "host")
        || event.allocator.is_some()
        || event.device_bytes.is_some()
        || event.capacity_bytes.is_some()
        || event.note("Driver", "error").is_some()
}

/// A device ran out in a stack with no advice of its own here: what holds for
/// every one. A request larger than the whole memory fits however little
/// else holds it: then only its size is worth looking at.
fn device(event: &OomEvent) -> Vec<String> {
    if event.memory_space.as_deref() == Some("host") {
        return vec![
            "The failing call allocates pinned (page-locked) host memory: the machine's RAM ran out, not the \
             GPU's. Pin less at once (smaller staging buffers, fewer pinned arrays, pin_memory=False in a DataLoader), \
             and check the free RAM and the locked-memory limit (ulimit -l)."
                .to_string(),
        ];
    }
    if let (Some(requested), Some(capacity)) = (event.requested_bytes, event.capacity_bytes) {
        if requested > capacity {
            return vec![format!(
                "The request alone ({}) is larger than the whole memory ({}): look at what computes its size (a \
                 shape, a batch, a buffer size that overflowed).",
                size(requested),
                size(capacity)
            )];
        }
    }
    vec!["Check that no other process holds the device's memory (nvidia-smi, rocm-smi), then lower what this one \
         keeps there: a smaller batch or input, a smaller model or lower precision, fewer buffers alive at once."
        .to_string()]
}

/// CuPy's pool: what it holds, its limit, and the array that did not fit.
fn cupy(event: &OomEvent) -> Vec<String> {
    let mut advice = Vec::new();
    match (event.used_bytes, event.limit_bytes) {
        (_, Some(limit)) => advice.push(format!(
            "The pool's limit ({}) was reached: raise it with cupy.get_default_memory_pool().set_limit(size=...) or \
             CUPY_GPU_MEMORY_LIMIT.",
            size(limit)
        )),
        (Some(0), None) => advice.push(
            "Nothing else was allocated by CuPy's pool: this one array does not fit in the GPU's free memory. Check \
             its shape and dtype, or process the data in chunks; nvidia-smi shows whether other processes hold \
             the GPU."
                .to_string(),
        ),
        _ => advice.push(
            "Free what the pool caches but no array uses: cupy.get_default_memory_pool().free_all_blocks(); drop \
             references to arrays you no longer need."
                .to_string(),
        ),
    }
    advice
}

/// When the memory free would have held the request, the failure is about contiguity.
fn fragmentation(event: &OomEvent, usable: Option<u64>) -> Vec<String> {
    match (event.free_bytes, usable, event.requested_bytes) {
        (Some(free), Some(usable), Some(requested)) if free >= requested => vec![format!(
            "{} is free, more than the {} requested, but only {} of it is usable in one piece: this is \
             fragmentation, not capacity.",
            size(free),
            size(requested),
            size(usable.min(free))
        )],
        _ => Vec::new(),
    }
}

fn triton(event: &OomEvent) -> Vec<String> {
    if event.memory_space.as_deref() == Some("shared memory") {
        let limit = event.capacity_bytes.map(|l| format!(" (here {l} bytes)")).unwrap_or_default();
        vec![
            "Use smaller block sizes (BLOCK_M, BLOCK_N, BLOCK_K) or fewer pipeline stages (num_stages): shared \
             memory holds a copy of each tile per stage."
                .to_string(),
            format!(
                "With @triton.autotune, drop the configs that need more shared memory than this GPU has{limit}: \
                 configs tuned on a larger GPU fail on smaller ones."
            ),
        ]
    } else {
        vec!["Use smaller tiles (BLOCK_M × BLOCK_N accumulators) so they fit the hardware limit.".to_string()]
    }
}

fn pytorch(event: &OomEvent) -> Vec<String> {
    if let Some(error) = event.note("Driver", "error") {
        // Not the caching allocator's message: its settings cannot help.
        return vec![format!(
            "`{error}` is the GPU runtime's own error (CUDA's or HIP's), not the caching allocator's (`CUDA out of \
             memory. Tried to allocate …`): memory asked for outside PyTorch's allocator ran out, so \
             PYTORCH_CUDA_ALLOC_CONF does not apply. Usually the CUDA context or a library's workspace (cuBLAS, \
             cuDNN, NCCL) found the GPU full, of other processes (nvidia-smi or rocm-smi shows them) or of this \
             one's tensors (then lower its peak: a smaller batch); or pinned host memory (pin_memory=True) was \
             larger than the host could lock. The traceback's last frame names the call."
        )];
    }
    if let Some(too_large) = larger_than_memory(event).filter(|_| event.limit_bytes.is_none()) {
        return vec![too_large];
    }
    let mut advice = Vec::new();
    let capped = event.limit_bytes.zip(event.device_bytes).is_some_and(|(limit, device)| limit < device);
    if let (Some(limit), Some(device)) = (event.limit_bytes, event.device_bytes) {
        if limit < device && event.free_bytes >= event.requested_bytes {
            advice.push(format!(
                "The cap, not the GPU, is the limit: this process may use {} of the {} GPU \
                 (torch.cuda.set_per_process_memory_fraction, or per_process_memory_fraction in \
                 PYTORCH_CUDA_ALLOC_CONF); raise or remove it if the GPU is not shared.",
                size(limit),
                size(device)
            ));
        }
    }
    let reserved_unused =
        event.figure("PyTorch", "reserved by PyTorch but unallocated").and_then(|b| u64::try_from(b).ok());
    // With the request free on the device, the pool's holes did not stop it: the allocator
    // would have taken a new segment.
    let device_room = event.free_bytes.zip(event.requested_bytes).filter(|(free, requested)| free >= requested);
    if let (Some(unused), Some(requested), None) = (reserved_unused, event.requested_bytes, device_room) {
        if unused >= requested {
            advice.push(format!(
                "PyTorch holds {} reserved but unallocated, more than the {} requested: fragmentation.",
                size(unused),
                size(requested)
            ));
        }
    }
    if let (Some((free, requested)), false) = (device_room, capped) {
        advice.push(format!(
            "The GPU reports {} free, more than the {} requested: its memory is not simply full. A limit on this \
             process (torch.cuda.set_per_process_memory_fraction, a container or driver limit) or memory too \
             scattered for one block of that size refused it.",
            size(free),
            size(requested)
        ));
    }
    if let (Some(requested), Some(capacity)) = (event.requested_bytes, event.capacity_bytes) {
        if requested > capacity / 2 {
            advice.push(format!(
                "The request alone ({}) is over half of the GPU ({}): look at that tensor's shape (batch, sequence \
                 length, an unintended broadcast).",
                size(requested),
                size(capacity)
            ));
        }
    }
    advice.push(
        "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.1 and later) to avoid fragmentation, or \
         PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:<MB> on older versions."
            .to_string(),
    );
    advice.push(
        "Lower the peak: a smaller batch, activation checkpointing (torch.utils.checkpoint), mixed precision \
         (torch.autocast), and no references to tensors you are done with; torch.cuda.memory_summary() shows the \
         allocator's state."
            .to_string(),
    );
    advice.push("If other processes share the GPU, nvidia-smi shows who holds the rest.".to_string());
    advice
}

fn host(event: &OomEvent) -> Vec<String> {
    let mut advice = Vec::new();
    if event.requested_bytes.is_some() {
        advice.push(
            "One array does not fit in host RAM: check its shape and dtype (float64 where float32 would do), \
             and load or process the data in chunks (memory-mapped files, a data loader) instead of at once."
                .to_string(),
        );
    }
    advice.extend([
        "This is host memory (RAM), not accelerator memory: look at what the host process holds, such as the \
         dataset loaded whole, data-loader workers (each a copy of the process: lower num_workers), \
         prefetch and shuffle buffers, checkpoints gathered on one host."
            .to_string(),
        "Raise the limit where the job runs if the work really needs it: Slurm --mem or --mem-per-cpu, \
         Kubernetes resources.limits.memory, a larger machine; `sstat`/`seff`, `kubectl top pod` or \
         `dmesg` show what was used."
            .to_string(),
    ]);
    advice
}

fn unrecognised(event: &OomEvent) -> Vec<String> {
    let first = if event.by_general_reader {
        "xmem knows no parser for this message: what it shows was read from the message's own words. Report it to xmem with the log."
    } else {
        "xmem has no parser for this message; it is shown as printed. Report it to xmem with the log."
    };
    let mut advice = vec![first.to_string()];
    if let Some(code) = event.error_code.as_deref().and_then(|code| code.strip_prefix('E')) {
        advice.push(format!("XLA explains this error at https://openxla.org/xla/errors/error_{code}."));
    }
    advice
}

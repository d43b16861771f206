//! The OOM post-mortem on real NVIDIA GPU logs (`fixtures/oom-gpu/`, made on
//! an H200): every fact the log states, the cause each incident's title names
//! and the advice that fits it, and `xmem oom --with` joining an incident with
//! the failed program's dump. Expected figures are the logs' own numbers.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use xmem::oom::{Cause, Kind, OomEvent, OomReport, Phase};

fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-gpu").join(name)
}

fn scan(name: &str) -> OomReport {
    let log = std::fs::read(path(name)).unwrap();
    xmem::oom::scan(name, &log[..]).unwrap()
}

fn xmem() -> assert_cmd::Command {
    let mut command = cargo_bin_cmd!("xmem");
    command.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-gpu"));
    command
}

fn json(args: &[&str]) -> serde_json::Value {
    let output = xmem().args(["oom", "--format", "json"]).args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The first incident, after checking the cause it names and how its title starts.
fn titled<'a>(report: &'a OomReport, cause: Cause, start: &str) -> &'a xmem::oom::Incident {
    let incident = &report.incidents[0];
    assert_eq!(incident.cause, Some(cause), "{}", incident.title);
    assert!(incident.title.starts_with(start), "{}", incident.title);
    incident
}

fn of_kind(report: &OomReport, kind: Kind) -> &OomEvent {
    report.events.iter().find(|e| e.kind == kind).unwrap_or_else(|| panic!("no {kind:?} in {:#?}", report.events))
}

const GIB: u64 = 1 << 30;

/// `2.80GiB` as the log prints it, to the nearest byte.
fn gib(value: f64) -> u64 {
    (value * GIB as f64).round() as u64
}

/// Every fact of `fixtures/oom-gpu/expected.json`, checked as `oom-facts-check.py` checks them.
#[test]
fn every_fact_the_gpu_logs_state_holds() {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path("expected.json")).unwrap()).unwrap();
    let mut logs = 0;
    for (name, wanted) in expected.as_object().unwrap().iter().filter(|(name, _)| !name.starts_with('_')) {
        logs += 1;
        let emitted = serde_json::to_value(&scan(name).events).unwrap();
        let emitted = emitted.as_array().unwrap();
        let mut from = 0;
        for want in wanted.as_array().unwrap() {
            let at = (from..emitted.len()).find(|&at| crate::common::oom_event_holds(&emitted[at], want));
            from = 1 + at.unwrap_or_else(|| panic!("{name}: no event from {from} on holds {want}: {emitted:#?}"));
        }
    }
    assert_eq!(logs, 6);
}

#[test]
fn the_bfc_dump_gives_its_pool_stats_and_who_holds_the_memory() {
    let report = scan("oom_jax_fraction_verbose.log");
    let bfc = of_kind(&report, Kind::BfcAllocatorOom);
    // `Limit: 2.80GiB`, `InUse: 1.50GiB`, `total free in pool 1.30GiB`.
    // The pool's exact size was said at start: `XLA backend allocating 2.80GiB (3003121664 bytes) on device 0`.
    assert_eq!((bfc.capacity_bytes, bfc.limit_bytes), (Some(gib(2.80)), Some(3_003_121_664)));
    assert_eq!(bfc.used_bytes, Some(gib(1.50)));
    assert_eq!(bfc.free_bytes, Some(gib(1.30)));
    assert_eq!(bfc.allocator.as_deref(), Some("GPU_0_bfc"));
    let stat = |name: &str| {
        bfc.breakdown
            .iter()
            .find(|s| s.name == "Stats")
            .and_then(|s| s.items.iter().find(|i| i.name == name))
            .and_then(|i| i.bytes)
    };
    assert_eq!(stat("LargestFreeBlock"), Some(gib(1.30) as i64));
    assert_eq!(stat("MaxInUse"), Some(gib(1.50) as i64));
    // The InUse chunks by `allocation_annotation xla.execute{executable=…}`.
    let held: Vec<(Option<&str>, u64, u64, u64)> =
        bfc.held_by.iter().map(|h| (h.program.as_deref(), h.bytes, h.count, h.largest_bytes)).collect();
    assert_eq!(
        held,
        [
            (Some("jit__normal"), 1_073_741_824, 1, 1_073_741_824),
            (Some("jit_step"), 268_435_712 + 256 + 256, 3, 268_435_712),
            (Some("jit_true_divide"), 268_435_456, 1, 268_435_456),
        ]
    );
}

#[test]
fn the_failure_names_its_program_allocator_device_and_the_users_line() {
    let report = scan("oom_jax_fraction_verbose.log");
    let failure = of_kind(&report, Kind::RuntimeAllocationFailure);
    assert_eq!(failure.program.as_deref(), Some("jit_step"));
    assert_eq!(failure.allocator.as_deref(), Some("GPU_0_bfc"));
    assert_eq!(failure.memory_space.as_deref(), Some("device 0"));
    assert_eq!(failure.phase, Some(Phase::Runtime));
    // The traceback's innermost frame outside site-packages.
    let frame = failure.user_frame.as_ref().unwrap();
    assert_eq!((frame.file.as_str(), frame.line), ("/home/user/models/oom_jax_fraction.py", 21));
    assert_eq!(frame.function.as_deref(), Some("<module>"));
    // `XLA backend allocating 2.80GiB (3003121664 bytes) on device 0 for BFCAllocator.`, said at start.
    assert_eq!(failure.limit_bytes, Some(3_003_121_664));
    let incident = &report.incidents[0];
    assert_eq!(incident.program.as_deref(), Some("jit_step"));
    assert_eq!(incident.user_frame.as_ref().map(|f| f.line), Some(21));
}

#[test]
fn the_rematerialization_warning_is_a_compile_time_event_that_does_not_end_the_incident() {
    let report = scan("oom_jax_fraction_verbose.log");
    let remat = of_kind(&report, Kind::CompileTimeOom);
    assert_eq!((remat.used_bytes, remat.capacity_bytes), (Some(3_758_096_404), Some(1_591_318_938)));
    assert_eq!(remat.exceeded_by_bytes, Some(3_758_096_404 - 1_591_318_938));
    assert!(remat.non_fatal);
    assert_eq!(remat.phase, Some(Phase::Compile));
    assert!(remat.advice[0].starts_with("A warning"), "{:?}", remat.advice);
    // The warning, the allocator's dump and JAX's error are one failure.
    assert_eq!(report.incidents.len(), 1);
    assert_eq!(report.incidents[0].events.len(), report.events.len());
}

#[test]
fn a_request_above_the_whole_pool_is_said_so_without_fragmentation_advice() {
    let report = scan("oom_jax_fraction_verbose.log");
    let incident = titled(
        &report,
        Cause::RequestAbovePool,
        "jit_step requested 3.00 GiB in one allocation, more than the whole GPU_0_bfc pool (2.80 GiB): 208.00 MiB over",
    );
    assert!(incident.title.contains("XLA had warned that jit_step needs 3.50 GiB against a 1.48 GiB limit"));
    let advice = incident.advice.join("\n");
    assert!(advice.contains("XLA_PYTHON_CLIENT_MEM_FRACTION"), "{advice}");
    for ruled_out in ["cuda_malloc_async", "report_tensor_allocations", "fragmentation"] {
        assert!(!advice.contains(ruled_out), "{ruled_out} in {advice}");
    }
    let bfc = of_kind(&report, Kind::BfcAllocatorOom);
    assert!(bfc.advice.iter().all(|a| !a.contains("cuda_malloc_async")), "{:?}", bfc.advice);
}

#[test]
fn an_autotuner_death_is_compilation_running_out_while_tuning_a_fusion() {
    let report = scan("oom_jax_fraction.log");
    assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
    let incident = &report.incidents[0];
    assert_eq!(incident.cause, Some(Cause::Autotuning));
    assert!(
        incident.title.contains("ran out of memory while autotuning gemm_fusion_dot.1 (f32[8192,8192]{1,0})"),
        "{}",
        incident.title
    );
    assert!(incident.title.contains("5 instruction(s) got no config"), "{}", incident.title);
    assert!(incident.advice[0].contains("--xla_gpu_autotune_level=0"), "{:?}", incident.advice);
    // Every candidate's failure is the same message, folded; it names the fusion being tuned.
    let failure = of_kind(&report, Kind::RuntimeAllocationFailure);
    assert_eq!(failure.phase, Some(Phase::Autotune));
    assert_eq!(
        (failure.op.as_deref(), failure.shape.as_deref()),
        (Some("gemm_fusion_dot.1"), Some("f32[8192,8192]{1,0}"))
    );
    assert!(failure.occurrences > 50, "{}", failure.occurrences);
    let gave_up = of_kind(&report, Kind::CompileTimeOom);
    assert_eq!(gave_up.phase, Some(Phase::Autotune));
    assert_eq!(gave_up.user_frame.as_ref().map(|f| f.line), Some(20));
    assert!(!incident.advice.join(" ").contains("cuda_malloc_async"));
}

#[test]
fn a_per_process_cap_is_the_cause_when_the_gpu_has_room() {
    for (log, allowed, in_use, free) in [
        ("oom_torch_train.log", "6.99 GiB", "7.56 GiB", "132.23 GiB"),
        ("torch-h200/oom.log", "5.59 GiB", "5.98 GiB", "133.81 GiB"),
    ] {
        let report = scan(log);
        let incident = titled(&report, Cause::Cap, &format!("The {allowed} cap was reached: {in_use} in use"));
        assert!(
            incident.title.contains(&format!("while {free} of the 139.80 GiB device is free")),
            "{}",
            incident.title
        );
        assert!(incident.advice[0].contains("set_per_process_memory_fraction"), "{:?}", incident.advice);
        assert!(incident.advice.iter().all(|a| !a.contains("expandable_segments")), "{:?}", incident.advice);
        let event = &report.events[0];
        assert_eq!(event.device_bytes, Some(gib(139.80)));
        assert_eq!(event.limit_bytes, Some(gib(allowed.trim_end_matches(" GiB").parse().unwrap())));
    }
    // The innermost frame outside site-packages, not the traceback's first.
    let frame = scan("torch-h200/oom.log").incidents[0].user_frame.clone().unwrap();
    assert_eq!((frame.line, frame.function.as_deref()), (16, Some("forward")));
}

#[test]
fn cupy_gives_the_exact_request() {
    let report = scan("oom_cupy.log");
    let e = &report.events[0];
    assert_eq!(e.kind, Kind::RuntimeAllocationFailure);
    assert_eq!((e.requested_bytes, e.used_bytes), (Some(322_122_547_200), Some(0)));
    assert_eq!(e.exception.as_deref(), Some("cupy.cuda.memory.OutOfMemoryError"));
    assert!(e.summary.contains("this request alone is more than the GPU had free"), "{}", e.summary);
    assert_eq!(e.user_frame.as_ref().map(|f| f.line), Some(3));
}

#[test]
fn fragmentation_in_a_pool_full_of_live_arrays() {
    let report = scan("accumulate_oom/output.log");
    let incident = titled(&report, Cause::Fragmentation, "Fragmentation: 12.85 GiB is free, more than the 6.00 GiB jit_broadcast_in_dim requested, but the largest free piece is 4.85 GiB");
    assert!(incident.title.contains("92.00 GiB in 13 arrays of jit_broadcast_in_dim"), "{}", incident.title);
    let advice = incident.advice.join("\n");
    assert!(advice.contains("still alive"), "{advice}");
    let bfc = of_kind(&report, Kind::BfcAllocatorOom);
    assert_eq!(bfc.held_by[0].bytes, 7 * 8_589_934_592 + 6 * 6_442_450_944);
}

#[test]
fn the_programs_own_need_above_its_limit() {
    let report = scan("adam_nodonate/output.log");
    let incident = titled(
        &report,
        Cause::ProgramNeed,
        "jit_train_step needs 9.84 GiB, 2.34 GiB more than the 7.50 GiB limit XLA compiled it for",
    );
    assert!(incident.advice[0].contains("donate_argnums"), "{:?}", incident.advice);
    // `The byte size of input/output arguments (16174514380) exceeds the base limit (15011414016)`.
    let arguments = report.events.iter().find(|e| e.used_bytes == Some(16_174_514_380)).unwrap();
    assert_eq!((arguments.kind, arguments.capacity_bytes), (Kind::CompileTimeOom, Some(15_011_414_016)));
}

#[test]
fn joined_with_its_dump_the_failed_program_shows_its_peak_owners_and_the_donation_it_lacks() {
    let doc = json(&["adam_nodonate/output.log", "--with", "adam_nodonate/xla_dump"]);
    let joined = &doc["incidents"][0]["program_report"];
    assert_eq!(joined["matched_by"], "name");
    assert_eq!(joined["module"], "jit_train_step(11275)");
    // The limit the log gives is the memory limit the program was compiled for.
    assert_eq!(joined["limit_bytes"], 15_011_414_016u64);
    let peak = joined["memory_space"]["peak_bytes"].as_i64().unwrap();
    assert_eq!(joined["over_limit_bytes"].as_i64(), Some(peak - 15_011_414_016));
    let candidates = joined["donation_candidates"].as_array().unwrap();
    let donatable: i64 = candidates.iter().map(|c| c["bytes_at_most"].as_i64().unwrap()).sum();
    assert_eq!(joined["top_change"]["kind"], "donation");
    assert_eq!(joined["top_change"]["saves_bytes"].as_i64(), Some(donatable));
    assert!(donatable > peak - 15_011_414_016, "donation alone brings it under the limit");
    // Adam's state: 24 parameters, 6 of 1 GiB.
    assert_eq!(candidates.len(), 24);
    assert_eq!(candidates.iter().filter(|c| c["bytes_at_most"] == GIB).count(), 6);
    // Its parameters (no source line) own more of the peak than any line: 7.56 GiB against line 33's 5.25 GiB.
    let by_source = joined["memory_space"]["at_peak_groups"]["by_source"].as_array().unwrap();
    assert_eq!(by_source[0]["key"], "(no source)");
    let finding = joined["finding"].as_str().unwrap();
    assert!(
        finding.ends_with(
            "most of it is its 25 parameters, 7.56 GiB (49%; arguments passed in: no source line); the source line \
             that owns most of the rest is /home/user/models/oom_train_adam.py:33 (5.25 GiB, 34%)"
        ),
        "{finding}"
    );
    assert_eq!(by_source[1]["key"], "/home/user/models/oom_train_adam.py:33");
    // Once joined, the advice no longer asks for the dump.
    assert!(doc["incidents"][0]["advice"].as_array().unwrap().iter().all(|a| !a.as_str().unwrap().contains("--with")));

    let text = xmem().args(["oom", "adam_nodonate/output.log", "--with", "adam_nodonate/xla_dump"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("The failed program: jit_train_step(11275)"), "{text}");
    assert!(text.contains("By source line:"), "{text}");
    assert!(text.contains("oom_train_adam.py:33"), "{text}");
    assert!(text.contains("Top change            Donate the 24 parameters"), "{text}");
}

#[test]
fn the_runs_folder_stands_for_the_dump_beside_the_log() {
    // `adam_nodonate/` holds `output.log` and `xla_dump/`, as the job left them.
    let doc = json(&["adam_nodonate/output.log", "--with", "adam_nodonate"]);
    let joined = &doc["incidents"][0]["program_report"];
    assert_eq!(joined["module"], "jit_train_step(11275)");
    assert_eq!(joined["input"], "adam_nodonate/xla_dump");
}

#[test]
fn of_several_programs_of_one_name_the_one_the_size_of_the_request() {
    let doc = json(&["accumulate_oom/output.log", "--with", "accumulate_oom/xla_dump"]);
    let joined = &doc["incidents"][0]["program_report"];
    // Modules 662 (8 GiB) and 1325 (6 GiB) are both jit_broadcast_in_dim; 6.00 GiB failed.
    assert_eq!(joined["matched_by"], "name-and-size");
    assert_eq!(joined["module"], "jit_broadcast_in_dim(1325)");
    assert!(joined["finding"].as_str().unwrap().contains("it ran out because of what else was alive"));
}

/// JAX ran `jit_sorted_outer` asynchronously; its 18.25 GiB output could not be
/// allocated, and the error was raised by the next call that waited on it,
/// `jit_squeeze` (`s[0, :4]`), whose name the log gives. The dump's
/// `jit_squeeze` holds 32 bytes; the log's `input/output arguments
/// (39200280016)` are `jit_sorted_outer`'s to the byte.
#[test]
fn a_failure_raised_by_a_later_call_is_joined_with_the_program_that_made_the_request() {
    let doc = json(&["jax_async_report/output.log", "--with", "jax_async_report/xla_dump"]);
    let incident = &doc["incidents"][0];
    let joined = &incident["program_report"];
    assert_eq!(joined["matched_by"], "earlier-program");
    assert_eq!(joined["module"], "jit_sorted_outer(663)");
    assert_eq!(joined["program"], "jit_sorted_outer");
    assert_eq!(joined["named_in_log"], "jit_squeeze");
    let how = joined["matched_how"].as_str().unwrap();
    assert!(how.contains("39200280016 bytes, exactly"), "{how}");
    assert!(
        how.contains("the log names jit_squeeze, but its whole peak, 32 B, is smaller than the failed 18.25 GiB"),
        "{how}"
    );
    // Two 19.6e9-byte outputs (the rematerialization limit in the log, 39200000016, to the byte),
    // the outer product beside them, and the 280000-byte input.
    let space = &joined["memory_space"];
    assert_eq!(space["breakdown"]["outputs"], 39_200_000_016u64);
    assert_eq!(space["peak_bytes"], 58_800_280_032u64);
    assert_eq!(incident["program"], "jit_sorted_outer");
    let title = incident["title"].as_str().unwrap();
    assert!(title.starts_with("jit_sorted_outer needs 73.02 GiB"), "{title}");
    assert!(!title.contains("jit_squeeze"), "{title}");
}

#[test]
fn a_named_program_smaller_than_the_request_is_not_said_to_have_run_out_because_of_others() {
    let dump = tempfile::tempdir().unwrap();
    for module in ["module_1997.jit_squeeze", "module_3322.jit_squeeze"] {
        let name = format!("{module}.sm_9.0a_gpu_after_optimizations.hlo.pb");
        std::fs::copy(path(&format!("jax_async_report/xla_dump/{name}")), dump.path().join(name)).unwrap();
    }
    let doc = json(&["jax_async_report/output.log", "--with", dump.path().to_str().unwrap()]);
    let joined = &doc["incidents"][0]["program_report"];
    assert_eq!(joined["matched_by"], "name-newest");
    assert!(joined["named_in_log"].is_null());
    let finding = joined["finding"].as_str().unwrap();
    assert!(
        finding.starts_with("jit_squeeze's own peak, 8 B, is smaller than the failed 18.25 GiB request"),
        "{finding}"
    );
    assert!(!finding.contains("what else was alive"), "{finding}");
}

/// The program report of `run/output.log` with the executable's name taken
/// out, as older jaxlib printed it, joined with `run/xla_dump`.
fn joined_without_its_name(run: &str, program: &str) -> serde_json::Value {
    let log = std::fs::read_to_string(path(&format!("{run}/output.log"))).unwrap();
    let unnamed = log.replace(&format!(" [executable_name='{program}']"), "");
    assert_ne!(log, unnamed);
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("output.log");
    std::fs::write(&copy, unnamed).unwrap();
    let doc = json(&[copy.to_str().unwrap(), "--with", &format!("{run}/xla_dump")]);
    doc["incidents"][0]["program_report"].clone()
}

#[test]
fn a_log_without_a_program_name_is_joined_by_size_only_when_one_program_fits() {
    let joined = joined_without_its_name("accumulate_oom", "jit_broadcast_in_dim");
    assert_eq!(joined["matched_by"], "size");
    assert_eq!(joined["module"], "jit_broadcast_in_dim(1325)");
}

#[test]
fn a_dump_of_other_programs_is_never_joined() {
    let output = xmem()
        .args(["oom", "--format", "json", "adam_nodonate/output.log", "--with", "accumulate_oom/xla_dump"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let joined = &doc["incidents"][0]["program_report"];
    assert!(joined["matched_by"].is_null());
    assert!(joined["memory_space"].is_null());
    let reason = joined["reason"].as_str().unwrap();
    assert!(reason.contains("no program named jit_train_step"), "{reason}");
    assert!(reason.contains("jit_broadcast_in_dim"), "{reason}");
    // The log-only verdict stands.
    assert_eq!(doc["incidents"][0]["cause"], "program-need");
}

#[test]
fn a_with_input_that_holds_nothing_usable_leaves_the_log_only_verdict() {
    let output = xmem().args(["oom", "oom_cupy.log", "--with", "oom_torch_train.log"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("xmem: oom_torch_train.log:"), "{stderr}");
    assert!(stderr.trim_end().ends_with("the log alone is explained"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("Incident 1: CuPy OOM: could not allocate 300.00 GiB"), "{text}");
    assert!(text.contains("Program report        none: oom_torch_train.log:"), "{text}");
}

#[test]
fn a_request_above_the_device_gets_no_allocator_advice() {
    // HIP: 16.00 GiB requested of a 15.24 GiB GPU (`fixtures/oom-logs-extra/hip-rocm.txt`).
    let log =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oom-logs-extra/hip-rocm.txt")).unwrap();
    let report = xmem::oom::scan("hip-rocm.txt", &log[..]).unwrap();
    let incident = titled(
        &report,
        Cause::RequestAboveDevice,
        "The program requested 16.00 GiB in one allocation, more than the whole device (15.24 GiB)",
    );
    let advice = [incident.advice.clone(), report.events[0].advice.clone()].concat().join("\n");
    for ruled_out in ["expandable_segments", "MEM_FRACTION", "cuda_malloc_async", "max_split_size_mb"] {
        assert!(!advice.contains(ruled_out), "{ruled_out} in {advice}");
    }
    assert!(advice.contains("no allocator setting"), "{advice}");
    assert_eq!(incident.title.matches("16.00 GiB").count(), 1);
}

/// Real PyTorch messages that name other processes on the GPU, from public
/// repositories' transcripts found by searching for `memory in use. Process`
/// (the search index's files 56934688327, 52464956492 and 63136295466).
#[test]
fn other_processes_on_the_gpu_are_named_when_this_one_is_too() {
    let shared_v100 = "error: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 31.74 GiB of which 315.38 MiB is free. Process 3269913 has 1.88 GiB memory in use. Process 3269914 has 13.17 GiB memory in use. Including non-PyTorch memory, this process has 16.37 GiB memory in use. Of the allocated memory 16.00 GiB is allocated by PyTorch, and 16.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n";
    let report = xmem::oom::scan("log", shared_v100.as_bytes()).unwrap();
    let incident = titled(&report, Cause::OtherHolders, "Other processes hold 15.05 GiB of the GPU (process 3269913 1.88 GiB, process 3269914 13.17 GiB) beside this process's 16.37 GiB: the 4.00 GiB requested did not fit (315.38 MiB free)");
    assert!(incident.advice[0].contains("nvidia-smi"), "{:?}", incident.advice);
    let warmup = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.49 GiB. GPU 0 has a total capacity of 15.47 GiB of which 6.71 GiB is free. Process 28800 has 15.53 MiB memory in use. Process 54776 has 7.75 GiB memory in use. Including non-PyTorch memory, this process has 222.00 MiB memory in use. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n";
    let report = xmem::oom::scan("log", warmup.as_bytes()).unwrap();
    assert_eq!(report.incidents[0].cause, Some(Cause::OtherHolders), "{}", report.incidents[0].title);
    // Without `this process has …` (a container), the process that failed may be one of those listed.
    let container = "Error: CUDA out of memory. Tried to allocate 5.50 GiB. GPU 0 has a total capacity of 79.20 GiB of which 3.50 GiB is free. Process 3283987 has 516.00 MiB memory in use. Process 3284604 has 75.19 GiB memory in use. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n";
    let report = xmem::oom::scan("log", container.as_bytes()).unwrap();
    assert_ne!(report.incidents[0].cause, Some(Cause::OtherHolders), "{}", report.incidents[0].title);
}

/// JAX failures as people quoted them in public repositories' notes, wrapped
/// by hand (the search index's files 68489809269, 59681175222 and 58497991221).
#[test]
fn the_program_is_read_from_a_wrapped_quote() {
    let cases = [
        (
            "    jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to\n    allocate 19.59GiB. [executable_name='jit_concatenate']\n      walker.py write_state -> ds.to_netcdf -> xarray_jax __array__ -> np.asarray\n",
            "jit_concatenate",
        ),
        (
            "    #   RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.50GiB\n    #   [executable_name='jit_convert_element_type']\n",
            "jit_convert_element_type",
        ),
        (
            "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: [0] Failed to load in-memory\nCUBIN (compiled for a different GPU?).: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n[executable_name='jit_advance_output']\n",
            "jit_advance_output",
        ),
    ];
    for (log, program) in cases {
        let report = xmem::oom::scan("log", log.as_bytes()).unwrap();
        assert_eq!(report.events.len(), 1, "{log}: {:#?}", report.events);
        assert_eq!(report.events[0].program.as_deref(), Some(program), "{log}");
        assert_eq!(report.incidents[0].program.as_deref(), Some(program), "{log}");
    }
    // Loading the program's code is memory outside the pool: a smaller pool, not a larger one.
    let report = xmem::oom::scan("log", cases[2].0.as_bytes()).unwrap();
    let advice = report.incidents[0].advice.join(" ");
    assert!(advice.contains("Give the pool less, not more"), "{advice}");
    assert!(!advice.contains("MEM_FRACTION=.95"), "{advice}");
}

/// XLA's rematerialization warning in the shapes people quote it (public
/// repositories' notes, the search index's files 59687541769, 60858421566 and
/// 60023510020): without the exact counts, wrapped by hand, and after the
/// scheduler's warning with its limit cut off.
#[test]
fn the_rematerialization_warning_in_every_shape() {
    let bare = "W0130 11:23:59.296923 hlo_rematerialization.cc:3204] Can't reduce memory use below 2.52GiB by rematerialization; only reduced to 631.67GiB\nE0130 11:24:11.521010 pjrt_stream_executor_client.cc:2111] RESOURCE_EXHAUSTED: Out of memory while trying to allocate 631.67GiB.\n";
    let report = xmem::oom::scan("log", bare.as_bytes()).unwrap();
    let remat = of_kind(&report, Kind::CompileTimeOom);
    assert_eq!((remat.used_bytes, remat.capacity_bytes), (Some(gib(631.67)), Some(gib(2.52))));
    assert_eq!(report.incidents.len(), 1);
    assert_eq!(report.incidents[0].cause, Some(Cause::ProgramNeed));
    let wrapped = "W0905 17:27:21 hlo_rematerialization.cc:3231] Can't reduce memory use below\n57.03GiB (61237292825 bytes) by rematerialization; only reduced to 68.32GiB\n(73361280968 bytes), down from 68.32GiB (73361280968 bytes) originally\n";
    let report = xmem::oom::scan("log", wrapped.as_bytes()).unwrap();
    let remat = of_kind(&report, Kind::CompileTimeOom);
    assert_eq!(remat.capacity_bytes, Some(61_237_292_825));
    assert_eq!(remat.used_bytes, Some(gib(68.32)), "the exact count went to the next line; the size stands");
    assert_eq!(report.incidents[0].cause, Some(Cause::NotAFailure));
    let cut = "E0207 22:03:02.026958 gpu_hlo_schedule.cc:815] The byte size of input/output arguments (35562383856024) exceeds the base limit\nW0207 22:03:02.946009 hlo_rematerialization.cc:3204] Can't reduce memory use below 22.40GiB by rematerialization; only reduced to 60.04TiB\n";
    let report = xmem::oom::scan("log", cut.as_bytes()).unwrap();
    assert_eq!(report.events.len(), 2);
    assert_eq!((report.events[0].used_bytes, report.events[0].capacity_bytes), (Some(35_562_383_856_024), None));
    assert_eq!(report.events[1].used_bytes, Some((60.04 * (1u64 << 40) as f64).round() as u64));
    assert_eq!(report.incidents.len(), 1, "the two warnings are about one compilation");
}

/// The end-to-end run on an H200 (`e2e_h200/`): a JAX training step without
/// donation in 20% of the GPU warned, its allocator ran out of 1 GiB, and the
/// job went on to finish every step. The log shows no error after the
/// allocator's warning, so the warning is not presented as the failure.
#[test]
fn an_allocator_warning_with_no_error_after_it_is_not_the_failure() {
    let report = scan("e2e_h200/jax_run.stderr");
    let incident = titled(
        &report,
        Cause::NoErrorFollowed,
        "GPU_0_bfc ran out of memory trying to allocate 1.00 GiB, but no error follows in the log: the job may have \
         recovered",
    );
    // `The byte size of input/output arguments (38923141264) exceeds the base limit (30022828032)`.
    assert!(
        incident.title.ends_with(
            "XLA had warned that the program's arguments and outputs, 36.25 GiB, exceed its 27.96 GiB limit"
        ),
        "{}",
        incident.title
    );
    assert!(!incident.title.contains("failed"), "{}", incident.title);
    assert!(incident.advice[0].starts_with("See whether the job went on"), "{:?}", incident.advice);
    assert!(incident.advice[1].contains("donate_argnums"), "{:?}", incident.advice);
    // The capture is xmem run's stderr: the job's 7 lines, then xmem's own report, which quotes them and is not read.
    assert_eq!(report.events.iter().map(|e| (e.line, e.occurrences)).collect::<Vec<_>>(), [(1, 1), (2, 1), (3, 1)]);
    let bfc = of_kind(&report, Kind::BfcAllocatorOom);
    assert_eq!((bfc.requested_bytes, bfc.non_fatal, bfc.truncated), (Some(GIB), false, false), "the log's facts stand");

    let text = xmem().args(["oom", "e2e_h200/jax_run.stderr"]).output().unwrap();
    assert_eq!(text.status.code(), Some(1), "a memory message was found");
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("3 messages of one incident, at lines 1, 2, 3."), "{text}");
    assert!(!text.contains("failure"), "{text}");
}

#[test]
fn a_fatal_error_after_the_allocator_warning_keeps_the_incident_a_failure() {
    // `big.stderr`: one 200 GiB request; GPU_0_bfc's warning, then JAX's RESOURCE_EXHAUSTED in jit__reduce_sum.
    let report = scan("e2e_h200/big.stderr");
    titled(&report, Cause::RequestAbovePool, "jit__reduce_sum requested 200.00 GiB in one allocation");
    assert_eq!(report.incidents.len(), 1);
    // The scheduler's warning is printed twice by the job (two programs of 200 GiB and 4 bytes); xmem's report is not read.
    let seen: Vec<(u64, u64)> = report.events.iter().map(|e| (e.line, e.occurrences)).collect();
    assert_eq!(seen, [(1, 2), (2, 1), (7, 1), (19, 1)]);
}

#[test]
fn the_log_names_no_program_but_its_argument_size_is_exactly_one_programs() {
    let doc = json(&["e2e_h200/jax_run.stderr", "--with", "e2e_h200/xla_dump"]);
    let incident = &doc["incidents"][0];
    assert!(incident["program"].is_null(), "the log names no program");
    let joined = &incident["program_report"];
    assert_eq!(joined["matched_by"], "arguments");
    assert_eq!(joined["module"], "jit_train_step(5972)");
    // The log's figures are the program's to the byte: its parameters and outputs, and its outputs alone.
    let breakdown = &joined["memory_space"]["breakdown"];
    let (parameters, outputs) = (breakdown["parameters"].as_u64().unwrap(), breakdown["outputs"].as_u64().unwrap());
    assert_eq!(parameters + outputs, 38_923_141_264);
    assert_eq!(outputs, 19_327_352_976);
    let how = joined["matched_how"].as_str().unwrap();
    assert!(how.starts_with("matched by the log's argument size, 38923141264 bytes, exactly"), "{how}");
    assert!(how.contains("the rematerialization limit, 19327352976 bytes, is exactly its outputs"), "{how}");
    // The job did not die of it: the peak above the limit is stated, not a verdict that it cannot run.
    let finding = joined["finding"].as_str().unwrap();
    assert!(
        finding.starts_with(
            "jit_train_step's own peak, 36.25 GiB, is 8.29 GiB above the 27.96 GiB limit the log gives; most of it \
             is its 19 parameters, 18.25 GiB (50%; arguments passed in: no source line); the source line that owns \
             most of the rest is "
        ),
        "{finding}"
    );
    assert!(finding.ends_with("jax_mlp_oom.py:21 (12.00 GiB, 33%)"), "{finding}");
    assert_eq!(joined["top_change"]["saves_bytes"].as_i64(), Some(18 * GIB as i64), "18 arrays of 1 GiB");
    assert!(incident["advice"].as_array().unwrap().iter().all(|a| !a.as_str().unwrap().contains("--with")));

    let text = xmem().args(["oom", "e2e_h200/jax_run.stderr", "--with", "e2e_h200/xla_dump"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("The program: jit_train_step(5972) in e2e_h200/xla_dump (matched by the log's argument size"));
    assert!(!text.contains("The failed program"), "{text}");
}

#[test]
fn an_exact_figure_no_program_has_is_never_joined_with_another() {
    // adam_nodonate's dump has a jit_train_step with 1 GiB buffers (the request's size), but not 38923141264 bytes.
    let doc = json(&["e2e_h200/jax_run.stderr", "--with", "adam_nodonate/xla_dump"]);
    let joined = &doc["incidents"][0]["program_report"];
    assert!(joined["matched_by"].is_null(), "{joined}");
    let reason = joined["reason"].as_str().unwrap();
    assert!(reason.contains("no program in the inputs has parameters and outputs of exactly 38923141264 bytes"));
    // adam_nodonate's own log without the program's name is joined by its argument size, 16174514380 bytes.
    let joined = joined_without_its_name("adam_nodonate", "jit_train_step");
    assert_eq!(joined["matched_by"], "arguments");
    assert_eq!(joined["module"], "jit_train_step(11275)");
    assert!(joined["matched_how"].as_str().unwrap().contains("16174514380 bytes, exactly"));
}

#[test]
fn the_exit_code_xmem_run_saw_judges_each_incident_again() {
    // adam_nodonate died of its error (exit 1): the verdict is the log's.
    let mut report = scan("adam_nodonate/output.log");
    report.job_exited(1);
    titled(&report, Cause::ProgramNeed, "jit_train_step needs 9.84 GiB");
    // Had it exited 0, it caught the error and went on: said so, with the advice to avoid the error after it.
    report.job_exited(0);
    let incident = titled(
        &report,
        Cause::Survived,
        "The job went on after this and exited 0: jit_train_step needs 9.84 GiB, 2.34 GiB more than the 7.50 GiB limit",
    );
    assert!(incident.advice[0].starts_with("The job handled this error itself"), "{:?}", incident.advice);
    assert!(incident.advice[1].contains("donate_argnums"), "{:?}", incident.advice);
    assert!(!incident.is_failure());
    // The H200 job, as it was: exit 0 after the allocator's warning alone.
    let mut report = scan("e2e_h200/jax_run.stderr");
    report.job_exited(0);
    let incident = titled(
        &report,
        Cause::Survived,
        "GPU_0_bfc ran out of memory trying to allocate 1.00 GiB and the job went on (exit 0); XLA had warned",
    );
    assert!(incident.title.ends_with(": warnings it survived"), "{}", incident.title);
    assert!(incident.advice[0].starts_with("It ran close to its memory limit"), "{:?}", incident.advice);
}

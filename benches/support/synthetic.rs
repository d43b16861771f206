//! Builds XSpace and HloProto bytes of any size, shaped like real ones, so
//! benchmarks can double every dimension (heap events, buffers live at the
//! peak, modules, host events, allocator events) and show how xmem's cost grows.

#![allow(dead_code)] // the benchmarks and examples/synthesize each use their own subset

use prost::Message;
use xmem::ingest::proto::xla::{
    buffer_allocation_proto::Assigned,
    heap_simulator_trace::Event,
    logical_buffer_proto::Location,
    stack_frame_index_proto::{FileLocation, StackFrame},
    BufferAllocationProto, BufferAssignmentProto, HeapSimulatorTrace, HloComputationProto, HloInstructionProto,
    HloModuleProto, HloProto, LayoutProto, LogicalBufferProto, OpMetadata, ShapeProto, StackFrameIndexProto,
};
use xmem::ingest::proto::xplane::{
    x_event, x_stat, XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata,
};

/// The size of one synthetic module.
#[derive(Debug, Clone, Copy)]
pub struct ModuleSize {
    /// Buffers allocated first and freed last: all live at the peak.
    pub live_at_peak: usize,
    /// Smaller buffers allocated and freed right away after the peak buffers.
    pub transient: usize,
}

impl ModuleSize {
    pub fn heap_events(&self) -> usize {
        2 * (self.live_at_peak + self.transient)
    }
}

const PEAK_BUFFER_BYTES: i64 = 4096;
const TRANSIENT_BUFFER_BYTES: i64 = 1024;
const F32: i32 = 11;

fn shape(elements: i64) -> ShapeProto {
    ShapeProto {
        element_type: F32,
        dimensions: vec![elements],
        layout: Some(Box::new(LayoutProto { minor_to_major: vec![0], ..Default::default() })),
        ..Default::default()
    }
}

/// The buffer instruction `id` defines (at its top-level shape index).
fn logical_buffer(id: i64, size: i64, color: i64) -> LogicalBufferProto {
    LogicalBufferProto { id, size, defined_at: Some(Location { instruction_id: id, ..Default::default() }), color }
}

fn instruction(id: i64, bytes: i64) -> HloInstructionProto {
    HloInstructionProto {
        name: format!("fusion.{id}"),
        opcode: "fusion".into(),
        shape: Some(shape(bytes / 4)),
        metadata: Some(OpMetadata {
            op_name: format!("jit(synthetic)/layer_{}/dot_general", id % 97),
            source_file: "synthetic.py".into(),
            source_line: (id % 1000) as i32 + 1,
            ..Default::default()
        }),
        id,
    }
}

/// One module: a parameter, then `live_at_peak` buffers that stay live
/// until the end, with `transient` short-lived buffers in between.
pub fn hlo_proto(name: &str, size: ModuleSize) -> HloProto {
    let buffers = size.live_at_peak + size.transient;
    let mut instructions = Vec::with_capacity(buffers + 1);
    let mut logical_buffers = Vec::with_capacity(buffers + 1);
    let mut temp = BufferAllocationProto { index: 1, ..Default::default() };
    let mut events = Vec::with_capacity(size.heap_events());
    for i in 0..buffers {
        let id = i as i64;
        let bytes = if i < size.live_at_peak { PEAK_BUFFER_BYTES } else { TRANSIENT_BUFFER_BYTES };
        instructions.push(instruction(id, bytes));
        logical_buffers.push(logical_buffer(id, bytes, 0));
        temp.assigned.push(Assigned { logical_buffer_id: id, offset: 0, size: bytes });
        let alloc = Event { kind: 0, buffer_id: id, instruction_name: format!("fusion.{id}"), ..Default::default() };
        events.push(alloc);
        if i >= size.live_at_peak {
            events.push(Event {
                kind: 1,
                buffer_id: id,
                instruction_name: format!("fusion.{id}"),
                ..Default::default()
            });
        }
    }
    for i in 0..size.live_at_peak {
        events.push(Event { kind: 1, buffer_id: i as i64, instruction_name: "root".into(), ..Default::default() });
    }
    temp.size = size.live_at_peak as i64 * PEAK_BUFFER_BYTES + TRANSIENT_BUFFER_BYTES;
    let parameter_id = buffers as i64;
    instructions.push(instruction(parameter_id, PEAK_BUFFER_BYTES));
    logical_buffers.push(logical_buffer(parameter_id, PEAK_BUFFER_BYTES, 0));
    let parameter = BufferAllocationProto {
        index: 0,
        size: PEAK_BUFFER_BYTES,
        is_entry_computation_parameter: true,
        assigned: vec![Assigned { logical_buffer_id: parameter_id, offset: 0, size: PEAK_BUFFER_BYTES }],
        ..Default::default()
    };
    module_with_trace(name, instructions, logical_buffers, vec![parameter, temp], events)
}

/// An XSpace with `modules` modules in `/host:metadata` and `host_events`
/// events on a `/host:CPU` line (which a report must skip).
pub fn xspace(modules: usize, size: ModuleSize, host_events: usize) -> Vec<u8> {
    const HLO_PROTO: i64 = 1;
    const PROGRAM_ID: i64 = 2;
    let mut metadata = XPlane { id: 1, name: "/host:metadata".into(), ..Default::default() };
    metadata
        .stat_metadata
        .insert(HLO_PROTO, XStatMetadata { id: HLO_PROTO, name: "Hlo Proto".into(), ..Default::default() });
    metadata
        .stat_metadata
        .insert(PROGRAM_ID, XStatMetadata { id: PROGRAM_ID, name: "program_id".into(), ..Default::default() });
    for m in 0..modules {
        let id = m as i64 + 1;
        let name = format!("jit_synthetic_{m}");
        let proto = hlo_proto(&name, size).encode_to_vec();
        metadata.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: format!("{name}({m})"),
                stats: vec![
                    XStat { metadata_id: HLO_PROTO, value: Some(x_stat::Value::BytesValue(proto.into())) },
                    XStat { metadata_id: PROGRAM_ID, value: Some(x_stat::Value::Uint64Value(m as u64)) },
                ],
                ..Default::default()
            },
        );
    }
    let mut host = XPlane { id: 2, name: "/host:CPU".into(), ..Default::default() };
    host.event_metadata.insert(1, XEventMetadata { id: 1, name: "ExecuteProgram".into(), ..Default::default() });
    host.lines.push(XLine {
        id: 1,
        name: "python".into(),
        timestamp_ns: 1_000_000,
        events: (0..host_events)
            .map(|i| XEvent {
                metadata_id: 1,
                duration_ps: 1000,
                data: Some(x_event::Data::OffsetPs(i as i64 * 2000)),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    });
    XSpace { planes: vec![metadata, host], hostnames: vec!["synthetic".into()], ..Default::default() }.encode_to_vec()
}

/// An XSpace whose `/host:CPU` holds `steps` training steps shaped like a
/// TensorFlow profile taken with host_tracer_level 2: each step is a root
/// `FunctionRun` on the python thread, linked by a context id to an executor
/// run on a compute thread that makes `allocations` allocations and then
/// frees them.
pub fn allocator_xspace(steps: usize, allocations: usize) -> Vec<u8> {
    allocator_space(steps, allocations).encode_to_vec()
}

fn allocator_space(steps: usize, allocations: usize) -> XSpace {
    const FUNCTION_RUN: i64 = 1;
    const EXECUTOR_RUN: i64 = 2;
    const ALLOCATION: i64 = 3;
    const DEALLOCATION: i64 = 4;
    let stat_names = [
        "allocator_name",
        "bytes_allocated",
        "bytes_available",
        "peak_bytes_in_use",
        "requested_bytes",
        "allocation_bytes",
        "addr",
        "tf_op",
        "_r",
        "_pt",
        "_p",
        "_ct",
        "_c",
        "GPU_0_bfc",
    ];
    let stat_id = |name: &str| stat_names.iter().position(|n| *n == name).unwrap() as i64 + 1;
    let int =
        |name: &str, value: i64| XStat { metadata_id: stat_id(name), value: Some(x_stat::Value::Int64Value(value)) };
    let reference = |name: &str, to: &str| XStat {
        metadata_id: stat_id(name),
        value: Some(x_stat::Value::RefValue(stat_id(to) as u64)),
    };
    let mut host = XPlane { id: 1, name: "/host:CPU".into(), ..Default::default() };
    for (id, name) in stat_names.iter().enumerate() {
        let id = id as i64 + 1;
        host.stat_metadata.insert(id, XStatMetadata { id, name: name.to_string(), ..Default::default() });
    }
    for (id, name) in [
        (FUNCTION_RUN, "FunctionRun"),
        (EXECUTOR_RUN, "ExecutorState::Process"),
        (ALLOCATION, "MemoryAllocation"),
        (DEALLOCATION, "MemoryDeallocation"),
    ] {
        host.event_metadata.insert(id, XEventMetadata { id, name: name.into(), ..Default::default() });
    }
    let step_ps = 10 * allocations as i64 + 1000;
    let mut python = XLine { id: 1, name: "python".into(), timestamp_ns: 1_000_000, ..Default::default() };
    let mut compute = XLine { id: 2, name: "tf_Compute".into(), timestamp_ns: 1_000_000, ..Default::default() };
    for step in 0..steps as i64 {
        let start = step * step_ps;
        python.events.push(XEvent {
            metadata_id: FUNCTION_RUN,
            data: Some(x_event::Data::OffsetPs(start)),
            duration_ps: step_ps - 10,
            stats: vec![int("_r", 1), int("_pt", 2), int("_p", step + 1)],
        });
        compute.events.push(XEvent {
            metadata_id: EXECUTOR_RUN,
            data: Some(x_event::Data::OffsetPs(start + 100)),
            duration_ps: step_ps - 200,
            stats: vec![int("_ct", 2), int("_c", step + 1)],
        });
        let mut heap = 0;
        let allocator_event = |kind: i64, offset: i64, address: i64, heap: i64| XEvent {
            metadata_id: kind,
            data: Some(x_event::Data::OffsetPs(offset)),
            stats: vec![
                reference("allocator_name", "GPU_0_bfc"),
                int("bytes_allocated", heap),
                int("bytes_available", (1 << 34) - heap),
                int("peak_bytes_in_use", PEAK_BUFFER_BYTES * allocations as i64),
                int("requested_bytes", PEAK_BUFFER_BYTES - 100),
                int("allocation_bytes", PEAK_BUFFER_BYTES),
                int("addr", 4096 * address),
                XStat {
                    metadata_id: stat_id("tf_op"),
                    value: Some(x_stat::Value::StrValue(format!("model/layer_{}/MatMul", address % 97))),
                },
            ],
            ..Default::default()
        };
        for i in 0..allocations as i64 {
            heap += PEAK_BUFFER_BYTES;
            compute.events.push(allocator_event(ALLOCATION, start + 200 + 4 * i, i, heap));
        }
        for i in 0..allocations as i64 {
            heap -= PEAK_BUFFER_BYTES;
            compute.events.push(allocator_event(DEALLOCATION, start + 200 + 4 * (allocations as i64 + i), i, heap));
        }
    }
    host.lines = vec![python, compute];
    XSpace { planes: vec![host], hostnames: vec!["synthetic".into()], ..Default::default() }
}

// Hostile shapes: inputs no profiler writes, each built so that one
// dimension grows with `n` while the rest stays small. Every shape xmem must
// stay linear on has a generator here, an entry in `HOSTILE_SHAPES`, a
// benchmark in benches/xmem.rs and a row in bench/shapes.sh.

/// A hostile input shape. Adding one takes one line in [`HOSTILE_SHAPES`]:
/// bench/shapes.sh times it over 5 doublings from `bench_n` (through
/// `synthesize shape`), and tests/hostile.rs runs it at `hostile_n` under a
/// 4 GiB address-space limit.
pub struct HostileShape {
    pub name: &'static str,
    /// The file it is written to (its suffix tells xmem what it is).
    pub file_name: &'static str,
    /// The xmem command that reads it, without the file.
    pub args: &'static [&'static str],
    /// The smallest size bench/shapes.sh measures: at or below where the
    /// quadratic xmem (787e1c2) took 10 s a run, so that the 5 doublings
    /// reach 2-32x past it (BENCHMARKS.md gives each shape's figures).
    pub bench_n: usize,
    /// A size at which a quadratic xmem ran out of memory or took minutes.
    pub hostile_n: usize,
    pub generate: fn(usize) -> Vec<u8>,
    /// The peak RSS it keeps under (BENCHMARKS.md, "Memory: the bound").
    pub memory: MemoryBound,
}

/// The peak RSS a shape keeps under, besides 100 MB for the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryBound {
    /// The design's bound: twice the input.
    TwiceInput,
    /// What the shape truly needs, measured: the input once (it is mapped,
    /// and its pages count) and this many bytes per item (per unit of `n`).
    /// tests/it/hostile.rs checks the growth between two sizes against it.
    PerItem(u64),
}

impl MemoryBound {
    /// The most `bytes` of input at size `n` may take, besides 100 MB.
    pub fn allowed(self, bytes: u64, n: u64) -> u64 {
        match self {
            MemoryBound::TwiceInput => 2 * bytes,
            MemoryBound::PerItem(per_item) => bytes + per_item * n,
        }
    }

    /// Bytes per item, 0 for the design's bound (as bench/shapes.sh reads it).
    pub fn per_item(self) -> u64 {
        match self {
            MemoryBound::TwiceInput => 0,
            MemoryBound::PerItem(per_item) => per_item,
        }
    }
}

const REPORT: &[&str] = &["report", "--format", "json", "-o", "/dev/null"];
/// In a shape's command, where it writes its charts or page: bench/shapes.sh
/// and tests/it/hostile.rs put a path there and hold what is written to the
/// bound of design.md ("Charts and pages are bounded": [`output_bound`]).
pub const OUT: &str = "OUT";
const PLOT: &[&str] = &["plot", "-o", OUT];
const HTML: &[&str] = &["report", "--format", "html", "-o", OUT];

/// The most bytes `plot` or an HTML page may write for an input of
/// `input_bytes`, as design.md states it ("Untrusted inputs"): the caps
/// times the most bytes an element can take, and the page's data.
pub fn output_bound(input_bytes: u64) -> u64 {
    2 * input_bytes + (1 << 30)
}

/// What the shapes here write at most, far below [`output_bound`]: a
/// change that lets output grow again fails here first.
pub const OUTPUT_SEEN: u64 = 8 << 20;
const TWICE: MemoryBound = MemoryBound::TwiceInput;

/// Every hostile shape; one line adds one.
#[rustfmt::skip]
pub const HOSTILE_SHAPES: &[HostileShape] = &[
    HostileShape { name: "stack-chain", file_name: "stack_chain.hlo.pb", args: REPORT, bench_n: 32_000, hostile_n: 256_000, generate: |n| stack_chain_hlo(n).encode_to_vec(), memory: TWICE },
    HostileShape { name: "tuple-indices", file_name: "tuple_indices.hlo.pb", args: REPORT, bench_n: 12_500, hostile_n: 200_000, generate: |n| tuple_indices_hlo(n).encode_to_vec(), memory: TWICE },
    HostileShape { name: "nested-step-roots", file_name: "nested_step_roots.xplane.pb", args: REPORT, bench_n: 20_000, hostile_n: 160_000, generate: nested_step_roots_xspace, memory: TWICE },
    HostileShape { name: "many-colors", file_name: "colors.hlo.pb", args: REPORT, bench_n: 1_000, hostile_n: 16_000, generate: |n| hlo_proto_with_colors(n).encode_to_vec(), memory: TWICE },
    HostileShape { name: "share-chain", file_name: "share_chain.hlo.pb", args: REPORT, bench_n: 6_250, hostile_n: 100_000, generate: |n| hlo_proto_with_share_chain(n, false).encode_to_vec(), memory: TWICE },
    HostileShape { name: "share-cycle", file_name: "share_cycle.hlo.pb", args: REPORT, bench_n: 6_250, hostile_n: 100_000, generate: |n| hlo_proto_with_share_chain(n, true).encode_to_vec(), memory: TWICE },
    HostileShape { name: "pprof-inlined-lines", file_name: "inlined.prof", args: REPORT, bench_n: 4_000, hostile_n: 128_000, generate: pprof_inlined_location, memory: TWICE },
    HostileShape { name: "heap-events", file_name: "heap_events.hlo.pb", args: REPORT, bench_n: 500_000, hostile_n: 400_000, generate: |n| heap_events_hlo(n).encode_to_vec(), memory: MemoryBound::PerItem(52) },
    HostileShape { name: "defining-instructions", file_name: "defining.hlo.pb", args: REPORT, bench_n: 25_000, hostile_n: 25_000, generate: |n| hlo_proto("jit_defining", ModuleSize { live_at_peak: 1, transient: n }).encode_to_vec(), memory: MemoryBound::PerItem(600) },
    HostileShape { name: "many-modules", file_name: "modules.xplane.pb", args: REPORT, bench_n: 1_000, hostile_n: 1_000, generate: |n| xspace(n, ModuleSize { live_at_peak: 1, transient: 1 }, 0), memory: MemoryBound::PerItem(5_400) },
    HostileShape { name: "oom-distinct-lines", file_name: "distinct.log", args: OOM, bench_n: 50_000, hostile_n: 20_000, generate: |n| oom_distinct_lines(n).into_bytes(), memory: MemoryBound::PerItem(1_300) },
    HostileShape { name: "pprof-inlined-stacks", file_name: "stacks.prof", args: REPORT, bench_n: 250, hostile_n: 500, generate: pprof_inlined_stacks, memory: MemoryBound::PerItem(1_000) },
    HostileShape { name: "plot-colors-stacks", file_name: "colors_stacks.hlo.pb", args: PLOT, bench_n: 500, hostile_n: 4_000, generate: |n| hlo_proto_with_colors_and_stacks(n, n / 4).encode_to_vec(), memory: TWICE },
    HostileShape { name: "html-colors-stacks", file_name: "colors_stacks.hlo.pb", args: HTML, bench_n: 500, hostile_n: 4_000, generate: |n| hlo_proto_with_colors_and_stacks(n, n / 4).encode_to_vec(), memory: TWICE },
    HostileShape { name: "plot-many-buffers", file_name: "many_buffers.hlo.pb", args: PLOT, bench_n: 12_500, hostile_n: 50_000, generate: |n| many_buffers_hlo(n).encode_to_vec(), memory: TWICE },
    HostileShape { name: "plot-long-names", file_name: "long_names.hlo.pb", args: PLOT, bench_n: 4_000, hostile_n: 32_000, generate: |n| hlo_proto_with_long_names(n).encode_to_vec(), memory: TWICE },
    HostileShape { name: "html-long-names", file_name: "long_names.hlo.pb", args: HTML, bench_n: 4_000, hostile_n: 32_000, generate: |n| hlo_proto_with_long_names(n).encode_to_vec(), memory: TWICE },
];

const OOM: &[&str] = &["oom", "--format", "json", "-o", "/dev/null"];

/// An HloProto whose one heap trace has `n` events over 1024 buffers, each
/// allocated and freed in turn, the events without instruction names: about
/// 7 bytes of input per event, so the events themselves are the input.
pub fn heap_events_hlo(n: usize) -> HloProto {
    const BUFFERS: usize = 1024;
    let mut proto = hlo_proto("jit_heap_events", ModuleSize { live_at_peak: 0, transient: BUFFERS });
    if let Some(assignment) = proto.buffer_assignment.as_mut() {
        let event = |i: usize| Event {
            kind: if (i / BUFFERS).is_multiple_of(2) { 0 } else { 1 },
            buffer_id: (i % BUFFERS) as i64,
            ..Default::default()
        };
        // Whole rounds of allocations then frees, so every buffer is freed before it is allocated again.
        let rounds = n.div_ceil(2 * BUFFERS).max(1);
        assignment.heap_simulator_traces =
            vec![HeapSimulatorTrace { events: (0..rounds * 2 * BUFFERS).map(event).collect(), ..Default::default() }];
    }
    proto
}

/// `n` out-of-memory errors on lines of their own, each with a request of
/// its own size and far enough apart to be an incident each.
pub fn oom_distinct_lines(n: usize) -> String {
    let mut log = String::with_capacity(n * 90);
    for i in 0..n {
        log.push_str(&format!("RESOURCE_EXHAUSTED: Out of memory while trying to allocate {} bytes.\n", 1_000_000 + i));
    }
    log
}

/// An HloProto with a stack-frame chain `n` deep and `n / 16` instructions
/// whose metadata all point at its innermost frame; all but one of their
/// buffers are transient.
pub fn stack_chain_hlo(n: usize) -> HloProto {
    let mut proto = hlo_proto("jit_stack_chain", ModuleSize { live_at_peak: 1, transient: n / 16 });
    point_every_instruction_at_a_stack(&mut proto, n);
    proto
}

/// Gives `proto` a stack-frame chain `depth` deep and makes every
/// instruction's metadata point at its innermost frame.
fn point_every_instruction_at_a_stack(proto: &mut HloProto, depth: usize) {
    let frames = i32::try_from(depth).unwrap();
    if let Some(module) = proto.hlo_module.as_mut() {
        for instruction in module.computations.iter_mut().flat_map(|c| c.instructions.iter_mut()) {
            if let Some(metadata) = instruction.metadata.as_mut() {
                metadata.stack_frame_id = frames;
            }
        }
        module.stack_frame_index = Some(StackFrameIndexProto {
            file_names: vec!["model.py".into()],
            function_names: vec!["layer".into()],
            file_locations: (1..=frames)
                .map(|line| FileLocation { file_name_id: 1, function_name_id: 1, line, column: 4 })
                .collect(),
            stack_frames: (1..=frames).map(|id| StackFrame { file_location_id: id, parent_frame_id: id - 1 }).collect(),
        });
    }
}

/// An HloProto with one instruction whose tuple shape has `n` elements,
/// each the buffer of its own shape index, all live together.
pub fn tuple_indices_hlo(n: usize) -> HloProto {
    let element = shape(1);
    let tuple = ShapeProto { element_type: 13, tuple_shapes: vec![element; n], ..Default::default() };
    let mut tuple_instruction = instruction(0, 4);
    tuple_instruction.shape = Some(tuple);
    let logical_buffers: Vec<LogicalBufferProto> = (0..n as i64)
        .map(|i| LogicalBufferProto {
            id: i,
            size: 4,
            defined_at: Some(Location { instruction_id: 0, shape_index: vec![i] }),
            color: 0,
        })
        .collect();
    let name = "fusion.0".to_string();
    let event = |kind, buffer_id| Event { kind, buffer_id, instruction_name: name.clone(), ..Default::default() };
    let events = (0..n as i64).map(|i| event(0, i)).chain((0..n as i64).map(|i| event(1, i))).collect();
    let temp = BufferAllocationProto {
        index: 0,
        size: 4 * n as i64,
        assigned: (0..n as i64).map(|i| Assigned { logical_buffer_id: i, offset: 4 * i, size: 4 }).collect(),
        ..Default::default()
    };
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: "jit_tuple_indices".into(),
            entry_computation_name: "main".into(),
            computations: vec![HloComputationProto {
                name: "main".into(),
                instructions: vec![tuple_instruction],
                id: 1,
                root_id: 0,
            }],
            ..Default::default()
        }),
        buffer_assignment: Some(BufferAssignmentProto {
            logical_buffers,
            buffer_allocations: vec![temp],
            heap_simulator_traces: vec![HeapSimulatorTrace { events, ..Default::default() }],
            peak_buffers: Vec::new(),
        }),
    }
}

/// One training step of allocator events (as [`allocator_xspace`]), then on
/// the python thread `n` nested events and, inside the innermost, `n`
/// sibling step roots: each root's search for a root above it climbs the
/// whole chain.
pub fn nested_step_roots_xspace(n: usize) -> Vec<u8> {
    const SCOPE: i64 = 5;
    let mut space = allocator_space(1, 1);
    let host = &mut space.planes[0];
    host.event_metadata.insert(SCOPE, XEventMetadata { id: SCOPE, name: "PythonScope".into(), ..Default::default() });
    let root_stat = host.stat_metadata.values().find(|m| m.name == "_r").map(|m| m.id).unwrap();
    let python = &mut host.lines[0];
    let (start, depth) = (1_000_000_i64, n as i64);
    for level in 0..depth {
        python.events.push(XEvent {
            metadata_id: SCOPE,
            data: Some(x_event::Data::OffsetPs(start + level)),
            duration_ps: 4 * depth - 2 * level,
            ..Default::default()
        });
    }
    for root in 0..depth {
        python.events.push(XEvent {
            metadata_id: 1,
            data: Some(x_event::Data::OffsetPs(start + depth + 2 * root)),
            duration_ps: 1,
            stats: vec![XStat { metadata_id: root_stat, value: Some(x_stat::Value::Int64Value(1)) }],
        });
    }
    space.encode_to_vec()
}

/// Text for one table cell of `bytes` bytes: op-name-like words of 60
/// characters between single spaces, as a runaway op name or stack would be.
pub fn long_cell(bytes: usize) -> String {
    let word = "jit(train_step)/transpose(jvp(while))/body/dot_general.1234";
    let mut cell = String::with_capacity(bytes + word.len());
    while cell.len() < bytes {
        cell.push_str(word);
        cell.push(' ');
    }
    cell.truncate(bytes);
    cell
}

/// A TPU compile-time OOM whose report names `sections` distinct sections
/// (`Total hbm0 usage >= 1.00G:` …), each with one figure: the shape that
/// made section lookup by name quadratic.
pub fn tpu_oom_log_with_sections(sections: usize) -> String {
    let mut log = String::from(
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 20.00G of 16.00G hbm. Exceeded hbm capacity by 4.00G.\n\n",
    );
    for i in 0..sections {
        log.push_str(&format!("Total hbm{i} usage >= 1.00G:\n    reserved        530.00M\n"));
    }
    log
}

/// A memory error on one line of `bytes` bytes: the message, then the kind
/// of run-on text a log line can carry (words, brackets, quotes, spaces).
pub fn oom_log_line(bytes: usize) -> String {
    let mut line = String::from("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1024 bytes. ");
    let filler = "op_name=\"jit(train_step)/dot_general\" (shape=[1024, 4096])     CUDA out of memory. ";
    while line.len() < bytes {
        line.push_str(filler);
    }
    line.truncate(bytes);
    line.push('\n');
    line
}

/// One temporary buffer per colour, `colors` colours, all in one heap trace
/// that allocates every buffer and then frees them: the shape of a small
/// HloProto with thousands of memory spaces, where each colour must cost
/// only its own events.
pub fn hlo_proto_with_colors(colors: usize) -> HloProto {
    let mut instructions = Vec::with_capacity(colors);
    let mut logical_buffers = Vec::with_capacity(colors);
    let mut allocations = Vec::with_capacity(colors);
    let mut events = Vec::with_capacity(2 * colors);
    for i in 0..colors {
        let id = i as i64;
        instructions.push(instruction(id, TRANSIENT_BUFFER_BYTES));
        logical_buffers.push(logical_buffer(id, TRANSIENT_BUFFER_BYTES, id));
        allocations.push(BufferAllocationProto {
            index: id,
            size: TRANSIENT_BUFFER_BYTES,
            color: id,
            assigned: vec![Assigned { logical_buffer_id: id, offset: 0, size: TRANSIENT_BUFFER_BYTES }],
            ..Default::default()
        });
        events.push(Event { kind: 0, buffer_id: id, instruction_name: format!("fusion.{id}"), ..Default::default() });
    }
    events.extend((0..colors as i64).map(|id| Event {
        kind: 1,
        buffer_id: id,
        instruction_name: "root".into(),
        ..Default::default()
    }));
    module_with_trace("jit_colors", instructions, logical_buffers, allocations, events)
}

/// [`hlo_proto_with_colors`] whose instructions all stand at the innermost
/// frame of a Python stack `depth` deep: every memory space has a buffer
/// live at its peak with that stack, so a chart per memory space and a
/// frame per stack level multiply into output far larger than the input.
pub fn hlo_proto_with_colors_and_stacks(colors: usize, depth: usize) -> HloProto {
    let mut proto = hlo_proto_with_colors(colors);
    point_every_instruction_at_a_stack(&mut proto, depth);
    proto
}

/// One memory space of `n` buffers, half of them live at the peak, each
/// defined by its own instruction: as many boxes in a lifetimes chart, bars
/// at the peak and leaves of an icicle graph.
pub fn many_buffers_hlo(n: usize) -> HloProto {
    hlo_proto("jit_many_buffers", ModuleSize { live_at_peak: n / 2, transient: n - n / 2 })
}

/// [`hlo_proto_with_colors_and_stacks`] of 64 memory spaces and a stack 64
/// deep, whose module name, source file, function and op names are `n`
/// characters each, of the kinds escaping lengthens most (`&`, `<`, ESC, a
/// bidi override): every chart caption, table row, tooltip and icicle frame
/// names one of them.
pub fn hlo_proto_with_long_names(n: usize) -> HloProto {
    let name: String = "&<\u{1b}\u{202e}".chars().cycle().take(n).collect();
    let mut proto = hlo_proto_with_colors_and_stacks(64, 64);
    if let Some(module) = proto.hlo_module.as_mut() {
        module.name = name.clone();
        for instruction in module.computations.iter_mut().flat_map(|c| c.instructions.iter_mut()) {
            if let Some(metadata) = instruction.metadata.as_mut() {
                metadata.op_name = name.clone();
            }
        }
        if let Some(index) = module.stack_frame_index.as_mut() {
            index.file_names = vec![name.clone()];
            index.function_names = vec![name];
        }
    }
    proto
}

/// `buffers` buffers sharing one piece of memory: the first is allocated,
/// each next one shares with the one before it (a chain of `buffers`), then
/// all are freed. With `cycle`, the first then shares with the last, closing
/// the chain into a cycle, which a replay must stop at rather than follow.
pub fn hlo_proto_with_share_chain(buffers: usize, cycle: bool) -> HloProto {
    let mut instructions = Vec::with_capacity(buffers);
    let mut logical_buffers = Vec::with_capacity(buffers);
    let mut temp = BufferAllocationProto { index: 0, size: TRANSIENT_BUFFER_BYTES, ..Default::default() };
    let mut events = Vec::with_capacity(2 * buffers + 1);
    let event = |kind: i32, id: i64, canonical: i64| Event {
        kind,
        buffer_id: id,
        share_with_canonical_id: canonical,
        instruction_name: format!("fusion.{id}"),
        ..Default::default()
    };
    for i in 0..buffers {
        let id = i as i64;
        instructions.push(instruction(id, TRANSIENT_BUFFER_BYTES));
        logical_buffers.push(logical_buffer(id, TRANSIENT_BUFFER_BYTES, 0));
        temp.assigned.push(Assigned { logical_buffer_id: id, offset: 0, size: TRANSIENT_BUFFER_BYTES });
        events.push(if i == 0 { event(0, id, 0) } else { event(2, id, id - 1) });
    }
    if cycle {
        events.push(event(2, 0, buffers as i64 - 1));
    }
    events.extend((0..buffers as i64).map(|id| event(1, id, 0)));
    module_with_trace("jit_share_chain", instructions, logical_buffers, vec![temp], events)
}

fn module_with_trace(
    name: &str,
    instructions: Vec<HloInstructionProto>,
    logical_buffers: Vec<LogicalBufferProto>,
    buffer_allocations: Vec<BufferAllocationProto>,
    events: Vec<Event>,
) -> HloProto {
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: name.into(),
            entry_computation_name: "main".into(),
            computations: vec![HloComputationProto { name: "main".into(), instructions, id: 1, root_id: 0 }],
            ..Default::default()
        }),
        buffer_assignment: Some(BufferAssignmentProto {
            logical_buffers,
            buffer_allocations,
            heap_simulator_traces: vec![HeapSimulatorTrace { events, ..Default::default() }],
            peak_buffers: Vec::new(),
        }),
    }
}

/// A device memory profile's string table (its sample types, labels and
/// `model.py`, then `layer_i` per function) and `count` functions, the
/// i-th named `layer_i` and defined at line i + 1 of `model.py`.
fn pprof_functions(count: usize) -> (Vec<String>, Vec<xmem::ingest::proto::pprof::Function>) {
    let mut strings: Vec<String> =
        ["", "allocations", "count", "space", "bytes", "kind", "buffer", "device", "cpu:0", "model.py"]
            .map(String::from)
            .to_vec();
    let first_name = strings.len() as i64;
    strings.extend((0..count).map(|i| format!("layer_{i}")));
    let functions = (0..count)
        .map(|i| xmem::ingest::proto::pprof::Function {
            id: i as u64 + 1,
            name: first_name + i as i64,
            system_name: first_name + i as i64,
            filename: 9,
            start_line: i as i64 + 1,
        })
        .collect();
    (strings, functions)
}

/// A JAX device memory profile (pprof) with one location of `lines` inlined
/// calls, each in a function of its own, and `lines` buffers allocated from
/// it: every sample's stack is that location's `lines` frames.
pub fn pprof_inlined_location(lines: usize) -> Vec<u8> {
    use xmem::ingest::proto::pprof::{Label, Line, Location, Profile, Sample, ValueType};
    let (strings, functions) = pprof_functions(lines);
    let location = Location {
        id: 1,
        line: (0..lines).map(|i| Line { function_id: i as u64 + 1, line: i as i64 + 2, column: 0 }).collect(),
        ..Default::default()
    };
    let sample = |i: usize| Sample {
        location_id: vec![1],
        value: vec![1, 1024 * (i as i64 % 7 + 1)],
        label: vec![Label { key: 5, str: 6, num: 0, num_unit: 0 }, Label { key: 7, str: 8, num: 0, num_unit: 0 }],
    };
    Profile {
        sample_type: vec![ValueType { r#type: 1, unit: 2 }, ValueType { r#type: 3, unit: 4 }],
        sample: (0..lines).map(sample).collect(),
        location: vec![location],
        function: functions,
        string_table: strings,
        ..Default::default()
    }
    .encode_to_vec()
}

/// A JAX device memory profile with 2 locations of 32 inlined lines each and
/// `samples` samples whose stacks are 16 of those locations in a pattern of
/// their own: each stack is distinct and 512 frames deep, from 16 location
/// ids of input.
pub fn pprof_inlined_stacks(samples: usize) -> Vec<u8> {
    use xmem::ingest::proto::pprof::{Label, Line, Location, Profile, Sample, ValueType};
    const LINES: usize = 32;
    const DEPTH: usize = 16;
    let (strings, functions) = pprof_functions(2 * LINES);
    let location = |l: usize| Location {
        id: l as u64 + 1,
        line: (0..LINES)
            .map(|i| Line { function_id: (l * LINES + i) as u64 + 1, line: i as i64 + 2, column: 0 })
            .collect(),
        ..Default::default()
    };
    let sample = |i: usize| Sample {
        location_id: (0..DEPTH).map(|bit| ((i >> bit) & 1) as u64 + 1).collect(),
        value: vec![1, 1024],
        label: vec![Label { key: 5, str: 6, num: 0, num_unit: 0 }, Label { key: 7, str: 8, num: 0, num_unit: 0 }],
    };
    Profile {
        sample_type: vec![ValueType { r#type: 1, unit: 2 }, ValueType { r#type: 3, unit: 4 }],
        sample: (0..samples).map(sample).collect(),
        location: vec![location(0), location(1)],
        function: functions,
        string_table: strings,
        ..Default::default()
    }
    .encode_to_vec()
}

/// A PyTorch memory snapshot's pickle (protocol 4, as `_dump_snapshot`
/// writes it) with `entries` trace entries: a training loop whose steps
/// allocate 300 blocks of 2 to 8 MiB and free them, each allocation from
/// one of 64 stacks of 30 frames drawn from 200. As PyTorch pickles it, the
/// frames are memoized once, each allocation and each free request gets a
/// frame list of its own, and a free's completion shares its allocation's.
/// `entries` is rounded down to a multiple of 3 (an allocation, its free
/// request and its completion), so every block is freed by the end.
pub fn torch_snapshot(entries: usize) -> Vec<u8> {
    let entries = entries / 3 * 3;
    const SEGMENT: u64 = 0x7f00_0000_0000;
    const SEGMENT_SIZE: u64 = 300 * (8 << 20);
    const BLOCKS_PER_STEP: usize = 300;
    let mut p = PickleWriter::default();
    p.out.extend_from_slice(&[0x80, 4]);
    p.open_dict();
    p.key("segments");
    p.open_list();
    p.open_dict();
    for (key, value) in [
        ("device", 0),
        ("address", SEGMENT as i64),
        ("total_size", SEGMENT_SIZE as i64),
        ("allocated_size", 0),
        ("active_size", 0),
        ("requested_size", 0),
        ("stream", 0),
    ] {
        p.key(key);
        p.int(value);
    }
    p.key("segment_type");
    p.str("large");
    p.key("blocks");
    p.open_list();
    p.open_dict();
    for (key, value) in
        [("address", SEGMENT as i64), ("size", SEGMENT_SIZE as i64), ("requested_size", SEGMENT_SIZE as i64)]
    {
        p.key(key);
        p.int(value);
    }
    p.key("state");
    p.str("inactive");
    p.close(b'u');
    p.close(b'e');
    p.close(b'u');
    p.close(b'e');
    p.key("device_traces");
    p.open_list();
    p.open_list();
    let mut frame_memo: Vec<Option<u32>> = vec![None; 200];
    let mut time = 1_700_000_000_000_000_i64;
    let mut written = 0;
    let mut step = 0usize;
    'steps: loop {
        let mut live: Vec<(u64, u64, u32)> = Vec::with_capacity(BLOCKS_PER_STEP);
        let mut address = SEGMENT;
        for i in 0..BLOCKS_PER_STEP {
            let size = (2 + ((i + step) % 4) as u64 * 2) << 20;
            let stack = ((i * 7 + step) % 64) as u32;
            let list = p.entry("alloc", address, size, time, Frames::New(stack), &mut frame_memo);
            live.push((address, size, list));
            address += size;
            time += 3;
            written += 1;
            if written + 2 * live.len() >= entries {
                break;
            }
        }
        for (address, size, list) in live {
            if written >= entries {
                break 'steps;
            }
            let stack = (address % 64) as u32;
            p.entry("free_requested", address, size, time, Frames::New(stack), &mut frame_memo);
            p.entry("free_completed", address, size, time + 1, Frames::Memo(list), &mut frame_memo);
            time += 2;
            written += 2;
        }
        step += 1;
        if written >= entries {
            break;
        }
    }
    p.close(b'e');
    p.close(b'e');
    p.close(b'u');
    p.out.push(b'.');
    p.out
}

/// A trace entry's frames: a new list of a stack's frames, or a list written before.
enum Frames {
    New(u32),
    Memo(u32),
}

/// Writes pickle opcodes as Python's pickler does at protocol 4: strings
/// and containers memoized, a list's items in batches of at most 1000
/// between a `MARK` and its `APPENDS`.
#[derive(Default)]
struct PickleWriter {
    out: Vec<u8>,
    memo: u32,
    keys: std::collections::HashMap<&'static str, u32>,
    /// Trace entries since the trace list's last `MARK`.
    batch: usize,
}

impl PickleWriter {
    fn memoize(&mut self) -> u32 {
        self.out.push(0x94);
        self.memo += 1;
        self.memo - 1
    }

    fn get(&mut self, index: u32) {
        match u8::try_from(index) {
            Ok(short) => self.out.extend_from_slice(&[b'h', short]),
            Err(_) => {
                self.out.push(b'j');
                self.out.extend_from_slice(&index.to_le_bytes());
            }
        }
    }

    fn str(&mut self, text: &str) -> u32 {
        self.out.push(0x8c);
        self.out.push(text.len() as u8);
        self.out.extend_from_slice(text.as_bytes());
        self.memoize()
    }

    /// A dict key, written once and fetched from the memo afterwards.
    fn key(&mut self, key: &'static str) {
        match self.keys.get(key) {
            Some(&index) => self.get(index),
            None => {
                let index = self.str(key);
                self.keys.insert(key, index);
            }
        }
    }

    fn int(&mut self, value: i64) {
        match (u8::try_from(value), i32::try_from(value)) {
            (Ok(byte), _) => self.out.extend_from_slice(&[b'K', byte]),
            (_, Ok(word)) => {
                self.out.push(b'J');
                self.out.extend_from_slice(&word.to_le_bytes());
            }
            _ => {
                self.out.extend_from_slice(&[0x8a, 8]);
                self.out.extend_from_slice(&value.to_le_bytes());
            }
        }
    }

    fn open_dict(&mut self) {
        self.out.push(b'}');
        self.memoize();
        self.out.push(b'(');
    }

    fn open_list(&mut self) {
        self.out.push(b']');
        self.memoize();
        self.out.push(b'(');
    }

    /// Ends the innermost container with `closer`: `APPENDS` (`e`) or `SETITEMS` (`u`).
    fn close(&mut self, closer: u8) {
        self.out.push(closer);
    }

    /// A new list of stack `stack`'s 30 frames, its memo index returned.
    fn new_frames(&mut self, stack: u32, frame_memo: &mut [Option<u32>]) -> u32 {
        self.out.push(b']');
        let list = self.memoize();
        self.out.push(b'(');
        for depth in 0..30u32 {
            let frame = ((stack * 13 + depth * 7) % frame_memo.len() as u32) as usize;
            match frame_memo[frame] {
                Some(index) => self.get(index),
                None => {
                    self.out.push(b'}');
                    frame_memo[frame] = Some(self.memoize());
                    self.out.push(b'(');
                    self.key("filename");
                    let file = if frame.is_multiple_of(3) {
                        format!("/home/user/model_{frame}.py")
                    } else {
                        format!("/venv/lib/python3.12/site-packages/torch/nn/f{frame}.py")
                    };
                    self.str(&file);
                    self.key("line");
                    self.int(frame as i64 + 1);
                    self.key("name");
                    self.str(&format!("function_{frame}"));
                    self.out.push(b'u');
                }
            }
        }
        self.out.push(b'e');
        list
    }

    /// A trace entry; returns the memo index of its frame list.
    fn entry(
        &mut self,
        action: &'static str,
        address: u64,
        size: u64,
        time_us: i64,
        frames: Frames,
        frame_memo: &mut [Option<u32>],
    ) -> u32 {
        self.out.push(b'}');
        self.memoize();
        self.out.push(b'(');
        self.key("action");
        self.key(action);
        self.key("addr");
        self.int(address as i64);
        self.key("size");
        self.int(size as i64);
        self.key("stream");
        self.int(0);
        self.key("time_us");
        self.int(time_us);
        self.key("frames");
        let list = match frames {
            Frames::New(stack) => self.new_frames(stack, frame_memo),
            Frames::Memo(list) => {
                self.get(list);
                list
            }
        };
        self.out.push(b'u');
        self.batch += 1;
        if self.batch == 1000 {
            self.out.extend_from_slice(b"e(");
            self.batch = 0;
        }
        list
    }
}

//! Arbitrary heap-simulator traces over arbitrary buffers and allocations:
//! the simulation must report what does not add up, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xmem::model::{Allocation, BufferAssignment, HeapEvent, HeapEventKind, HeapTrace, Instruction, LogicalBuffer};

/// Reads little-endian integers off the input, zero when it runs out.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().map(|(f, r)| (*f, r)).unwrap_or((0, &[]));
        self.0 = rest;
        first
    }
    fn i64(&mut self) -> i64 {
        (0..8).fold(0i64, |acc, i| acc | (i64::from(self.byte()) << (8 * i)))
    }
    fn small(&mut self, n: u8) -> i64 {
        i64::from(self.byte() % n.max(1))
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let buffers = usize::from(input.byte() % 32) + 1;
    let allocations = usize::from(input.byte() % 4) + 1;
    let mut assignment = BufferAssignment {
        instructions: vec![Instruction { name: "fusion".into(), ..Default::default() }],
        ..Default::default()
    };
    for a in 0..allocations {
        let flags = input.byte();
        assignment.allocations.push(Allocation {
            index: a as i64,
            size: input.i64(),
            color: input.small(3),
            is_thread_local: flags & 1 != 0,
            is_tuple: flags & 2 != 0,
            is_entry_computation_parameter: flags & 4 != 0,
            is_constant: flags & 8 != 0,
            maybe_live_out: flags & 16 != 0,
            ..Default::default()
        });
    }
    for b in 0..buffers {
        let allocation = usize::from(input.byte()) % allocations;
        assignment.allocations[allocation].assigned.push(b as i64);
        assignment.logical_buffers.push(LogicalBuffer {
            id: b as i64,
            size: input.i64(),
            unpadded_size: input.i64(),
            color: input.small(3),
            instruction: 0,
            shape_index: Vec::new(),
            shape: "f32[1]{0}".into(),
            allocation,
            offset: 0,
        });
    }
    for _ in 0..usize::from(input.byte() % 4) + 1 {
        let mut trace = HeapTrace { instruction_names: vec!["fusion".into()].into(), ..Default::default() };
        while !input.0.is_empty() && trace.events.len() < 512 {
            let kind = match input.byte() % 5 {
                0 | 1 => HeapEventKind::Alloc,
                2 | 3 => HeapEventKind::Free,
                _ => HeapEventKind::ShareWith,
            };
            // Buffers by their index; past the buffers there are, none.
            trace.events.push(HeapEvent {
                kind,
                buffer: input.small(40) as u32,
                share_with: input.small(40) as u32,
                instruction: u32::from(input.byte() % 2),
            });
        }
        assignment.heap_traces.push(trace);
    }
    let _ = xmem::analysis::heap_simulation::analyze(&assignment, &[0, 1, 2], None);
});

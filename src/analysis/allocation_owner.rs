//! Who made an allocation an allocator recorded: the program its host
//! thread was executing when it was made, and, where its size is one of that
//! program's buffer allocations, which one (the temp allocation, an output,
//! a parameter). JAX on GPU records no op with an allocation; the profile's
//! runs and the programs' buffer assignments connect the two.

use std::collections::HashMap;

use serde::Serialize;

use crate::model::{Allocator, AllocatorEvent, Module};

/// How an allocation was tied to what made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attribution {
    /// Made while the program ran, the size of its temp allocation (the
    /// memory its buffer assignment gives all temporaries).
    TempAllocation,
    /// Made while the program ran, the size of one of its outputs.
    Output,
    /// Made while the program ran, the size of one of its parameters.
    Parameter,
    /// Made while the program ran; its size is none of the program's
    /// buffers, or the profile holds no buffer assignment for it.
    DuringExecution,
    /// Made while its thread executed no program: a transfer from the host,
    /// `device_put`, the runtime itself.
    OutsidePrograms,
    /// The allocator recorded the op that asked for it (TensorFlow).
    Op,
}

impl Attribution {
    /// The part of a program's buffers the size matched, in words.
    pub fn buffer(self) -> Option<&'static str> {
        match self {
            Attribution::TempAllocation => Some("temp allocation"),
            Attribution::Output => Some("output"),
            Attribution::Parameter => Some("parameter"),
            _ => None,
        }
    }
}

/// Whether an allocation's op stat names an op: ROCm's JAX writes `(null)`.
pub fn is_recorded_op(op_name: &str) -> bool {
    !op_name.is_empty() && op_name != "(null)"
}

/// What made one allocation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Owner {
    /// The program that was executing: `jit_train_step(11939)`, or the name
    /// alone when the profile does not say which of several programs of
    /// that name it was, or the module is not in the profile; `None`
    /// outside any program and where the trace names none.
    pub program: Option<String>,
    pub attribution: Attribution,
    /// Outside any program, what the thread was doing (`DevicePut`).
    pub made_in: Option<String>,
}

impl Owner {
    /// In words, for a table: `jit_step(40): temp allocation`, `during
    /// jit_step(40)`, `in DevicePut, outside any program`; `None` for an op.
    pub fn label(&self) -> Option<String> {
        let program = self.program.as_deref();
        Some(match (self.attribution, program, &self.made_in) {
            (Attribution::Op, ..) => return None,
            (Attribution::OutsidePrograms, _, Some(made_in)) => format!("in {made_in}, outside any program"),
            (Attribution::OutsidePrograms, _, None) => "outside any program".to_string(),
            (role, Some(program), _) => match role.buffer() {
                Some(buffer) => format!("{program}: {buffer}"),
                None => format!("during {program}"),
            },
            (_, None, _) => "during a program the profile does not name".to_string(),
        })
    }
}

/// A buffer allocation's role in its program, in the order a match is
/// preferred: a program allocates its temp allocation and outputs when it
/// runs, and a parameter only when it copies one.
const ROLES: [Attribution; 3] = [Attribution::TempAllocation, Attribution::Output, Attribution::Parameter];

/// One program's buffer allocations by role.
struct ProgramSizes {
    program_id: u64,
    /// (bytes, role), every allocation that is not constant or thread-local.
    sizes: Vec<(i64, Attribution)>,
}

impl ProgramSizes {
    /// The most likely role of an allocation of `bytes` (as requested).
    fn role_of(&self, bytes: i64) -> Option<Attribution> {
        ROLES.into_iter().find(|role| self.sizes.contains(&(bytes, *role)))
    }
}

/// The capture's programs by name, with the sizes of their buffer allocations.
#[derive(Default)]
pub struct Programs<'a> {
    by_name: HashMap<&'a str, Vec<ProgramSizes>>,
}

impl<'a> Programs<'a> {
    pub fn of(modules: &'a [Module]) -> Self {
        let mut by_name: HashMap<&str, Vec<ProgramSizes>> = HashMap::new();
        for module in modules {
            let sizes = module.buffer_assignment.as_ref().map_or_else(
                |_| Vec::new(),
                |assignment| {
                    assignment
                        .allocations
                        .iter()
                        .filter(|a| !a.is_constant && !a.is_thread_local)
                        .map(|a| {
                            let role = if a.is_entry_computation_parameter {
                                Attribution::Parameter
                            } else if a.maybe_live_out {
                                Attribution::Output
                            } else {
                                Attribution::TempAllocation
                            };
                            (a.size, role)
                        })
                        .collect()
                },
            );
            by_name.entry(&module.name).or_default().push(ProgramSizes { program_id: module.program_id, sizes });
        }
        Programs { by_name }
    }

    /// What made `event`, an allocation of `allocator`.
    pub fn owner(&self, allocator: &Allocator, event: &AllocatorEvent) -> Owner {
        let run = event.run.and_then(|run| allocator.runs.get(run as usize));
        let Some(run) = run else {
            if is_recorded_op(allocator.string(event.op_name)) {
                return Owner { program: None, attribution: Attribution::Op, made_in: None };
            }
            let made_in = Some(allocator.string(event.made_in).to_string()).filter(|m| !m.is_empty());
            return Owner { program: None, attribution: Attribution::OutsidePrograms, made_in };
        };
        let during =
            |program: Option<String>| Owner { program, attribution: Attribution::DuringExecution, made_in: None };
        if run.name.is_empty() {
            return during(None);
        }
        let named = |id: u64| format!("{}({id})", run.name);
        let candidates: Vec<&ProgramSizes> = self
            .by_name
            .get(run.name.as_str())
            .into_iter()
            .flatten()
            .filter(|p| run.program_id.is_none_or(|id| p.program_id == id))
            .collect();
        let matches: Vec<(&ProgramSizes, Attribution)> =
            candidates.iter().filter_map(|p| Some((*p, p.role_of(event.requested_bytes)?))).collect();
        let program = match (run.program_id, candidates.as_slice(), matches.as_slice()) {
            (Some(id), ..) => named(id),
            (None, [only], _) | (None, _, [(only, _)]) => named(only.program_id),
            // Several programs of that name, and the size does not tell them apart.
            (None, ..) => run.name.clone(),
        };
        let mut roles = matches.iter().map(|&(_, role)| role);
        let attribution = match roles.next() {
            Some(role) if roles.all(|other| other == role) => role,
            _ => Attribution::DuringExecution,
        };
        Owner { program: Some(program), attribution, made_in: None }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::{Allocation, BufferAssignment, ProgramRun};

    fn module(name: &str, program_id: u64, allocations: &[(i64, bool, bool)]) -> Module {
        let allocations = allocations
            .iter()
            .map(|&(size, is_entry_computation_parameter, maybe_live_out)| Allocation {
                size,
                is_entry_computation_parameter,
                maybe_live_out,
                ..Allocation::default()
            })
            .collect();
        Module {
            name: name.to_string(),
            program_id,
            module_id: program_id,
            entry_computation: String::new(),
            entry_signature: String::new(),
            layout_memory_spaces: Vec::new(),
            entry_interface: Default::default(),
            buffer_assignment: Ok(BufferAssignment { allocations, ..BufferAssignment::default() }),
            max_scoped_vmem: None,
        }
    }

    fn allocation(requested_bytes: i64, run: Option<u32>) -> AllocatorEvent {
        AllocatorEvent {
            kind: crate::model::AllocatorEventKind::Allocation,
            time_ps: 0,
            thread_offset_ps: 0,
            stack_reserved_bytes: 0,
            heap_allocated_bytes: 0,
            free_memory_bytes: 0,
            fragmentation: 0.0,
            peak_bytes_in_use: 0,
            requested_bytes,
            allocation_bytes: requested_bytes,
            address: 0,
            op_name: 0,
            region_type: 0,
            data_type: 0,
            shape: 0,
            step: None,
            run,
            made_in: 1,
        }
    }

    fn allocator(runs: Vec<ProgramRun>) -> Allocator {
        Allocator { strings: vec![String::new(), "DevicePut".into()], runs: Arc::from(runs), ..Allocator::default() }
    }

    fn run(name: &str, program_id: Option<u64>) -> ProgramRun {
        ProgramRun { name: name.to_string(), program_id }
    }

    #[test]
    fn sizes_name_the_temp_allocation_outputs_and_parameters_of_the_running_program() {
        // (size, parameter, live out): a parameter, an output, the temp allocation.
        let modules = [module("jit_step", 40, &[(64, true, true), (200, false, true), (4096, false, false)])];
        let programs = Programs::of(&modules);
        let allocator = allocator(vec![run("jit_step", None)]);
        let owner = |bytes| programs.owner(&allocator, &allocation(bytes, Some(0)));
        let step = Some("jit_step(40)".to_string());
        assert_eq!(
            owner(4096),
            Owner { program: step.clone(), attribution: Attribution::TempAllocation, made_in: None }
        );
        assert_eq!(owner(200).attribution, Attribution::Output);
        assert_eq!(owner(64).attribution, Attribution::Parameter);
        assert_eq!(owner(8), Owner { program: step, attribution: Attribution::DuringExecution, made_in: None });
    }

    #[test]
    fn a_size_picks_one_of_several_programs_of_a_name_and_an_id_picks_it_outright() {
        let modules =
            [module("jit_multiply", 1, &[(1024, false, true)]), module("jit_multiply", 2, &[(2048, false, true)])];
        let programs = Programs::of(&modules);
        let allocator = allocator(vec![run("jit_multiply", None), run("jit_multiply", Some(1))]);
        let owner = |bytes, run| programs.owner(&allocator, &allocation(bytes, Some(run)));
        assert_eq!(owner(2048, 0).program.as_deref(), Some("jit_multiply(2)"));
        // Neither size: which of the two ran is not known.
        assert_eq!(owner(8, 0).program.as_deref(), Some("jit_multiply"));
        assert_eq!(owner(8, 1).program.as_deref(), Some("jit_multiply(1)"));
        assert_eq!(owner(2048, 1).attribution, Attribution::DuringExecution);
    }

    #[test]
    fn outside_any_program_says_what_the_thread_was_doing() {
        let programs = Programs::default();
        let allocator = allocator(vec![run("", None)]);
        let outside = programs.owner(&allocator, &allocation(4, None));
        assert_eq!(outside.attribution, Attribution::OutsidePrograms);
        assert_eq!(outside.made_in.as_deref(), Some("DevicePut"));
        // A run whose events name no module: a program ran, which one is not known.
        let unnamed = programs.owner(&allocator, &allocation(4, Some(0)));
        assert_eq!((unnamed.program, unnamed.attribution), (None, Attribution::DuringExecution));
    }
}

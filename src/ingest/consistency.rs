//! What in an input contradicts itself, found as it is read: a negative
//! size, an id listed twice, a buffer placed past its allocation's end, heap
//! events naming buffers the assignment does not hold. Nothing is dropped or
//! repaired here (the figures stay XProf's); each finding travels with the
//! memory space or allocator it touches, so that a figure made from it is
//! marked rather than printed as sound.

use std::collections::HashMap;

use super::proto::xla::{BufferAllocationProto, LogicalBufferProto};
use crate::id_index::IdIndex;
use crate::model::Inconsistency;

/// Findings gathered while reading, one per kind and place: the first found
/// and how many more of the same kind, so a file with a million bad ids
/// makes one line, not a million.
#[derive(Default)]
pub struct Findings {
    found: Vec<(Inconsistency, usize)>,
    by_key: HashMap<(&'static str, Option<i64>, Option<usize>), usize>,
}

impl Findings {
    /// Records one finding of `kind` touching memory space `color` (all when
    /// `None`) of `trace`; `what` is only made for the first of its kind.
    pub fn add(&mut self, kind: &'static str, color: Option<i64>, trace: Option<usize>, what: impl FnOnce() -> String) {
        match self.by_key.get(&(kind, color, trace)) {
            Some(&at) => {
                if let Some((_, more)) = self.found.get_mut(at) {
                    *more += 1;
                }
            }
            None => {
                self.by_key.insert((kind, color, trace), self.found.len());
                self.found.push((Inconsistency { color, trace, what: what() }, 0));
            }
        }
    }

    pub fn into_inconsistencies(self) -> Vec<Inconsistency> {
        self.found
            .into_iter()
            .map(|(mut found, more)| {
                if more > 0 {
                    found.what.push_str(&format!(" (and {more} more like it)"));
                }
                found
            })
            .collect()
    }

    /// The findings' text alone, for inputs that have no memory spaces.
    pub fn into_messages(self) -> Vec<String> {
        self.into_inconsistencies().into_iter().map(|found| found.what).collect()
    }
}

/// Checks a buffer assignment as XProf reads it: logical buffers by id (the
/// last of a repeated id wins) and each allocation's assigned buffers. What
/// converting it finds (buffers left out, heap events naming buffers the
/// model does not hold) is added to the findings.
pub fn check_assignment(logical_buffers: &[LogicalBufferProto], allocations: &[BufferAllocationProto]) -> Findings {
    let mut findings = Findings::default();
    let ids: Vec<i64> = logical_buffers.iter().map(|b| b.id).collect();
    let by_id = IdIndex::new(&ids);
    let mut sorted: Vec<(i64, usize)> = ids.iter().copied().zip(0..).collect();
    sorted.sort_unstable();
    for run in sorted.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
        let sizes: Vec<String> =
            run.iter().filter_map(|&(_, at)| logical_buffers.get(at)).map(|b| b.size.to_string()).collect();
        let last = by_id.get(run[0].0).and_then(|at| logical_buffers.get(at));
        findings.add("repeated buffer id", last.map(|b| b.color), None, || {
            format!(
                "logical buffer id {} is listed {} times, with sizes {} bytes; XProf takes the last",
                run[0].0,
                run.len(),
                sizes.join(", ")
            )
        });
    }
    for buffer in logical_buffers.iter().filter(|b| b.size < 0) {
        findings.add("negative buffer size", Some(buffer.color), None, || {
            format!("logical buffer {} has a negative size ({} bytes)", buffer.id, buffer.size)
        });
    }
    // Where each buffer is assigned, by its place in `logical_buffers`.
    let mut assigned_to: Vec<Option<i64>> = vec![None; logical_buffers.len()];
    for allocation in allocations {
        let color = Some(allocation.color);
        if allocation.size < 0 {
            findings.add("negative allocation size", color, None, || {
                format!("buffer allocation {} has a negative size ({} bytes)", allocation.index, allocation.size)
            });
        }
        for assigned in &allocation.assigned {
            let id = assigned.logical_buffer_id;
            let Some((at, buffer)) = by_id.get(id).and_then(|at| Some((at, logical_buffers.get(at)?))) else {
                findings.add("assigned buffer undefined", color, None, || {
                    format!(
                        "buffer allocation {} holds logical buffer {id}, which the assignment does not define",
                        allocation.index
                    )
                });
                continue;
            };
            if let Some(Some(earlier)) = assigned_to.get(at) {
                findings.add("buffer assigned twice", color, None, || {
                    format!(
                        "logical buffer {id} is assigned twice (to allocations {earlier} and {}); XProf takes the last",
                        allocation.index
                    )
                });
            }
            if let Some(slot) = assigned_to.get_mut(at) {
                *slot = Some(allocation.index);
            }
            if buffer.color != allocation.color {
                findings.add("buffer colour differs", color, None, || {
                    format!(
                        "logical buffer {id} has colour {} but its allocation {} has colour {}",
                        buffer.color, allocation.index, allocation.color
                    )
                });
            }
            let end = assigned.offset.checked_add(buffer.size.max(0));
            if assigned.offset < 0 || end.is_none_or(|end| end > allocation.size) {
                findings.add("buffer past allocation", color, None, || {
                    let end = end.map_or_else(|| "beyond 2^63".to_string(), |end| end.to_string());
                    format!(
                        "logical buffer {id} lies at bytes {}..{end} of allocation {}, which holds {} bytes",
                        assigned.offset, allocation.index, allocation.size
                    )
                });
            }
        }
    }
    findings
}

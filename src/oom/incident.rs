//! Which events are one failure. A failure is printed by several layers at
//! once (the allocator's warning and dump, the framework's error, the
//! driver's line) and then the log moves on: events that follow each other
//! closely, each of a kind the incident does not have yet, are one incident.

use std::sync::Arc;

use super::event::{Incident, Kind, OomEvent};
use super::verdict;

/// An incident is over when this many lines pass without a line of it.
const INCIDENT_GAP_LINES: u64 = 50;

/// The incident being read.
#[derive(Default)]
pub(super) struct Gathering {
    pub events: Vec<usize>,
    /// The last line that belonged to one of its events.
    pub last_line: u64,
}

impl Gathering {
    /// Whether `line` is close enough after the incident's last line to belong to it.
    pub fn is_near(&self, line: u64) -> bool {
        line <= self.last_line.saturating_add(INCIDENT_GAP_LINES)
    }

    /// Whether `event` is part of this failure: close after it, and of a kind
    /// it does not have yet (a second failure of the same kind is a failure of its own).
    pub fn admits(&self, event: &OomEvent, events: &[OomEvent]) -> bool {
        let near = self.is_near(event.line);
        let mut same_kind = self.events.iter().filter_map(|&at| events.get(at)).filter(|e| e.kind == event.kind);
        // The kernel kills several processes for one shortage; a line no parser knows (the general
        // reader's) goes with its neighbours: stacks report one failure at each layer. XLA's
        // compile-time warnings about a program lead up to its compile-time failure. The error
        // TensorFlow prints after the BFC allocator's warning is that warning's failure.
        let new_kind = matches!(event.kind, Kind::Unrecognised | Kind::HostOom)
            || event.by_general_reader
            || match event.kind {
                Kind::CompileTimeOom => same_kind.all(|e| e.non_fatal),
                Kind::BfcAllocatorOom if !event.allocator_warning && !event.non_fatal => {
                    same_kind.all(|e| e.allocator_warning)
                }
                _ => same_kind.next().is_none(),
            };
        near && new_kind
    }

    pub fn is_over(&self, line: u64) -> bool {
        line > self.last_line.saturating_add(INCIDENT_GAP_LINES)
    }

    /// The incident, titled by the event that says most about the failure.
    pub fn into_incident(self, events: &[OomEvent]) -> Incident {
        judged(self.events, events, None)
    }
}

/// The incident of these events (indices into `events`), titled by the event
/// that says most about the failure; `exit_code` is how the job ended, when known.
pub(super) fn judged(members: Vec<usize>, events: &[OomEvent], exit_code: Option<u8>) -> Incident {
    let primary = members
        .iter()
        .copied()
        .filter_map(|at| Some((at, events.get(at)?)))
        .max_by_key(|(at, event)| (weight(event), std::cmp::Reverse(*at)))
        .map_or(0, |(at, _)| at);
    let verdict = verdict::verdict(members.iter().filter_map(|&at| events.get(at)).collect(), exit_code);
    let primary_event = events.get(primary);
    let title = verdict.title.unwrap_or_else(|| primary_event.map(|event| event.summary.clone()).unwrap_or_default());
    let advice = match verdict.advice.is_empty() {
        true => primary_event.map(|event| event.advice.clone()).unwrap_or_default(),
        false => verdict.advice.into_iter().map(Arc::from).collect(),
    };
    Incident {
        events: members,
        title,
        primary,
        cause: verdict.cause,
        program: verdict.program,
        user_frame: verdict.user_frame,
        advice,
        program_report: None,
    }
}

/// How much an event tells about a failure: a report with the program's
/// buffers over an allocator's request over a line no parser knows; then how many figures it gives.
fn weight(event: &OomEvent) -> (u8, usize) {
    let kind = match event.kind {
        Kind::CompileTimeOom if event.non_fatal => 1,
        Kind::CompileTimeOom | Kind::SparsecoreAllocation | Kind::BufferAssignmentOom => 6,
        Kind::PytorchCudaOom | Kind::TritonOutOfResources => 5,
        Kind::BfcAllocatorOom if !event.non_fatal => 4,
        Kind::RuntimeAllocationFailure => 3,
        Kind::HostOom => 2,
        Kind::BfcAllocatorOom => 1,
        Kind::Unrecognised => 0,
    };
    let figures = [event.used_bytes, event.capacity_bytes, event.requested_bytes, event.free_bytes]
        .iter()
        .filter(|figure| figure.is_some())
        .count();
    (kind, figures + event.allocations.len().min(1) + event.breakdown.len().min(1))
}

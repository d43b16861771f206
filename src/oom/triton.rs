//! A GPU kernel that needs more on-chip memory than the device has: Triton's
//! `OutOfResources` (`out of resource: shared memory, Required: N, Hardware
//! limit: M`, or `Hardware limitation: M`), from every module that raised it
//! over the years (`triton.code_gen`, `triton.runtime.autotuner`,
//! `triton.runtime.errors`, TorchInductor's autotuner), and XLA GPU's own
//! `Shared memory size limit exceeded: requested N, available: M`.
//! `Required` is what the kernel requests, `Hardware limit` what the device has.

use super::block::{Block, Detected, Feed};
use super::event::{Kind, OomEvent};
use super::line::Line;

const SHARED_MEMORY: &str = "shared memory";

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let text = line.text.as_ref();
    if let Some(found) = regex!(r"Shared memory size limit exceeded: requested (\d+), available: (\d+)").captures(text)
    {
        let mut event = OomEvent::new(Kind::TritonOutOfResources, line);
        event.memory_space = Some(SHARED_MEMORY.to_string());
        event.requested_bytes = found[1].parse().ok();
        event.capacity_bytes = found[2].parse().ok();
        return Some(Detected::at(event, text, &found));
    }
    let start = text.find("out of resource:")?;
    let detected = Detected::message(Kind::TritonOutOfResources, line, start, fill);
    Some(match detected.block {
        Some(_) => detected,
        None => detected.with_block(Aftermath),
    })
}

/// Reads the resource and both numbers; true once they are all there.
/// Early versions printed them run together (`shared memoryRequired: 110592Hardware limit: 101376`).
fn fill(event: &mut OomEvent, text: &str) -> bool {
    let Some(found) =
        regex!(r"out of resource: (.+?),?\s*Required: (\d+),?\s*Hardware limit(?:ation)?:\s*(\d+)").captures(text)
    else {
        return false;
    };
    let mut resource = found[1].trim().to_lowercase();
    // TorchInductor names its kernel where Triton names the resource
    // (`out of resource: triton_mm Required: 327680 Hardware limit:232448`): shared memory's bytes.
    if regex!(r"^triton_\w+$").is_match(&resource) {
        resource = SHARED_MEMORY.to_string();
    }
    let (required, limit) = (found[2].parse::<u64>().ok(), found[3].parse::<u64>().ok());
    event.clear_breakdown();
    if resource == SHARED_MEMORY {
        event.requested_bytes = required;
        event.capacity_bytes = limit;
    } else {
        // Tensor memory counts columns, not bytes.
        for (name, value) in [("required", required), ("hardware limit", limit)] {
            if let Some(value) = value {
                event.count(&resource, name, value);
            }
        }
    }
    event.memory_space = Some(resource);
    true
}

/// The line after the error: TorchInductor's autotuner says it drops the
/// config (`Ignoring this choice.`) and carries on with the others.
struct Aftermath;

impl Block for Aftermath {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        if line.text.trim().starts_with("Ignoring this choice") {
            event.non_fatal = true;
            return Feed::Consumed;
        }
        Feed::Ended
    }

    fn is_finished(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::oom::{scan, Kind};

    /// The `Hardware limitation` spelling, as the issue that asked for it quotes it
    /// (no public log with it was found); the figures are F-05's.
    #[test]
    fn hardware_limitation_is_the_capacity() {
        let line = "OutOfResources: out of resource: shared memory, Required: 126978, Hardware limitation: 101376\n";
        let e = scan("log", line.as_bytes()).unwrap().events.remove(0);
        assert_eq!(e.kind, Kind::TritonOutOfResources);
        assert_eq!(
            (e.requested_bytes, e.capacity_bytes, e.exceeded_by_bytes),
            (Some(126_978), Some(101_376), Some(25_602))
        );
    }
}

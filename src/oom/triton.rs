//! Triton's `OutOfResources` (`out of resource: shared memory, Required: N,
//! Hardware limit: M`), from every module that raised it over the years
//! (`triton.code_gen`, `triton.runtime.autotuner`, `triton.runtime.errors`).

use super::line::Line;
use super::scanner::Detected;
use super::{Kind, OomEvent};

pub(super) fn detect(line: &Line) -> Option<Detected> {
    let start = line.text.find("out of resource:")?;
    Some(Detected::message(Kind::TritonOutOfResources, line, start, fill))
}

/// Reads the resource and both numbers; true once they are all there.
/// Early versions printed them run together (`shared memoryRequired: 110592Hardware limit: 101376`).
fn fill(event: &mut OomEvent, text: &str) -> bool {
    let Some(found) = regex!(r"out of resource: (.+?),?\s*Required: (\d+),?\s*Hardware limit: (\d+)").captures(text)
    else {
        return false;
    };
    let resource = found[1].trim().to_lowercase();
    let (required, limit) = (found[2].parse::<u64>().ok(), found[3].parse::<u64>().ok());
    event.breakdown.clear();
    if resource == "shared memory" {
        event.used_bytes = required;
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

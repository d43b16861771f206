//! What a user can change: parameters that could be donated to an output,
//! and buffers whose layout padding inflates the peak.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Serialize;

use super::MemorySpaceReport;
use crate::model::{BufferAssignment, EntryInterface, LogicalBuffer};

/// Donating less than this is not worth a hint.
pub const MIN_DONATION_BYTES: i64 = 1 << 20;

/// An entry parameter with the shape and type of an output that is not
/// aliased to any parameter: donating it (`jax.jit(donate_argnums=…)`) lets
/// XLA write that output into the parameter's buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DonationCandidate {
    pub parameter_number: i64,
    /// The parameter as the framework names it (JAX: its pytree path, `params['w']`).
    pub parameter: String,
    pub shape: String,
    /// The output it could become, as a tuple index (`[]` for a lone result).
    pub output_index: Vec<i64>,
    /// The parameter's buffer: the most donating it could save.
    pub bytes_at_most: i64,
}

/// Each output that no parameter is aliased to is paired with the first
/// parameter, by number, of the same shape that is neither aliased nor
/// paired; largest first.
pub fn donation_candidates(interface: &EntryInterface, assignment: &BufferAssignment) -> Vec<DonationCandidate> {
    let aliased_outputs: HashSet<&[i64]> = interface.aliases.iter().map(|a| a.output_index.as_slice()).collect();
    let aliased_parameters: HashSet<i64> = interface.aliases.iter().map(|a| a.parameter_number).collect();
    let buffers = parameter_buffers(assignment);
    // Free parameters of each shape, in parameter order.
    let mut free: HashMap<&str, VecDeque<i64>> = HashMap::new();
    for (number, shape) in (0i64..).zip(&interface.parameters) {
        if !aliased_parameters.contains(&number) && buffers.contains_key(&number) {
            free.entry(shape.as_str()).or_default().push_back(number);
        }
    }
    let mut candidates = Vec::new();
    for (output_index, shape) in &interface.results {
        if aliased_outputs.contains(output_index.as_slice()) {
            continue;
        }
        let Some(number) = free.get_mut(shape.as_str()).and_then(VecDeque::pop_front) else { continue };
        let Some((parameter, bytes)) = buffers.get(&number) else { continue };
        candidates.push(DonationCandidate {
            parameter_number: number,
            parameter: parameter.clone(),
            shape: shape.clone(),
            output_index: output_index.clone(),
            bytes_at_most: *bytes,
        });
    }
    candidates.sort_by(|a, b| b.bytes_at_most.cmp(&a.bytes_at_most).then(a.parameter_number.cmp(&b.parameter_number)));
    candidates
}

/// Per whole entry parameter (by number), its name and the size of its
/// allocation: the name is the op name (JAX: the pytree path) of the
/// instruction defining the allocation's largest buffer.
fn parameter_buffers(assignment: &BufferAssignment) -> HashMap<i64, (String, i64)> {
    let parameter_of_slot: HashMap<usize, i64> = assignment
        .allocations
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_entry_computation_parameter && a.parameter_shape_index.is_empty())
        .map(|(slot, a)| (slot, a.parameter_number))
        .collect();
    let mut largest: HashMap<usize, &LogicalBuffer> = HashMap::new();
    for buffer in assignment.logical_buffers.iter().filter(|b| parameter_of_slot.contains_key(&b.allocation)) {
        let best = largest.entry(buffer.allocation).or_insert(buffer);
        if buffer.size > best.size {
            *best = buffer;
        }
    }
    parameter_of_slot
        .into_iter()
        .filter_map(|(slot, number)| {
            let allocation = assignment.allocations.get(slot)?;
            let instruction = largest.get(&slot).and_then(|b| assignment.instructions.get(b.instruction));
            let name = match instruction {
                Some(i) if !i.op_name.is_empty() => i.op_name.to_string(),
                Some(i) if !i.name.is_empty() => i.name.to_string(),
                _ => format!("parameter {number}"),
            };
            Some((number, (name, allocation.size)))
        })
        .collect()
}

/// Padding is worth a hint when it is more than this share of the peak.
pub const PADDING_HINT_SHARE: f64 = 0.05;
/// How many padded buffers a hint names.
const PADDING_HINT_BUFFERS: usize = 5;

/// The peak's padding and the buffers at the peak with the most of it.
#[derive(Debug, Clone, Serialize)]
pub struct PaddingHint {
    pub padding_bytes: i64,
    /// Padding as a share of the peak.
    pub share: f64,
    pub buffers: Vec<PaddedBuffer>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PaddedBuffer {
    pub instruction: String,
    /// With its layout, where TPU tiling (`T(8,128)`) shows.
    pub shape: String,
    pub size_bytes: i64,
    pub unpadded_bytes: i64,
}

/// A hint when the padded and unpadded peaks differ by more than [`PADDING_HINT_SHARE`].
pub fn padding(space: &MemorySpaceReport) -> Option<PaddingHint> {
    let padding_bytes = space.padding_bytes();
    if space.peak_bytes <= 0 || (padding_bytes as f64) <= PADDING_HINT_SHARE * space.peak_bytes as f64 {
        return None;
    }
    let mut padded: Vec<_> = space.at_peak.iter().filter(|b| b.padding_bytes() > 0).collect();
    padded
        .sort_by(|a, b| b.padding_bytes().cmp(&a.padding_bytes()).then(a.logical_buffer_id.cmp(&b.logical_buffer_id)));
    Some(PaddingHint {
        padding_bytes,
        share: padding_bytes as f64 / space.peak_bytes as f64,
        buffers: padded
            .into_iter()
            .take(PADDING_HINT_BUFFERS)
            .map(|b| PaddedBuffer {
                instruction: b.instruction.to_string(),
                shape: b.shape.to_string(),
                size_bytes: b.size_bytes,
                unpadded_bytes: b.unpadded_bytes,
            })
            .collect(),
    })
}

//! What a user can change: parameters that could be donated to an output,
//! and buffers whose layout padding inflates the peak.

use std::collections::HashSet;

use serde::Serialize;

use super::MemorySpaceReport;
use crate::model::{BufferAssignment, EntryInterface};

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
    let mut taken: HashSet<i64> = interface.aliases.iter().map(|a| a.parameter_number).collect();
    let mut candidates = Vec::new();
    for (output_index, shape) in &interface.results {
        if aliased_outputs.contains(output_index.as_slice()) {
            continue;
        }
        let parameter = (0i64..)
            .zip(&interface.parameters)
            .find(|(number, parameter_shape)| !taken.contains(number) && *parameter_shape == shape);
        let Some((number, _)) = parameter else { continue };
        let Some((parameter, bytes)) = parameter_buffer(assignment, number) else { continue };
        taken.insert(number);
        candidates.push(DonationCandidate {
            parameter_number: number,
            parameter,
            shape: shape.clone(),
            output_index: output_index.clone(),
            bytes_at_most: bytes,
        });
    }
    candidates.sort_by(|a, b| b.bytes_at_most.cmp(&a.bytes_at_most).then(a.parameter_number.cmp(&b.parameter_number)));
    candidates
}

/// The name and size of a whole entry parameter's allocation.
fn parameter_buffer(assignment: &BufferAssignment, number: i64) -> Option<(String, i64)> {
    let allocation = assignment.allocations.iter().enumerate().find(|(_, a)| {
        a.is_entry_computation_parameter && a.parameter_number == number && a.parameter_shape_index.is_empty()
    });
    let (slot, allocation) = allocation?;
    let instruction = assignment
        .logical_buffers
        .iter()
        .filter(|b| b.allocation == slot)
        .max_by_key(|b| b.size)
        .and_then(|b| assignment.instructions.get(b.instruction));
    let name = match instruction {
        Some(i) if !i.op_name.is_empty() => i.op_name.clone(),
        Some(i) if !i.name.is_empty() => i.name.clone(),
        _ => format!("parameter {number}"),
    };
    Some((name, allocation.size))
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
    padded.sort_by(|a, b| b.padding_bytes().cmp(&a.padding_bytes()).then(a.logical_buffer_id.cmp(&b.logical_buffer_id)));
    Some(PaddingHint {
        padding_bytes,
        share: padding_bytes as f64 / space.peak_bytes as f64,
        buffers: padded
            .into_iter()
            .take(PADDING_HINT_BUFFERS)
            .map(|b| PaddedBuffer {
                instruction: b.instruction.clone(),
                shape: b.shape.clone(),
                size_bytes: b.size_bytes,
                unpadded_bytes: b.unpadded_bytes,
            })
            .collect(),
    })
}

//! xmem: what was alive at the peak, in which memory space, who made it, and
//! what changed between two runs.
//!
//! Data flows one way: [`ingest`] turns files into [`model`] types,
//! [`analysis`] computes timelines and peaks from the model, and [`render`]
//! prints what analysis produced. [`diff`] and [`oom`] sit beside analysis.

pub mod analysis;
pub mod cli;
pub mod diff;
pub mod error;
pub mod id_index;
pub mod ingest;
pub(crate) mod interner;
pub mod model;
pub mod oom;
pub mod python_code;
pub mod render;
pub mod suggest;
pub mod units;

pub use error::{Error, Result};

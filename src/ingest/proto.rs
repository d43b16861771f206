//! Message types generated from the trimmed protos in `proto/` (see build.rs
//! for how they are regenerated and checked). Public so that tests,
//! benchmarks and fuzz targets can build inputs of any size.

#[allow(clippy::all)]
pub mod xla {
    include!("generated/xla.rs");
}

#[allow(clippy::all)]
pub mod xplane {
    include!("generated/tensorflow.profiler.rs");
}

#[allow(clippy::all)]
pub mod pprof {
    include!("generated/perftools.profiles.rs");
}

//! Generated message types for the trimmed protos in `proto/`. Public so that
//! tests, benchmarks and fuzz targets can build inputs of any size.

#[allow(clippy::all)]
pub mod xla {
    include!(concat!(env!("OUT_DIR"), "/xla.rs"));
}

#[allow(clippy::all)]
pub mod xplane {
    include!(concat!(env!("OUT_DIR"), "/tensorflow.profiler.rs"));
}

#[allow(clippy::all)]
pub mod pprof {
    include!(concat!(env!("OUT_DIR"), "/perftools.profiles.rs"));
}

//! Any bytes as a JAX device memory profile (pprof `Profile`, already
//! gunzipped), decoded and analysed. Seeds: `fixtures/pprof/*/*.prof`, gunzipped.
#![no_main]

use std::path::Path;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};

mod proto_mutator;

fuzz_target!(|data: &[u8]| {
    if let Ok(decoded) = xmem::ingest::pprof::decode(Path::new("fuzz.prof"), bytes::Bytes::copy_from_slice(data)) {
        let _ = xmem::analysis::device_memory::analyze("fuzz.prof", &decoded.snapshot);
    }
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    proto_mutator::mutate(data, size, max_size, seed)
});

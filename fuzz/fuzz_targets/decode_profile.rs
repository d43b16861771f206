//! Any bytes as a profile file: XSpace, HloProto or bare HloModuleProto,
//! decoded and analysed as `xmem report` would. Seeds: the fixtures.
#![no_main]

use std::path::Path;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};

mod proto_mutator;

fuzz_target!(|data: &[u8]| {
    if let Ok(capture) = xmem::ingest::load_bytes(Path::new("fuzz.pb"), bytes::Bytes::copy_from_slice(data), &Default::default()) {
        let _ = xmem::analysis::analyze(std::slice::from_ref(&capture));
    }
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    proto_mutator::mutate(data, size, max_size, seed)
});

//! Any bytes as a profile file: XSpace, HloProto or bare HloModuleProto,
//! decoded and analysed as `xmem report` would. Seeds: the fixtures.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(capture) = xmem::ingest::load_bytes(Path::new("fuzz.pb"), bytes::Bytes::copy_from_slice(data), &Default::default()) {
        let _ = xmem::analysis::analyze(std::slice::from_ref(&capture));
    }
});

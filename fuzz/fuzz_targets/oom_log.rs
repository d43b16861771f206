//! Any bytes as a job's log, scanned and explained as `xmem oom` does.
//! Seeds: `fixtures/oom-logs/*.txt`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = xmem::oom::scan("fuzz.log", data);
});

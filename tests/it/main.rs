//! xmem's integration tests, in one binary: one link instead of one per
//! file, which is most of a fresh clone's test time.
mod common;
#[path = "../../benches/support/synthetic.rs"]
mod synthetic;

mod amplification;
mod attribution;
mod bad_input;
mod bare_protos;
mod browser;
mod charts;
mod cli_allocators;
mod cli_report;
mod damaged_inputs;
mod device_memory;
mod device_memory_partial;
mod diff;
mod forgery;
mod gpu_profiles;
mod hostile;
mod html_explorer;
mod html_in_browser;
mod html_report;
mod inconsistent_inputs;
mod memory_profile_parity;
mod memory_viewer_parity;
mod module_identity;
mod oom_cli;
mod oom_general;
mod oom_gpu;
mod oom_logs;
mod plot;
mod readme;
mod run;
mod special_files;
mod terminal;
mod torch_snapshot;

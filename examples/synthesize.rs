//! Writes a synthetic input for the scaling benchmarks:
//! `cargo run --release --example synthesize -- OUT.xplane.pb MODULES LIVE_AT_PEAK TRANSIENT HOST_EVENTS`
//! (`bench/scaling.sh`), or
//! `cargo run --release --example synthesize -- OUT.prof pprof-inlined LINES`
//! (`bench/pprof_inlined.sh`): a device memory profile whose one location has
//! LINES inlined lines, with as many samples allocated from it.

#[path = "../benches/support/synthetic.rs"]
mod synthetic;

const USAGE: &str =
    "usage: synthesize OUT.xplane.pb MODULES LIVE_AT_PEAK TRANSIENT HOST_EVENTS | synthesize OUT.prof pprof-inlined LINES";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [out, kind, lines] if kind == "pprof-inlined" => {
            std::fs::write(out, synthetic::pprof_inlined_location(lines.parse()?))?;
        }
        [out, modules, live_at_peak, transient, host_events] => {
            let size = synthetic::ModuleSize { live_at_peak: live_at_peak.parse()?, transient: transient.parse()? };
            std::fs::write(out, synthetic::xspace(modules.parse()?, size, host_events.parse()?))?;
        }
        _ => return Err(USAGE.into()),
    }
    Ok(())
}

//! Writes a synthetic profile for the scaling benchmark (`bench/scaling.sh`):
//! `cargo run --release --example synthesize -- OUT.xplane.pb MODULES LIVE_AT_PEAK TRANSIENT HOST_EVENTS`.

#[path = "../benches/support/synthetic.rs"]
mod synthetic;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out, modules, live_at_peak, transient, host_events] = args.as_slice() else {
        return Err("usage: synthesize OUT.xplane.pb MODULES LIVE_AT_PEAK TRANSIENT HOST_EVENTS".into());
    };
    let size = synthetic::ModuleSize { live_at_peak: live_at_peak.parse()?, transient: transient.parse()? };
    std::fs::write(out, synthetic::xspace(modules.parse()?, size, host_events.parse()?))?;
    Ok(())
}

//! Writes synthetic inputs for the scaling benchmarks:
//! `synthesize OUT.xplane.pb MODULES LIVE_AT_PEAK TRANSIENT HOST_EVENTS` (bench/scaling.sh),
//! `synthesize shape NAME N OUT` (bench/shapes.sh; `synthesize shape` lists
//! each shape's name, file name, smallest benchmark size, memory bound in
//! bytes per item (0: twice the input) and xmem command;
//! `synthesize bound BYTES` the most a shape's charts or page may take),
//! `synthesize torch ENTRIES OUT.pickle` (bench/torch_snapshot.sh).

#[path = "../benches/support/synthetic.rs"]
mod synthetic;

const USAGE: &str =
    "usage: synthesize OUT.xplane.pb MODULES LIVE_AT_PEAK TRANSIENT HOST_EVENTS | synthesize shape [NAME N OUT] \
                     | synthesize bound BYTES | synthesize torch ENTRIES OUT.pickle";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [shape, name, n, out] if shape == "shape" => {
            let Some(shape) = synthetic::HOSTILE_SHAPES.iter().find(|s| s.name == name) else {
                return Err(format!("no shape named {name}; try `synthesize shape`").into());
            };
            std::fs::write(out, (shape.generate)(n.parse()?))?;
        }
        [bound, input_bytes] if bound == "bound" => println!("{}", synthetic::output_bound(input_bytes.parse()?)),
        [torch, entries, out] if torch == "torch" => std::fs::write(out, synthetic::torch_snapshot(entries.parse()?))?,
        [shape] if shape == "shape" => {
            for shape in synthetic::HOSTILE_SHAPES {
                let per_item = shape.memory.per_item();
                println!("{} {} {} {per_item} {}", shape.name, shape.file_name, shape.bench_n, shape.args.join(" "));
            }
        }
        [out, modules, live_at_peak, transient, host_events] => {
            let size = synthetic::ModuleSize { live_at_peak: live_at_peak.parse()?, transient: transient.parse()? };
            std::fs::write(out, synthetic::xspace(modules.parse()?, size, host_events.parse()?))?;
        }
        _ => return Err(USAGE.into()),
    }
    Ok(())
}

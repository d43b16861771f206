//! Writes an HloProto of one hostile heap-trace shape for the scaling
//! benchmark (`bench/scaling-heap-shapes.sh`):
//! `cargo run --release --example synthesize_heap_shape -- colors|share-chain|share-cycle N OUT.hlo.pb`.

#[path = "../benches/support/synthetic.rs"]
mod synthetic;

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [shape, n, out] = args.as_slice() else {
        return Err("usage: synthesize_heap_shape colors|share-chain|share-cycle N OUT.hlo.pb".into());
    };
    let n: usize = n.parse()?;
    let proto = match shape.as_str() {
        "colors" => synthetic::hlo_proto_with_colors(n),
        "share-chain" => synthetic::hlo_proto_with_share_chain(n, false),
        "share-cycle" => synthetic::hlo_proto_with_share_chain(n, true),
        other => return Err(format!("unknown shape {other}").into()),
    };
    std::fs::write(out, proto.encode_to_vec())?;
    Ok(())
}

//! Compiles the trimmed protos in `proto/` with protox, so no system `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let files = ["proto/xplane.proto", "proto/hlo.proto", "proto/profile.proto"];
    let descriptors = protox::compile(files, ["proto"])?;
    prost_build::Config::new().bytes(["."]).compile_fds(descriptors)?;
    Ok(())
}

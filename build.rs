//! The message types for the trimmed protos in `proto/` are checked in under
//! `src/ingest/generated/`, so an ordinary build compiles no protobuf tooling:
//! the protox chain was a quarter of a fresh clone's compile time. Building
//! with `--features protogen` regenerates them here with protox and
//! prost-build (pure Rust, no system `protoc`); `.ci/run` does that and fails
//! when the checked-in files differ from what `proto/` gives.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "protogen")]
    {
        println!("cargo:rerun-if-changed=proto");
        let files = ["proto/xplane.proto", "proto/hlo.proto", "proto/profile.proto"];
        let descriptors = protox::compile(files, ["proto"])?;
        prost_build::Config::new().bytes(["."]).out_dir("src/ingest/generated").compile_fds(descriptors)?;
    }
    Ok(())
}

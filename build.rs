//! Generates the Perfetto protobuf bindings (`perfetto.protos.rs` in `OUT_DIR`)
//! from our own minimal `.proto` files in `protos/`.
//!
//! There is no `protoc` on the build machine: `protox` (pure Rust) parses the
//! files into a `FileDescriptorSet` and `prost-build` turns that into Rust.

use std::error::Error;

const PROTO_FILES: &[&str] = &[
    "protos/trace.proto",
    "protos/trace_packet.proto",
    "protos/clock_snapshot.proto",
    "protos/track_event.proto",
    "protos/interned_data.proto",
    "protos/ftrace.proto",
    "protos/system.proto",
];

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=protos");
    println!("cargo:rerun-if-changed=build.rs");
    for file in PROTO_FILES {
        println!("cargo:rerun-if-changed={file}");
    }

    let fds = protox::compile(PROTO_FILES, ["protos"]).map_err(|e| format!("{e:?}"))?;
    prost_build::Config::new().compile_fds(fds)?;
    Ok(())
}

//! Rust bindings for the subset of the Perfetto trace protobuf schema
//! (package `perfetto.protos`) that sextant imports.
//!
//! The code is generated at build time by `prost-build` (driven by `protox`,
//! no `protoc` needed) from the minimal proto2 files in `protos/`, whose field
//! numbers and types match the official Perfetto descriptors. Fields and
//! messages not declared there are skipped as unknown fields when decoding.
//!
//! Layout follows prost conventions: nested messages/enums/oneofs live in a
//! snake_case module named after the parent message, e.g.
//! [`trace_packet::Data`], [`clock_snapshot::Clock`],
//! [`track_event::LegacyEvent`], [`ftrace_event::Event`]. Proto2 `optional`
//! scalars are `Option<T>` (explicit presence) with getter methods returning
//! the default when absent; enum fields are stored as `i32`.
#![allow(clippy::all, clippy::pedantic, clippy::nursery, missing_docs)]

include!(concat!(env!("OUT_DIR"), "/perfetto.protos.rs"));

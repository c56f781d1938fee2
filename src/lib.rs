//! Sextant: imports Perfetto protobuf, Chrome JSON and systrace traces into SQLite tables
//! shaped like Perfetto Trace Processor's, so existing Perfetto SQL keeps working.
//!
//! Data flows one way: [`source`] → [`parse`] → [`clock`] → sort → [`model`] → [`db`];
//! [`import`] runs the pipeline.

pub mod cleanup;
pub mod clock;
pub mod database;
pub mod db;
pub mod demo;
pub mod import;
pub mod ir;
pub mod manifest;
pub mod merge;
pub mod model;
pub mod parse;
pub mod protos;
pub mod shutdown;
pub mod source;
pub mod stats;
pub mod tui;

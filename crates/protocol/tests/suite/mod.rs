//! The protocol test suite: declarations only, one module per behaviour.

mod alloc_probe;
mod error_codes;
mod golden;
mod hex;
mod malformed;
mod oversized;
mod props;
mod result_json;
mod round_trip;
mod samples;
mod schema_drift;
mod schemas;
mod session_json;
mod streaming;

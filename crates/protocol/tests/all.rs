//! Integration tests of `subagent-protocol`, compiled into one binary.
//!
//! The tests live in `suite/`, one file per behaviour. This binary installs a
//! counting global allocator (`suite::alloc_probe`) so that tests can prove
//! hostile frames are refused without allocating what they announce.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] functions fail loudly too"
)]

mod suite;

//! What the workspace's tests share, written once: the binaries under
//! test as Cargo built them for the suite ([`bins`]).
//!
//! For tests only (a dev-dependency, and the test packages' own
//! binaries): nothing here is for the product, and nothing here builds
//! anything; Cargo does, in the test run's own build.

// A test that cannot run must say so at once, not return an error a
// caller could drop.
#![expect(clippy::panic, reason = "test support fails loudly")]

pub mod bins;

//! What the workspace's tests share, written once: the binaries under
//! test as Cargo built them for the suite ([`bins`]), the process-leak
//! check ([`processes`]), waiting on an event ([`wait`]), skipping what
//! this machine cannot run ([`skip`]) and the loopback HTTP stub ([`http`]).
//!
//! For tests only (a dev-dependency, and the test packages' own
//! binaries): nothing here is for the product, and nothing here builds
//! anything; Cargo does, in the test run's own build.

// A test that cannot run must say so at once, not return an error a
// caller could drop.
#![expect(
    clippy::panic,
    clippy::print_stderr,
    reason = "test support fails loudly and says why it skips"
)]

pub mod bins;
pub mod http;
pub mod processes;
pub mod skip;
pub mod wait;

pub use wait::{wait_until, wait_until_within};

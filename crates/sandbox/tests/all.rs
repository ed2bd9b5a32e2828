//! Integration tests of the sandbox against real processes, compiled into one
//! binary. The tests live in `suite/`, one file per behaviour; every test
//! asserts afterwards that nothing it started is still alive.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers outside #[test] functions fail loudly too"
)]

mod suite;

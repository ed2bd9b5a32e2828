//! Workspace integration tests: one binary, suites in `suite/`.

// The workspace's allow-*-in-tests settings cover `#[test]` functions only;
// the shared support code must fail just as loudly.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test support code fails loudly"
)]

mod suite;

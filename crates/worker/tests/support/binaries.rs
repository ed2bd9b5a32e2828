//! The worker's binaries (`subagent-worker`, `subagent-render-page`) for the
//! tests that run them as processes: this package's copies, built by Cargo
//! with these tests, under their product names beside each other
//! (`subagent_test_support::bins`).

use std::path::PathBuf;

/// The path of the worker binary `name`, as these tests run it.
pub fn binary(name: &str) -> PathBuf {
    subagent_test_support::bins::binary("worker", &UNDER_TEST, name)
}

/// This package's copies of the worker's binaries, by product name.
const UNDER_TEST: [(&str, &str); 2] = [
    (
        "subagent-worker",
        env!("CARGO_BIN_EXE_worker-tests-subagent-worker"),
    ),
    (
        "subagent-render-page",
        env!("CARGO_BIN_EXE_worker-tests-subagent-render-page"),
    ),
];

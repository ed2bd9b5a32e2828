//! The worker's binaries (`subagent-worker`, `subagent-render-page`) for the
//! tests that run them as processes: this package's copies, built by Cargo
//! with these tests, under their product names beside each other
//! (`subagent_test_support::bins`).

use std::path::PathBuf;
use std::sync::OnceLock;

/// The path of the worker binary `name`, as these tests run it.
pub fn binary(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        subagent_test_support::bins::under_test(
            "worker",
            &[
                (
                    "subagent-worker",
                    env!("CARGO_BIN_EXE_worker-tests-subagent-worker"),
                ),
                (
                    "subagent-render-page",
                    env!("CARGO_BIN_EXE_worker-tests-subagent-render-page"),
                ),
            ],
        )
    });
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not a binary under test",
        path.display()
    );
    path
}

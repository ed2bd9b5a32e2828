//! The worker's binaries (`subagent-worker`, `subagent-render-page`) for the
//! tests that run them as processes.
//!
//! They are binaries of the `subagent-cli` package (so that one `cargo
//! install` puts them beside `subagent`), and cargo builds only a package's
//! own binaries for its integration tests: this builds them once per test
//! process, into the target dir and profile of this test, unless
//! `SUBAGENT_TEST_BINS_BUILT=1` says `cargo xtask ci` built them already.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The path of binary `name` of the `subagent-cli` package, built first.
pub fn binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(build);
    match built {
        Ok(profile_dir) => {
            let path = profile_dir.join(name);
            assert!(path.exists(), "{} missing after the build", path.display());
            path
        }
        Err(e) => panic!("{e}; build them with `cargo build -p subagent-cli --bins`"),
    }
}

/// Builds the binaries; the profile dir (`target/debug`) they are in.
fn build() -> Result<PathBuf, String> {
    // This test binary is `<target>/<profile>/deps/all-<hash>`.
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("the test binary is not in <target>/<profile>/deps")?
        .to_path_buf();
    if std::env::var_os("SUBAGENT_TEST_BINS_BUILT").is_some_and(|v| v == "1") {
        return Ok(profile_dir);
    }
    let target_dir = profile_dir.parent().ok_or("profile dir has no parent")?;
    let mut cargo = std::process::Command::new(env!("CARGO"));
    cargo
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .env("CARGO_TARGET_DIR", target_dir)
        .args(["build", "--quiet", "-p", "subagent-cli", "--bins"]);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cargo.arg("--release");
    }
    match cargo.status() {
        Ok(status) if status.success() => Ok(profile_dir),
        Ok(status) => Err(format!("cargo build of the binaries failed: {status}")),
        Err(e) => Err(format!("cannot run cargo to build the binaries: {e}")),
    }
}

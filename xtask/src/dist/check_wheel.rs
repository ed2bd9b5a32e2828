//! The wheel, installed with pip into a fresh venv in a temporary directory
//! (no index: nothing but the wheel): every binary lands in the venv's
//! `bin/`, and the venv's `subagent doctor` finds the venv's worker; then
//! `pip uninstall` takes them all away again.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, ensure};

use super::installed::{
    binaries_left, binaries_missing, doctor_finds_worker, run_reaches_the_worker,
};
use crate::cmd;

/// Checks the wheel at `wheel`.
pub fn run(wheel: &Path) -> Result<()> {
    let scratch = tempfile::tempdir().context("make a temporary directory")?;
    let venv = scratch.path().join("venv");
    cmd::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    let pip = venv.join("bin/pip");
    cmd::run(
        Command::new(&pip)
            .args([
                "install",
                "--quiet",
                "--no-index",
                "--disable-pip-version-check",
            ])
            .arg(wheel),
    )?;
    let bin = venv.join("bin");
    let missing = binaries_missing(&bin);
    ensure!(
        missing.is_empty(),
        "pip install of {} put no {missing:?} into the venv's bin/: the wheel must ship every \
         binary of the CLI package (maturin's bin bindings, crates/cli/pyproject.toml)",
        wheel.display()
    );
    doctor_finds_worker("the wheel's", &bin.join("subagent"), scratch.path())?;
    run_reaches_the_worker("the wheel's", &bin.join("subagent"), scratch.path())?;
    cmd::run(
        Command::new(&pip)
            .args([
                "uninstall",
                "--quiet",
                "--yes",
                "--disable-pip-version-check",
            ])
            .arg("subagent"),
    )?;
    let left = binaries_left(&bin);
    ensure!(
        left.is_empty(),
        "pip uninstall subagent left {left:?} in the venv"
    );
    Ok(())
}

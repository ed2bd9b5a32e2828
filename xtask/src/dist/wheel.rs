//! The Python wheel, made by maturin's binary bindings
//! (crates/cli/pyproject.toml): every binary of the CLI package goes into
//! the wheel's scripts, which pip installs into a venv's `bin/`, side by
//! side, so the installed `subagent` finds its worker as after `cargo
//! install`. maturin drives its own cargo build of the same profile, which
//! reuses the build `dist` just made and only links (stripped) binaries.

use anyhow::{Result, bail};

use super::tools::Tools;
use super::{Layout, Profile};
use crate::cmd;

/// Builds the wheel into the dist dir; returns its file name.
pub fn build(layout: &Layout, profile: Profile, tools: &Tools) -> Result<String> {
    cmd::run(
        std::process::Command::new(&tools.maturin)
            .current_dir(&layout.root)
            .args(["build", "--locked", "--strip", "--profile"])
            .arg(profile.cargo_name())
            .arg("--manifest-path")
            .arg(layout.root.join("crates/cli/Cargo.toml"))
            .arg("--out")
            .arg(&layout.dist),
    )?;
    let wheels = super::files_ending(&layout.dist, ".whl")?;
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!(
            "maturin should have written one wheel into {}, found {wheels:?}",
            layout.dist.display()
        ),
    }
}

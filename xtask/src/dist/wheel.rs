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
    let mut maturin = std::process::Command::new(&tools.maturin);
    maturin
        .current_dir(&layout.root)
        .args(["build", "--locked", "--profile"])
        .arg(profile.cargo_name());
    // Stripping makes maturin re-link each binary: cheap and worth it for
    // the debug build (240 MB of line tables become 45 MB), costly for the
    // fat-LTO release build, whose binaries carry no debug info anyway.
    if profile == Profile::Dev {
        maturin.arg("--strip");
    }
    cmd::run(
        maturin
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

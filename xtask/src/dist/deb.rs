//! The `.deb`, made by cargo-deb from `[package.metadata.deb]` in
//! crates/cli/Cargo.toml (which lists every file and where it goes) around
//! the binaries already built, so cargo-deb builds nothing itself.

use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{Layout, Profile, fresh_dir};
use crate::cmd;

/// Where the gzipped man pages go, under the generated assets (the
/// `.deb` metadata names this directory).
const GZIPPED_MAN_DIR: &str = "man-gz";

/// Packs the `.deb` into the dist dir; returns its file name.
pub fn build(layout: &Layout, profile: Profile) -> Result<String> {
    gzip_man_pages(layout)?;
    let before = super::files_ending(&layout.dist, ".deb")?;
    // cargo-deb warns that it means the dev profile for nothing but tests
    // of the packaging, which is what `--profile dev` is for.
    cmd::run(
        cmd::cargo()
            .current_dir(&layout.root)
            .args(["deb", "-p", "subagent-cli", "--no-build", "--profile"])
            .arg(profile.cargo_name())
            .arg("--output")
            .arg(&layout.dist),
    )?;
    let made: Vec<String> = super::files_ending(&layout.dist, ".deb")?
        .into_iter()
        .filter(|d| !before.contains(d))
        .collect();
    match made.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!(
            "cargo deb should have written one .deb into {}, found {made:?}",
            layout.dist.display()
        ),
    }
}

/// Debian ships man pages gzipped; `-n` leaves out the name and time, so
/// the same page gives the same bytes.
fn gzip_man_pages(layout: &Layout) -> Result<()> {
    let out = layout.assets.join(GZIPPED_MAN_DIR);
    fresh_dir(&out)?;
    for page in super::files_ending(&layout.assets.join("man"), ".1")? {
        let gz = cmd::stdout_bytes(
            Command::new("gzip")
                .args(["-9", "-n", "-c"])
                .arg(layout.assets.join("man").join(&page)),
        )?;
        let path = out.join(format!("{page}.gz"));
        std::fs::write(&path, gz).with_context(|| format!("write {}", path.display()))?;
    }
    Ok(())
}

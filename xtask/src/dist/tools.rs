//! The packaging tools `cargo xtask dist` runs, installed on first use and
//! kept outside the clone: maturin (a prebuilt binary from PyPI, in a venv
//! under the xtask cache) and cargo-deb (from crates.io, into cargo's own
//! bin directory, as cargo-nextest is).
//!
//! Versions are pinned so that a package built today is built the same way
//! tomorrow. Nothing here touches the system's packages.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{Result, bail};

use crate::{cache, cmd};

/// maturin, whose binary bindings make the wheel.
const MATURIN_VERSION: &str = "1.16.0";

/// cargo-deb, which makes the `.deb`. PyPI's cargo-deb (2.0.0) predates
/// Cargo's resolver 3, which this workspace uses, so it comes from
/// crates.io; gzip only (no liblzma to build), which is all `dist` asks for.
const CARGO_DEB_VERSION: &str = "3.8.0";

/// The tools, ready to run.
pub struct Tools {
    /// The maturin binary.
    pub maturin: PathBuf,
}

/// Installs whatever tool is missing.
pub fn ensure() -> Result<Tools> {
    ensure_cargo_deb()?;
    Ok(Tools {
        maturin: ensure_maturin()?,
    })
}

fn ensure_maturin() -> Result<PathBuf> {
    let entry = cache::Entry::new(
        &crate::paths::cache_root()?,
        format!("maturin-{MATURIN_VERSION}"),
    );
    let dir = entry.get_or_fill(|dir| {
        eprintln!("xtask: installing maturin {MATURIN_VERSION} from PyPI into the cache");
        let venv = dir.join("venv");
        cmd::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        cmd::run(
            Command::new(venv.join("bin/pip"))
                .args(["install", "--quiet", "--disable-pip-version-check"])
                .args(["--only-binary", ":all:"])
                .arg(format!("maturin=={MATURIN_VERSION}")),
        )
    })?;
    // maturin is a native binary (not a script whose first line would name
    // the temporary directory the venv was made in), so it runs from here.
    let maturin = dir.join("venv/bin/maturin");
    if !cmd::succeeds(&maturin.to_string_lossy(), &["--version"]) {
        bail!(
            "{} does not run; remove {} and rerun to install it again",
            maturin.display(),
            dir.display()
        );
    }
    Ok(maturin)
}

/// The installed cargo-deb's version, if any.
fn cargo_deb_version() -> Option<String> {
    let out = cmd::cargo()
        .args(["deb", "--version"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn ensure_cargo_deb() -> Result<()> {
    if cargo_deb_version().is_some_and(|v| v.ends_with(CARGO_DEB_VERSION)) {
        return Ok(());
    }
    eprintln!(
        "xtask: installing cargo-deb {CARGO_DEB_VERSION} from crates.io \
         (once; 2-3 minutes on 2 cores)"
    );
    cmd::run(cmd::cargo().args([
        "install",
        "cargo-deb",
        "--version",
        CARGO_DEB_VERSION,
        "--locked",
        "--force",
        "--no-default-features",
        "--features",
        "gzip",
    ]))?;
    match cargo_deb_version() {
        Some(v) if v.ends_with(CARGO_DEB_VERSION) => Ok(()),
        other => bail!(
            "installed cargo-deb {CARGO_DEB_VERSION} but `cargo deb --version` says {other:?}; \
             is cargo's bin directory on PATH?"
        ),
    }
}

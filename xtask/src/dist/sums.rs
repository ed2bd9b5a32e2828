//! `SHA256SUMS` over the artifacts, written by `sha256sum` itself so that
//! `sha256sum -c SHA256SUMS` in the dist dir checks it.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use crate::cmd;

/// The file name.
pub const FILE: &str = "SHA256SUMS";

/// Writes `dist/SHA256SUMS` over `artifacts` (file names in `dist`).
pub fn write(dist: &Path, artifacts: &[String]) -> Result<()> {
    let sums = cmd::stdout_of(Command::new("sha256sum").current_dir(dist).args(artifacts))?;
    let path = dist.join(FILE);
    std::fs::write(&path, sums).with_context(|| format!("write {}", path.display()))
}

/// Checks every line of `dist/SHA256SUMS` against its file, and that the
/// file lists exactly `artifacts`.
pub fn verify(dist: &Path, artifacts: &[String]) -> Result<()> {
    cmd::run(
        Command::new("sha256sum")
            .current_dir(dist)
            .args(["--strict", "-c", FILE]),
    )?;
    let text = std::fs::read_to_string(dist.join(FILE))
        .with_context(|| format!("read {}", dist.join(FILE).display()))?;
    let mut listed = listed_files(&text);
    listed.sort();
    let mut expected = artifacts.to_vec();
    expected.sort();
    anyhow::ensure!(
        listed == expected,
        "{FILE} lists {listed:?}, but the artifacts in {} are {expected:?}",
        dist.display()
    );
    Ok(())
}

/// The file names of `sha256sum` output lines (`<hex>  <name>`, or
/// `<hex> *<name>` in binary mode).
pub fn listed_files(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(_, rest)| rest.trim_start_matches([' ', '*']).to_owned())
        .collect()
}

#[cfg(test)]
#[path = "sums_tests.rs"]
mod tests;

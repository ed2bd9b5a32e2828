//! `cargo xtask dist-check`: the artifacts of `cargo xtask dist`, checked as
//! a user meets them. `SHA256SUMS` holds (`sha256sum -c`) and covers every
//! artifact; the archive holds exactly the files it should and its
//! `subagent` finds its worker; the wheel ([`super::check_wheel`]) and the
//! `.deb` ([`super::check_deb`]) are installed and `subagent doctor` runs
//! from each.
//!
//! It reads `<target>/dist` only and builds nothing: a missing artifact is
//! an error that says to run `cargo xtask dist`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use super::installed::{doctor_finds_worker, man_pages_of, run_reaches_the_worker};
use super::{archive, check_deb, check_wheel, sums};
use crate::{cmd, deps};

/// Checks every artifact in the dist dir.
pub fn run(policy: deps::Policy) -> Result<()> {
    let started = std::time::Instant::now();
    deps::ensure(&[deps::PYTHON_VENV, deps::MAN, deps::TAR], policy)?;
    let dist = super::dist_dir()?;
    let archive = only(&dist, ".tar.gz")?;
    let deb = only(&dist, ".deb")?;
    let wheel = only(&dist, ".whl")?;
    let artifacts = [&archive, &deb, &wheel].map(|f| f.to_owned());
    sums::verify(&dist, &artifacts)?;
    eprintln!("xtask: {} matches every artifact", sums::FILE);
    check_archive(&dist.join(&archive))?;
    check_wheel::run(&dist.join(&wheel))?;
    check_deb::run(&dist.join(&deb))?;
    eprintln!(
        "xtask: dist-check passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The one artifact of a kind in `dist`.
fn only(dist: &Path, suffix: &str) -> Result<String> {
    let found = if dist.is_dir() {
        super::files_ending(dist, suffix)?
    } else {
        Vec::new()
    };
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!(
            "no *{suffix} in {}: run `cargo xtask dist` (or `cargo xtask dist --profile dev`) first",
            dist.display()
        ),
        _ => bail!(
            "several *{suffix} in {}: {found:?}; rerun `cargo xtask dist`, which starts from an empty dir",
            dist.display()
        ),
    }
}

/// The archive lists exactly the expected files, and its `subagent`, run
/// where it was unpacked, finds the worker beside itself.
fn check_archive(path: &Path) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".tar.gz")
        .context("the archive's name ends in .tar.gz")?;
    let scratch = tempfile::tempdir().context("make a temporary directory")?;
    cmd::run(
        Command::new("tar")
            .arg("-xzf")
            .arg(path)
            .arg("-C")
            .arg(scratch.path()),
    )?;
    let top = scratch.path().join(stem);
    let pages = man_pages_of(&top.join("subagent"), scratch.path())?;
    let mut listed: Vec<String> = cmd::stdout_of(Command::new("tar").arg("-tzf").arg(path))?
        .lines()
        .filter(|l| !l.ends_with('/'))
        .map(|l| l.trim_start_matches("./").to_owned())
        .collect();
    listed.sort();
    let expected = archive::expected_entries(stem, &pages);
    ensure!(
        listed == expected,
        "{name} holds the wrong files:\n  missing: {:?}\n  unexpected: {:?}",
        difference(&expected, &listed),
        difference(&listed, &expected)
    );
    doctor_finds_worker("the archive's", &top.join("subagent"), scratch.path())?;
    run_reaches_the_worker("the archive's", &top.join("subagent"), scratch.path())?;
    eprintln!("xtask: {name} holds the {} expected files", expected.len());
    Ok(())
}

/// What `a` has and `b` lacks.
fn difference<'a>(a: &'a [String], b: &[String]) -> Vec<&'a String> {
    a.iter().filter(|x| !b.contains(x)).collect()
}

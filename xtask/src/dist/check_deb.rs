//! The `.deb`: as root (CI), installed with `dpkg -i` and removed again
//! with `dpkg -r` (a leftover of an interrupted check is purged first, and
//! the package is purged however the check ends); otherwise unpacked with
//! `dpkg-deb -x` into a temporary directory, which the output says. Either
//! way `subagent doctor` runs from it and finds the worker beside it, every
//! page `subagent man` writes is there gzipped and `man -l` renders, and
//! the completion scripts are in their shells' directories.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};

use super::installed::{
    binaries_left, binaries_missing, doctor_finds_worker, man_pages_of, run_reaches_the_worker,
};
use crate::cmd;

/// The package's name (crates/cli/Cargo.toml, `[package.metadata.deb]`).
const PACKAGE: &str = "subagent";

/// Where each shell looks for the completion script of `subagent`.
const COMPLETION_FILES: [&str; 3] = [
    "usr/share/bash-completion/completions/subagent",
    "usr/share/zsh/vendor-completions/_subagent",
    "usr/share/fish/vendor_completions.d/subagent.fish",
];

/// Purges the package when dropped, so a failed check leaves nothing
/// installed.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = cmd::run(Command::new("dpkg").args(["--purge", PACKAGE]));
    }
}

/// Checks the `.deb` at `deb`.
pub fn run(deb: &Path) -> Result<()> {
    let scratch = tempfile::tempdir().context("make a temporary directory")?;
    let as_root = crate::deps::is_root();
    let (prefix, installed) = if as_root {
        // A leftover of an earlier, interrupted check (or another version).
        cmd::run(Command::new("dpkg").args(["--purge", PACKAGE]))?;
        cmd::run(Command::new("dpkg").arg("-i").arg(deb))?;
        (PathBuf::from("/"), Some(Installed))
    } else {
        let root = scratch.path().join("root");
        cmd::run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&root))?;
        eprintln!(
            "xtask: not root: the .deb is unpacked with dpkg-deb -x into {} and checked \
             there, not installed (run as root to check dpkg -i and dpkg -r too)",
            root.display()
        );
        (root, None)
    };
    check_files(&prefix, scratch.path())?;
    doctor_finds_worker(
        "the .deb's",
        &prefix.join("usr/bin/subagent"),
        scratch.path(),
    )?;
    run_reaches_the_worker(
        "the .deb's",
        &prefix.join("usr/bin/subagent"),
        scratch.path(),
    )?;
    if let Some(installed) = installed {
        // Installed, `man subagent` finds the page by name.
        let found = cmd::stdout_of(Command::new("man").args(["-w", "subagent"]))?;
        ensure!(
            found.trim() == "/usr/share/man/man1/subagent.1.gz",
            "after dpkg -i, `man -w subagent` names {found:?}, not the installed page"
        );
        cmd::run(Command::new("dpkg").args(["-r", PACKAGE]))?;
        let left = binaries_left(Path::new("/usr/bin"));
        ensure!(
            left.is_empty(),
            "dpkg -r {PACKAGE} left {left:?} in /usr/bin"
        );
        drop(installed);
        eprintln!("xtask: the .deb installed with dpkg -i, ran, and was removed with dpkg -r");
    }
    Ok(())
}

/// The binaries, every man page (gzipped, rendering) and the completions
/// under `prefix`.
fn check_files(prefix: &Path, scratch: &Path) -> Result<()> {
    let bin = prefix.join("usr/bin");
    let missing = binaries_missing(&bin);
    ensure!(
        missing.is_empty(),
        "the .deb has no {missing:?} in /usr/bin"
    );
    let man1 = prefix.join("usr/share/man/man1");
    let pages = man_pages_of(&bin.join("subagent"), scratch)?;
    let missing: Vec<String> = pages
        .iter()
        .map(|p| format!("{p}.gz"))
        .filter(|p| !man1.join(p).is_file())
        .collect();
    ensure!(
        missing.is_empty(),
        "the .deb lacks the man pages {missing:?} in /usr/share/man/man1 (every page \
         `subagent man` writes, gzipped; crates/cli/Cargo.toml lists them)"
    );
    let page = man1.join("subagent.1.gz");
    let rendered = cmd::stdout_of(
        Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80"),
    )?;
    ensure!(
        rendered.contains("subagent"),
        "man -l {} rendered no page: {rendered}",
        page.display()
    );
    let missing: Vec<&str> = COMPLETION_FILES
        .into_iter()
        .filter(|f| !prefix.join(f).is_file())
        .collect();
    ensure!(
        missing.is_empty(),
        "the .deb has no completion script {missing:?}"
    );
    // bash loads the script as bash-completion would, and gets the function.
    let bash = prefix.join(COMPLETION_FILES[0]);
    let complete = cmd::stdout_of(Command::new("bash").arg("-c").arg(format!(
        "source '{}' && complete -p subagent",
        bash.display()
    )))?;
    ensure!(
        complete.contains("subagent"),
        "sourcing {} registered no completion: {complete}",
        bash.display()
    );
    eprintln!(
        "xtask: the .deb holds the binaries, {} man pages (man -l renders) and the bash, zsh and fish completions",
        pages.len()
    );
    Ok(())
}

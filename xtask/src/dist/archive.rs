//! The release archive `subagent-<version>-<triple>.tar.gz`: one top
//! directory holding the three binaries side by side, `complete/` (a script
//! per shell), `man/` (every page), the licences and README.md. Its file
//! list is [`expected_entries`], which the check compares against.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use super::{BINARIES, COMPLETIONS, Layout, fresh_dir};
use crate::cmd;

/// Files of the repository shipped in the archive's top directory.
pub const REPO_FILES: [&str; 3] = ["LICENSE-APACHE", "LICENSE-MIT", "README.md"];

/// The archive's file name for a top directory `stem`.
pub fn file_name(stem: &str) -> String {
    format!("{stem}.tar.gz")
}

/// Stages the files and packs them; returns the archive's file name.
pub fn build(layout: &Layout) -> Result<String> {
    let stage = layout.dist.join(".stage");
    let top = stage.join(&layout.archive_stem);
    fresh_dir(&top)?;
    for name in BINARIES {
        copy(&layout.binary(name), &top.join(name))?;
    }
    std::fs::create_dir(top.join("complete"))?;
    for (_, file) in COMPLETIONS {
        copy(
            &layout.assets.join("completions").join(file),
            &top.join("complete").join(file),
        )?;
    }
    std::fs::create_dir(top.join("man"))?;
    for page in std::fs::read_dir(layout.assets.join("man"))? {
        let page = page?;
        copy(&page.path(), &top.join("man").join(page.file_name()))?;
    }
    for name in REPO_FILES {
        copy(&layout.root.join(name), &top.join(name))?;
    }
    let name = file_name(&layout.archive_stem);
    // Owner root and sorted names: the archive does not carry this
    // machine's user, and lists the same way on every build.
    cmd::run(
        Command::new("tar")
            .args(["--sort=name", "--owner=0", "--group=0", "--numeric-owner"])
            .arg("-czf")
            .arg(layout.dist.join(&name))
            .arg("-C")
            .arg(&stage)
            .arg(&layout.archive_stem),
    )?;
    std::fs::remove_dir_all(&stage).with_context(|| format!("remove {}", stage.display()))?;
    Ok(name)
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(drop)
        .with_context(|| format!("copy {} to {}", from.display(), to.display()))
}

/// Every file the archive must hold (directories left out), under `stem/`,
/// given the man pages the shipped `subagent man` writes; sorted.
pub fn expected_entries(stem: &str, man_pages: &[String]) -> Vec<String> {
    let mut files: Vec<String> = BINARIES.iter().map(|b| format!("{stem}/{b}")).collect();
    files.extend(
        COMPLETIONS
            .iter()
            .map(|(_, f)| format!("{stem}/complete/{f}")),
    );
    files.extend(man_pages.iter().map(|p| format!("{stem}/man/{p}")));
    files.extend(REPO_FILES.iter().map(|f| format!("{stem}/{f}")));
    files.sort();
    files
}

#[cfg(test)]
#[path = "archive_tests.rs"]
mod tests;

//! The binaries under test, from Cargo: a test package declares its own
//! copy of each product binary (a one-line `main` calling the library
//! that the product binary calls), so Cargo builds them with the test run
//! and hands their paths to the tests (`CARGO_BIN_EXE_<name>`). No test
//! runs `cargo build` itself (it would resolve other features and build
//! the workspace a second time), and no test runs a binary a previous
//! build left behind.
//!
//! The copies have names of their own (two packages' binaries may not
//! share one), while the programs find their companions by the product
//! names beside themselves (`subagent` its `subagent-worker`, the worker
//! its `subagent-render-page`). So [`under_test`] hard-links each copy
//! under its product name into one directory: a hard link, not a
//! symlink, since a program's own path (`/proc/self/exe`) is the link's
//! directory entry, not its target's.

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Binary `name` of `bins` (see [`under_test`]), the set linked once per
/// test process.
///
/// # Panics
/// When `name` is not one of `bins`, or the set cannot be linked.
pub fn binary(set: &str, bins: &[(&str, &str)], name: &str) -> PathBuf {
    static LINKED: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let linked = LINKED.get_or_init(Mutex::default);
    let mut linked = linked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = linked
        .entry(set.to_owned())
        .or_insert_with(|| under_test(set, bins));
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not a binary under test",
        path.display()
    );
    path
}

/// `<profile dir>/under-test/<set>/`, holding each of `bins` (product
/// name, the copy's path as Cargo gave it) hard-linked under its product
/// name; made or brought up to date first.
///
/// A link already there for the same file is left alone; one for an older
/// build is replaced by a rename, so a test process running the old one
/// meanwhile keeps it, and parallel test processes never see a missing
/// name.
///
/// # Panics
/// When the directory or a link cannot be made: the tests cannot run.
pub fn under_test(set: &str, bins: &[(&str, &str)]) -> PathBuf {
    let Some((_, first)) = bins.first() else {
        panic!("under_test needs at least one binary");
    };
    let profile_dir = Path::new(first)
        .parent()
        .unwrap_or_else(|| panic!("{first} has no directory"));
    let dir = profile_dir.join("under-test").join(set);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("cannot make {}: {e}", dir.display());
    }
    for (name, built) in bins {
        if let Err(e) = link_as(Path::new(built), &dir.join(name)) {
            panic!("cannot link {built} as {}: {e}", dir.join(name).display());
        }
    }
    dir
}

/// Makes `link` a hard link of `built` unless it already is one.
fn link_as(built: &Path, link: &Path) -> io::Result<()> {
    let source = std::fs::metadata(built)?;
    if let Ok(existing) = std::fs::metadata(link)
        && (existing.dev(), existing.ino()) == (source.dev(), source.ino())
    {
        return Ok(());
    }
    let name = link
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let staged = link.with_file_name(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_file(&staged);
    std::fs::hard_link(built, &staged)?;
    std::fs::rename(&staged, link)
}

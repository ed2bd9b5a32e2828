//! Cache entries appear whole or not at all.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::Entry;

/// A fresh directory under the system temp dir, removed on drop.
struct TempRoot(PathBuf);

impl TempRoot {
    fn new(tag: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("xtask-cache-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_filled_entry_appears_with_its_content_and_no_temp_dir() {
    let root = TempRoot::new("fill");
    let entry = Entry::new(&root.0, "thing-1.0");
    let path = entry
        .get_or_fill(|dir| Ok(std::fs::write(dir.join("file"), "content")?))
        .unwrap();
    assert_eq!(path, root.0.join("thing-1.0"));
    assert_eq!(
        std::fs::read_to_string(path.join("file")).unwrap(),
        "content"
    );
    assert_eq!(names(&root.0), ["thing-1.0"]);
}

#[test]
fn a_failed_fill_leaves_nothing() {
    let root = TempRoot::new("fail");
    let entry = Entry::new(&root.0, "thing-1.0");
    let result = entry.get_or_fill(|dir| {
        std::fs::write(dir.join("half"), "x")?;
        bail!("build broke")
    });
    assert_eq!(result.unwrap_err().to_string(), "build broke");
    assert!(!entry.exists());
    assert!(names(&root.0).is_empty(), "{:?}", names(&root.0));
}

#[test]
fn a_present_entry_is_not_filled_again() {
    let root = TempRoot::new("present");
    let entry = Entry::new(&root.0, "thing-1.0");
    entry.get_or_fill(|_| Ok(())).unwrap();
    let mut called = false;
    entry
        .get_or_fill(|_| {
            called = true;
            Ok(())
        })
        .unwrap();
    assert!(!called);
}

#[test]
fn a_dead_runs_temp_dir_is_removed() {
    let root = TempRoot::new("abandoned");
    // u32::MAX is above any pid_max: that run is surely gone.
    let abandoned = root.0.join(format!(".tmp-thing-1.0.{}", u32::MAX));
    std::fs::create_dir_all(abandoned.join("build")).unwrap();
    let other = root.0.join(format!(".tmp-other-2.0.{}", u32::MAX));
    std::fs::create_dir_all(&other).unwrap();
    Entry::new(&root.0, "thing-1.0")
        .get_or_fill(|_| Ok(()))
        .unwrap();
    assert!(!abandoned.exists());
    assert!(other.exists(), "another entry's temp dir is left alone");
}

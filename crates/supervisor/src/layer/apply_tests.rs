use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, SystemTime};

use subagent_protocol::changes::ChangeKind;

use super::*;

/// New contents from files of a directory, by the change's path.
struct FromDir<'a>(&'a Path);

impl Contents for FromDir<'_> {
    fn open(&self, change: &Change) -> io::Result<std::fs::File> {
        std::fs::File::open(self.0.join(&change.path))
    }
}

fn file(path: &str, kind: ChangeKind, bytes: u64) -> Change {
    Change::new(path.into(), kind, Node::File { mode: 0o644, bytes })
}

fn root(dir: &Path) -> std::fs::File {
    std::fs::File::open(dir).unwrap()
}

#[test]
fn a_file_unchanged_since_the_start_is_replaced_and_one_changed_since_is_a_conflict() {
    let ws = tempfile::tempdir().unwrap();
    let new = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("old.txt"), "before").unwrap();
    std::fs::write(new.path().join("old.txt"), "the run's").unwrap();
    std::fs::write(new.path().join("later.txt"), "the run's").unwrap();
    std::fs::write(new.path().join("made.txt"), "made").unwrap();
    std::fs::write(ws.path().join("later.txt"), "someone else's").unwrap();
    let dir = root(ws.path());
    // A run that started after both files were written: old.txt is the
    // version it started from.
    let after = SystemTime::now() + Duration::from_secs(3600);
    let changes = [
        file("made.txt", ChangeKind::Added, 4),
        file("old.txt", ChangeKind::Modified, 9),
    ];
    let out = apply(&changes, dir.as_fd(), after, &FromDir(new.path()), false);
    assert_eq!(out.applied, ["made.txt", "old.txt"]);
    // A run that started before later.txt was written: a conflict.
    let before = SystemTime::UNIX_EPOCH;
    let changes = [file("later.txt", ChangeKind::Modified, 9)];
    let out = apply(&changes, dir.as_fd(), before, &FromDir(new.path()), false);
    assert!(out.applied.is_empty());
    assert_eq!(out.conflicts.len(), 1);
    assert_eq!(out.conflicts[0].path, "later.txt");
    let read = |name: &str| std::fs::read_to_string(ws.path().join(name)).unwrap();
    assert_eq!(read("old.txt"), "the run's");
    assert_eq!(read("later.txt"), "someone else's");
    assert_eq!(read("made.txt"), "made");
    // No temporary file is left beside them.
    let names: Vec<_> = std::fs::read_dir(ws.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 3);
}

#[test]
fn a_dry_run_changes_nothing_and_a_refused_directory_takes_its_entries_along() {
    let ws = tempfile::tempdir().unwrap();
    let new = tempfile::tempdir().unwrap();
    std::fs::create_dir(new.path().join("d")).unwrap();
    std::fs::write(new.path().join("d/x"), "x").unwrap();
    let since = SystemTime::now();
    let mut dir_change = Change::new("d".into(), ChangeKind::Added, Node::Dir { mode: 0o755 });
    dir_change.refused = Some("refused for the test".into());
    let changes = [dir_change, file("d/x", ChangeKind::Added, 1)];
    let dir = root(ws.path());
    let out = apply(&changes, dir.as_fd(), since, &FromDir(new.path()), false);
    assert!(out.applied.is_empty());
    assert_eq!(out.refused[0].path, "d");
    assert_eq!(out.conflicts[0].path, "d/x");
    assert!(!ws.path().join("d").exists());

    let changes = [file("y", ChangeKind::Added, 0)];
    std::fs::write(new.path().join("y"), "").unwrap();
    let out = apply(&changes, dir.as_fd(), since, &FromDir(new.path()), true);
    assert_eq!(out.applied, ["y"]);
    assert!(!ws.path().join("y").exists());
}

#[test]
fn deleting_a_directory_that_holds_what_the_host_trusts_is_refused() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("vendor/.git")).unwrap();
    std::fs::write(ws.path().join("vendor/.git/config"), "").unwrap();
    // Unchanged since the run started: only what it holds refuses it.
    let since = SystemTime::now() + Duration::from_secs(3600);
    let changes = [Change::new(
        "vendor".into(),
        ChangeKind::Deleted,
        Node::Gone,
    )];
    let dir = root(ws.path());
    let out = apply(&changes, dir.as_fd(), since, &FromDir(ws.path()), false);
    assert!(out.applied.is_empty(), "{out:?}");
    assert!(ws.path().join("vendor/.git/config").exists());
}

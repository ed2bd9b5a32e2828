//! The walk's ignore files: read only when they are regular files inside
//! the workspace and small, skipped with a note otherwise, never a hang.

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::test_tree::{call, fifo, symlink, tree, write};
use crate::{BashFind, BashRipgrep};

/// Longer than any walk of these trees takes; a FIFO read would block past it.
const NO_HANG: Duration = Duration::from_secs(10);

async fn find_all(dir: &tempfile::TempDir) -> String {
    let call = call(&BashFind, dir.path(), json!({"pattern": "*"}));
    tokio::time::timeout(NO_HANG, call)
        .await
        .expect("bash_find hung on an ignore file")
        .unwrap()
}

#[tokio::test]
async fn a_gitignore_symlinked_to_an_outside_file_is_not_read_as_rules() {
    // Read as rules, it would hide `listed.txt`: an oracle for what the
    // outside file says.
    let dir = tree(&[("listed.txt", ""), ("kept.txt", "")]);
    let outside = tree(&[("rules", "listed.txt\n")]);
    symlink(&outside.path().join("rules"), dir.path(), ".gitignore");
    assert_eq!(
        find_all(&dir).await,
        "kept.txt\nlisted.txt\n(ignore files not applied: `.gitignore` (a symlink); only regular \
         files inside the workspace of at most 1024 KiB are read)\n"
    );
}

#[tokio::test]
async fn a_fifo_gitignore_is_skipped_without_a_hang() {
    let dir = tree(&[("sub/a.txt", "")]);
    fifo(&dir.path().join("sub"), ".gitignore");
    assert_eq!(
        find_all(&dir).await,
        "sub/a.txt\n(ignore files not applied: `sub/.gitignore` (a FIFO); only regular files \
         inside the workspace of at most 1024 KiB are read)\n"
    );
}

#[tokio::test]
async fn an_ignore_file_linked_to_dev_zero_is_skipped_without_reading() {
    let dir = tree(&[("a.txt", "needle")]);
    symlink(std::path::Path::new("/dev/zero"), dir.path(), ".ignore");
    let search = call(&BashRipgrep, dir.path(), json!({"pattern": "needle"}));
    let text = tokio::time::timeout(NO_HANG, search)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        text,
        "a.txt:1:needle\n(ignore files not applied: `.ignore` (a symlink); only regular files \
         inside the workspace of at most 1024 KiB are read)\n"
    );
}

#[tokio::test]
async fn an_ignore_file_over_the_cap_is_skipped_whole() {
    let dir = tree(&[("a.txt", ""), ("b.txt", "")]);
    let mut rules = b"a.txt\n".to_vec();
    rules.resize(
        usize::try_from(crate::ignore_rules::IGNORE_FILE_MAX_BYTES).unwrap() + 1,
        b'\n',
    );
    write(dir.path(), ".ignore", &rules);
    assert_eq!(
        find_all(&dir).await,
        "a.txt\nb.txt\n(ignore files not applied: `.ignore` (larger than 1024 KiB); only regular \
         files inside the workspace of at most 1024 KiB are read)\n"
    );
}

#[tokio::test]
async fn a_git_file_pointing_elsewhere_is_not_followed_but_a_real_exclude_is_read() {
    let outside = tree(&[("gitdir/info/exclude", "b.txt\n")]);
    let dir = tree(&[
        ("repo/a.txt", ""),
        ("repo/b.txt", ""),
        ("real/.git/info/exclude", "c.txt\n"),
        ("real/c.txt", ""),
        ("real/d.txt", ""),
    ]);
    write(
        dir.path(),
        "repo/.git",
        format!("gitdir: {}\n", outside.path().join("gitdir").display()).as_bytes(),
    );
    assert_eq!(find_all(&dir).await, "real/d.txt\nrepo/a.txt\nrepo/b.txt\n");
}

#[tokio::test]
async fn a_whitelist_rule_deeper_down_wins_and_dot_ignore_beats_gitignore() {
    let dir = tree(&[
        (".gitignore", "*.log\nkeep.txt\n"),
        (".ignore", "!keep.txt\n"),
        ("a.log", ""),
        ("sub/.gitignore", "!b.log\n"),
        ("sub/b.log", ""),
        ("sub/c.log", ""),
        ("keep.txt", ""),
    ]);
    assert_eq!(find_all(&dir).await, "keep.txt\nsub/b.log\n");
}

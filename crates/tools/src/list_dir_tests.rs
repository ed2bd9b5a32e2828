use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::test_tree::{call, escapes, failure, symlink, tree};

#[tokio::test]
async fn entries_come_with_kind_and_size_sorted_by_name() {
    let dir = tree(&[("b.txt", "12345"), ("a/x", ""), (".hidden", "1")]);
    symlink(&dir.path().join("b.txt"), dir.path(), "c");
    let said = call(&ListDir, dir.path(), json!({})).await.unwrap();
    assert_eq!(
        said,
        "`.`: 4 entries\n.hidden\tfile\t1 bytes\na/\tdir\nb.txt\tfile\t5 bytes\nc@\tsymlink\n"
    );
}

#[tokio::test]
async fn ignore_globs_leave_entries_out_and_are_counted() {
    let dir = tree(&[("a.log", ""), ("b.log", ""), ("src/main.rs", "")]);
    let said = call(
        &ListDir,
        dir.path(),
        json!({"path": ".", "ignore": ["*.log"]}),
    )
    .await
    .unwrap();
    assert_eq!(said, "`.`: 1 entries (2 ignored)\nsrc/\tdir\n");
    let said = failure(call(&ListDir, dir.path(), json!({"ignore": ["a{"]})).await);
    assert!(said.contains("is not a glob"), "{said}");
}

#[tokio::test]
async fn a_file_and_a_path_outside_are_refused() {
    let dir = tree(&[("f.txt", "")]);
    let said = failure(call(&ListDir, dir.path(), json!({"path": "f.txt"})).await);
    assert!(said.contains("is not a directory"), "{said}");
    let outside = tempfile::tempdir().unwrap();
    for (path, message) in escapes(&dir, &outside) {
        assert_eq!(
            failure(call(&ListDir, dir.path(), json!({"path": path})).await),
            message,
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_long_listing_is_capped() {
    let names: Vec<String> = (0..MAX_LISTED_ENTRIES + 5)
        .map(|i| format!("f{i:05}"))
        .collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
    let dir = tree(&files);
    let said = call(&ListDir, dir.path(), json!({})).await.unwrap();
    assert!(
        said.ends_with("... and 5 more (pass ignore patterns, or use bash_find with a pattern)\n"),
        "{said}"
    );
}

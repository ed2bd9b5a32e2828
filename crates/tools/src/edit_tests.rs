use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::test_tree::{call, escapes, failure, tree, write};

fn read(dir: &tempfile::TempDir, path: &str) -> String {
    std::fs::read_to_string(dir.path().join(path)).unwrap()
}

async fn edit_file(
    dir: &tempfile::TempDir,
    arguments: serde_json::Value,
) -> Result<String, ToolError> {
    call(&EditFile, dir.path(), arguments).await
}

#[tokio::test]
async fn a_unique_string_is_replaced_in_place() {
    let dir = tree(&[("src/lib.rs", "fn a() -> u8 { 1 }\nfn b() -> u8 { 2 }\n")]);
    let said = edit_file(
        &dir,
        json!({"file_path": "src/lib.rs", "old_string": "{ 1 }", "new_string": "{ 10 }"}),
    )
    .await
    .unwrap();
    assert_eq!(
        said,
        "The file src/lib.rs has been updated: 1 replacement (1 edit)."
    );
    assert_eq!(
        read(&dir, "src/lib.rs"),
        "fn a() -> u8 { 10 }\nfn b() -> u8 { 2 }\n"
    );
}

#[tokio::test]
async fn a_string_found_twice_is_refused_with_the_count_and_the_file_is_untouched() {
    let dir = tree(&[("a.txt", "x\nx\nx\n")]);
    let said = failure(
        edit_file(
            &dir,
            json!({"file_path": "a.txt", "old_string": "x", "new_string": "y"}),
        )
        .await,
    );
    assert!(
        said.starts_with("Found 3 matches of the string to replace, but replace_all is false."),
        "{said}"
    );
    assert_eq!(read(&dir, "a.txt"), "x\nx\nx\n");
    let said = edit_file(
        &dir,
        json!({"file_path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": true}),
    )
    .await
    .unwrap();
    assert_eq!(
        said,
        "The file a.txt has been updated: 3 replacements (1 edit)."
    );
    assert_eq!(read(&dir, "a.txt"), "y\ny\ny\n");
}

#[tokio::test]
async fn an_absent_string_and_a_missing_file_are_errors_that_say_what_to_do() {
    let dir = tree(&[("a.txt", "hello\n")]);
    let said = failure(
        edit_file(
            &dir,
            json!({"file_path": "a.txt", "old_string": "bye", "new_string": "x"}),
        )
        .await,
    );
    assert!(
        said.starts_with("String to replace not found in file."),
        "{said}"
    );
    let said = failure(
        edit_file(
            &dir,
            json!({"file_path": "nope.txt", "old_string": "a", "new_string": "b"}),
        )
        .await,
    );
    assert!(
        said.starts_with("File does not exist: `nope.txt`"),
        "{said}"
    );
    assert!(!dir.path().join("nope.txt").exists());
}

#[tokio::test]
async fn an_empty_old_string_creates_a_new_file() {
    let dir = tree(&[]);
    let said = edit_file(
        &dir,
        json!({"file_path": "new/file.txt", "old_string": "", "new_string": "hi\n"}),
    )
    .await
    .unwrap();
    assert_eq!(said, "File created successfully at: new/file.txt");
    assert_eq!(read(&dir, "new/file.txt"), "hi\n");
}

#[tokio::test]
async fn a_crlf_file_keeps_its_line_endings() {
    let dir = tree(&[("win.txt", "one\r\ntwo\r\nthree\r\n")]);
    edit_file(
        &dir,
        json!({"file_path": "win.txt", "old_string": "two\nthree", "new_string": "2\n3\n3.5"}),
    )
    .await
    .unwrap();
    assert_eq!(read(&dir, "win.txt"), "one\r\n2\r\n3\r\n3.5\r\n");
}

#[tokio::test]
async fn binary_and_non_utf8_files_are_refused() {
    let dir = tree(&[]);
    write(dir.path(), "img.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    write(
        dir.path(),
        "latin1.txt",
        b"caf\xe9 au lait, a long enough line of text\n",
    );
    let said = failure(
        edit_file(
            &dir,
            json!({"file_path": "img.png", "old_string": "PNG", "new_string": "x"}),
        )
        .await,
    );
    assert!(said.contains("is a binary file (PNG image"), "{said}");
    let said = failure(
        edit_file(
            &dir,
            json!({"file_path": "latin1.txt", "old_string": "lait", "new_string": "x"}),
        )
        .await,
    );
    assert!(said.contains("not valid UTF-8"), "{said}");
    assert_eq!(
        std::fs::read(dir.path().join("img.png")).unwrap(),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"
    );
}

#[tokio::test]
async fn a_multi_edit_is_all_or_none() {
    let dir = tree(&[("m.txt", "alpha beta gamma\n")]);
    let said = failure(
        call(
            &MultiEdit,
            dir.path(),
            json!({"file_path": "m.txt", "edits": [
                {"old_string": "alpha", "new_string": "ALPHA"},
                {"old_string": "delta", "new_string": "DELTA"}
            ]}),
        )
        .await,
    );
    assert!(
        said.starts_with(
            "edit 2 of the list (index 1) failed, so none was applied: String to replace not found"
        ),
        "{said}"
    );
    assert_eq!(read(&dir, "m.txt"), "alpha beta gamma\n");
    let said = call(
        &MultiEdit,
        dir.path(),
        json!({"file_path": "m.txt", "edits": [
            {"old_string": "alpha", "new_string": "ALPHA"},
            {"old_string": "ALPHA beta", "new_string": "one", "replace_all": true}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(
        said,
        "The file m.txt has been updated: 2 replacements (2 edits)."
    );
    assert_eq!(read(&dir, "m.txt"), "one gamma\n");
}

#[tokio::test]
async fn an_empty_edit_list_is_refused() {
    let dir = tree(&[("m.txt", "x")]);
    let said = failure(
        call(
            &MultiEdit,
            dir.path(),
            json!({"file_path": "m.txt", "edits": []}),
        )
        .await,
    );
    assert!(
        said.contains("edits must hold 1 to 100 edits, got 0"),
        "{said}"
    );
}

#[tokio::test]
async fn edits_outside_the_workspace_or_into_git_are_refused() {
    let dir = tree(&[(".git/config", "[core]\n")]);
    let outside = tempfile::tempdir().unwrap();
    for (path, message) in escapes(&dir, &outside) {
        let said = failure(
            edit_file(
                &dir,
                json!({"file_path": path, "old_string": "secret", "new_string": "x"}),
            )
            .await,
        );
        assert_eq!(said, message, "{path}");
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "secret\n"
    );
    let said = failure(edit_file(&dir, json!({"file_path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\thooksPath = x"})).await);
    assert!(said.contains("which the host trusts"), "{said}");
    assert_eq!(read(&dir, ".git/config"), "[core]\n");
}

#[tokio::test]
async fn a_file_past_the_size_cap_is_refused() {
    let dir = tree(&[]);
    let big = vec![b'a'; crate::write_target::MAX_FILE_BYTES + 1];
    write(dir.path(), "big.txt", &big);
    let said = failure(
        edit_file(
            &dir,
            json!({"file_path": "big.txt", "old_string": "a", "new_string": "b"}),
        )
        .await,
    );
    assert!(
        said.contains("more than the 16777216 a file tool edits"),
        "{said}"
    );
}

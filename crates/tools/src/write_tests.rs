use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::test_tree::{call, call_in, escapes, failure, symlink, tree};

async fn write_file(
    dir: &tempfile::TempDir,
    path: &str,
    content: &str,
) -> Result<String, ToolError> {
    call(
        &WriteFile,
        dir.path(),
        json!({"file_path": path, "content": content}),
    )
    .await
}

fn read(dir: &tempfile::TempDir, path: &str) -> String {
    std::fs::read_to_string(dir.path().join(path)).unwrap()
}

/// Names in `dir` (recursively) that are not in `expected`: a temp file
/// left behind would show here.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn a_new_file_is_created_with_its_parents() {
    let dir = tree(&[]);
    let said = write_file(&dir, "src/deep/new.rs", "fn main() {}\n")
        .await
        .unwrap();
    assert_eq!(
        said,
        "File created successfully at: src/deep/new.rs (13 bytes)"
    );
    assert_eq!(read(&dir, "src/deep/new.rs"), "fn main() {}\n");
    let mode = std::fs::metadata(dir.path().join("src/deep/new.rs"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
}

#[tokio::test]
async fn an_existing_file_is_overwritten_whole_keeping_its_mode_and_no_temp_file_is_left() {
    let dir = tree(&[("run.sh", "old old old\n")]);
    std::fs::set_permissions(
        dir.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let said = write_file(&dir, "run.sh", "new\n").await.unwrap();
    assert_eq!(said, "The file run.sh has been overwritten (4 bytes).");
    assert_eq!(read(&dir, "run.sh"), "new\n");
    let mode = std::fs::metadata(dir.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(names(dir.path()), ["run.sh"]);
}

#[tokio::test]
async fn the_write_is_a_rename_so_a_reader_never_sees_half_a_file() {
    let dir = tree(&[("data.txt", "before\n")]);
    let held = std::fs::File::open(dir.path().join("data.txt")).unwrap();
    let before = std::os::unix::fs::MetadataExt::ino(&held.metadata().unwrap());
    write_file(&dir, "data.txt", "after\n").await.unwrap();
    // A new inode took the name: the file open before still reads whole.
    let after = std::os::unix::fs::MetadataExt::ino(
        &std::fs::metadata(dir.path().join("data.txt")).unwrap(),
    );
    assert_ne!(before, after);
    assert_eq!(std::io::read_to_string(held).unwrap(), "before\n");
    assert_eq!(read(&dir, "data.txt"), "after\n");
}

#[tokio::test]
async fn an_absolute_path_inside_the_workspace_is_taken() {
    let dir = tree(&[]);
    let path = dir.path().canonicalize().unwrap().join("abs.txt");
    write_file(&dir, &path.to_string_lossy(), "x")
        .await
        .unwrap();
    assert_eq!(read(&dir, "abs.txt"), "x");
}

#[tokio::test]
async fn a_symlink_inside_the_workspace_is_written_through_to_its_target() {
    let dir = tree(&[("real.txt", "old")]);
    symlink(&dir.path().join("real.txt"), dir.path(), "alias.txt");
    let said = write_file(&dir, "alias.txt", "new").await.unwrap();
    assert_eq!(said, "The file real.txt has been overwritten (3 bytes).");
    assert_eq!(read(&dir, "real.txt"), "new");
    assert!(
        std::fs::symlink_metadata(dir.path().join("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn every_way_out_of_the_workspace_is_refused_and_nothing_outside_changes() {
    let dir = tree(&[]);
    let outside = tempfile::tempdir().unwrap();
    for (path, message) in escapes(&dir, &outside) {
        assert_eq!(
            failure(write_file(&dir, &path, "pwned").await),
            message,
            "{path}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "secret\n"
    );
    assert_eq!(names(outside.path()), ["secret.txt", "sub"]);
    assert_eq!(names(&outside.path().join("sub")), ["inner.txt"]);
}

#[tokio::test]
async fn entries_the_host_trusts_are_refused_at_any_depth_and_through_a_symlink() {
    let dir = tree(&[
        (".git/config", "[core]\n"),
        ("vendor/lib/.git/HEAD", "ref\n"),
    ]);
    symlink(&dir.path().join(".git"), dir.path(), "innocent");
    for path in [
        ".git/config",
        ".git/hooks/pre-commit",
        "vendor/lib/.git/config",
        ".subagent/agents/x.md",
        ".claude/agents/x.md",
        "sub/.claude/settings.json",
        "innocent/config",
        "./.git/../.git/config",
    ] {
        let said = failure(write_file(&dir, path, "[core]\n\tfsmonitor = evil\n").await);
        assert!(said.contains("which the host trusts"), "{path}: {said}");
    }
    assert_eq!(read(&dir, ".git/config"), "[core]\n");
    assert!(!dir.path().join(".git/hooks").exists());
    assert!(!dir.path().join(".subagent").exists());
    assert!(
        !dir.path().join("sub").exists(),
        "a refused write made a directory"
    );
}

#[tokio::test]
async fn the_operators_protected_paths_are_refused() {
    let dir = tree(&[("sessions/a.jsonl", "{}\n")]);
    let mut ctx = ToolContext::new(dir.path());
    ctx.protected = vec![dir.path().canonicalize().unwrap().join("sessions")];
    let said = failure(
        call_in(
            &WriteFile,
            &ctx,
            json!({"file_path": "sessions/a.jsonl", "content": "forged"}),
        )
        .await,
    );
    assert!(said.contains("protected"), "{said}");
    assert_eq!(read(&dir, "sessions/a.jsonl"), "{}\n");
}

#[tokio::test]
async fn a_directory_or_a_fifo_is_not_overwritten() {
    let dir = tree(&[("d/x", "")]);
    crate::test_tree::fifo(dir.path(), "pipe");
    assert!(failure(write_file(&dir, "d", "x").await).contains("is a directory"));
    assert!(failure(write_file(&dir, "pipe", "x").await).contains("not a regular file"));
    assert!(failure(write_file(&dir, "d/x/y", "x").await).contains("not a directory"));
}

#[tokio::test]
async fn bad_arguments_say_what_is_wrong() {
    let dir = tree(&[]);
    assert!(failure(write_file(&dir, "", "x").await).contains("file_path is empty"));
    let said = failure(call(&WriteFile, dir.path(), json!({"file_path": "a"})).await);
    assert!(said.contains("missing field `content`"), "{said}");
    let said = failure(call(&WriteFile, dir.path(), json!({"path": "a", "content": ""})).await);
    assert!(said.contains("unknown field `path`"), "{said}");
}

#[tokio::test]
async fn a_parent_swapped_for_a_symlink_out_is_refused_by_the_kernel() {
    // What a racing tool process could do between the check and the
    // open: the beneath open sees a symlink where a directory was.
    let dir = tree(&[("sub/keep", "")]);
    let outside = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    std::fs::remove_dir_all(dir.path().join("sub")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let target = write_target::resolve(&workspace, "sub/new/file.txt", &[]).unwrap();
    std::fs::remove_dir(dir.path().join("sub")).unwrap();
    symlink(outside.path(), dir.path(), "sub");
    // The parent fd was opened before the swap: the write lands in the
    // directory that was checked (now unlinked), never outside.
    let _ = target.write(b"x", None);
    assert_eq!(names(outside.path()), Vec::<String>::new());
}

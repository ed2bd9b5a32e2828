//! Real directory trees for the file tools' tests, and one way to call a
//! tool on them. Test-only.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::tool::{Tool, ToolContext, ToolError};

/// A temporary directory holding `files`: (root-relative path, contents).
/// A path ending in `/` makes an empty directory.
pub(crate) fn tree(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, contents) in files {
        write(dir.path(), path, contents.as_bytes());
    }
    dir
}

/// Writes `contents` at `root/path`, creating parent directories; a path
/// ending in `/` makes a directory instead.
pub(crate) fn write(root: &Path, path: &str, contents: &[u8]) {
    let full = root.join(path);
    if path.ends_with('/') {
        fs::create_dir_all(&full).unwrap();
        return;
    }
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(&full, contents).unwrap();
}

/// A file of `lines` numbered lines (`line 1 of filler text ...`), about
/// 50 bytes each, written in chunks so the test never holds it whole.
pub(crate) fn write_huge(path: &Path, lines: usize) {
    let mut file = std::io::BufWriter::new(fs::File::create(path).unwrap());
    for i in 1..=lines {
        writeln!(file, "line {i} of filler text, the same on every line").unwrap();
    }
    file.flush().unwrap();
}

/// `target` linked at `root/link`.
pub(crate) fn symlink(target: &Path, root: &Path, link: &str) {
    std::os::unix::fs::symlink(target, root.join(link)).unwrap();
}

/// A named pipe at `root/name`: a read of it blocks until someone writes.
pub(crate) fn fifo(root: &Path, name: &str) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join(name),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .unwrap();
}

/// The canonical root, as error messages name it.
pub(crate) fn root_of(dir: &TempDir) -> PathBuf {
    dir.path().canonicalize().unwrap()
}

/// Calls `tool` in workspace `dir` with `arguments`.
pub(crate) async fn call(
    tool: &dyn Tool,
    dir: &Path,
    arguments: serde_json::Value,
) -> Result<String, ToolError> {
    call_in(tool, &ToolContext::new(dir), arguments).await
}

/// Calls `tool` under `ctx` with `arguments`.
pub(crate) async fn call_in(
    tool: &dyn Tool,
    ctx: &ToolContext,
    arguments: serde_json::Value,
) -> Result<String, ToolError> {
    tool.call(arguments, ctx).await.map(|output| output.text)
}

/// The message of a failed call (panics on success, for tests).
pub(crate) fn failure(result: Result<String, ToolError>) -> String {
    match result {
        Ok(text) => panic!("expected an error, got output:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Every way a model could name something outside the workspace: each must
/// be refused with a message naming `root`. Makes the links it needs in
/// `dir` (a file and a directory outside, linked from inside).
pub(crate) fn escapes(dir: &TempDir, outside: &TempDir) -> Vec<(String, String)> {
    write(outside.path(), "secret.txt", b"secret\n");
    write(outside.path(), "sub/inner.txt", b"secret\n");
    symlink(&outside.path().join("secret.txt"), dir.path(), "file_link");
    symlink(outside.path(), dir.path(), "dir_link");
    let root = root_of(dir);
    let root = root.display();
    let outside_abs = outside.path().join("secret.txt");
    let outside_abs = outside_abs.to_string_lossy().into_owned();
    let out =
        |p: &str| format!("paths are relative to the workspace root {root}; `{p}` is outside it");
    let link = |p: &str| {
        format!(
            "paths are relative to the workspace root {root}; `{p}` is outside it (a symlink in it leads out of the workspace)"
        )
    };
    vec![
        ("../".to_owned(), out("../")),
        ("../../etc/passwd".to_owned(), out("../../etc/passwd")),
        ("/etc/passwd".to_owned(), out("/etc/passwd")),
        (outside_abs.clone(), out(&outside_abs)),
        ("file_link".to_owned(), link("file_link")),
        ("dir_link".to_owned(), link("dir_link")),
        ("dir_link/sub".to_owned(), link("dir_link/sub")),
        (
            "dir_link/missing.txt".to_owned(),
            link("dir_link/missing.txt"),
        ),
    ]
}

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::*;
use crate::beneath::Opened;
use crate::test_tree::{escapes, fifo, root_of, symlink, tree};

fn walked(workspace: &Workspace, start: &str) -> Vec<String> {
    let start = workspace.resolve(start).unwrap();
    workspace
        .walk(&start)
        .map(|entry| workspace.display(&workspace.root().join(entry.unwrap().relative())))
        .collect()
}

#[test]
fn a_relative_path_resolves_to_its_canonical_path_inside_the_root() {
    let dir = tree(&[("src/lib.rs", "")]);
    let workspace = Workspace::new(dir.path()).unwrap();
    let root = root_of(&dir);
    assert_eq!(workspace.root(), root.as_path());
    assert_eq!(
        workspace.resolve("src/lib.rs").unwrap(),
        root.join("src/lib.rs")
    );
    assert_eq!(
        workspace.resolve("./src/../src/lib.rs").unwrap(),
        root.join("src/lib.rs")
    );
    assert_eq!(workspace.resolve("").unwrap(), root);
    assert_eq!(workspace.resolve(".").unwrap(), root);
}

#[test]
fn an_absolute_path_inside_the_root_is_accepted() {
    let dir = tree(&[("a.txt", "")]);
    let workspace = Workspace::new(dir.path()).unwrap();
    let absolute = root_of(&dir).join("a.txt");
    assert_eq!(
        workspace.resolve(absolute.to_str().unwrap()).unwrap(),
        absolute
    );
}

#[test]
fn an_absolute_path_spelt_through_the_configured_root_is_accepted() {
    // The configured root goes through a symlink (as /tmp does on macOS):
    // a path spelt with it is inside, not outside.
    let real = tree(&[("ws/a.txt", "")]);
    let links = tree(&[]);
    symlink(&real.path().join("ws"), links.path(), "ws_link");
    let configured = links.path().join("ws_link");
    let workspace = Workspace::new(&configured).unwrap();
    let spelt = configured.join("a.txt");
    assert_eq!(
        workspace.resolve(spelt.to_str().unwrap()).unwrap(),
        root_of(&real).join("ws/a.txt")
    );
}

#[test]
fn every_way_out_of_the_root_is_refused_with_a_message_naming_the_root() {
    let dir = tree(&[("a.txt", "")]);
    let outside = tree(&[]);
    let workspace = Workspace::new(dir.path()).unwrap();
    for (path, expected) in escapes(&dir, &outside) {
        let err = workspace.resolve(&path).unwrap_err();
        assert_eq!(err.to_string(), expected, "path {path}");
        assert!(
            matches!(
                err,
                WorkspaceError::Outside { .. } | WorkspaceError::SymlinkOutside { .. }
            ),
            "{err:?}"
        );
    }
}

#[test]
fn dot_dot_is_applied_before_the_check() {
    // `../<root name>/a.txt` climbs out and back in: it names a file inside.
    let dir = tree(&[("a.txt", "")]);
    let workspace = Workspace::new(dir.path()).unwrap();
    let name = root_of(&dir)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        workspace.resolve(&format!("../{name}/a.txt")).unwrap(),
        root_of(&dir).join("a.txt")
    );
    // Out by spelling, even through a file that exists: refused as outside,
    // whatever exists there.
    let err = workspace.resolve("a.txt/../../x").unwrap_err();
    assert!(matches!(err, WorkspaceError::Outside { .. }), "{err:?}");
}

#[test]
fn a_symlink_that_stays_inside_resolves_to_its_target() {
    let dir = tree(&[("real/a.txt", "")]);
    symlink(&dir.path().join("real"), dir.path(), "alias");
    let workspace = Workspace::new(dir.path()).unwrap();
    assert_eq!(
        workspace.resolve("alias/a.txt").unwrap(),
        root_of(&dir).join("real/a.txt")
    );
}

#[test]
fn a_missing_path_is_named_with_the_root() {
    let dir = tree(&[("a.txt", "")]);
    let workspace = Workspace::new(dir.path()).unwrap();
    let root = root_of(&dir);
    for path in ["missing.txt", "no/such/dir", "a.txt/below_a_file"] {
        let err = workspace.resolve(path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "no such file or directory: `{path}` (relative to the workspace root {})",
                root.display()
            )
        );
    }
}

#[test]
fn a_dangling_symlink_inside_is_a_missing_path() {
    let dir = tree(&[]);
    symlink(&dir.path().join("gone"), dir.path(), "dangling");
    let workspace = Workspace::new(dir.path()).unwrap();
    let err = workspace.resolve("dangling").unwrap_err();
    assert!(matches!(err, WorkspaceError::NotFound { .. }), "{err:?}");
}

#[test]
fn a_root_that_is_missing_or_a_file_is_refused() {
    let dir = tree(&[("file.txt", "")]);
    let err = Workspace::new(dir.path().join("missing")).unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "the workspace root {} cannot be used: ",
            dir.path().join("missing").display()
        )),
        "{err}"
    );
    let err = Workspace::new(dir.path().join("file.txt")).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the workspace root {} is not a directory",
            root_of(&dir).join("file.txt").display()
        )
    );
}

#[test]
fn paths_are_displayed_relative_to_the_root() {
    let dir = tree(&[("dé/ñ 文件.txt", "")]);
    let workspace = Workspace::new(dir.path()).unwrap();
    let resolved = workspace.resolve("dé/ñ 文件.txt").unwrap();
    assert_eq!(workspace.display(&resolved), "dé/ñ 文件.txt");
    assert_eq!(workspace.display(workspace.root()), ".");
    assert_eq!(
        workspace.display(&PathBuf::from("/elsewhere/x")),
        "/elsewhere/x"
    );
}

#[test]
fn a_workspace_error_becomes_a_tool_failure_with_the_same_message() {
    let dir = tree(&[]);
    let workspace = Workspace::new(dir.path()).unwrap();
    let err = workspace.resolve("../x").unwrap_err();
    let message = err.to_string();
    assert_eq!(ToolError::from(err), ToolError::Failed(message));
}

#[test]
fn the_walk_applies_ignore_files_from_the_root_down_to_a_subdirectory() {
    let dir = tree(&[
        (".gitignore", "*.log\n"),
        ("sub/.ignore", "skip.txt\n"),
        ("sub/a.txt", ""),
        ("sub/a.log", ""),
        ("sub/skip.txt", ""),
        ("sub/deeper/b.txt", ""),
        ("sibling/c.txt", ""),
    ]);
    let workspace = Workspace::new(dir.path()).unwrap();
    assert_eq!(
        walked(&workspace, "sub"),
        vec!["sub", "sub/a.txt", "sub/deeper", "sub/deeper/b.txt"]
    );
}

#[test]
fn the_walk_ignores_ignore_files_above_the_root() {
    let outer = tree(&[(".gitignore", "*.txt\nws/\n"), ("ws/a.txt", "")]);
    let workspace = Workspace::new(outer.path().join("ws")).unwrap();
    assert_eq!(walked(&workspace, "."), vec![".", "a.txt"]);
}

#[test]
fn the_walk_skips_hidden_entries_but_enters_a_hidden_or_ignored_start() {
    let dir = tree(&[
        (".gitignore", "build/\n"),
        (".hidden/a.txt", ""),
        (".env", ""),
        ("build/out.txt", ""),
        ("b.txt", ""),
    ]);
    let workspace = Workspace::new(dir.path()).unwrap();
    assert_eq!(walked(&workspace, "."), vec![".", "b.txt"]);
    assert_eq!(
        walked(&workspace, ".hidden"),
        vec![".hidden", ".hidden/a.txt"]
    );
    assert_eq!(walked(&workspace, "build"), vec!["build", "build/out.txt"]);
    assert_eq!(walked(&workspace, ".env"), vec![".env"]);
}

#[test]
fn the_walk_does_not_follow_symlinks() {
    let dir = tree(&[("a.txt", "")]);
    let outside = tree(&[("secret.txt", "")]);
    symlink(outside.path(), dir.path(), "out");
    let workspace = Workspace::new(dir.path()).unwrap();
    assert_eq!(walked(&workspace, "."), vec![".", "a.txt", "out"]);
}

#[test]
fn open_says_what_the_fd_is_not_what_the_name_was() {
    let dir = tree(&[("a.txt", "text"), ("sub/", "")]);
    fifo(dir.path(), "pipe");
    let workspace = Workspace::new(dir.path()).unwrap();
    assert!(matches!(
        workspace.open("a.txt").unwrap().1,
        Opened::File(_)
    ));
    assert!(matches!(
        workspace.open("sub").unwrap().1,
        Opened::Directory(_)
    ));
    assert!(matches!(
        workspace.open("pipe").unwrap().1,
        Opened::Other(crate::beneath::SpecialKind::Fifo)
    ));
}

#[test]
fn open_of_a_path_swapped_for_a_symlink_after_its_check_is_refused() {
    // What a racing tool process does between resolve and open, done here
    // in between by hand: the canonical path now holds a symlink out.
    let dir = tree(&[("a.txt", "inside")]);
    let outside = tree(&[("secret.txt", "secret")]);
    let workspace = Workspace::new(dir.path()).unwrap();
    let canonical = workspace.resolve("a.txt").unwrap();
    std::fs::remove_file(&canonical).unwrap();
    symlink(&outside.path().join("secret.txt"), dir.path(), "a.txt");
    let relative = canonical.strip_prefix(workspace.root()).unwrap();
    let err = crate::beneath::open(workspace.root_fd.as_ref(), relative).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
    assert!(matches!(
        workspace.open_failed("a.txt", err),
        WorkspaceError::Changed { .. }
    ));
}

#[test]
fn a_symlink_to_a_directory_outside_is_refused_even_by_a_path_beneath_the_root_fd() {
    // RESOLVE_BENEATH: `..` and absolute symlinks cannot leave the fd.
    let dir = tree(&[("sub/a.txt", "")]);
    let workspace = Workspace::new(dir.path()).unwrap();
    for path in ["..", "sub/../..", "/etc/passwd"] {
        let err = crate::beneath::open(workspace.root_fd.as_ref(), std::path::Path::new(path))
            .unwrap_err();
        // EAGAIN: a `..` met a rename elsewhere on the system (a test
        // racing in parallel) and the kernel refused rather than risk it.
        assert!(
            matches!(err.raw_os_error(), Some(libc::EXDEV | libc::EAGAIN)),
            "{path}: {err}"
        );
    }
}

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::test_tree::{fifo, symlink, tree};

fn root(dir: &tempfile::TempDir) -> OwnedFd {
    open_root(dir.path()).unwrap()
}

#[test]
fn a_regular_file_is_opened_and_read_through_its_fd() {
    let dir = tree(&[("sub/a.txt", "inside")]);
    let Opened::File(mut file) = open(root(&dir), Path::new("sub/a.txt")).unwrap() else {
        panic!("not a file");
    };
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    assert_eq!(text, "inside");
}

#[test]
fn a_symlink_is_refused_by_the_kernel_even_when_it_stays_inside() {
    let dir = tree(&[("a.txt", "inside"), ("sub/", "")]);
    symlink(&dir.path().join("a.txt"), dir.path(), "alias");
    symlink(&dir.path().join("sub"), dir.path(), "sub_alias");
    let fd = root(&dir);
    for path in ["alias", "sub_alias", "sub_alias/."] {
        let err = open(&fd, Path::new(path)).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{path}: {err}");
    }
    let err = open_file(&fd, OsStr::new("alias")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
    // O_DIRECTORY | O_NOFOLLOW on a symlink: the kernel says "not a directory".
    let err = open_directory(&fd, OsStr::new("sub_alias")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOTDIR));
}

#[test]
fn a_fifo_is_opened_without_blocking_and_reported_not_read() {
    let dir = tree(&[]);
    fifo(dir.path(), "pipe");
    let fd = root(&dir);
    assert!(matches!(
        open(&fd, Path::new("pipe")).unwrap(),
        Opened::Other(SpecialKind::Fifo)
    ));
    assert!(matches!(
        open_file(&fd, OsStr::new("pipe")).unwrap(),
        Err(Some(SpecialKind::Fifo))
    ));
}

#[test]
fn a_walk_step_must_be_one_name() {
    let dir = tree(&[("sub/a.txt", "")]);
    let fd = root(&dir);
    for name in ["", ".", "..", "sub/a.txt", "/etc"] {
        let err = open_file(&fd, OsStr::new(name)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{name:?}");
    }
}

#[test]
fn entries_come_sorted_with_their_kinds_and_symlinks_unfollowed() {
    let dir = tree(&[("b.txt", ""), ("a/", "")]);
    symlink(Path::new("/etc"), dir.path(), "c");
    fifo(dir.path(), "d");
    assert_eq!(
        entries(root(&dir)).unwrap(),
        vec![
            ("a".into(), EntryKind::Directory),
            ("b.txt".into(), EntryKind::File),
            ("c".into(), EntryKind::Symlink),
            ("d".into(), EntryKind::Other),
        ]
    );
}

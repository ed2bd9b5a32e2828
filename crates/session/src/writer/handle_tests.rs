use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::*;

fn created(path: &Path) -> File {
    OpenOptions::new()
        .append(true)
        .create_new(true)
        .open(path)
        .unwrap()
}

fn append(handle: &mut FileHandle, path: &Path, text: &str) -> Result<(), SessionWriterError> {
    handle.with_file(path, |file| {
        file.write_all(text.as_bytes())
            .map_err(|source| SessionWriterError::Write {
                path: path.to_owned(),
                source,
            })
    })
}

/// Descriptors of this process open on files under `dir`.
fn fds_under(dir: &Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter(|target| target.starts_with(dir))
        .count()
}

#[test]
fn files_past_the_cap_are_closed_between_lines_and_keep_every_line_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let count = HELD_SESSION_FILES + 40;
    let mut files: Vec<(std::path::PathBuf, FileHandle)> = (0..count)
        .map(|i| {
            let path = dir.path().join(format!("{i}.jsonl"));
            let handle = FileHandle::new(created(&path)).unwrap();
            (path, handle)
        })
        .collect();
    assert!(
        files.iter().filter(|(_, h)| !h.is_held()).count() >= 40,
        "every file past the cap is closed"
    );
    for round in 0..3 {
        for (path, handle) in &mut files {
            append(handle, path, &format!("line {round}\n")).unwrap();
        }
        assert!(
            fds_under(dir.path()) <= HELD_SESSION_FILES,
            "{} session files open, above the cap",
            fds_under(dir.path())
        );
    }
    for (path, _) in &files {
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            "line 0\nline 1\nline 2\n"
        );
    }
    drop(files);
    assert_eq!(fds_under(dir.path()), 0);
}

#[test]
fn a_file_replaced_under_its_path_is_refused_and_the_new_one_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let mut handle = FileHandle::new(created(&path)).unwrap();
    append(&mut handle, &path, "first\n").unwrap();
    handle.let_go();
    let other = dir.path().join("other");
    std::fs::write(&other, "someone else's\n").unwrap();
    std::fs::rename(&other, &path).unwrap();
    let err = append(&mut handle, &path, "second\n").unwrap_err();
    assert!(err.to_string().contains("was replaced"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "someone else's\n");
}

#[test]
fn a_symlink_swapped_in_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let mut handle = FileHandle::new(created(&path)).unwrap();
    handle.let_go();
    let target = dir.path().join("target");
    std::fs::write(&target, "").unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&target, &path).unwrap();
    // Refused by the open itself (`O_NOFOLLOW`: a link, not "replaced"),
    // not only by the identity check after it.
    let err = append(&mut handle, &path, "line\n").unwrap_err();
    assert!(err.to_string().contains("is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
}

#[test]
fn a_fifo_swapped_in_fails_at_once_instead_of_blocking_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let mut handle = FileHandle::new(created(&path)).unwrap();
    handle.let_go();
    std::fs::remove_file(&path).unwrap();
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // Without a reader, a blocking write-only open of the FIFO would never
    // return; this one returns at once, and the FIFO (which may have been
    // given the removed file's inode number) is refused by its type.
    let err = append(&mut handle, &path, "line\n").unwrap_err();
    assert!(err.to_string().contains("is a FIFO"), "{err}");
}

#[test]
fn a_reopened_file_is_held_again_when_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let mut handle = FileHandle::new(created(&path)).unwrap();
    handle.let_go();
    append(&mut handle, &path, "line\n").unwrap();
    // Room is shared with the other tests of this process: only when
    // there is some can the file be held.
    if HELD.load(Ordering::Acquire) < HELD_SESSION_FILES - 1 {
        assert!(handle.is_held());
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "line\n");
}

use std::io::Write;
use std::os::unix::fs::symlink;

use super::*;

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn fifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

#[test]
fn a_missing_file_reads_as_none_unless_it_must_be_there() {
    let dir = dir();
    let missing = dir.path().join("none");
    assert!(read_capped(&missing, 10).unwrap().is_none());
    assert!(open_read(&missing).unwrap().is_none());
    for err in [
        open_read_existing(&missing).unwrap_err(),
        open_append_existing(&missing).unwrap_err(),
    ] {
        assert!(
            matches!(&err, UntrustedFileError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound),
            "{err}"
        );
    }
    assert!(!missing.exists(), "open_append_existing never creates");
}

#[test]
fn a_file_within_the_cap_is_read_whole_with_its_identity() {
    let dir = dir();
    let path = dir.path().join("f");
    std::fs::write(&path, b"0123456789").unwrap();
    assert_eq!(read_capped(&path, 10).unwrap().unwrap(), b"0123456789");
    let opened = open_read_existing(&path).unwrap();
    assert_eq!(
        opened.identity,
        FileIdentity::of(&File::open(&path).unwrap()).unwrap()
    );
    assert_eq!(read_opened(&path, opened, 10).unwrap(), b"0123456789");
}

#[test]
fn a_file_one_byte_over_the_cap_is_refused_whole() {
    let dir = dir();
    let path = dir.path().join("run.jsonl");
    File::create(&path).unwrap().set_len(4097).unwrap();
    let err = read_capped(&path, 4096).unwrap_err();
    assert!(
        matches!(
            err,
            UntrustedFileError::TooLarge {
                size: 4097,
                cap: 4096,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(read_capped(&path, 4097).unwrap().unwrap().len(), 4097);
}

#[test]
fn a_sparse_file_over_the_cap_is_refused_by_its_size_before_a_read() {
    let dir = dir();
    let path = dir.path().join("big");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(250 << 20)
        .unwrap();
    let err = read_capped(&path, 256 << 10).unwrap_err();
    assert!(
        matches!(err, UntrustedFileError::TooLarge { size, cap, .. } if size == 250 << 20 && cap == 256 << 10),
        "{err}"
    );
    assert!(err.to_string().contains("over the 256K"), "{err}");
}

#[test]
fn a_link_is_refused_even_to_a_regular_file() {
    let dir = dir();
    let target = dir.path().join("target");
    std::fs::write(&target, b"secret").unwrap();
    let link = dir.path().join("link");
    symlink(&target, &link).unwrap();
    let err = read_capped(&link, 100).unwrap_err();
    assert!(matches!(err, UntrustedFileError::Link { .. }), "{err}");
    let dangling = dir.path().join("dangling");
    symlink(dir.path().join("nowhere"), &dangling).unwrap();
    assert!(matches!(
        read_capped(&dangling, 100).unwrap_err(),
        UntrustedFileError::Link { .. }
    ));
    assert_eq!(std::fs::read(&target).unwrap(), b"secret");
}

#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = dir();
    let path = dir.path().join("fifo");
    fifo(&path);
    let err = read_capped(&path, 100).unwrap_err();
    assert!(
        matches!(err, UntrustedFileError::NotRegular { kind: "a FIFO", .. }),
        "{err}"
    );
    // The FIFO's own identity: as if it had been given the inode number of
    // the file expected, removed before it was made.
    let reused = FileIdentity::at(&path).unwrap().unwrap();
    for err in [
        open_append(&path).unwrap_err(),
        open_append_existing(&path).unwrap_err(),
        open_append_same(&path, reused).unwrap_err(),
    ] {
        assert!(
            matches!(err, UntrustedFileError::NotRegular { kind: "a FIFO", .. }),
            "{err}"
        );
    }
}

#[test]
fn dev_zero_named_itself_is_refused_before_a_byte_is_read() {
    let err = read_capped(Path::new("/dev/zero"), 1024).unwrap_err();
    assert!(
        matches!(
            err,
            UntrustedFileError::NotRegular {
                kind: "a character device",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn a_directory_says_what_it_is() {
    let dir = dir();
    let err = read_capped(dir.path(), 1024).unwrap_err();
    assert!(
        matches!(
            err,
            UntrustedFileError::NotRegular {
                kind: "a directory",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_link_to_dev_zero_is_refused() {
    let dir = dir();
    let link = dir.path().join("zero");
    symlink("/dev/zero", &link).unwrap();
    assert!(matches!(
        read_capped(&link, 100).unwrap_err(),
        UntrustedFileError::Link { .. }
    ));
    for err in [
        open_append(&link).unwrap_err(),
        open_append_existing(&link).unwrap_err(),
    ] {
        assert!(matches!(err, UntrustedFileError::Link { .. }), "{err}");
    }
}

#[test]
fn open_append_creates_a_missing_file_and_says_so() {
    let dir = dir();
    let path = dir.path().join("results.jsonl");
    let opened = open_append(&path).unwrap();
    assert!(opened.created);
    assert!(opened.identity.still_named_by(&path).unwrap());
    let again = open_append(&path).unwrap();
    assert!(!again.created);
    assert_eq!(again.identity, opened.identity);
}

#[test]
fn open_append_refuses_a_link_and_leaves_its_target_alone() {
    let dir = dir();
    let outside = dir.path().join("outside");
    std::fs::write(&outside, b"precious\n").unwrap();
    let link = dir.path().join("results.jsonl");
    symlink(&outside, &link).unwrap();
    for err in [
        open_append(&link).unwrap_err(),
        open_append_existing(&link).unwrap_err(),
        open_append_same(
            &link,
            FileIdentity::of(&File::open(&outside).unwrap()).unwrap(),
        )
        .unwrap_err(),
    ] {
        assert!(matches!(err, UntrustedFileError::Link { .. }), "{err}");
    }
    let dangling = dir.path().join("dangling.jsonl");
    symlink(dir.path().join("made-through-the-link"), &dangling).unwrap();
    assert!(open_append(&dangling).is_err());
    assert!(!dir.path().join("made-through-the-link").exists());
    assert_eq!(std::fs::read(&outside).unwrap(), b"precious\n");
}

#[test]
fn a_file_renamed_over_the_path_changes_its_identity() {
    let dir = dir();
    let path = dir.path().join("results.jsonl");
    let opened = open_append(&path).unwrap();
    let forged = dir.path().join("forged");
    std::fs::write(&forged, b"{}\n").unwrap();
    std::fs::rename(&forged, &path).unwrap();
    assert!(!opened.identity.still_named_by(&path).unwrap());
    let err = open_append_same(&path, opened.identity).unwrap_err();
    assert!(matches!(err, UntrustedFileError::Replaced { .. }), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"{}\n");
    std::fs::remove_file(&path).unwrap();
    assert!(!opened.identity.still_named_by(&path).unwrap());
}

#[test]
fn open_append_same_appends_to_the_file_expected() {
    let dir = dir();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, b"first\n").unwrap();
    let identity = open_read_existing(&path).unwrap().identity;
    let mut file = open_append_same(&path, identity).unwrap();
    file.write_all(b"second\n").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"first\nsecond\n");
}

#[test]
fn create_temp_removes_a_planted_link_instead_of_writing_through_it() {
    let dir = dir();
    let outside = dir.path().join("outside");
    std::fs::write(&outside, b"precious\n").unwrap();
    let temp = dir.path().join(".out.merge-1.tmp");
    symlink(&outside, &temp).unwrap();
    assert!(create_new(&temp).is_err(), "O_EXCL must refuse the link");
    let mut file = create_temp(&temp).unwrap();
    file.write_all(b"merged\n").unwrap();
    assert_eq!(std::fs::read(&outside).unwrap(), b"precious\n");
    assert_eq!(std::fs::read(&temp).unwrap(), b"merged\n");
    assert!(
        !std::fs::symlink_metadata(&temp)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_read_file_is_blocking_again() {
    let dir = dir();
    let path = dir.path().join("f");
    std::fs::write(&path, b"x").unwrap();
    let opened = open_read(&path).unwrap().unwrap();
    assert_eq!(opened.size, 1);
    let flags = OFlag::from_bits_truncate(fcntl(&opened.file, FcntlArg::F_GETFL).unwrap());
    assert!(!flags.contains(OFlag::O_NONBLOCK));
}

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
fn a_missing_file_reads_as_none() {
    let dir = dir();
    assert!(read_capped(&dir.path().join("none"), 10).unwrap().is_none());
}

#[test]
fn a_file_within_the_cap_is_read_whole() {
    let dir = dir();
    let path = dir.path().join("f");
    std::fs::write(&path, b"0123456789").unwrap();
    assert_eq!(read_capped(&path, 10).unwrap().unwrap(), b"0123456789");
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
    let err = open_append(&path).unwrap_err();
    assert!(
        matches!(err, UntrustedFileError::NotRegular { kind: "a FIFO", .. }),
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
    assert!(matches!(
        open_append(&link).unwrap_err(),
        UntrustedFileError::Link { .. }
    ));
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
    assert!(matches!(
        open_append(&link).unwrap_err(),
        UntrustedFileError::Link { .. }
    ));
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
    std::fs::remove_file(&path).unwrap();
    assert!(!opened.identity.still_named_by(&path).unwrap());
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
    let (file, size) = open_read(&path).unwrap().unwrap();
    assert_eq!(size, 1);
    let flags = OFlag::from_bits_truncate(fcntl(&file, FcntlArg::F_GETFL).unwrap());
    assert!(!flags.contains(OFlag::O_NONBLOCK));
}

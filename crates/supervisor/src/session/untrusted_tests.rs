use std::os::unix::fs::symlink;

use super::*;

#[test]
fn a_regular_file_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, "{\"type\":\"log\"}\n").unwrap();
    let (bytes, identity) = read_capped(&path, 1024).unwrap();
    assert_eq!(bytes, b"{\"type\":\"log\"}\n");
    assert_eq!(identity, Identity::of(&File::open(&path).unwrap()).unwrap());
}

#[test]
fn a_symlink_is_refused_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, "secret\n").unwrap();
    let link = dir.path().join("run.jsonl");
    symlink(&target, &link).unwrap();
    let err = read_capped(&link, 1024).unwrap_err();
    assert!(matches!(err, UntrustedError::Symlink { .. }), "{err}");
    assert!(matches!(
        open_append(&link).unwrap_err(),
        UntrustedError::Symlink { .. }
    ));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "secret\n");
}

#[test]
fn a_fifo_is_refused_at_once_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // No writer ever opens it: a blocking open or read would never return.
    let err = read_capped(&fifo, 1024).unwrap_err();
    assert!(
        matches!(err, UntrustedError::NotRegular { kind: "FIFO", .. }),
        "{err}"
    );
    let err = open_append(&fifo).unwrap_err();
    assert!(matches!(err, UntrustedError::NotRegular { .. }), "{err}");
}

#[test]
fn dev_zero_is_refused_before_a_byte_is_read() {
    let err = read_capped(Path::new("/dev/zero"), 1024).unwrap_err();
    assert!(
        matches!(
            err,
            UntrustedError::NotRegular {
                kind: "character device",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn a_file_over_the_cap_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    // Sparse: the size is what counts, not the blocks.
    File::create(&path).unwrap().set_len(4097).unwrap();
    let err = read_capped(&path, 4096).unwrap_err();
    assert!(
        matches!(err, UntrustedError::TooLarge { cap: 4096, .. }),
        "{err}"
    );
    assert_eq!(read_capped(&path, 4097).unwrap().0.len(), 4097);
}

#[test]
fn an_append_to_a_replaced_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, "first\n").unwrap();
    let (_, identity) = read_capped(&path, 1024).unwrap();
    // Renamed over, as a tool would swap a file it wrote.
    let other = dir.path().join("other");
    std::fs::write(&other, "planted\n").unwrap();
    std::fs::rename(&other, &path).unwrap();
    let err = open_append_same(&path, identity).unwrap_err();
    assert!(matches!(err, UntrustedError::Replaced { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "planted\n");
}

#[test]
fn a_directory_and_a_missing_file_say_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_capped(dir.path(), 1024).unwrap_err();
    assert!(
        matches!(
            err,
            UntrustedError::NotRegular {
                kind: "directory",
                ..
            }
        ),
        "{err}"
    );
    let err = read_capped(&dir.path().join("nope"), 1024).unwrap_err();
    assert!(
        matches!(&err, UntrustedError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
        "{err}"
    );
}

use std::os::unix::fs::PermissionsExt;

use super::*;

#[test]
fn a_key_is_made_once_0600_and_read_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config/subagent");
    let first = load_or_create(&config).unwrap();
    let path = config.join(KEY_FILE);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.len(), 65, "{text:?}");
    assert_eq!(load_or_create(&config).unwrap(), first);
    // Nothing else is left in the dir (the temporary file is gone).
    assert_eq!(std::fs::read_dir(&config).unwrap().count(), 1);
}

#[test]
fn processes_making_the_key_at_once_agree_on_one() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("subagent");
    let keys: Vec<SessionKey> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| load_or_create(&config).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(keys.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_key_others_may_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    load_or_create(dir.path()).unwrap();
    let path = dir.path().join(KEY_FILE);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = load_or_create(dir.path()).unwrap_err();
    assert!(err.reason.contains("chmod 600"), "{err}");
}

#[test]
fn a_damaged_or_linked_key_is_refused_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(KEY_FILE);
    std::fs::write(&path, "not a key\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = load_or_create(dir.path()).unwrap_err();
    assert!(err.reason.contains("in hex"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "not a key\n");

    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&path, linked.path().join(KEY_FILE)).unwrap();
    let err = load_or_create(linked.path()).unwrap_err();
    assert!(err.reason.contains("symbolic link"), "{err}");
}

#[test]
fn the_key_never_shows_in_debug() {
    assert_eq!(format!("{:?}", SessionKey::fixed(0xab)), "SessionKey(..)");
}

#[test]
fn hex_round_trips_and_refuses_what_is_not_hex() {
    let bytes = [0u8, 1, 0xab, 0xff];
    let text = hex_encode(&bytes);
    assert_eq!(text, "0001abff");
    let mut out = [0u8; 4];
    assert!(hex_decode(&text, &mut out));
    assert_eq!(out, bytes);
    assert!(!hex_decode("0001ABFF", &mut out));
    assert!(!hex_decode("0001ab", &mut out));
    assert!(!hex_decode("zz01abff", &mut out));
}

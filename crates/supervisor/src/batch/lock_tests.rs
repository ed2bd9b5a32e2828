use pretty_assertions::assert_eq;

use super::*;

const PROC_LOCKS: &str = "\
1: POSIX  ADVISORY  WRITE 999 00:2d:4242 0 EOF
2: FLOCK  ADVISORY  WRITE 1234 00:2d:4242 0 EOF
2: -> FLOCK  ADVISORY  WRITE 777 00:2d:4242 0 EOF
3: FLOCK  ADVISORY  WRITE 55 fd:01:4242 0 EOF
";

#[test]
fn the_holder_of_a_flock_is_read_from_proc_locks_by_device_and_inode() {
    assert_eq!(flock_holder(PROC_LOCKS, 0, 0x2d, 4242), Some(1234));
    assert_eq!(flock_holder(PROC_LOCKS, 0xfd, 1, 4242), Some(55));
    assert_eq!(flock_holder(PROC_LOCKS, 0, 0x2d, 4243), None);
    assert_eq!(flock_holder("", 0, 0x2d, 4242), None);
}

#[test]
fn a_held_results_file_is_refused_naming_this_process_as_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("res.jsonl");
    let held = lock_results_file(&path).unwrap();
    let err = lock_results_file(&path).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!("pid {}", std::process::id())),
        "{text}"
    );
    drop(held);
    assert!(lock_results_file(&path).is_ok());
}

#[test]
fn a_lock_on_a_file_renamed_over_meanwhile_is_taken_on_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("res.jsonl");
    std::fs::write(&path, "old\n").unwrap();
    let old = FileIdentity::of(&File::open(&path).unwrap()).unwrap();
    std::fs::write(dir.path().join("new"), "new\n").unwrap();
    std::fs::rename(dir.path().join("new"), &path).unwrap();
    assert!(!old.still_named_by(&path).unwrap());
    let locked = lock_results_file(&path).unwrap();
    assert!(locked.identity.still_named_by(&path).unwrap());
    assert_eq!(locked.identity, FileIdentity::of(&locked.file).unwrap());
}

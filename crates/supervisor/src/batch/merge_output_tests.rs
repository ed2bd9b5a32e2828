use pretty_assertions::assert_eq;

use super::*;

/// A pid no process has: a child's, once it has been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn the_merged_file_replaces_the_output_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res.jsonl");
    std::fs::write(&out, "{\"id\":\"old\"}\n").unwrap();
    let written = write_merged(&out, &[b"{\"id\":\"a\"}".to_vec()]).unwrap();
    assert_eq!(written, MergeWritten::default());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"id\":\"a\"}\n");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("res.jsonl")]);
}

#[test]
fn a_dead_merges_temporary_file_is_removed_and_a_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res.jsonl");
    let dead = dir.path().join(temp_name("res.jsonl", dead_pid()));
    std::fs::write(&dead, vec![b'x'; 4096]).unwrap();
    // pid 1 lives as long as the machine does.
    let live = dir.path().join(temp_name("res.jsonl", 1));
    std::fs::write(&live, "x").unwrap();
    // Another output's file is not ours to judge.
    let other = dir.path().join(temp_name("other.jsonl", dead_pid()));
    std::fs::write(&other, "x").unwrap();
    let written = write_merged(&out, &[]).unwrap();
    assert_eq!(written.removed_leftovers, vec![dead.clone()]);
    assert!(!dead.exists());
    assert!(live.exists() && other.exists());
}

#[test]
fn a_held_output_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res.jsonl");
    std::fs::write(&out, "{\"id\":\"kept\"}\n").unwrap();
    let _held = lock_results_file(&out).unwrap();
    let err = write_merged(&out, &[b"{\"id\":\"a\"}".to_vec()]).unwrap_err();
    assert!(matches!(err, ResultsError::Locked { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "{\"id\":\"kept\"}\n"
    );
}

#[test]
fn a_link_planted_at_the_temporary_name_is_removed_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res.jsonl");
    let outside = dir.path().join("outside");
    std::fs::write(&outside, "precious\n").unwrap();
    let planted = dir.path().join(temp_name("res.jsonl", std::process::id()));
    std::os::unix::fs::symlink(&outside, &planted).unwrap();
    write_merged(&out, &[b"{\"id\":\"a\"}".to_vec()]).unwrap();
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious\n");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"id\":\"a\"}\n");
    assert!(std::fs::symlink_metadata(&planted).is_err(), "removed");
}

#[test]
fn an_output_that_is_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::write(&outside, "precious\n").unwrap();
    let out = dir.path().join("res.jsonl");
    std::os::unix::fs::symlink(&outside, &out).unwrap();
    let err = write_merged(&out, &[b"{\"id\":\"a\"}".to_vec()]).unwrap_err();
    assert!(err.to_string().contains("is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious\n");
}

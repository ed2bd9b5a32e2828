use std::time::{Duration, Instant};

use super::*;

#[test]
fn a_left_behind_tree_is_removed_leaves_first() {
    let root = tempfile::tempdir().unwrap();
    let cgroup = root.path().join("subagent-1-1");
    std::fs::create_dir_all(cgroup.join("subagent-2-1")).unwrap();
    let left = remove_within(vec![cgroup.clone()], Duration::from_secs(1));
    assert!(left.is_empty() && !cgroup.exists());
}

#[test]
fn a_dir_that_cannot_go_is_given_up_after_the_window() {
    let root = tempfile::tempdir().unwrap();
    let stuck = root.path().join("stuck");
    std::fs::create_dir(&stuck).unwrap();
    // A plain file keeps a plain dir from being removed, as a member keeps
    // a cgroup.
    std::fs::write(stuck.join("member"), "").unwrap();
    let gone = root.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let started = Instant::now();
    let left = remove_within(vec![stuck.clone(), gone.clone()], Duration::from_millis(50));
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!(left, vec![stuck.clone()]);
    assert!(stuck.join("member").exists() && !gone.exists());
}

#[test]
fn a_dir_that_goes_while_retried_is_removed_then() {
    let root = tempfile::tempdir().unwrap();
    let busy = root.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("member"), "").unwrap();
    // The member leaves a little later, as a dying task does.
    let member = busy.join("member");
    let leaver = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        std::fs::remove_file(member).unwrap();
    });
    let left = remove_within(vec![busy.clone()], Duration::from_secs(5));
    leaver.join().unwrap();
    assert!(left.is_empty() && !busy.exists());
}

#[test]
fn own_children_are_this_process_numbered_cgroups_only() {
    let parent = tempfile::tempdir().unwrap();
    for name in [
        "subagent-42-1",
        "subagent-42-17",
        "subagent-42-self",
        "subagent-421-1",
        "subagent-4-1",
        "other",
    ] {
        std::fs::create_dir(parent.path().join(name)).unwrap();
    }
    let mut own = own_children(parent.path(), 42);
    own.sort();
    assert_eq!(
        own,
        vec![
            parent.path().join("subagent-42-1"),
            parent.path().join("subagent-42-17")
        ]
    );
}

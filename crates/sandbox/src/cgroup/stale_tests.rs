//! The stale-cgroup sweep's naming rule, and its leaves-first removal on
//! plain directories standing in for cgroups.

use super::*;

#[test]
fn only_our_naming_scheme_names_an_owner() {
    assert_eq!(stale_owner("subagent-4242-7"), Some(4242));
    assert_eq!(stale_owner("subagent-4242-self"), Some(4242));
    assert_eq!(stale_owner("subagent-4242"), None);
    assert_eq!(stale_owner("subagent-4242-other"), None);
    assert_eq!(stale_owner("subagent-x-1"), None);
    assert_eq!(stale_owner("other-4242-7"), None);
}

#[test]
fn a_stale_tree_is_removed_leaves_first_however_deep() {
    // Removal walks directories only (a cgroup's control files go with its
    // rmdir), so a plain directory tree stands in for cgroupfs here; the
    // real hierarchies are swept in the CLI's suite.
    let root = tempfile::tempdir().unwrap();
    let top = root.path().join("subagent-1-0");
    let deep = top.join("subagent-2-0").join("subagent-3-0");
    fs::create_dir_all(&deep).unwrap();
    fs::create_dir_all(top.join("subagent-2-1")).unwrap();
    let mut removed = Vec::new();
    remove_stale_tree(&top, &mut removed).unwrap();
    assert!(!top.exists());
    assert_eq!(removed.len(), 4, "{removed:?}");
    assert_eq!(removed.first(), Some(&deep));
    assert_eq!(removed.last(), Some(&top));
}

#[test]
fn only_cgroups_of_creators_that_are_gone_are_stale() {
    let root = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    for name in [
        format!("subagent-{dead}-0"),
        format!("subagent-{}-0", std::process::id()),
        "subagent-1-0".to_owned(),
        "user.slice".to_owned(),
    ] {
        fs::create_dir(root.path().join(name)).unwrap();
    }
    assert_eq!(
        stale_children(root.path()),
        vec![root.path().join(format!("subagent-{dead}-0"))]
    );
}

use super::*;

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

#[test]
fn v1_freezer_states_are_read() {
    assert_eq!(FreezerState::parse("FROZEN\n"), Some(FreezerState::Frozen));
    assert_eq!(
        FreezerState::parse("FREEZING\n"),
        Some(FreezerState::Freezing)
    );
    assert_eq!(FreezerState::parse("THAWED"), Some(FreezerState::Thawed));
    assert_eq!(FreezerState::parse(""), None);
}

#[test]
fn a_v1_freeze_is_thawed_when_the_round_ends() {
    // A plain file stands in for `freezer.state`; it reads back what was
    // written, as the real one does once the freeze took hold.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("freezer.state");
    fs::write(&state, "THAWED\n").unwrap();
    let freezer = Freezer::V1 {
        state: state.clone(),
    };
    {
        let _thaw = freezer.freeze().unwrap();
        assert_eq!(read(&state), "FROZEN");
        assert!(freezer.is_frozen());
    }
    assert_eq!(read(&state), "THAWED");
    assert!(!freezer.is_frozen());
}

#[test]
fn a_v2_freeze_that_never_takes_hold_is_thawed_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (freeze, events) = (
        dir.path().join("cgroup.freeze"),
        dir.path().join("cgroup.events"),
    );
    fs::write(&freeze, "0\n").unwrap();
    // A member stuck in uninterruptible sleep: `frozen` stays 0.
    fs::write(&events, "populated 1\nfrozen 0\n").unwrap();
    let freezer = Freezer::V2 {
        freeze: freeze.clone(),
        events: events.clone(),
    };
    {
        let _thaw = freezer.freeze().unwrap();
        assert_eq!(read(&freeze), "1");
        assert!(!freezer.is_frozen());
    }
    assert_eq!(read(&freeze), "0");
    fs::write(&events, "populated 1\nfrozen 1\n").unwrap();
    assert!(freezer.is_frozen());
}

#[test]
fn a_freeze_that_cannot_be_asked_for_needs_no_thaw() {
    let dir = tempfile::tempdir().unwrap();
    let freezer = Freezer::V1 {
        state: dir.path().join("removed").join("freezer.state"),
    };
    assert!(freezer.freeze().is_none());
}

#[test]
fn members_of_nested_cgroups_are_listed_once_across_hierarchies() {
    let root = tempfile::tempdir().unwrap();
    let memory = root.path().join("memory");
    let pids = root.path().join("pids");
    for dir in [&memory, &pids] {
        fs::create_dir_all(dir.join("tool").join("nested")).unwrap();
        fs::write(dir.join("cgroup.procs"), "30\n10\n").unwrap();
        fs::write(dir.join("tool").join("cgroup.procs"), "20\n").unwrap();
        fs::write(dir.join("tool").join("nested").join("cgroup.procs"), "").unwrap();
    }
    fs::write(
        pids.join("tool").join("nested").join("cgroup.procs"),
        "40\n",
    )
    .unwrap();
    let members = CgroupMembers::new(vec![memory, pids], None, None);
    assert_eq!(members.list(), vec![10, 20, 30, 40]);
}

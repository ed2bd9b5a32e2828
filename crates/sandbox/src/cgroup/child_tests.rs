use super::*;

#[test]
fn only_our_naming_scheme_names_an_owner() {
    assert_eq!(stale_owner("subagent-4242-7"), Some(4242));
    assert_eq!(stale_owner("subagent-4242"), None);
    assert_eq!(stale_owner("subagent-x-1"), None);
    assert_eq!(stale_owner("other-4242-7"), None);
}

#[test]
fn counters_and_numbers_are_read_from_cgroup_files() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("pids.events");
    std::fs::write(&events, "max 3\n").unwrap();
    assert_eq!(counter(&events, "max"), 3);
    assert_eq!(counter(&events, "oom_kill"), 0);
    let oom = dir.path().join("memory.oom_control");
    std::fs::write(&oom, "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n").unwrap();
    assert_eq!(counter(&oom, "oom_kill"), 2);
    assert_eq!(counter(&oom, "oom_kill_disable"), 0);
    let failcnt = dir.path().join("memory.failcnt");
    std::fs::write(&failcnt, "17\n").unwrap();
    assert_eq!(number(&failcnt), 17);
    assert_eq!(number(&dir.path().join("missing")), 0);
}

#[test]
fn removal_takes_nested_cgroups_with_it() {
    let kind = match crate::cgroup::cgroup_support() {
        Ok(kind) => kind,
        Err(reason) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI machines have cgroups: {reason}"
            );
            eprintln!("skipping: {reason}");
            return;
        }
    };
    let limits = ResourceLimits {
        memory_bytes: Some(64 << 20),
        pids: Some(8),
        ..ResourceLimits::default()
    };
    let mut setup = ChildCgroup::create(&kind, &limits).unwrap();
    let dirs = setup.cgroup.dirs();
    for dir in &dirs {
        // What a worker killed mid-tool-call leaves: its tool's cgroup.
        fs::create_dir(dir.join("tool")).unwrap();
        fs::create_dir(dir.join("tool").join("nested")).unwrap();
    }
    setup.cgroup.remove().unwrap();
    for dir in &dirs {
        assert!(!dir.exists(), "{} still exists", dir.display());
    }
}

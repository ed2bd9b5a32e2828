use super::*;

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
    // The removal walks directories only (a cgroup's control files go with
    // its rmdir), so a plain directory tree stands in for cgroupfs.
    let root = tempfile::tempdir().unwrap();
    let memory = root.path().join("memory").join("subagent-1-0");
    let pids = root.path().join("pids").join("subagent-1-0");
    let mut cgroup = ChildCgroup {
        layout: Layout::V1 {
            memory: memory.clone(),
            pids: pids.clone(),
            freezer: None,
        },
        members: CgroupMembers::new(Vec::new(), None, None),
        removed: false,
    };
    for dir in [&memory, &pids] {
        // What a worker killed mid-tool-call leaves: its tool's cgroup.
        fs::create_dir_all(dir.join("tool").join("nested")).unwrap();
    }
    cgroup.remove().unwrap();
    for dir in [&memory, &pids] {
        assert!(!dir.exists(), "{} still exists", dir.display());
    }
    assert!(cgroup.removed);
}

#[test]
fn a_peak_that_reached_the_limit_counts_as_a_hit() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, value: &str| fs::write(dir.path().join(name), value).unwrap();
    write("memory.limit_in_bytes", "134217728\n");
    write("memory.max_usage_in_bytes", "134217728\n");
    assert!(peak_reached(
        dir.path(),
        "memory.max_usage_in_bytes",
        "memory.limit_in_bytes"
    ));
    write("memory.max_usage_in_bytes", "99999\n");
    assert!(!peak_reached(
        dir.path(),
        "memory.max_usage_in_bytes",
        "memory.limit_in_bytes"
    ));
    assert!(!peak_reached(
        dir.path(),
        "missing",
        "memory.limit_in_bytes"
    ));
}

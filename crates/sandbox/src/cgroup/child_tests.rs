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

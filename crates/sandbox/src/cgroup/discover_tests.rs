use super::*;

const V1_CGROUP: &str = "\
9:name=systemd:/
8:pids:/
6:freezer:/jobs
4:memory:/jobs/abc
2:cpu,cpuacct:/
0::/
";

const V1_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

#[test]
fn v1_memory_pids_and_freezer_are_found_under_their_mounts() {
    let kind = locate(V1_CGROUP, V1_MOUNTS).unwrap();
    assert_eq!(
        kind,
        CgroupKind::V1 {
            memory: PathBuf::from("/sys/fs/cgroup/memory/jobs/abc"),
            pids: PathBuf::from("/sys/fs/cgroup/pids"),
            freezer: Some(PathBuf::from("/sys/fs/cgroup/freezer/jobs")),
        }
    );
}

#[test]
fn v1_without_a_freezer_mount_does_without() {
    let mounts: String = V1_MOUNTS
        .lines()
        .filter(|l| !l.contains("freezer"))
        .map(|l| format!("{l}\n"))
        .collect();
    let kind = locate(V1_CGROUP, &mounts).unwrap();
    assert!(
        matches!(kind, CgroupKind::V1 { freezer: None, .. }),
        "{kind:?}"
    );
}

#[test]
fn v2_is_used_when_controllers_are_not_on_v1() {
    let own = "0::/user.slice/session-1.scope\n";
    let mounts = "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
    assert_eq!(
        locate(own, mounts).unwrap(),
        CgroupKind::V2 {
            dir: PathBuf::from("/sys/fs/cgroup/user.slice/session-1.scope"),
            leaf: None,
        }
    );
}

#[test]
fn mount_root_is_stripped_from_our_path() {
    let own = "4:memory:/docker/xyz/inner\n8:pids:/docker/xyz\n";
    let mounts = "\
35 31 0:32 /docker/xyz /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
39 31 0:36 /docker/xyz /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
";
    assert_eq!(
        locate(own, mounts).unwrap(),
        CgroupKind::V1 {
            memory: PathBuf::from("/sys/fs/cgroup/memory/inner"),
            pids: PathBuf::from("/sys/fs/cgroup/pids"),
            freezer: None,
        }
    );
}

#[test]
fn our_cgroup_outside_the_mount_is_an_error() {
    let own = "4:memory:/elsewhere\n8:pids:/\n";
    let mounts = "\
35 31 0:32 /docker/xyz /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
";
    let err = locate(own, mounts).unwrap_err();
    assert!(err.contains("outside the cgroup mount"), "{err}");
}

#[test]
fn no_hierarchy_is_an_error_that_says_what_to_do() {
    let err = locate("0::/\n", "31 23 0:28 / /sys rw - sysfs sysfs rw\n").unwrap_err();
    assert!(err.contains("mount cgroup2"), "{err}");
}

#[test]
fn escaped_spaces_in_mount_points_are_decoded() {
    let own = "0::/a\n";
    let mounts = "29 23 0:26 / /mnt/my\\040cgroup rw - cgroup2 cgroup2 rw\n";
    assert_eq!(
        locate(own, mounts).unwrap(),
        CgroupKind::V2 {
            dir: PathBuf::from("/mnt/my cgroup/a"),
            leaf: None,
        }
    );
}

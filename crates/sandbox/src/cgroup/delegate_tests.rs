//! The decision on samples of `/proc/self/cgroup`, `/proc/self/mountinfo`
//! and cgroupfs as each kind of machine shows them.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::cgroup::discover::decide;

/// cgroupfs as a sample machine shows it to a process with pid `pid`.
#[derive(Default)]
struct Sample {
    pid: u32,
    files: HashMap<PathBuf, String>,
    writable: HashSet<PathBuf>,
    parents: HashMap<u32, u32>,
}

impl Sample {
    fn new(pid: u32) -> Self {
        Self {
            pid,
            ..Self::default()
        }
    }

    /// A v2 cgroup at `dir` with these controllers, subtree_control and
    /// members; `cgroup.type` unless it is the root.
    fn v2(mut self, dir: &str, controllers: &str, subtree: &str, procs: &str) -> Self {
        let dir = Path::new(dir);
        for (name, text) in [
            ("cgroup.controllers", controllers),
            ("cgroup.subtree_control", subtree),
            ("cgroup.procs", procs),
            ("cgroup.type", "domain\n"),
        ] {
            self.files.insert(dir.join(name), text.to_string());
        }
        self
    }

    /// Process `pid` whose parent is `parent`.
    fn process(mut self, pid: u32, parent: u32) -> Self {
        self.parents.insert(pid, parent);
        self
    }

    fn root(mut self, dir: &str) -> Self {
        self.files.remove(&Path::new(dir).join("cgroup.type"));
        self
    }

    /// `dir` and its `cgroup.procs` and `cgroup.subtree_control` writable
    /// by us, as `Delegate=yes` makes them for the unit's user.
    fn delegated(mut self, dir: &str) -> Self {
        let dir = Path::new(dir);
        self.writable.insert(dir.to_owned());
        self.writable.insert(dir.join("cgroup.procs"));
        self.writable.insert(dir.join("cgroup.subtree_control"));
        self
    }
}

impl CgroupFacts for Sample {
    fn pid(&self) -> u32 {
        self.pid
    }

    fn read(&self, path: &Path) -> Result<String, String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| format!("cannot read {}: No such file", path.display()))
    }

    fn exists(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }

    fn writable(&self, path: &Path) -> Result<(), String> {
        if self.writable.contains(path) {
            Ok(())
        } else {
            Err("EACCES: Permission denied".to_string())
        }
    }

    fn parent_of(&self, pid: u32) -> Option<u32> {
        self.parents.get(&pid).copied()
    }
}

const PURE_V2_MOUNTS: &str = "\
24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
29 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

const SCOPE: &str =
    "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope";

/// `/proc/self/cgroup` of a process in [`SCOPE`].
const SCOPE_OWN: &str = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n";

/// Pid 4242 in [`SCOPE`], delegated to it, with these controllers and
/// members.
fn delegated_scope(controllers: &str, procs: &str) -> Sample {
    Sample::new(4242)
        .v2(SCOPE, controllers, "\n", procs)
        .delegated(SCOPE)
}

/// What [`decide`] picks for [`SCOPE`]: the scope, through a leaf of ours.
fn scope_through_leaf() -> CgroupKind {
    CgroupKind::V2 {
        dir: PathBuf::from(SCOPE),
        leaf: Some(PathBuf::from(SCOPE).join("subagent-4242-self")),
    }
}

#[test]
fn a_delegated_systemd_scope_holding_only_us_is_used_through_a_leaf() {
    let facts = delegated_scope("cpu memory pids\n", "4242\n");
    assert_eq!(
        decide(SCOPE_OWN, PURE_V2_MOUNTS, &facts).unwrap(),
        scope_through_leaf()
    );
}

#[test]
fn a_session_scope_owned_by_root_is_not_ours_and_the_error_says_how_to_get_one() {
    let dir = "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope";
    let own = "0::/user.slice/user-1000.slice/session-3.scope\n";
    let facts = Sample::new(4242).v2(dir, "memory pids\n", "\n", "1200\n4242\n");
    let err = decide(own, PURE_V2_MOUNTS, &facts).unwrap_err();
    assert!(err.contains("not writable"), "{err}");
    assert!(
        err.contains("systemd-run --user --scope -p Delegate=yes"),
        "{err}"
    );
}

#[test]
fn a_delegated_scope_that_also_holds_a_shell_is_left_alone() {
    // The shell ran us: our parent, not one of ours.
    let facts = delegated_scope("memory pids\n", "1200\n4242\n")
        .process(4242, 1200)
        .process(1200, 900);
    let err = decide(SCOPE_OWN, PURE_V2_MOUNTS, &facts).unwrap_err();
    assert!(err.contains("not ours (1200)"), "{err}");
    assert!(err.contains("not a shell"), "{err}");
}

#[test]
fn a_delegated_scope_holding_us_and_a_probe_we_started_is_used() {
    // The Python probe through a pyenv shim: our child and grandchild.
    let facts = delegated_scope("memory pids\n", "4242\n4250\n4251\n")
        .process(4242, 900)
        .process(4250, 4242)
        .process(4251, 4250);
    assert_eq!(
        decide(SCOPE_OWN, PURE_V2_MOUNTS, &facts).unwrap(),
        scope_through_leaf()
    );
}

#[test]
fn a_process_outside_our_pid_namespace_is_not_ours() {
    // cgroup.procs lists a process our pid namespace cannot see as 0.
    let facts = delegated_scope("memory pids\n", "0\n4242\n").process(0, 4242);
    let err = decide(SCOPE_OWN, PURE_V2_MOUNTS, &facts).unwrap_err();
    assert!(err.contains("not ours (0)"), "{err}");
}

#[test]
fn a_scope_whose_procs_we_cannot_write_is_not_delegated() {
    let mut facts = delegated_scope("memory pids\n", "4242\n");
    facts
        .writable
        .remove(&Path::new(SCOPE).join("cgroup.subtree_control"));
    let err = decide(SCOPE_OWN, PURE_V2_MOUNTS, &facts).unwrap_err();
    assert!(
        err.contains("cgroup.subtree_control is not writable"),
        "{err}"
    );
}

#[test]
fn a_scope_without_memory_and_pids_says_what_it_offers() {
    let facts = delegated_scope("cpu\n", "4242\n");
    let err = decide(SCOPE_OWN, PURE_V2_MOUNTS, &facts).unwrap_err();
    assert!(err.contains("(it offers: cpu)"), "{err}");
}

const V1_ONLY_CGROUP: &str = "\
9:name=systemd:/user.slice/user-1000.slice/session-2.scope
8:pids:/user.slice/user-1000.slice/session-2.scope
4:memory:/user.slice
";

const V1_ONLY_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
";

#[test]
fn cgroup_v1_only_is_used_where_writable_and_never_moves_us() {
    let mut facts = Sample::new(4242);
    for dir in [
        "/sys/fs/cgroup/memory/user.slice",
        "/sys/fs/cgroup/pids/user.slice/user-1000.slice/session-2.scope",
    ] {
        facts.writable.insert(PathBuf::from(dir));
    }
    assert_eq!(
        decide(V1_ONLY_CGROUP, V1_ONLY_MOUNTS, &facts).unwrap(),
        CgroupKind::V1 {
            memory: PathBuf::from("/sys/fs/cgroup/memory/user.slice"),
            pids: PathBuf::from("/sys/fs/cgroup/pids/user.slice/user-1000.slice/session-2.scope"),
            freezer: None,
        }
    );
    let err = decide(V1_ONLY_CGROUP, V1_ONLY_MOUNTS, &Sample::new(4242)).unwrap_err();
    assert!(
        err.contains("/sys/fs/cgroup/memory/user.slice is not writable"),
        "{err}"
    );
}

/// A hybrid machine whose controllers are all bound to v1, so the unified
/// hierarchy offers none of them (as on the machine this was written on).
#[test]
fn a_hybrid_machine_uses_v1_and_not_its_empty_unified_hierarchy() {
    let own = "8:pids:/\n6:freezer:/\n4:memory:/jobs/abc\n0::/\n";
    let mounts = "\
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    let mut facts = Sample::new(4242)
        .v2("/sys/fs/cgroup/unified", "hugetlb\n", "\n", "4242\n")
        .delegated("/sys/fs/cgroup/unified")
        .root("/sys/fs/cgroup/unified");
    for dir in ["/sys/fs/cgroup/memory/jobs/abc", "/sys/fs/cgroup/pids"] {
        facts.writable.insert(PathBuf::from(dir));
    }
    assert_eq!(
        decide(own, mounts, &facts).unwrap(),
        CgroupKind::V1 {
            memory: PathBuf::from("/sys/fs/cgroup/memory/jobs/abc"),
            pids: PathBuf::from("/sys/fs/cgroup/pids"),
            freezer: None,
        }
    );
}

#[test]
fn a_container_at_its_cgroup_namespace_root_moves_into_a_leaf() {
    // The namespace root shows as `/` but is not the host's root: it has a
    // `cgroup.type`, and the no-internal-process rule applies to it.
    let mounts = "612 610 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
    let facts = Sample::new(1)
        .v2("/sys/fs/cgroup", "cpu io memory pids\n", "\n", "1\n")
        .delegated("/sys/fs/cgroup");
    assert_eq!(
        decide("0::/\n", mounts, &facts).unwrap(),
        CgroupKind::V2 {
            dir: PathBuf::from("/sys/fs/cgroup"),
            leaf: Some(PathBuf::from("/sys/fs/cgroup/subagent-1-self")),
        }
    );
}

#[test]
fn the_root_cgroup_is_used_as_it_is_whoever_else_is_in_it() {
    let facts = Sample::new(4242)
        .v2("/sys/fs/cgroup", "cpu memory pids\n", "\n", "1\n2\n4242\n")
        .delegated("/sys/fs/cgroup")
        .root("/sys/fs/cgroup");
    assert_eq!(
        decide("0::/\n", PURE_V2_MOUNTS, &facts).unwrap(),
        CgroupKind::V2 {
            dir: PathBuf::from("/sys/fs/cgroup"),
            leaf: None,
        }
    );
}

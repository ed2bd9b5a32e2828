//! Paying the first cgroup migration's wait early, off a child's start.
//!
//! Every write to a `cgroup.procs` takes the kernel's global
//! `cgroup_threadgroup_rwsem` for writing. After a quiet moment that lock
//! first waits for an RCU grace period (measured here: 7 to 23 ms; the
//! writes that follow within about one grace period take 0.1 ms). A child
//! joins its cgroups in its pre-exec hook, so a supervisor that starts one
//! child after a pause (every one-shot `subagent run`) would wait that long
//! before the child even execs.
//!
//! [`prewarm_attach`] makes the same kind of write at once, moving this
//! process into the cgroup it is already in (the kernel skips tasks whose
//! cgroup does not change), on the chores thread, so the grace period runs
//! while the caller loads its configuration and the child's cgroup is
//! planned behind it on the same thread. Nothing about the children's
//! containment changes: they still join before they exec.
//!
//! It never moves this process anywhere else: the target is read from
//! `/proc/self/cgroup` for the same hierarchy.

use std::fs;
use std::path::PathBuf;

use super::discover::{CgroupKind, cgroup_support_cached};
use crate::chores;

/// Starts a no-op migration of this process on the chores thread when
/// per-child cgroups are available; returns at once. Call it as early as a
/// child is known to be coming. Failures are ignored: the child's own join
/// then simply pays the wait, as it would have anyway.
pub fn prewarm_attach() {
    chores::run(|| {
        let Some(procs) = own_procs_file() else {
            return;
        };
        let _ = fs::write(procs, std::process::id().to_string());
    });
}

/// `cgroup.procs` of the cgroup this process is in, in the hierarchy its
/// children's cgroups are made in.
fn own_procs_file() -> Option<PathBuf> {
    let dir = match cgroup_support_cached().ok()? {
        CgroupKind::V1 { memory, .. } => memory,
        CgroupKind::V2 { dir } => dir,
    };
    Some(dir.join("cgroup.procs"))
}

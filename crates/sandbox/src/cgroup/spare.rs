//! One child cgroup made ahead of time, off the next spawn's path.
//!
//! Making a child's cgroup (a directory in each of three v1 hierarchies and
//! its caps) is about a tenth of a sandboxed spawn of /bin/true here
//! (BENCHMARKS.md). Each time a child takes a cgroup, the chores thread
//! makes the next one with the same caps, so a supervisor starting children
//! one after another (a batch, a busy server) finds it ready. A spare whose
//! caps do not match is removed and a fresh cgroup made on the spot.
//!
//! A spare holds no process and caps nothing until a child joins it; its
//! counters are untouched, so the child's verdict reads as for a new one.
//! [`crate::finish_chores`] removes it at the end of a program; one left by
//! a killed process is removed by the next one's sweep of stale cgroups.

use std::sync::{Mutex, PoisonError};

use super::child::{CgroupSetup, ChildCgroup};
use super::kind::CgroupKind;
use crate::chores;
use crate::spec::ResourceLimits;

/// The caps a spare was made with.
type Caps = (Option<u64>, Option<u64>);

static SPARE: Mutex<Option<(Caps, CgroupSetup)>> = Mutex::new(None);

fn caps(limits: &ResourceLimits) -> Caps {
    (limits.memory_bytes, limits.pids)
}

/// A cgroup with `limits`' caps: the spare when it has them, else a new
/// one; either way the next spare is started on the chores thread.
pub(crate) fn take_or_create(
    kind: &CgroupKind,
    limits: &ResourceLimits,
) -> Result<CgroupSetup, String> {
    let spare = SPARE.lock().unwrap_or_else(PoisonError::into_inner).take();
    let setup = match spare {
        Some((made_for, setup)) if made_for == caps(limits) => setup,
        // A spare for other caps is dropped: its Drop removes it.
        _ => ChildCgroup::create(kind, limits)?,
    };
    let (kind, limits) = (kind.clone(), *limits);
    chores::run(move || {
        if let Ok(next) = ChildCgroup::create(&kind, &limits) {
            let previous = SPARE
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .replace((caps(&limits), next));
            drop(previous);
        }
    });
    Ok(setup)
}

/// Removes the spare cgroup, if any, as a program ends. Blocks: called on
/// the chores thread (by [`crate::finish_chores`]), behind the making of a
/// spare still under way.
pub(crate) fn remove_spare() {
    let spare = SPARE.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some((_, setup)) = spare {
        let mut cgroup = setup.cgroup;
        let _ = cgroup.remove();
    }
}

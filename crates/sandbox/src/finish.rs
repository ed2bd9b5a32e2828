//! The sandbox's last word as a program ends: the chores handed over so far
//! finish, the spare cgroup goes, and the cgroups whose removal timed out
//! are tried once more.
//!
//! Without it a program that ends right after its last run can cut a chore
//! short: the forked child of the isolation probe outlives its parent for a
//! moment (a test that checks nothing of a `serve` survives sees it), a
//! dropped cgroup's removal never happens, and a cgroup whose removal took
//! longer than its window stays for good when no later program sweeps.
//! Here only: called by the binaries' `main`, never from library code.

use std::time::Duration;

use crate::{cgroup, chores};

/// How long the end of a program waits for its chores, at most: the
/// left-behind retry alone may take five seconds.
const FINISH_WAIT: Duration = Duration::from_secs(10);

/// Waits (at most ten seconds) for every chore handed over so far, then
/// removes the spare cgroup and retries the cgroups left behind. Returns at
/// once in a program that never started the chores thread. Blocks: call it
/// off any async runtime, as the last thing before exiting.
pub fn finish_chores() {
    if !chores::started() {
        return;
    }
    let (done, finished) = std::sync::mpsc::channel();
    // The chores thread runs its jobs in order: this one runs after all
    // that were queued before it.
    chores::run(move || {
        cgroup::remove_spare();
        cgroup::retry::retry_left_behind();
        let _ = done.send(());
    });
    let _ = finished.recv_timeout(FINISH_WAIT);
}

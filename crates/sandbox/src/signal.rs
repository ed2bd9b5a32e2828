//! Signalling a process found by its pid (in a `/proc` scan, in a cgroup's
//! member list) without hitting a stranger that took the pid over between
//! the reading and the signal: the pid is freed once the process is reaped,
//! by its parent or by init, and the kernel hands it to the next fork.
//!
//! The pid is first turned into a [`Handle`] (a pidfd where the kernel has
//! them, else the bare pid), then checked to still be the process that was
//! meant (same start time, or still listed in the cgroup), and only then
//! signalled through the handle. With a pidfd nothing can come between the
//! check and the signal: the pidfd was opened before the check, so when the
//! check finds the process that was meant, the pidfd names that process.
//! With a bare pid (kernels before 5.3) one syscall's gap is left between
//! check and kill; a frozen cgroup closes it for cgroup members, whose
//! processes cannot exit while frozen.

use crate::procfs;
use crate::unix::{self, PidFd, PidFdOpen};

/// A process to signal, taken before it is checked.
#[derive(Debug)]
pub(crate) enum Handle {
    /// A pidfd on whatever process had the pid when it was taken.
    PidFd(PidFd),
    /// No pidfd to be had: the bare pid.
    Pid(u32),
    /// No process had the pid.
    Gone,
}

impl Handle {
    /// A pidfd on `pid` where the kernel has them, else the bare pid.
    pub(crate) fn take(pid: u32) -> Self {
        match unix::open_pidfd(pid) {
            PidFdOpen::Open(fd) => Handle::PidFd(fd),
            PidFdOpen::Unavailable => Handle::Pid(pid),
            PidFdOpen::Gone => Handle::Gone,
        }
    }

    fn send(&self, signal: i32) {
        match self {
            Handle::PidFd(fd) => {
                // Failing here means the process is gone or out of our reach;
                // either way there is nobody else to try.
                let _ = fd.send_signal(signal);
            }
            Handle::Pid(pid) => unix::signal_process(*pid, signal),
            Handle::Gone => {}
        }
    }
}

/// Whether the process that has a pid now is the one that was meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identity {
    /// The same process.
    Same,
    /// Another process took the pid over.
    Reused,
    /// Nobody has the pid (or the process left the cgroup it was found in).
    Gone,
}

/// What became of one signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Sent to the process that was meant.
    Sent,
    /// Not sent: the pid names another process now.
    Spared,
    /// Not sent: the process is gone.
    Gone,
}

/// Compares the start time recorded when a process was chosen with the
/// start time its pid shows now (`None`: no such process). Pid and start
/// time together name one process for the life of the machine.
pub(crate) fn identify(recorded_start: u64, now: Option<u64>) -> Identity {
    match now {
        None => Identity::Gone,
        Some(start) if start == recorded_start => Identity::Same,
        Some(_) => Identity::Reused,
    }
}

/// The membership check: a pid the cgroup still lists after its handle was
/// taken is the member that was meant (a live pid names one process).
pub(crate) fn membership(pid: u32, listed_now: &[u32]) -> Identity {
    if listed_now.contains(&pid) {
        Identity::Same
    } else {
        Identity::Gone
    }
}

/// Sends `signal` through `handle` when `check`, run after the handle was
/// taken, finds the process that was meant.
pub(crate) fn deliver(handle: &Handle, check: impl FnOnce() -> Identity, signal: i32) -> Delivery {
    if matches!(handle, Handle::Gone) {
        return Delivery::Gone;
    }
    match check() {
        Identity::Same => {
            handle.send(signal);
            Delivery::Sent
        }
        Identity::Reused => Delivery::Spared,
        Identity::Gone => Delivery::Gone,
    }
}

/// Sends `signal` to `pid` if it is still the process that started at
/// `start_ticks` (clock ticks since boot, from `/proc/<pid>/stat`).
pub(crate) fn signal_if_same(pid: u32, start_ticks: u64, signal: i32) -> Delivery {
    let handle = Handle::take(pid);
    deliver(
        &handle,
        || identify(start_ticks, procfs::stat(pid).map(|s| s.start_ticks)),
        signal,
    )
}

/// Sends `signal` to each of `listed` (a cgroup's members as read earlier)
/// that `list_again`, read once after every handle was taken, still names.
/// Returns the pids signalled.
pub(crate) fn signal_listed(
    listed: &[u32],
    list_again: impl FnOnce() -> Vec<u32>,
    signal: i32,
) -> Vec<u32> {
    let handles: Vec<(u32, Handle)> = listed.iter().map(|&p| (p, Handle::take(p))).collect();
    let listed_now = list_again();
    handles
        .iter()
        .filter(|(pid, handle)| {
            deliver(handle, || membership(*pid, &listed_now), signal) == Delivery::Sent
        })
        .map(|(pid, _)| *pid)
        .collect()
}

#[cfg(test)]
#[path = "signal_tests.rs"]
mod tests;

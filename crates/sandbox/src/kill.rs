//! Killing a child's whole tree: SIGTERM, a grace period on monotonic time,
//! then SIGKILL, to the process group and every member of the child's cgroup.
//!
//! The first recorded [`KillReason`] wins. No group signal is ever sent once
//! the leader has been reaped: until then the leader's zombie keeps its pid
//! (and so the group id) from being reused by a stranger. The cgroup's
//! members are signalled on the chores thread, the cgroup frozen meanwhile
//! where it can be, each member through a pidfd checked against the cgroup
//! ([`crate::cgroup::members`]), so no pid read from `cgroup.procs` can hit
//! a stranger either.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use subagent_protocol::session::Stream;
use tokio::runtime::Handle;
use tokio::sync::watch;

use crate::cgroup::CgroupMembers;
use crate::chores;
use crate::unix;

/// Why the caller (or the sandbox itself) ended a child.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KillReason {
    /// The wall-clock deadline passed.
    Timeout,
    /// No progress for too long.
    IdleTimeout,
    /// The caller cancelled the run.
    Cancelled,
    /// A stream passed its hard limit.
    OutputLimit(Stream),
    /// The child grew a directory it writes past the caller's cap (the
    /// caller watches the directory; the sandbox only records why).
    DiskLimit,
    /// The caller's end of the child's protocol socket could not be used.
    SocketSetupFailed,
    /// The child never said hello on its protocol socket.
    NoHello,
    /// The child speaks another protocol version.
    ProtocolVersionMismatch,
    /// The child broke its protocol (a bad frame, a message out of order).
    ProtocolViolation,
    /// The child sent more than its protocol byte cap.
    ProtocolOutputLimit,
    /// The child reported its result but did not exit in time.
    LingeredAfterDone,
}

impl KillReason {
    /// The text a [`crate::Termination::Killed`] carries for the reasons
    /// that have no termination of their own.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::IdleTimeout => "idle timeout",
            Self::Cancelled => "cancelled",
            Self::OutputLimit(_) => "output limit",
            Self::DiskLimit => "disk limit",
            Self::SocketSetupFailed => "socket setup failed",
            Self::NoHello => "no hello",
            Self::ProtocolVersionMismatch => "protocol version mismatch",
            Self::ProtocolViolation => "protocol violation",
            Self::ProtocolOutputLimit => "protocol output limit",
            Self::LingeredAfterDone => "worker did not exit after Done",
        }
    }
}

/// Kills a child's tree from anywhere; cheap to clone.
#[derive(Debug, Clone)]
pub struct KillHandle {
    shared: Arc<KillShared>,
}

#[derive(Debug)]
pub(crate) struct KillShared {
    pgid: i32,
    cgroup: Option<CgroupMembers>,
    grace: Duration,
    runtime: Handle,
    state: Mutex<KillState>,
    /// Turns true once the tree is dead and reaped; ends pending escalations.
    gone: watch::Sender<bool>,
}

#[derive(Debug, Default)]
struct KillState {
    reason: Option<KillReason>,
    terminating: bool,
    reaped: bool,
}

impl KillHandle {
    pub(crate) fn new(
        pgid: i32,
        cgroup: Option<CgroupMembers>,
        grace: Duration,
        runtime: Handle,
    ) -> Self {
        Self {
            shared: Arc::new(KillShared {
                pgid,
                cgroup,
                grace,
                runtime,
                state: Mutex::new(KillState::default()),
                gone: watch::Sender::new(false),
            }),
        }
    }

    /// SIGTERM to the whole group and cgroup, then SIGKILL after the grace
    /// period unless the tree is gone by then. Idempotent; the first reason
    /// recorded wins. Returns at once: the escalation runs in the background.
    pub fn terminate(&self, reason: KillReason) {
        let start = {
            let mut state = self.shared.lock();
            state.reason.get_or_insert(reason);
            let start = !state.terminating && !state.reaped;
            state.terminating = true;
            start
        };
        if !start {
            return;
        }
        self.shared.signal_tree(libc::SIGTERM);
        let shared = Arc::clone(&self.shared);
        let mut gone = shared.gone.subscribe();
        self.shared.runtime.spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(shared.grace) => shared.signal_tree(libc::SIGKILL),
                _ = gone.wait_for(|gone| *gone) => {}
            }
        });
    }

    /// SIGKILL the whole tree now; records `reason` if none is recorded yet.
    pub fn kill_now(&self, reason: KillReason) {
        self.shared.lock().reason.get_or_insert(reason);
        self.shared.signal_tree(libc::SIGKILL);
    }

    /// The reason recorded first, if any.
    pub fn reason(&self) -> Option<KillReason> {
        self.shared.lock().reason.clone()
    }

    /// SIGKILL without recording a reason (the drop guard's kill).
    pub(crate) fn kill_silently(&self) {
        self.shared.signal_tree(libc::SIGKILL);
    }

    /// Runs `reap` (which reaps the leader) with signalling shut off for
    /// good, then ends pending escalations.
    pub(crate) fn reap_leader<R>(&self, reap: impl FnOnce() -> R) -> R {
        let result = {
            let mut state = self.shared.lock();
            state.reaped = true;
            reap()
        };
        self.shared.gone.send_replace(true);
        result
    }
}

impl KillShared {
    fn lock(&self) -> MutexGuard<'_, KillState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Signals the process group and every cgroup member, unless the leader
    /// is already reaped. The group signal is one syscall, sent here under
    /// the state lock so reaping cannot interleave; the cgroup's members are
    /// signalled on the chores thread, since that reads and writes cgroupfs
    /// and this may run on the caller's runtime.
    fn signal_tree(&self, signal: i32) {
        {
            let state = self.lock();
            if state.reaped {
                return;
            }
            unix::signal_group(self.pgid, signal);
        }
        if let Some(cgroup) = &self.cgroup {
            let cgroup = cgroup.clone();
            let gone = self.gone.subscribe();
            chores::run(move || {
                // Reaped meanwhile: the reaper has killed and removed it all.
                if !*gone.borrow() {
                    cgroup.signal_all(signal);
                }
            });
        }
    }
}

//! Noticing that a child's leader has exited, on the caller's async
//! runtime, without a thread and (in [`ExitNotice::AfterHangUp`]) without a
//! file descriptor held while it runs.
//!
//! The exit is read through a pidfd, which turns readable when the process
//! exits, registered with the runtime's poller; the status is then taken
//! with `waitid(WNOWAIT)`, so the zombie stays until the cleanup reaps it
//! (it keeps the process-group id from being reused meanwhile, see
//! [`crate::kill`]). A supervisor holding thousands of workers would pay a
//! pidfd each on top of the worker's socket and two pipes; so a worker's
//! pidfd is opened only once a hang-up says the leader has probably exited:
//! the end of either capture task (a process's exit closes its pipes), or
//! the caller's [`ExitHint`] (the worker's protocol socket closing). Until
//! then no descriptor is held. A leader whose descendants inherited every
//! one of its descriptors (a misbehaving worker that forks) exits without
//! a hang-up: for that, the status is also polled with `waitid(WNOHANG)`
//! at an interval growing to [`BACKSTOP_LONGEST`], cheap beside the wait
//! (one syscall a worker every two seconds).
//!
//! Where no pidfd can be had (a kernel before 5.3, no descriptor left), the
//! status is polled at a quicker interval instead. This module must not
//! reap: that is the cleanup's, last.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

use crate::unix::{self, PidFdOpen, RawExit};

/// First and longest pause of the poll without a pidfd: quick for a child
/// that is about to exit, cheap for one that runs for minutes.
const POLL_FIRST: Duration = Duration::from_millis(1);
const POLL_LONGEST: Duration = Duration::from_millis(100);

/// First and longest pause of the backstop poll of an
/// [`ExitNotice::AfterHangUp`] child, which only an exit without a hang-up
/// needs: a late verdict on a misbehaving worker, no cost to the others.
const BACKSTOP_FIRST: Duration = Duration::from_millis(100);
pub(crate) const BACKSTOP_LONGEST: Duration = Duration::from_secs(2);

/// The leader has exited (not yet reaped).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeaderExit {
    /// The status as `waitid` saw it.
    pub(crate) raw: RawExit,
    /// When it was seen.
    pub(crate) at: Instant,
}

/// When a child's exit is watched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExitNotice {
    /// A pidfd from the start: the exit is seen at once, whoever else holds
    /// the child's pipes (a tool's shell leaving a background job).
    #[default]
    Pidfd,
    /// A pidfd only after a hang-up: the end of the child's stdout or
    /// stderr, or [`ExitHint::leader_may_have_exited`]. For children whose
    /// pipes only the leader holds (every process the worker starts gets
    /// pipes of its own), so a hang-up
    /// comes with the exit; the caller's hint covers a leader that closed
    /// its pipes itself.
    AfterHangUp,
}

/// Tells the watch of an [`ExitNotice::AfterHangUp`] child that its leader
/// has probably exited, so it looks. Cheap to clone; a hint too many costs
/// one pidfd, a hint too few leaves the exit unseen until the pipes close.
#[derive(Debug, Clone)]
pub struct ExitHint(Arc<Notify>);

impl ExitHint {
    /// Look now (the caller saw the child's protocol socket close, say).
    pub fn leader_may_have_exited(&self) {
        self.0.notify_one();
    }
}

/// Wakes the watch when dropped: held by each capture task, whose end,
/// whatever its cause, is a hang-up.
#[derive(Debug)]
pub(crate) struct HangUpOnDrop(pub(crate) ExitHint);

impl Drop for HangUpOnDrop {
    fn drop(&mut self) {
        self.0.leader_may_have_exited();
    }
}

/// One leader's exit watch.
#[derive(Debug)]
pub(crate) struct ExitWatch {
    pid: u32,
    /// Opened at the start ([`ExitNotice::Pidfd`]), else after the hang-up.
    pidfd: Option<OwnedFd>,
    notice: ExitNotice,
    hint: ExitHint,
}

impl ExitWatch {
    /// Watches `pid`, our unreaped child: its pid cannot name anyone else
    /// until we reap it, so a pidfd opened from it later is still its own.
    pub(crate) fn new(pid: u32, notice: ExitNotice) -> Self {
        let pidfd = match notice {
            ExitNotice::Pidfd => open(pid),
            ExitNotice::AfterHangUp => None,
        };
        Self {
            pid,
            pidfd,
            notice,
            hint: ExitHint(Arc::new(Notify::new())),
        }
    }

    pub(crate) fn hint(&self) -> ExitHint {
        self.hint.clone()
    }

    /// Resolves once the leader has exited (not reaped); `None` when its
    /// status cannot be read at all (it is not our child any more).
    pub(crate) async fn exited(self) -> Option<LeaderExit> {
        if self.notice == ExitNotice::AfterHangUp {
            tokio::select! {
                () = self.hint.0.notified() => {}
                raw = poll(self.pid, BACKSTOP_FIRST, BACKSTOP_LONGEST) => return seen(raw),
            }
        }
        let raw = match self.pidfd.or_else(|| open(self.pid)) {
            // SAFETY: the AsyncFd owns the OwnedFd, which nothing else
            // closes or replaces while it is registered.
            Some(fd) => match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
                Ok(fd) => wait_readable(&fd, self.pid).await,
                Err(_) => poll(self.pid, POLL_FIRST, POLL_LONGEST).await,
            },
            None => poll(self.pid, POLL_FIRST, POLL_LONGEST).await,
        };
        seen(raw)
    }
}

fn seen(raw: Option<RawExit>) -> Option<LeaderExit> {
    Some(LeaderExit {
        raw: raw?,
        at: Instant::now(),
    })
}

fn open(pid: u32) -> Option<OwnedFd> {
    match unix::open_pidfd(pid) {
        PidFdOpen::Open(fd) => Some(fd.into_fd()),
        PidFdOpen::Gone | PidFdOpen::Unavailable => None,
    }
}

async fn wait_readable(fd: &AsyncFd<OwnedFd>, pid: u32) -> Option<RawExit> {
    loop {
        let mut ready = fd.readable().await.ok()?;
        match unix::exit_status_if_exited(pid) {
            Ok(Some(raw)) => return Some(raw),
            // A wake-up with nothing to report: wait for the next.
            Ok(None) => ready.clear_ready(),
            Err(_) => return None,
        }
    }
}

async fn poll(pid: u32, first: Duration, longest: Duration) -> Option<RawExit> {
    let mut pause = first;
    loop {
        match unix::exit_status_if_exited(pid) {
            Ok(Some(raw)) => return Some(raw),
            Ok(None) => {}
            Err(_) => return None,
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(longest);
    }
}

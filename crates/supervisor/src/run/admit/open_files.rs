//! Whether this process's open-files limit has room for a number of live
//! subagents, checked before a batch starts rather than found out as
//! `EMFILE` in its three-hundredth spawn, recorded as that task's failure.
//!
//! Arithmetic and its message only: the limit is read (and raised at
//! start) by [`subagent_sandbox::raise_open_files_limit`].

use subagent_sandbox::OpenFilesLimit;

use crate::session::writer::HELD_SESSION_FILES;

/// Fds the supervisor holds per live subagent: the protocol socket and the
/// stdout and stderr pipes; a pidfd on the worker is opened only once it
/// hangs up ([`subagent_sandbox::ExitNotice::AfterHangUp`]). Its session
/// file adds one more while the process holds fewer than
/// [`HELD_SESSION_FILES`] ([`fds_needed`]).
pub const FDS_PER_LIVE_SUBAGENT: u64 = 3;

/// Fds the supervisor needs besides its subagents': the standard streams,
/// the runtime's epoll and eventfds, a server's own session file, the
/// results file and its lock, a listening socket (12 in a batch of 40;
/// the rest is room).
pub const FDS_BESIDES_SUBAGENTS: u64 = 64;

/// Session files held open between lines at most, as a count of fds.
const HELD: u64 = HELD_SESSION_FILES as u64;

/// `live` subagents at once do not fit in the open-files limit.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "{live} subagents at a time need about {needed} open files ({FDS_PER_LIVE_SUBAGENT} per \
     running subagent, one more for each of the first {HELD} session files, plus \
     {FDS_BESIDES_SUBAGENTS}), but this process may open {soft} \
     (hard limit {hard}){raised}. Run at most {fits} at a time, or raise the hard limit \
     (`ulimit -Hn` as root, `LimitNOFILE=` in a systemd unit, `nofile` in \
     /etc/security/limits.conf)",
    raised = match raised_from {
        Some(from) => format!(", already raised from {from}"),
        None => String::new(),
    }
)]
pub struct OpenFilesTooFew {
    /// The subagents asked to run at once.
    pub live: u64,
    /// The fds they would need.
    pub needed: u64,
    /// The open-files soft limit.
    pub soft: u64,
    /// The hard limit.
    pub hard: u64,
    /// The soft limit before the start-up raise, when there was one.
    pub raised_from: Option<u64>,
    /// How many fit.
    pub fits: u64,
}

/// The fds `live` subagents at once need in their supervisor.
pub fn fds_needed(live: u64) -> u64 {
    live.saturating_mul(FDS_PER_LIVE_SUBAGENT)
        .saturating_add(live.min(HELD))
        .saturating_add(FDS_BESIDES_SUBAGENTS)
}

/// The most live subagents `soft` open files hold ([`fds_needed`] turned
/// around).
pub fn live_subagents_that_fit(soft: u64) -> u64 {
    let room = soft.saturating_sub(FDS_BESIDES_SUBAGENTS);
    let with_held_files = HELD * (FDS_PER_LIVE_SUBAGENT + 1);
    if room <= with_held_files {
        room / (FDS_PER_LIVE_SUBAGENT + 1)
    } else {
        HELD + (room - with_held_files) / FDS_PER_LIVE_SUBAGENT
    }
}

/// Checks that `live` subagents at once fit in `limit`.
pub fn check_open_files(live: u64, limit: OpenFilesLimit) -> Result<(), OpenFilesTooFew> {
    let needed = fds_needed(live);
    if needed <= limit.soft {
        return Ok(());
    }
    Err(OpenFilesTooFew {
        live,
        needed,
        soft: limit.soft,
        hard: limit.hard,
        raised_from: limit.raised_from,
        fits: live_subagents_that_fit(limit.soft),
    })
}

#[cfg(test)]
#[path = "open_files_tests.rs"]
mod tests;

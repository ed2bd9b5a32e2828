//! Whether this process's open-files limit has room for a number of live
//! subagents, checked before a batch starts rather than found out as
//! `EMFILE` in its three-hundredth spawn, recorded as that task's failure.
//!
//! Arithmetic and its message only: the limit is read (and raised at
//! start) by [`subagent_sandbox::raise_open_files_limit`].

use subagent_sandbox::OpenFilesLimit;

/// Fds the supervisor holds per live subagent: the protocol socket, the
/// stdout and stderr pipes, and its session file (counted: 172 fds with
/// 40 live, 4 each plus 12).
pub const FDS_PER_LIVE_SUBAGENT: u64 = 4;

/// Fds the supervisor needs besides its subagents': the standard streams,
/// the runtime's epoll and eventfds, a server's own session file, the
/// results file and its lock, a listening socket (12 in a batch of 40;
/// the rest is room).
pub const FDS_BESIDES_SUBAGENTS: u64 = 64;

/// `live` subagents at once do not fit in the open-files limit.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "{live} subagents at a time need about {needed} open files ({FDS_PER_LIVE_SUBAGENT} per \
     running subagent, plus {FDS_BESIDES_SUBAGENTS}), but this process may open {soft} \
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
        .saturating_add(FDS_BESIDES_SUBAGENTS)
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
        fits: limit.soft.saturating_sub(FDS_BESIDES_SUBAGENTS) / FDS_PER_LIVE_SUBAGENT,
    })
}

#[cfg(test)]
#[path = "open_files_tests.rs"]
mod tests;

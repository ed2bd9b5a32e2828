//! The open-files limit of this process itself (not of its children): read,
//! and raised from the soft to the hard value as a program starts.
//!
//! Every live subagent holds a few fds in its supervisor (the protocol
//! socket, the output pipes, the session file), so the usual soft limit of 1,024
//! stops a batch at about 250 live workers although the hard limit allows
//! far more. Raising the soft limit is what every server does at start; it
//! needs no privilege. Children are unaffected: each spawn sets its own
//! RLIMIT_NOFILE ([`crate::ResourceLimits::open_files`]).

use std::io;
use std::sync::OnceLock;

/// The open-files limit as this process has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFilesLimit {
    /// What this process may open now.
    pub soft: u64,
    /// The most the soft limit may be raised to without privilege.
    pub hard: u64,
    /// The soft limit before [`raise_open_files_limit`] raised it, when it
    /// did.
    pub raised_from: Option<u64>,
}

/// The soft limit before the raise, when there was one.
static RAISED_FROM: OnceLock<u64> = OnceLock::new();

/// The kernel's ceiling on any process's fd count: a hard limit of
/// "unlimited" cannot be used as a soft limit above it.
fn kernel_ceiling() -> u64 {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(1_048_576)
}

fn read() -> io::Result<libc::rlimit> {
    // SAFETY: rlimit is plain data; zeroed is a valid value.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: getrlimit writes into `limit`, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(limit)
}

/// The limit as it stands.
pub fn open_files_limit() -> io::Result<OpenFilesLimit> {
    let limit = read()?;
    Ok(OpenFilesLimit {
        soft: limit.rlim_cur,
        hard: limit.rlim_max,
        raised_from: RAISED_FROM.get().copied(),
    })
}

/// Raises the soft limit to the hard one (at most the kernel's `nr_open`),
/// and says what it is now. Call it once, as a program starts, before any
/// thread that opens files.
pub fn raise_open_files_limit() -> io::Result<OpenFilesLimit> {
    let limit = read()?;
    let target = limit.rlim_max.min(kernel_ceiling());
    if limit.rlim_cur < target {
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads `raised`, which lives for the call.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let _ = RAISED_FROM.set(limit.rlim_cur);
    }
    open_files_limit()
}

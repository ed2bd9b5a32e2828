//! Thin, safe wrappers over the Linux process calls the sandbox needs:
//! signalling (by pid, by group, through a pidfd), waiting without reaping,
//! reaping with rusage, the subreaper flag, and [`RawExit`], the status as
//! the kernel reports it.
//!
//! The lowest layer of the crate: it imports nothing from it.
//!
//! Every `unsafe` block of the crate outside the pre-exec hook and the
//! borrowed-memory spawn ([`crate::vfork`]) lives here.
//! These functions never wait on "any child" (`waitpid(-1)`): that would steal
//! the exit statuses of children other parts of the process own.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// How the leader process actually ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawExit {
    /// The leader called `exit` with this code. `-1` means the status was
    /// taken by someone else (a `waitpid(-1)` elsewhere in this process).
    Exited(i32),
    /// The leader was ended by this signal.
    Signaled(i32),
}

/// What `wait4` reports about the leader's resource use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rusage {
    pub(crate) cpu: Duration,
    pub(crate) max_rss_bytes: u64,
}

/// Our own process id.
pub(crate) fn own_pid() -> u32 {
    std::process::id()
}

/// The calling thread's id.
pub(crate) fn own_tid() -> libc::pid_t {
    // SAFETY: gettid cannot fail and touches no memory.
    unsafe { libc::gettid() }
}

/// True when this process runs with effective uid 0.
pub(crate) fn running_as_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// Our own session id, so orphans of other sessions can be told from our own
/// direct children.
pub(crate) fn own_session() -> i32 {
    // SAFETY: getsid(0) only reads the calling process's session id.
    unsafe { libc::getsid(0) }
}

/// Sends `signal` to one process. A process that is already gone is not an
/// error: the caller wanted it dead.
pub(crate) fn signal_process(pid: u32, signal: i32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pid <= 0 {
        return;
    }
    // SAFETY: kill(2) with a positive pid targets exactly that process.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// A pidfd: a handle on one process. Unlike its pid, it never comes to name
/// another process once this one is gone and reaped, so a signal sent
/// through it reaches the process it was opened for or nobody.
#[derive(Debug)]
pub(crate) struct PidFd(OwnedFd);

/// What asking for a pidfd found.
#[derive(Debug)]
pub(crate) enum PidFdOpen {
    /// A handle on the process that had the pid when it was opened.
    Open(PidFd),
    /// No process has the pid.
    Gone,
    /// No pidfd to be had: a kernel before 5.3, a seccomp filter, or no
    /// file descriptor left. The caller falls back to the bare pid.
    Unavailable,
}

/// Opens a pidfd on `pid`.
pub(crate) fn open_pidfd(pid: u32) -> PidFdOpen {
    let Ok(raw_pid) = to_pid(pid) else {
        return PidFdOpen::Gone;
    };
    if raw_pid <= 0 {
        return PidFdOpen::Gone;
    }
    let no_flags: libc::c_uint = 0;
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1;
    // it touches no memory of ours.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, raw_pid, no_flags) };
    if rc < 0 {
        return match io::Error::last_os_error().raw_os_error() {
            Some(libc::ESRCH) => PidFdOpen::Gone,
            _ => PidFdOpen::Unavailable,
        };
    }
    let Ok(fd) = libc::c_int::try_from(rc) else {
        return PidFdOpen::Unavailable;
    };
    // SAFETY: the kernel just returned `fd` to us; nothing else owns it.
    PidFdOpen::Open(PidFd(unsafe { OwnedFd::from_raw_fd(fd) }))
}

impl PidFd {
    /// The descriptor itself, to wait on it (it turns readable once the
    /// process has exited).
    pub(crate) fn into_fd(self) -> OwnedFd {
        self.0
    }

    /// Sends `signal` to the process this pidfd was opened for. A process
    /// that is already gone is not an error: the caller wanted it dead.
    pub(crate) fn send_signal(&self, signal: i32) -> io::Result<()> {
        let (no_info, no_flags): (*const libc::siginfo_t, libc::c_uint) = (std::ptr::null(), 0);
        // SAFETY: pidfd_send_signal with our own open pidfd, no siginfo
        // (null is documented as "like kill(2)") and no flags.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.0.as_raw_fd(),
                signal,
                no_info,
                no_flags,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::ESRCH) => Ok(()),
            _ => Err(err),
        }
    }
}

/// Sends `signal` to every member of process group `pgid`.
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    // A group id of 0 or 1 would hit our own group or everything: never.
    if pgid <= 1 {
        return;
    }
    // SAFETY: a negative pid targets exactly the process group `pgid`.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Blocks until `pid` (our child) has exited, WITHOUT reaping it: the zombie
/// keeps its pid and its process-group id reserved, so signals to the group
/// cannot reach a stranger that reused the number.
pub(crate) fn wait_exit_keep_zombie(pid: u32) -> io::Result<RawExit> {
    loop {
        match wait_exit_status(pid, 0) {
            Ok(Some(raw)) => return Ok(raw),
            // Without WNOHANG the kernel only returns once it has a status;
            // an answer without one would otherwise spin here.
            Ok(None) => return Err(io::Error::other("waitid returned without a status")),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The status of `pid` (our child) if it has exited, WITHOUT reaping it;
/// `None` while it runs. Never blocks.
pub(crate) fn exit_status_if_exited(pid: u32) -> io::Result<Option<RawExit>> {
    loop {
        match wait_exit_status(pid, libc::WNOHANG) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// One `waitid(P_PID, pid, WEXITED | WNOWAIT | extra)`.
fn wait_exit_status(pid: u32, extra: libc::c_int) -> io::Result<Option<RawExit>> {
    let id = libc::id_t::from(pid);
    // SAFETY: siginfo_t is plain data; zeroed is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid writes into `info`, which lives for the call.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            id,
            &mut info,
            libc::WEXITED | libc::WNOWAIT | extra,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: after a successful waitid, si_pid is set (0 when WNOHANG
    // found nothing to report).
    if unsafe { info.si_pid() } == 0 {
        return Ok(None);
    }
    // SAFETY: after a successful waitid with WEXITED that found a child,
    // si_status is set.
    let status = unsafe { info.si_status() };
    Ok(Some(if info.si_code == libc::CLD_EXITED {
        RawExit::Exited(status)
    } else {
        RawExit::Signaled(status)
    }))
}

/// Reaps `pid` (our child), blocking until it has exited, and returns its
/// status and resource use.
pub(crate) fn reap_with_rusage(pid: u32) -> io::Result<(RawExit, Rusage)> {
    let pid = to_pid(pid)?;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 writes into `status` and `usage`, which live for the call.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            return Ok((decode_status(status), decode_rusage(&usage)));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reaps `pid` if it is our child and has exited. Returns true when it is
/// gone from our children (reaped now, or not our child at all).
pub(crate) fn try_reap(pid: u32) -> bool {
    let Ok(pid) = to_pid(pid) else {
        return true;
    };
    let mut status: libc::c_int = 0;
    // SAFETY: waitpid on one specific pid, writing into `status`.
    let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    rc == pid || rc == -1
}

/// Marks this process as a child subreaper: orphaned descendants reparent to
/// us instead of init, so they can still be found, killed and reaped.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes one integer argument.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Current hard limit of an rlimit, so a requested cap can be clamped to what
/// an unprivileged process may set.
pub(crate) fn hard_limit(resource: RlimitResource) -> u64 {
    // SAFETY: rlimit is plain data; zeroed is a valid value.
    let mut current: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: getrlimit writes into `current`, which lives for the call.
    let rc = unsafe { libc::getrlimit(resource.raw(), &mut current) };
    if rc == 0 {
        current.rlim_max
    } else {
        libc::RLIM_INFINITY
    }
}

/// Keeps fd 3 of this process occupied (by /dev/null, close-on-exec), so that
/// the pipes a spawn creates never land on fd 3: the child's fd 3 is
/// overwritten by the protocol fd, which would otherwise clobber the pipe std
/// uses to report a failed exec.
pub(crate) fn reserve_low_fds() {
    const DEV_NULL: &std::ffi::CStr = c"/dev/null";
    loop {
        // SAFETY: open with a NUL-terminated path; the fd is ours to keep.
        let fd = unsafe { libc::open(DEV_NULL.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return;
        }
        if fd > 3 {
            // fd 3 (and everything below) is already taken by someone else.
            // SAFETY: `fd` was just opened by us and is not shared.
            unsafe {
                libc::close(fd);
            }
            return;
        }
        if fd == 3 {
            return;
        }
        // fd < 3: stdio was closed; keeping /dev/null there is harmless.
    }
}

/// /dev/null opened for reading, close-on-exec: a child's stdin.
pub(crate) fn open_dev_null() -> io::Result<OwnedFd> {
    const DEV_NULL: &std::ffi::CStr = c"/dev/null";
    // SAFETY: open with a NUL-terminated path; the fd is ours to keep.
    let fd = unsafe { libc::open(DEV_NULL.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned `fd`; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A pipe, both ends close-on-exec: (read end, write end).
pub(crate) fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two fds into `fds`, which lives for the call.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned both fds; nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// An rlimit the sandbox sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RlimitResource {
    Core,
    OpenFiles,
    FileSize,
    CpuSeconds,
    /// RLIMIT_DATA: the memory fallback where no cgroup caps memory.
    Data,
}

impl RlimitResource {
    fn raw(self) -> RawResource {
        match self {
            RlimitResource::Core => libc::RLIMIT_CORE,
            RlimitResource::OpenFiles => libc::RLIMIT_NOFILE,
            RlimitResource::FileSize => libc::RLIMIT_FSIZE,
            RlimitResource::CpuSeconds => libc::RLIMIT_CPU,
            RlimitResource::Data => libc::RLIMIT_DATA,
        }
    }

    /// Sets the soft and hard limit. Async-signal-safe: only setrlimit(2).
    pub(crate) fn set(self, soft: u64, hard: u64) -> io::Result<()> {
        let limit = libc::rlimit {
            rlim_cur: soft,
            rlim_max: hard,
        };
        // SAFETY: setrlimit reads `limit`, which lives for the call.
        let rc = unsafe { libc::setrlimit(self.raw(), &limit) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type RawResource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type RawResource = libc::c_int;

fn to_pid(pid: u32) -> io::Result<libc::pid_t> {
    libc::pid_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn decode_status(status: libc::c_int) -> RawExit {
    if libc::WIFEXITED(status) {
        RawExit::Exited(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        RawExit::Signaled(libc::WTERMSIG(status))
    } else {
        RawExit::Exited(-1)
    }
}

fn decode_rusage(usage: &libc::rusage) -> Rusage {
    let timeval = |t: libc::timeval| {
        let secs = u64::try_from(t.tv_sec).unwrap_or(0);
        let micros = u64::try_from(t.tv_usec).unwrap_or(0);
        Duration::from_secs(secs) + Duration::from_micros(micros)
    };
    Rusage {
        cpu: timeval(usage.ru_utime) + timeval(usage.ru_stime),
        // ru_maxrss is in KiB on Linux.
        max_rss_bytes: u64::try_from(usage.ru_maxrss)
            .unwrap_or(0)
            .saturating_mul(1024),
    }
}

/// Waits until `fd` has data (true), it hung up without data (false), the
/// `child` exited (an error saying how), or `timeout` passed (an error).
/// No polling: one `poll` on the fd and the child's pidfd.
pub(crate) fn wait_readable_or_exit(
    fd: &OwnedFd,
    child: &mut std::process::Child,
    timeout: Duration,
) -> io::Result<bool> {
    let pidfd = match open_pidfd(child.id()) {
        PidFdOpen::Open(fd) => fd.into_fd(),
        _ => return Err(io::Error::other("cannot watch its exit (pidfd_open)")),
    };
    let mut fds = [
        libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    loop {
        // SAFETY: poll on two live fds.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
        if rc < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        if rc == 0 {
            return Err(io::Error::other(format!(
                "it was not ready after {} s",
                timeout.as_secs()
            )));
        }
        if fds[0].revents & libc::POLLIN != 0 {
            return Ok(true);
        }
        if fds[1].revents != 0 {
            let status = child.wait()?;
            return Err(io::Error::other(format!("it exited ({status})")));
        }
        return Ok(false);
    }
}

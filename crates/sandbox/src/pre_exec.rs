//! What the forked child does to itself between `fork` and `exec`: die with
//! the supervisor, enter its working directory by descriptor when the
//! caller pinned it, join its cgroup, take the protocol fd as fd 3, mark
//! every other fd close-on-exec, lower its rlimits, and enter the tool
//! sandbox's layers when asked ([`crate::isolation`]).
//!
//! This code runs in a forked copy of a multi-threaded process, so it must
//! only make async-signal-safe calls: no allocation, no locks, no formatting.
//! Everything it needs (paths as `CString`s, limit values) is prepared before
//! the fork by [`ChildSetup::new`].

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::isolation::enter::IsolationSetup;
use crate::layer::child::LayerSetup;
use crate::unix::RlimitResource;

/// Exit code of a child whose parent died between fork and exec: nobody is
/// left to run it for.
pub(crate) const PARENT_GONE_EXIT_CODE: i32 = 125;

/// The file descriptor the protocol socket gets in the child.
pub(crate) const PROTOCOL_FD: i32 = 3;

/// Everything the child applies to itself before exec, prepared pre-fork.
#[derive(Debug)]
pub(crate) struct ChildSetup {
    /// Our pid; the child exits if its parent is no longer us.
    parent_pid: libc::pid_t,
    /// `cgroup.procs` files the child writes "0" into to join its cgroups.
    cgroup_procs: Vec<CString>,
    /// Limits to set: (resource, soft, hard).
    rlimits: Vec<(RlimitResource, u64, u64)>,
    /// Becomes fd 3. Owned here so the parent's copy closes when the
    /// `Command` holding this setup is dropped after the spawn.
    protocol_fd: Option<OwnedFd>,
    /// The working directory as the caller opened it: entered by `fchdir`.
    cwd_fd: Option<OwnedFd>,
    /// The tool sandbox's layers, applied last.
    isolation: Option<IsolationSetup>,
    /// The workspace's copy-on-write layer, entered once in the cgroup.
    layer: Option<LayerSetup>,
}

impl ChildSetup {
    /// Prepares the setup. A protocol fd numbered below 3 is moved up first:
    /// std overwrites fds 0-2 with the stdio pipes before this hook runs.
    pub(crate) fn new(
        cgroup_procs: Vec<CString>,
        rlimits: Vec<(RlimitResource, u64, u64)>,
        protocol_fd: Option<OwnedFd>,
        cwd_fd: Option<OwnedFd>,
        isolation: Option<IsolationSetup>,
        layer: Option<LayerSetup>,
    ) -> io::Result<Self> {
        let protocol_fd = match protocol_fd {
            // try_clone uses F_DUPFD_CLOEXEC with a floor of 3.
            Some(fd) if fd.as_raw_fd() < PROTOCOL_FD => Some(fd.try_clone()?),
            other => other,
        };
        let parent_pid = libc::pid_t::try_from(std::process::id())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        Ok(Self {
            parent_pid,
            cgroup_procs,
            rlimits,
            protocol_fd,
            cwd_fd,
            isolation,
            layer,
        })
    }

    /// Whether the child enters a workspace layer (it must then be forked,
    /// not share our memory: a new user namespace needs a process of its
    /// own).
    pub(crate) fn enters_layer(&self) -> bool {
        self.layer.is_some()
    }

    /// Whether the child enters its working directory by descriptor (the
    /// spawn then sets none by path).
    pub(crate) fn enters_cwd(&self) -> bool {
        self.cwd_fd.is_some()
    }

    /// Runs in the child after fork, before exec.
    ///
    /// # Safety
    /// Must only be called in a freshly forked child. It makes only
    /// async-signal-safe calls and does not allocate.
    pub(crate) unsafe fn apply_in_child(&self) -> io::Result<()> {
        // SAFETY: (the whole block) prctl, getppid, _exit, open, write, close,
        // dup2, fcntl, close_range and setrlimit are async-signal-safe
        // syscalls; all pointers passed point into data prepared pre-fork.
        unsafe {
            // Die with the thread that forked us (the immortal spawner
            // thread, i.e. with the supervisor process).
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != self.parent_pid {
                libc::_exit(PARENT_GONE_EXIT_CODE);
            }
            if let Some(fd) = &self.cwd_fd
                && libc::fchdir(fd.as_raw_fd()) != 0
            {
                return Err(io::Error::last_os_error());
            }
            for path in &self.cgroup_procs {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                let err = io::Error::last_os_error();
                libc::close(fd);
                if written != 1 {
                    return Err(err);
                }
            }
            if let Some(layer) = &self.layer {
                layer.apply_in_child()?;
            }
            let first_closed = match &self.protocol_fd {
                Some(fd) if fd.as_raw_fd() == PROTOCOL_FD => {
                    if libc::fcntl(PROTOCOL_FD, libc::F_SETFD, 0) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    PROTOCOL_FD + 1
                }
                Some(fd) => {
                    // dup2 leaves the new fd without FD_CLOEXEC.
                    if libc::dup2(fd.as_raw_fd(), PROTOCOL_FD) != PROTOCOL_FD {
                        return Err(io::Error::last_os_error());
                    }
                    PROTOCOL_FD + 1
                }
                None => PROTOCOL_FD,
            };
            mark_cloexec_from(first_closed)?;
            for (resource, soft, hard) in &self.rlimits {
                resource.set(*soft, *hard)?;
            }
            if let Some(isolation) = &self.isolation {
                isolation.apply_in_child()?;
            }
        }
        Ok(())
    }
}

/// Marks every fd from `first` up close-on-exec (rather than closing them, so
/// std's exec-error pipe keeps working until exec).
///
/// # Safety
/// Async-signal-safe; meant for the forked child.
unsafe fn mark_cloexec_from(first: i32) -> io::Result<()> {
    let Ok(first) = libc::c_uint::try_from(first) else {
        return Ok(());
    };
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only changes fd flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    // Kernels before 5.11: walk the fd table up to the soft limit.
    // SAFETY: rlimit is plain data; getrlimit writes into it.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: getrlimit writes into `limit`, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let last = limit.rlim_cur.min(u64::from(FD_SCAN_CEILING));
    let mut fd = u64::from(first);
    while fd < last {
        if let Ok(raw) = libc::c_int::try_from(fd) {
            // SAFETY: F_SETFD on a possibly-closed fd is harmless (EBADF).
            unsafe {
                libc::fcntl(raw, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        fd += 1;
    }
    Ok(())
}

/// Highest fd the fallback walk visits (count): beyond this an old kernel
/// with a huge RLIMIT_NOFILE would make every spawn slow.
const FD_SCAN_CEILING: u32 = 65_536;

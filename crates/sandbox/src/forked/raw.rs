//! Fork-safe primitives shared by the tool sandbox's namespace set-up and
//! the per-run network holder: a bare fork and a one-write file. Nothing
//! here allocates or takes a lock, so both may run between fork and exec;
//! nothing here knows what a namespace or a network is.

use super::step::{Step, StepError, last};

/// A plain fork by raw syscall: glibc's `fork()` runs atfork handlers that
/// take locks, which a child of a multi-threaded process must not.
///
/// # Safety
/// The child must keep to async-signal-safe calls until it execs or exits.
pub(crate) unsafe fn fork_raw() -> libc::pid_t {
    // SAFETY: clone with only SIGCHLD and no stack is fork(2); the other
    // arguments are unused with these flags.
    let rc = unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0) };
    libc::pid_t::try_from(rc).unwrap_or(-1)
}

/// Writes `data` to `path` with one write(2).
///
/// # Safety
/// Async-signal-safe; for the forked child.
pub(crate) unsafe fn write_file(
    step: Step,
    path: &std::ffi::CStr,
    data: &[u8],
) -> Result<(), StepError> {
    // SAFETY: open with a NUL-terminated path; write from a live slice.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(last(step));
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let error = last(step);
        libc::close(fd);
        if usize::try_from(written).ok() != Some(data.len()) {
            return Err(error);
        }
    }
    Ok(())
}

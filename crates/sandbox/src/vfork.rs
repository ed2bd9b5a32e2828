//! Starting a child the way `posix_spawn` does (`clone` with `CLONE_VM |
//! CLONE_VFORK`: the child borrows our memory until it execs) while still
//! running the sandbox's pre-exec setup ([`ChildSetup`]) in it.
//!
//! Why not `std::process::Command`: with a pre-exec hook it must `fork`,
//! which copies the page tables of the whole supervisor (its runtime, its
//! threads' stacks, every child's buffers) only for the child to throw them
//! away at `exec`; measured here that is 0.2-0.3 ms of a 1 ms spawn of
//! /bin/true, and it grows with the supervisor. `posix_spawn` itself has no
//! hook for the cgroup join, the rlimits or the protocol fd.
//!
//! The child shares our memory, so between `clone` and `execve` it may only
//! make raw system calls on data prepared beforehand ([`VforkSpawn::new`]):
//! no allocation, no locks, no unwinding, and it writes nothing of ours but
//! the one error slot. Signals are blocked around the `clone` and every
//! handler is reset to the default in the child before its mask is cleared,
//! so none of our handlers can run on the borrowed memory. Children that
//! need the tool sandbox (namespaces fork again inside the hook) and
//! programs given without a path keep to `Command` (see [`crate::child`]).

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::pre_exec::ChildSetup;

/// Stack of the borrowed child, bytes: it runs the pre-exec setup (a few
/// system calls on prepared data) and `execve`, nothing recursive.
const CHILD_STACK_BYTES: usize = 64 * 1024;

/// Exit code of a child whose setup or exec failed; the error itself is
/// handed over in [`ChildArgs::error`].
const SETUP_FAILED_EXIT_CODE: i32 = 127;

/// A child ready to be started: every pointer the child will use.
pub(crate) struct VforkSpawn {
    program: CString,
    /// Keeps the strings `argv` points into alive.
    _args: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    _env: Vec<CString>,
    envp: Vec<*const libc::c_char>,
    /// `None`: the setup enters a pinned working directory by descriptor.
    cwd: Option<CString>,
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
    setup: ChildSetup,
    /// Signals 1 to this (exclusive) get their default disposition back:
    /// all 64 of the kernel's.
    last_signal: libc::c_int,
}

// SAFETY: the raw pointers point into the CStrings owned by the same value,
// which moves as a whole to the spawner thread; nothing else aliases them.
unsafe impl Send for VforkSpawn {}

/// What the child reads (and, on failure, writes the errno into).
struct ChildArgs<'a> {
    spawn: &'a VforkSpawn,
    error: AtomicI32,
}

impl VforkSpawn {
    /// Prepares `program` (an absolute path) with `args`, exactly `env`,
    /// `cwd` (`None`: `setup` enters it), stdin from /dev/null and two
    /// fresh pipes for stdout and stderr, and `setup` to run before exec.
    pub(crate) fn new<'a>(
        program: &Path,
        args: impl IntoIterator<Item = &'a OsStr>,
        env: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>,
        cwd: Option<&Path>,
        setup: ChildSetup,
    ) -> io::Result<(Self, OwnedFd, OwnedFd)> {
        let c = |s: &OsStr| {
            CString::new(s.as_bytes()).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in an argument")
            })
        };
        let program_c = c(program.as_os_str())?;
        let mut args_c = vec![program_c.clone()];
        for arg in args {
            args_c.push(c(arg)?);
        }
        let mut env_c = Vec::new();
        for (key, value) in env {
            let mut pair = key.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            env_c.push(CString::new(pair).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the environment")
            })?);
        }
        let pointers = |strings: &[CString]| {
            let mut p: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
            p.push(std::ptr::null());
            p
        };
        let (argv, envp) = (pointers(&args_c), pointers(&env_c));
        let stdin = crate::unix::open_dev_null()?;
        let (stdout_ours, stdout) = crate::unix::pipe_cloexec()?;
        let (stderr_ours, stderr) = crate::unix::pipe_cloexec()?;
        Ok((
            Self {
                program: program_c,
                _args: args_c,
                argv,
                _env: env_c,
                envp,
                cwd: cwd.map(|cwd| c(cwd.as_os_str())).transpose()?,
                stdin,
                stdout,
                stderr,
                setup,
                last_signal: 65,
            },
            stdout_ours,
            stderr_ours,
        ))
    }

    /// Starts the child; returns once it has exec'd (or failed to). Our
    /// copies of its stdio ends and of its protocol fd close when `self`
    /// drops at the end of this call.
    pub(crate) fn spawn(self) -> io::Result<u32> {
        let mut stack = vec![0u8; CHILD_STACK_BYTES];
        // The stack grows down; clone wants its top, 16-byte aligned.
        let top = {
            let end = stack.as_mut_ptr_range().end as usize;
            (end & !0xf) as *mut libc::c_void
        };
        let args = ChildArgs {
            spawn: &self,
            error: AtomicI32::new(0),
        };
        let pid = {
            let _blocked = BlockAllSignals::new()?;
            // SAFETY: `child_main` only reads `args` and makes raw system
            // calls (see the module doc); with CLONE_VFORK this thread is
            // suspended until the child has exec'd or exited, so `args`,
            // `self` and `stack` outlive every use the child makes of them.
            unsafe {
                libc::clone(
                    child_main,
                    top,
                    libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                    std::ptr::from_ref(&args).cast_mut().cast(),
                )
            }
        };
        drop(stack);
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        let pid = u32::try_from(pid).map_err(|_| io::Error::other("clone returned a bad pid"))?;
        match args.error.load(Ordering::SeqCst) {
            0 => Ok(pid),
            errno => {
                // The child has exited already; reap it so no zombie stays.
                let _ = crate::unix::reap_with_rusage(pid);
                Err(io::Error::from_raw_os_error(errno))
            }
        }
    }
}

/// Blocks every signal on this thread until dropped.
struct BlockAllSignals(libc::sigset_t);

impl BlockAllSignals {
    fn new() -> io::Result<Self> {
        // SAFETY: sigset_t is plain data, filled by sigfillset; the old mask
        // is written by pthread_sigmask into `old`.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let mut old: libc::sigset_t = std::mem::zeroed();
            let rc = libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(Self(old))
        }
    }
}

impl Drop for BlockAllSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut());
        }
    }
}

/// The borrowed child. Never returns on success (execve replaced it).
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildArgs` the parent keeps alive while it is
    // suspended (CLONE_VFORK).
    let args = unsafe { &*(arg.cast_const().cast::<ChildArgs<'_>>()) };
    // SAFETY: see the module doc: raw system calls on prepared data only.
    let errno = unsafe { prepare_and_exec(args.spawn) };
    args.error.store(errno, Ordering::SeqCst);
    // SAFETY: _exit ends the child without running anything of ours.
    unsafe { libc::_exit(SETUP_FAILED_EXIT_CODE) }
}

/// The kernel's `struct sigaction` (x86-64 and aarch64 layout: handler,
/// flags, restorer, mask), for the raw `rt_sigaction` call.
#[repr(C)]
#[derive(Default)]
struct KernelSigaction {
    handler: libc::sighandler_t,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// The kernel's signal set size, bytes (64 signals).
const KERNEL_SIGSET_BYTES: usize = 8;

/// Everything between clone and exec; returns the errno of what failed.
///
/// # Safety
/// Only in the borrowed child.
unsafe fn prepare_and_exec(spawn: &VforkSpawn) -> i32 {
    let errno = || {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL)
    };
    // SAFETY: (the whole block) async-signal-safe system calls on data prepared
    // before the clone.
    unsafe {
        // Our handlers must never run on the borrowed memory: every signal
        // goes back to its default before the mask is cleared. Ignored ones
        // too (Rust ignores SIGPIPE): a child starts from a clean slate. The
        // raw call, because glibc's wrapper refuses the signals it keeps
        // for itself (32 and 33), which a parent may still have ignored.
        for signal in 1..spawn.last_signal {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut current = KernelSigaction::default();
            let read = libc::syscall(
                libc::SYS_rt_sigaction,
                signal,
                std::ptr::null::<KernelSigaction>(),
                &mut current,
                KERNEL_SIGSET_BYTES,
            );
            if read == 0 && current.handler != libc::SIG_DFL {
                let default = KernelSigaction::default();
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    signal,
                    &default,
                    std::ptr::null_mut::<KernelSigaction>(),
                    KERNEL_SIGSET_BYTES,
                );
            }
        }
        for (fd, target) in [
            (&spawn.stdin, libc::STDIN_FILENO),
            (&spawn.stdout, libc::STDOUT_FILENO),
            (&spawn.stderr, libc::STDERR_FILENO),
        ] {
            let fd = fd.as_raw_fd();
            let ok = if fd == target {
                libc::fcntl(fd, libc::F_SETFD, 0) == 0
            } else {
                libc::dup2(fd, target) == target
            };
            if !ok {
                return errno();
            }
        }
        if let Some(cwd) = &spawn.cwd
            && libc::chdir(cwd.as_ptr()) != 0
        {
            return errno();
        }
        if libc::setpgid(0, 0) != 0 {
            return errno();
        }
        if let Err(e) = spawn.setup.apply_in_child() {
            return e.raw_os_error().unwrap_or(libc::EINVAL);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(
            spawn.program.as_ptr(),
            spawn.argv.as_ptr(),
            spawn.envp.as_ptr(),
        );
        errno()
    }
}

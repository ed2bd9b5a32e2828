//! New user, pid, mount, IPC, UTS, cgroup (and network) namespaces, with a
//! fresh `/proc` or, when asked, the whole filesystem view ([`ViewPlan`]).
//!
//! The IPC namespace hides the host's SysV shared memory, semaphores and
//! message queues and its POSIX message queues; the UTS namespace keeps a
//! host name change to the tool; the cgroup namespace (entered after the
//! child joined its own cgroup) shows that cgroup as the root of
//! `/proc/self/cgroup`, not the host's hierarchy.
//!
//! `unshare(CLONE_NEWPID)` moves only the caller's *future* children into
//! the new pid namespace, so the forked child does it in two steps: it
//! unshares, maps its own uid and gid, and forks once more. The first
//! process (the "keeper", still the sandbox's process-group leader) only
//! waits for the second and exits the same way, so the sandbox sees the
//! tool's own exit status. The second is pid 1 of the new namespace: it
//! mounts a fresh `/proc` and goes on to exec the tool. When it exits, the
//! kernel kills everything else in the namespace, `setsid` daemons too.
//!
//! Everything after the fork is async-signal-safe: raw syscalls on data
//! prepared in [`NamespacePlan::new`].

use std::ptr;
use std::sync::Arc;

use super::view::ViewPlan;
use crate::forked::raw::{fork_raw, write_file};
use crate::forked::step::{Step, StepError, check, last};
use crate::net::PrivateNetwork;

/// Namespaces to enter, with the uid and gid maps prepared before the fork.
#[derive(Debug, Clone)]
pub(crate) struct NamespacePlan {
    flags: libc::c_int,
    /// Joined before the new namespaces are made: the tool's user
    /// namespace is then a child of the network's, so it holds no
    /// capability over the network namespace.
    join: Option<Arc<PrivateNetwork>>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl NamespacePlan {
    /// User, pid, mount, IPC, UTS and cgroup namespaces, plus a network
    /// namespace unless `network`; with `join`, its namespaces are entered
    /// first. The caller's uid and gid are mapped to themselves, so files a
    /// tool creates in the workspace belong to the user.
    pub(crate) fn new(network: bool, join: Option<Arc<PrivateNetwork>>) -> Self {
        // SAFETY: geteuid and getegid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let mut flags = libc::CLONE_NEWUSER
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWCGROUP;
        if !network {
            flags |= libc::CLONE_NEWNET;
        }
        Self {
            flags,
            join,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }

    /// Enters the namespaces. Returns in pid 1 of the new pid namespace,
    /// with a fresh `/proc` mounted over the host's, or inside `view` once
    /// it is built; the keeper process never returns.
    ///
    /// # Safety
    /// Only in a freshly forked child: it forks again and mounts.
    pub(crate) unsafe fn enter(&self, view: Option<&ViewPlan>) -> Result<(), StepError> {
        // SAFETY: (the whole block) unshare, open, write, close, clone, wait4,
        // prctl, mount and _exit are async-signal-safe syscalls; every
        // pointer points into data prepared before the fork.
        unsafe {
            // A root worker keeps CAP_SETFCAP permitted only; mapping uid 0
            // into the new namespace needs it effective at the unshare.
            if let Some(network) = &self.join {
                // The owner of a user namespace holds every capability in
                // it, so joining needs none here.
                check(
                    Step::JoinNetwork,
                    libc::setns(network.user_namespace_fd(), libc::CLONE_NEWUSER),
                )?;
                check(
                    Step::JoinNetwork,
                    libc::setns(network.network_namespace_fd(), libc::CLONE_NEWNET),
                )?;
            }
            crate::capabilities::raise_setfcap();
            check(Step::Unshare, libc::unshare(self.flags))?;
            // A non-dumpable process (the worker marks itself so: it holds
            // the API key) has its /proc/self files owned by root, which an
            // unprivileged user cannot write its id maps through. Dumpable
            // just for the three writes, then back: this process is a copy
            // of the worker's memory until it execs or exits.
            let was_dumpable = libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0);
            if was_dumpable == 0 {
                libc::prctl(libc::PR_SET_DUMPABLE, 1 as libc::c_ulong, 0, 0, 0);
            }
            let maps = write_file(Step::Setgroups, c"/proc/self/setgroups", b"deny")
                .and_then(|()| write_file(Step::UidMap, c"/proc/self/uid_map", &self.uid_map))
                .and_then(|()| write_file(Step::GidMap, c"/proc/self/gid_map", &self.gid_map));
            if was_dumpable == 0 {
                libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0);
            }
            maps?;
            let pid = fork_raw();
            if pid < 0 {
                return Err(last(Step::Fork));
            }
            if pid > 0 {
                keep(pid);
            }
            check(
                Step::DeathSignal,
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ),
            )?;
            check(
                Step::MountPrivate,
                libc::mount(
                    ptr::null(),
                    c"/".as_ptr(),
                    ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    ptr::null(),
                ),
            )?;
            if let Some(view) = view {
                return view.build();
            }
            check(
                Step::MountProc,
                libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    ptr::null(),
                ),
            )?;
        }
        Ok(())
    }
}

/// The keeper: holds no fd the tool's output or the exec-error report could
/// be waiting on, waits for pid 1 of the namespace, and ends the same way.
///
/// # Safety
/// Only in the forked keeper; never returns.
unsafe fn keep(child: libc::pid_t) -> ! {
    // SAFETY: (the whole block) close_range, wait4, signal, sigprocmask, kill,
    // getpid and _exit are async-signal-safe; `status` and `set` live on
    // this stack for the calls.
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            0 as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        );
        let mut status: libc::c_int = 0;
        loop {
            let rc = libc::wait4(child, &mut status, 0, ptr::null_mut());
            if rc == child {
                break;
            }
            if rc < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(KEEPER_LOST_CHILD_EXIT_CODE);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let signal = libc::WTERMSIG(status);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal);
    }
}

/// Exit code of a keeper whose child vanished without a status: cannot
/// happen for a child of ours, but must not be mistaken for the tool's.
const KEEPER_LOST_CHILD_EXIT_CODE: i32 = 126;

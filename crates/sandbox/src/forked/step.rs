//! The in-child steps of entering the namespaces and building the
//! filesystem view, numbered: a failed step is what the one-time probe's
//! child exits with, and what the operator is told the kernel refused.

use std::io;

/// The step that failed, for a message that says what the kernel refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Unshare = 1,
    Setgroups,
    UidMap,
    GidMap,
    Fork,
    DeathSignal,
    MountPrivate,
    MountProc,
    ViewStaging,
    ViewPivot,
    ViewDir,
    ViewFile,
    ViewSymlink,
    ViewBind,
    ViewRemount,
    ViewTmpfs,
    ViewProc,
    ViewDetach,
    ViewChdir,
    JoinNetwork,
}

impl Step {
    const ALL: [Step; 20] = [
        Step::Unshare,
        Step::Setgroups,
        Step::UidMap,
        Step::GidMap,
        Step::Fork,
        Step::DeathSignal,
        Step::MountPrivate,
        Step::MountProc,
        Step::ViewStaging,
        Step::ViewPivot,
        Step::ViewDir,
        Step::ViewFile,
        Step::ViewSymlink,
        Step::ViewBind,
        Step::ViewRemount,
        Step::ViewTmpfs,
        Step::ViewProc,
        Step::ViewDetach,
        Step::ViewChdir,
        Step::JoinNetwork,
    ];

    /// The step whose number a probe child exited with.
    pub(crate) fn from_code(code: i32) -> Option<Step> {
        Step::ALL.into_iter().find(|s| *s as i32 == code)
    }

    /// Whether the step belongs to building the filesystem view (the
    /// namespaces themselves were entered by then).
    pub(crate) fn is_view(self) -> bool {
        (Step::ViewStaging as i32..=Step::ViewChdir as i32).contains(&(self as i32))
    }

    /// What the step does, for error messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Step::Unshare => {
                "creating user, pid, mount, IPC, UTS, cgroup and network namespaces (unshare) was \
                 refused; user namespaces may be disabled (see /proc/sys/user/max_user_namespaces \
                 and kernel.unprivileged_userns_clone)"
            }
            Step::Setgroups => "writing /proc/self/setgroups in the new user namespace failed",
            Step::UidMap => "writing /proc/self/uid_map in the new user namespace failed",
            Step::GidMap => "writing /proc/self/gid_map in the new user namespace failed",
            Step::Fork => "forking the namespace's first process failed",
            Step::DeathSignal => "setting the parent-death signal in the namespace failed",
            Step::MountPrivate => "making the mounts of the new mount namespace private failed",
            Step::MountProc => {
                "mounting a fresh /proc failed (the kernel refuses it when /proc is partly hidden, \
                 e.g. inside some containers)"
            }
            Step::ViewStaging => {
                "mounting the staging tmpfs of the filesystem view on /tmp failed (the view needs \
                 a /tmp directory and tmpfs)"
            }
            Step::ViewPivot => "pivot_root into the filesystem view failed",
            Step::ViewDir => "making a directory in the filesystem view failed",
            Step::ViewFile => "making a file mount point in the filesystem view failed",
            Step::ViewSymlink => "making a symlink in the filesystem view failed",
            Step::ViewBind => "binding a host path into the filesystem view failed",
            Step::ViewRemount => {
                "making a bind of the filesystem view read-only (or nosuid,nodev) failed"
            }
            Step::ViewTmpfs => "mounting the private /tmp tmpfs of the filesystem view failed",
            Step::ViewProc => "mounting the fresh /proc in the filesystem view failed",
            Step::ViewDetach => "detaching the host's root from the filesystem view failed",
            Step::ViewChdir => "entering the working directory inside the filesystem view failed",
            Step::JoinNetwork => {
                "joining the run's private network (setns into its user, then its network \
                 namespace) was refused"
            }
        }
    }
}

/// A failed step and the errno it failed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepError {
    pub(crate) step: Step,
    pub(crate) errno: i32,
}

impl From<StepError> for io::Error {
    fn from(e: StepError) -> Self {
        io::Error::from_raw_os_error(e.errno)
    }
}

/// `Ok` for a syscall's 0, else the step with the current errno.
pub(crate) fn check(step: Step, rc: libc::c_int) -> Result<(), StepError> {
    if rc == 0 { Ok(()) } else { Err(last(step)) }
}

/// [`check`], with a syscall that failed because its target already exists
/// counted as done. Async-signal-safe.
pub(crate) fn check_or_exists(step: Step, rc: libc::c_int) -> Result<(), StepError> {
    match check(step, rc) {
        Err(e) if e.errno == libc::EEXIST => Ok(()),
        result => result,
    }
}

/// The step with the current errno. Async-signal-safe.
pub(crate) fn last(step: Step) -> StepError {
    StepError {
        step,
        errno: io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO),
    }
}

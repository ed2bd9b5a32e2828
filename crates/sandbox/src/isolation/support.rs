//! What this kernel lets the tool sandbox do, probed once per process and
//! cached: namespaces (by entering them in a throwaway child, since only
//! trying tells whether user namespaces, the id maps and a fresh `/proc`
//! are allowed), the Landlock ABI, and seccomp.

use std::sync::OnceLock;

use super::landlock;
use super::namespaces::{NamespacePlan, Step};
use super::seccomp;

/// Which layers of the tool sandbox this machine supports; each `Err` says
/// why not, in words an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IsolationSupport {
    /// User, pid, mount and network namespaces with a fresh `/proc`.
    pub namespaces: Result<(), String>,
    /// The Landlock ABI version.
    pub landlock_abi: Result<i32, String>,
    /// seccomp filters.
    pub seccomp: Result<(), String>,
}

static SUPPORT: OnceLock<IsolationSupport> = OnceLock::new();

/// Runs the probe now on the chores thread, so the first caller of
/// [`isolation_support`] (a run's session header forecasts the tool
/// sandbox) finds it done or nearly: entering four namespaces in a forked
/// child takes a millisecond or more, which would otherwise sit on a
/// runtime thread in the middle of a run's start.
pub fn prewarm_isolation_support() {
    crate::chores::run(|| {
        isolation_support();
    });
}

/// The probed support, cached for the life of the process (the first call
/// forks one short-lived child).
pub fn isolation_support() -> &'static IsolationSupport {
    SUPPORT.get_or_init(|| IsolationSupport {
        namespaces: probe_namespaces(),
        landlock_abi: landlock::abi_version(),
        seccomp: seccomp::support(),
    })
}

fn probe_namespaces() -> Result<(), String> {
    let plan = NamespacePlan::new(false);
    // SAFETY: the child runs only async-signal-safe code (`enter` and
    // `_exit`) on data prepared before the fork; the parent waits for
    // exactly that pid.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!(
            "cannot fork to probe namespaces: {}",
            std::io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        // SAFETY: freshly forked child; only syscalls and _exit follow.
        unsafe {
            match plan.enter() {
                Ok(()) => libc::_exit(0),
                Err(e) => libc::_exit(e.step as i32),
            }
        }
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waits for our own child `pid`, writing into `status`.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("cannot wait for the namespace probe: {error}"));
        }
    }
    if !libc::WIFEXITED(status) {
        return Err("the namespace probe was killed by a signal".into());
    }
    match libc::WEXITSTATUS(status) {
        0 => Ok(()),
        code => Err(Step::from_code(code).map_or_else(
            || format!("the namespace probe failed (exit {code})"),
            |step| step.describe().to_owned(),
        )),
    }
}

//! What this kernel lets the tool sandbox do, probed once per process and
//! cached: namespaces and the filesystem view (by entering them in a
//! throwaway child, since only trying tells whether user namespaces, the id
//! maps, a fresh `/proc`, tmpfs, read-only binds and `pivot_root` are
//! allowed), the Landlock ABI, and seccomp.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::config::Isolation;
use super::landlock;
use super::namespaces::NamespacePlan;
use super::seccomp;
use super::view::ViewPlan;
use crate::forked::step::Step;

/// Which layers of the tool sandbox this machine supports; each `Err` says
/// why not, in words an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IsolationSupport {
    /// User, pid, mount, IPC, UTS, cgroup and network namespaces with a
    /// fresh `/proc`.
    pub namespaces: Result<(), String>,
    /// The filesystem view: a tmpfs root, read-only binds, `pivot_root`.
    pub filesystem_view: Result<(), String>,
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
    SUPPORT.get_or_init(|| {
        let (namespaces, filesystem_view) = probe_namespaces();
        IsolationSupport {
            namespaces,
            filesystem_view,
            landlock_abi: landlock::abi_version(),
            seccomp: seccomp::support(),
        }
    })
}

/// The namespaces, then a small view (`/usr` read-only, the private
/// `/tmp`, `/dev/null` read-only, `/proc`) in the same child.
fn probe_namespaces() -> (Result<(), String>, Result<(), String>) {
    let view = ViewPlan::new(
        &Isolation {
            read_only: vec![PathBuf::from("/usr")],
            // A device, bound read-only as every tool's are.
            read_write: vec![PathBuf::from("/dev/null")],
            ..Isolation::strict(Vec::new())
        },
        None,
        false,
    );
    let view = match view {
        Ok(view) => view,
        Err(e) => {
            let namespaces = probe_child(None).map_err(|(_, reason)| reason);
            return (
                namespaces,
                Err(format!("cannot plan the probe's view: {e}")),
            );
        }
    };
    match probe_child(Some(&view)) {
        Ok(()) => (Ok(()), Ok(())),
        Err((Some(step), reason)) if step.is_view() => (Ok(()), Err(reason)),
        Err((_, reason)) => (
            Err(reason.clone()),
            Err(format!("it needs the namespaces: {reason}")),
        ),
    }
}

/// Enters the namespaces (and builds `view`) in a throwaway child; the
/// failed step, if any, with why.
fn probe_child(view: Option<&ViewPlan>) -> Result<(), (Option<Step>, String)> {
    let plan = NamespacePlan::new(false, None);
    // SAFETY: the child runs only async-signal-safe code (`enter` and
    // `_exit`) on data prepared before the fork; the parent waits for
    // exactly that pid.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err((
            None,
            format!(
                "cannot fork to probe namespaces: {}",
                std::io::Error::last_os_error()
            ),
        ));
    }
    if pid == 0 {
        // SAFETY: freshly forked child; only syscalls and _exit follow.
        unsafe {
            // The plain /proc first, so a failing view does not hide
            // whether the namespaces alone work.
            let entered = plan.enter(None).and_then(|()| match view {
                Some(view) => view.build(),
                None => Ok(()),
            });
            match entered {
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
            return Err((
                None,
                format!("cannot wait for the namespace probe: {error}"),
            ));
        }
    }
    if !libc::WIFEXITED(status) {
        return Err((None, "the namespace probe was killed by a signal".into()));
    }
    match libc::WEXITSTATUS(status) {
        0 => Ok(()),
        code => {
            let step = Step::from_code(code);
            Err((
                step,
                step.map_or_else(
                    || format!("the namespace probe failed (exit {code})"),
                    |step| step.describe().to_owned(),
                ),
            ))
        }
    }
}

//! The in-child sequence of the tool sandbox, in the only order that works:
//! namespaces first (mounting /proc and building the filesystem view need
//! the capabilities a fresh user namespace grants), the view next (inside
//! them), then Landlock (its ruleset must see the new root and /proc), then
//! dropping capabilities, then seccomp last (it forbids `mount`).

use std::io;

use super::landlock::LandlockPlan;
use super::namespaces::NamespacePlan;
use super::seccomp::SeccompPlan;
use super::view::ViewPlan;
use crate::capabilities;

/// Everything the child applies to itself, prepared before the fork.
#[derive(Debug, Clone)]
pub(crate) struct IsolationSetup {
    pub(crate) namespaces: Option<NamespacePlan>,
    /// Built inside the namespaces; only planned with them.
    pub(crate) view: Option<ViewPlan>,
    pub(crate) landlock: Option<LandlockPlan>,
    pub(crate) drop_capabilities: bool,
    pub(crate) seccomp: Option<SeccompPlan>,
}

impl IsolationSetup {
    /// Applies every planned layer; returns in the process that will exec
    /// the tool (with namespaces, pid 1 of the new pid namespace).
    ///
    /// # Safety
    /// Only in a freshly forked child; async-signal-safe.
    pub(crate) unsafe fn apply_in_child(&self) -> io::Result<()> {
        // SAFETY: (the whole block) each step is async-signal-safe and meant for
        // the forked child, which is where this runs.
        unsafe {
            if let Some(namespaces) = &self.namespaces {
                namespaces.enter(self.view.as_ref())?;
            }
            if let Some(landlock) = &self.landlock {
                landlock.apply()?;
            }
            if self.drop_capabilities {
                capabilities::drop_all()?;
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(seccomp) = &self.seccomp {
                seccomp.apply()?;
            }
        }
        Ok(())
    }
}

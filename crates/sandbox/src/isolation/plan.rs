//! Deciding, before the fork, which layers of the tool sandbox a child gets
//! on this machine, and recording each one applied or not (with why) in its
//! [`SandboxStatus`].

use subagent_protocol::session::{NotApplied, SandboxStatus};

use super::config::Isolation;
use super::enter::IsolationSetup;
use super::landlock::LandlockPlan;
use super::namespaces::NamespacePlan;
use super::seccomp::SeccompPlan;
use super::support::isolation_support;
use crate::status::protection;

/// Why a layer the caller switched off is not in force.
const SWITCHED_OFF: &str = "switched off by the caller";

/// Which layers a child asking for `isolation` would get on this machine,
/// without starting anything: for reports such as a session header.
pub fn isolation_status(isolation: &Isolation) -> SandboxStatus {
    let mut status = SandboxStatus::default();
    plan(isolation, &mut status);
    status
}

/// The setup for `isolation`, with `status` extended to say what it covers.
pub(crate) fn plan(isolation: &Isolation, status: &mut SandboxStatus) -> IsolationSetup {
    let support = isolation_support();
    let mut refuse = |names: &[&str], reason: &str| {
        for name in names {
            status.not_applied.push(NotApplied {
                protection: (*name).to_owned(),
                reason: reason.to_owned(),
            });
        }
    };
    let mut applied: Vec<&str> = Vec::new();

    let mut namespace_layers = vec![
        protection::USER_NAMESPACE,
        protection::PID_NAMESPACE,
        protection::MOUNT_NAMESPACE,
        protection::FRESH_PROC,
    ];
    if !isolation.network {
        namespace_layers.push(protection::NETWORK_NAMESPACE);
    }
    let namespaces = match (&support.namespaces, isolation.layers.namespaces) {
        (_, false) => {
            refuse(&namespace_layers, SWITCHED_OFF);
            None
        }
        (Err(reason), true) => {
            refuse(&namespace_layers, reason);
            None
        }
        (Ok(()), true) => {
            applied.extend(&namespace_layers);
            Some(NamespacePlan::new(isolation.network))
        }
    };

    let landlock = match (&support.landlock_abi, isolation.layers.landlock) {
        (_, false) => {
            refuse(&[protection::LANDLOCK_FS], SWITCHED_OFF);
            None
        }
        (Err(reason), true) => {
            refuse(&[protection::LANDLOCK_FS], reason);
            None
        }
        (Ok(abi), true) => {
            match LandlockPlan::new(
                *abi,
                &isolation.read_only,
                &isolation.read_write,
                !isolation.network,
            ) {
                Ok((mut plan, coverage)) => {
                    if namespaces.is_some() {
                        // The fresh /proc shows only the tool's own tree.
                        plan.allow_read_in_child(c"/proc");
                    }
                    applied.push(protection::LANDLOCK_FS);
                    if coverage.network {
                        applied.push(protection::LANDLOCK_NET);
                    }
                    if coverage.scope {
                        applied.push(protection::LANDLOCK_SCOPE);
                    }
                    Some(plan)
                }
                Err(e) => {
                    refuse(
                        &[protection::LANDLOCK_FS],
                        &format!("cannot plan the Landlock rules: {e}"),
                    );
                    None
                }
            }
        }
    };

    let seccomp = match (&support.seccomp, isolation.layers.seccomp) {
        (_, false) => {
            refuse(&[protection::SECCOMP], SWITCHED_OFF);
            None
        }
        (Err(reason), true) => {
            refuse(&[protection::SECCOMP], reason);
            None
        }
        (Ok(()), true) => match SeccompPlan::new(!isolation.network) {
            Ok(plan) => {
                applied.push(protection::SECCOMP);
                Some(plan)
            }
            Err(reason) => {
                refuse(&[protection::SECCOMP], &reason);
                None
            }
        },
    };

    // SAFETY: geteuid cannot fail and touches no memory.
    let root = unsafe { libc::geteuid() } == 0;
    // In a user namespace the first process holds every capability in it;
    // as real root, every capability there is: either way, drop them. Any
    // other user has none to drop (no_new_privs stops file capabilities).
    let drop_capabilities = isolation.layers.capabilities && (namespaces.is_some() || root);
    applied.push(protection::NO_NEW_PRIVS);
    if isolation.layers.capabilities {
        applied.push(protection::NO_CAPABILITIES);
    } else {
        refuse(&[protection::NO_CAPABILITIES], SWITCHED_OFF);
    }
    status
        .applied
        .extend(applied.into_iter().map(str::to_owned));

    IsolationSetup {
        namespaces,
        landlock,
        drop_capabilities,
        seccomp,
    }
}

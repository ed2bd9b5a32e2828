//! Deciding, before the fork, which layers of the tool sandbox a child gets
//! on this machine, and recording each one applied or not (with why) in its
//! [`SandboxStatus`].

use std::path::Path;

use subagent_protocol::session::SandboxStatus;

use super::config::Isolation;
use super::enter::IsolationSetup;
use super::landlock::LandlockPlan;
use super::namespaces::NamespacePlan;
use super::seccomp::SeccompPlan;
use super::support::isolation_support;
use super::view::ViewPlan;
use crate::status::Protection;
use crate::unix;

/// Why a layer the caller switched off is not in force.
const SWITCHED_OFF: &str = "switched off by the caller";

/// Which layers a child asking for `isolation` would get on this machine,
/// without starting anything: for reports such as a session header.
pub fn isolation_status(isolation: &Isolation) -> SandboxStatus {
    let mut status = SandboxStatus::default();
    plan(isolation, None, false, &mut status);
    status
}

/// The setup for `isolation` of a child working in `cwd` (`None`: a
/// forecast; `cwd_pinned`: entered by a descriptor, see [`ViewPlan::new`]),
/// with `status` extended to say what it covers.
pub(crate) fn plan(
    isolation: &Isolation,
    cwd: Option<&Path>,
    cwd_pinned: bool,
    status: &mut SandboxStatus,
) -> IsolationSetup {
    let support = isolation_support();
    let mut refuse = |protections: &[Protection], reason: &str| {
        for protection in protections {
            protection.refused(status, reason);
        }
    };
    let mut applied: Vec<Protection> = Vec::new();

    let mut namespace_layers = vec![
        Protection::UserNamespace,
        Protection::PidNamespace,
        Protection::MountNamespace,
        Protection::IpcNamespace,
        Protection::UtsNamespace,
        Protection::CgroupNamespace,
        Protection::FreshProc,
    ];
    if !isolation.network {
        namespace_layers.push(Protection::NetworkNamespace);
    } else if isolation.private_network.is_some()
        // A forecast: the run starts its private network on first use.
        || (cwd.is_none() && crate::net::network_stack_found())
    {
        namespace_layers.push(Protection::NetworkNamespacePrivate);
    } else {
        let reason = match crate::net::current_stack() {
            Ok(_) => "the run's private network was not set up".to_owned(),
            Err(no_stack) => no_stack.to_string(),
        };
        refuse(&[Protection::NetworkNamespacePrivate], &reason);
    }
    let namespaces = wanted(
        &support.namespaces,
        isolation.layers.namespaces,
        &namespace_layers,
        &mut refuse,
    )
    .map(|()| {
        applied.extend(&namespace_layers);
        NamespacePlan::new(isolation.network, isolation.private_network.clone())
    });

    let view_layers = [
        Protection::FilesystemView,
        Protection::PrivateTmp,
        Protection::WorkspaceConfigReadOnly,
    ];
    let view = match wanted(
        &support.filesystem_view,
        isolation.layers.filesystem_view,
        &view_layers,
        &mut refuse,
    ) {
        None => None,
        Some(()) if namespaces.is_none() => {
            refuse(
                &view_layers,
                "it needs the namespaces, which are not applied",
            );
            None
        }
        Some(()) => match ViewPlan::new(isolation, cwd, cwd_pinned) {
            Ok(view) => {
                applied.extend(view_layers);
                Some(view)
            }
            Err(e) => {
                refuse(
                    &view_layers,
                    &format!("cannot plan the filesystem view: {e}"),
                );
                None
            }
        },
    };

    let landlock = match wanted(
        &support.landlock_abi,
        isolation.layers.landlock,
        &[Protection::LandlockFs],
        &mut refuse,
    ) {
        None => None,
        Some(abi) => {
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
                    if view.is_some() {
                        // The view's /tmp is a private tmpfs.
                        plan.allow_write_in_child(c"/tmp");
                    }
                    applied.push(Protection::LandlockFs);
                    if coverage.network {
                        applied.push(Protection::LandlockNet);
                    }
                    if coverage.scope {
                        applied.push(Protection::LandlockScope);
                    }
                    Some(plan)
                }
                Err(e) => {
                    refuse(
                        &[Protection::LandlockFs],
                        &format!("cannot plan the Landlock rules: {e}"),
                    );
                    None
                }
            }
        }
    };

    let seccomp_layers = [
        Protection::Seccomp,
        Protection::SeccompSuidSgid,
        Protection::SeccompNamespaces,
        Protection::SeccompAddressFamilies,
    ];
    let seccomp = match wanted(
        &support.seccomp,
        isolation.layers.seccomp,
        &seccomp_layers,
        &mut refuse,
    ) {
        None => None,
        Some(()) => match SeccompPlan::new(!isolation.network) {
            Ok(plan) => {
                applied.extend(seccomp_layers);
                Some(plan)
            }
            Err(reason) => {
                refuse(&seccomp_layers, &reason);
                None
            }
        },
    };

    let root = unix::running_as_root();
    // In a user namespace the first process holds every capability in it;
    // as real root, every capability there is: either way, drop them. Any
    // other user has none to drop (no_new_privs stops file capabilities).
    let drop_capabilities = isolation.layers.capabilities && (namespaces.is_some() || root);
    applied.push(Protection::NoNewPrivs);
    if isolation.layers.capabilities {
        applied.push(Protection::NoCapabilities);
    } else {
        refuse(&[Protection::NoCapabilities], SWITCHED_OFF);
    }
    for protection in applied {
        protection.applied(status);
    }

    IsolationSetup {
        namespaces,
        view,
        landlock,
        drop_capabilities,
        seccomp,
    }
}

/// What this machine offers for a layer the caller left `on`; `None`, with
/// each of `layers` refused for why, where it is switched off or the
/// machine lacks it.
fn wanted<'a, T>(
    support: &'a Result<T, String>,
    on: bool,
    layers: &[Protection],
    refuse: &mut impl FnMut(&[Protection], &str),
) -> Option<&'a T> {
    match (support, on) {
        (_, false) => {
            refuse(layers, SWITCHED_OFF);
            None
        }
        (Err(reason), true) => {
            refuse(layers, reason);
            None
        }
        (Ok(offered), true) => Some(offered),
    }
}

//! Hardening the worker process as its first acts: it holds the API key in
//! memory for the whole run, and it starts the tool processes that run the
//! model's code.
//!
//! A non-dumpable process cannot be ptrace-attached, and its
//! `/proc/<pid>/mem` and `environ` are owned by root, so another process of
//! the same user (a tool process outside its sandbox, anything else the
//! user runs) cannot read the key out of the worker. No core dump is
//! written either.
//!
//! When the supervisor runs as root the worker starts with every
//! capability, and it needs one: since Linux 5.12, mapping uid 0 into a
//! new user namespace (its tool processes map their uid to itself) needs
//! CAP_SETFCAP at the `unshare`. Nothing else: its tool processes get the
//! capabilities they set their sandbox up with in their user namespaces
//! (the first process of a new user namespace holds every capability in
//! it, whatever its parent held), the cgroups it makes and joins lie in its
//! own cgroup and belong to its uid, and the provider is reached over
//! plain sockets. So before it starts a thread it empties its effective,
//! inheritable, ambient and bounding sets and its permitted set but for
//! CAP_SETFCAP (a tool process raises it just before its `unshare`, in
//! the sandbox's child code), and sets `no_new_privs`: nothing it runs can
//! hold or regain a capability. This module must not drop what the worker
//! cannot run without; a new need for a capability belongs in the
//! supervisor.

use subagent_sandbox::OwnCapabilities;

/// Why the worker could not drop its privileges.
#[derive(Debug, thiserror::Error)]
pub enum HardenError {
    /// The capability sets could not be emptied.
    #[error("cannot drop the worker's capabilities: {0}")]
    Capabilities(#[source] std::io::Error),
    /// `PR_SET_NO_NEW_PRIVS` failed.
    #[error("cannot set no_new_privs: {0}")]
    NoNewPrivs(#[source] nix::Error),
}

/// Marks this process non-dumpable (`PR_SET_DUMPABLE 0`).
pub fn forbid_memory_reads() -> Result<(), nix::Error> {
    nix::sys::prctl::set_dumpable(false)
}

/// Empties every capability set of this process (the bounding set too
/// when it may: a root process; one that is not root holds none to drop)
/// but CAP_SETFCAP permitted to a root process (see the module doc), and
/// sets `no_new_privs`, so no exec can grant one again. Capability sets
/// and `no_new_privs` are per thread: call it before any thread starts.
pub fn drop_privileges() -> Result<OwnCapabilities, HardenError> {
    let bounding = subagent_sandbox::drop_own_capabilities().map_err(HardenError::Capabilities)?;
    nix::sys::prctl::set_no_new_privs().map_err(HardenError::NoNewPrivs)?;
    Ok(bounding)
}

#[cfg(test)]
mod tests {
    /// A field of this thread's `/proc` status.
    fn status(field: &str) -> String {
        let text = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(field))
            .unwrap()
            .trim()
            .to_owned()
    }

    #[test]
    fn the_process_is_not_dumpable_afterwards() {
        super::forbid_memory_reads().unwrap();
        assert!(!nix::sys::prctl::get_dumpable().unwrap());
    }

    // Runs on a thread of its own: the sets it empties are this thread's.
    #[test]
    fn no_capability_is_left_but_setfcap_permitted_to_root_and_none_can_be_gained() {
        let (dropped, after) = std::thread::spawn(|| {
            let dropped = super::drop_privileges().unwrap();
            let after = [
                "CapInh:",
                "CapPrm:",
                "CapEff:",
                "CapBnd:",
                "CapAmb:",
                "NoNewPrivs:",
            ]
            .map(status);
            (dropped, after)
        })
        .join()
        .unwrap();
        let zero = "0000000000000000";
        // The effective uid, the second of the four.
        let root = status("Uid:").split_whitespace().nth(1) == Some("0");
        let permitted = if root { "0000000080000000" } else { zero };
        assert_eq!(dropped.setfcap_permitted, root);
        assert_eq!(dropped.bounding_emptied, root);
        assert_eq!(
            [&after[0], &after[1], &after[2], &after[4], &after[5]],
            [zero, permitted, zero, zero, "1"],
            "{after:?}"
        );
        if root {
            assert_eq!(after[3], zero);
        }
    }
}

//! Hardening the worker process as its first act: it holds the API key in
//! memory for the whole run.
//!
//! A non-dumpable process cannot be ptrace-attached, and its
//! `/proc/<pid>/mem` and `environ` are owned by root, so another process of
//! the same user (a tool process outside its sandbox, anything else the
//! user runs) cannot read the key out of the worker. No core dump is
//! written either.

/// Marks this process non-dumpable (`PR_SET_DUMPABLE 0`).
pub fn forbid_memory_reads() -> Result<(), nix::Error> {
    nix::sys::prctl::set_dumpable(false)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_process_is_not_dumpable_afterwards() {
        super::forbid_memory_reads().unwrap();
        assert!(!nix::sys::prctl::get_dumpable().unwrap());
    }
}

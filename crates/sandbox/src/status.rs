//! The names of the protections a child can get, as they appear in
//! `SandboxStatus.applied` and `not_applied[].protection` of the session file.
//!
//! Written once here; nothing else spells these strings.

/// Protection names. Stable: operators grep session files for them.
pub mod protection {
    /// The child leads its own process group (so the group can be killed).
    pub const PROCESS_GROUP: &str = "process_group";
    /// The environment is exactly the one the caller gave.
    pub const ENV_CLEARED: &str = "env_cleared";
    /// stdin is /dev/null.
    pub const STDIN_NULL: &str = "stdin_null";
    /// No inherited fd beyond 0-2 and the protocol fd 3.
    pub const CLOSE_OTHER_FDS: &str = "close_other_fds";
    /// The child is SIGKILLed when the supervisor dies.
    pub const PARENT_DEATH_SIGNAL: &str = "parent_death_signal";
    /// No core dumps (RLIMIT_CORE 0).
    pub const RLIMIT_CORE: &str = "rlimit_core";
    /// Open files cap (RLIMIT_NOFILE).
    pub const RLIMIT_NOFILE: &str = "rlimit_nofile";
    /// File size cap (RLIMIT_FSIZE).
    pub const RLIMIT_FSIZE: &str = "rlimit_fsize";
    /// CPU time cap (RLIMIT_CPU).
    pub const RLIMIT_CPU: &str = "rlimit_cpu";
    /// Memory cap of the child's cgroup.
    pub const CGROUP_MEMORY: &str = "cgroup_memory";
    /// The memory cap includes swap.
    pub const CGROUP_MEMORY_SWAP: &str = "cgroup_memory_swap";
    /// Process count cap of the child's cgroup.
    pub const CGROUP_PIDS: &str = "cgroup_pids";
}

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
    /// New user namespace (tool processes).
    pub const USER_NAMESPACE: &str = "user_namespace";
    /// New pid namespace: the tool sees only its own tree.
    pub const PID_NAMESPACE: &str = "pid_namespace";
    /// New mount namespace.
    pub const MOUNT_NAMESPACE: &str = "mount_namespace";
    /// A fresh /proc of the new pid namespace.
    pub const FRESH_PROC: &str = "fresh_proc";
    /// New network namespace: only a down loopback.
    pub const NETWORK_NAMESPACE: &str = "network_namespace";
    /// Landlock filesystem rules: read-only system paths, read-write workspace and tmp.
    pub const LANDLOCK_FS: &str = "landlock_fs";
    /// Landlock TCP rules: no bind or connect (network off).
    pub const LANDLOCK_NET: &str = "landlock_net";
    /// Landlock scoping: no signals or abstract unix sockets outside the sandbox.
    pub const LANDLOCK_SCOPE: &str = "landlock_scope";
    /// A seccomp filter against ptrace, mount, keyctl, bpf, perf, modules (and inet sockets).
    pub const SECCOMP: &str = "seccomp";
    /// no_new_privs: exec cannot gain privileges.
    pub const NO_NEW_PRIVS: &str = "no_new_privs";
    /// Every capability dropped before exec.
    pub const NO_CAPABILITIES: &str = "no_capabilities";
}

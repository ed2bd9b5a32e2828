//! The protections a child can get: [`Protection`] inside the crate, and
//! their names as they appear in `SandboxStatus.applied` and
//! `not_applied[].protection` of the session file ([`protection`]).
//!
//! Each name is written once, in [`Protection::name`]; nothing else spells
//! these strings.

use subagent_protocol::session::{NotApplied, SandboxStatus};

/// One protection a child can get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protection {
    /// The child leads its own process group (so the group can be killed).
    ProcessGroup,
    /// The environment is exactly the one the caller gave.
    EnvCleared,
    /// stdin is /dev/null.
    StdinNull,
    /// No inherited fd beyond 0-2 and the protocol fd 3.
    CloseOtherFds,
    /// The child is SIGKILLed when the supervisor dies.
    ParentDeathSignal,
    /// No core dumps (RLIMIT_CORE 0).
    RlimitCore,
    /// Open files cap (RLIMIT_NOFILE).
    RlimitNofile,
    /// File size cap (RLIMIT_FSIZE).
    RlimitFsize,
    /// CPU time cap (RLIMIT_CPU).
    RlimitCpu,
    /// Memory cap per process (RLIMIT_DATA), where no cgroup caps memory.
    RlimitMemory,
    /// Memory cap of the child's cgroup.
    CgroupMemory,
    /// The memory cap includes swap.
    CgroupMemorySwap,
    /// Process count cap of the child's cgroup.
    CgroupPids,
    /// New user namespace (tool processes).
    UserNamespace,
    /// New pid namespace: the tool sees only its own tree.
    PidNamespace,
    /// New mount namespace.
    MountNamespace,
    /// A fresh /proc of the new pid namespace.
    FreshProc,
    /// New network namespace: only a down loopback.
    NetworkNamespace,
    /// With the network on: the run's private network namespace, reaching
    /// the outside through a user-mode stack, with the refused ranges
    /// refused by its routing rules (`crate::net`).
    NetworkNamespacePrivate,
    /// New IPC namespace: no host SysV IPC or POSIX message queues.
    IpcNamespace,
    /// New UTS namespace: the host name is the tool's own.
    UtsNamespace,
    /// New cgroup namespace: the tool's cgroup is the root it sees.
    CgroupNamespace,
    /// A fresh tmpfs root with read-only system paths and the writable roots only.
    FilesystemView,
    /// A private, size-capped tmpfs /tmp.
    PrivateTmp,
    /// `.subagent`, `.claude` and `.git` of a writable root bound read-only.
    WorkspaceConfigReadOnly,
    /// Landlock filesystem rules: read-only system paths, read-write workspace and tmp.
    LandlockFs,
    /// Landlock TCP rules: no bind or connect (network off).
    LandlockNet,
    /// Landlock scoping: no signals or abstract unix sockets outside the sandbox.
    LandlockScope,
    /// A seccomp filter against ptrace, mount, keyctl, bpf, perf, modules (and inet sockets).
    Seccomp,
    /// seccomp: no setuid or setgid mode bits (systemd's RestrictSUIDSGID).
    SeccompSuidSgid,
    /// seccomp: no new or joined namespaces (systemd's RestrictNamespaces).
    SeccompNamespaces,
    /// seccomp: sockets of the unix (and inet) families only (systemd's RestrictAddressFamilies).
    SeccompAddressFamilies,
    /// no_new_privs: exec cannot gain privileges.
    NoNewPrivs,
    /// Every capability dropped before exec.
    NoCapabilities,
}

impl Protection {
    /// The stable name operators grep session files for.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Protection::ProcessGroup => "process_group",
            Protection::EnvCleared => "env_cleared",
            Protection::StdinNull => "stdin_null",
            Protection::CloseOtherFds => "close_other_fds",
            Protection::ParentDeathSignal => "parent_death_signal",
            Protection::RlimitCore => "rlimit_core",
            Protection::RlimitNofile => "rlimit_nofile",
            Protection::RlimitFsize => "rlimit_fsize",
            Protection::RlimitCpu => "rlimit_cpu",
            Protection::RlimitMemory => "rlimit_memory",
            Protection::CgroupMemory => "cgroup_memory",
            Protection::CgroupMemorySwap => "cgroup_memory_swap",
            Protection::CgroupPids => "cgroup_pids",
            Protection::UserNamespace => "user_namespace",
            Protection::PidNamespace => "pid_namespace",
            Protection::MountNamespace => "mount_namespace",
            Protection::FreshProc => "fresh_proc",
            Protection::NetworkNamespace => "network_namespace",
            Protection::NetworkNamespacePrivate => "network_namespace_private",
            Protection::IpcNamespace => "ipc_namespace",
            Protection::UtsNamespace => "uts_namespace",
            Protection::CgroupNamespace => "cgroup_namespace",
            Protection::FilesystemView => "filesystem_view",
            Protection::PrivateTmp => "private_tmp",
            Protection::WorkspaceConfigReadOnly => "workspace_config_read_only",
            Protection::LandlockFs => "landlock_fs",
            Protection::LandlockNet => "landlock_net",
            Protection::LandlockScope => "landlock_scope",
            Protection::Seccomp => "seccomp",
            Protection::SeccompSuidSgid => "seccomp_suid_sgid",
            Protection::SeccompNamespaces => "seccomp_namespaces",
            Protection::SeccompAddressFamilies => "seccomp_address_families",
            Protection::NoNewPrivs => "no_new_privs",
            Protection::NoCapabilities => "no_capabilities",
        }
    }

    /// Records this protection as in force.
    pub(crate) fn applied(self, status: &mut SandboxStatus) {
        status.applied.push(self.name().to_owned());
    }

    /// Records this protection as not in force, with why.
    pub(crate) fn refused(self, status: &mut SandboxStatus, reason: impl Into<String>) {
        status.not_applied.push(NotApplied {
            protection: self.name().to_owned(),
            reason: reason.into(),
        });
    }
}

/// Protection names. Stable: operators grep session files for them.
pub mod protection {
    use super::Protection;

    /// The child leads its own process group (so the group can be killed).
    pub const PROCESS_GROUP: &str = Protection::ProcessGroup.name();
    /// The environment is exactly the one the caller gave.
    pub const ENV_CLEARED: &str = Protection::EnvCleared.name();
    /// stdin is /dev/null.
    pub const STDIN_NULL: &str = Protection::StdinNull.name();
    /// No inherited fd beyond 0-2 and the protocol fd 3.
    pub const CLOSE_OTHER_FDS: &str = Protection::CloseOtherFds.name();
    /// The child is SIGKILLed when the supervisor dies.
    pub const PARENT_DEATH_SIGNAL: &str = Protection::ParentDeathSignal.name();
    /// No core dumps (RLIMIT_CORE 0).
    pub const RLIMIT_CORE: &str = Protection::RlimitCore.name();
    /// Open files cap (RLIMIT_NOFILE).
    pub const RLIMIT_NOFILE: &str = Protection::RlimitNofile.name();
    /// File size cap (RLIMIT_FSIZE).
    pub const RLIMIT_FSIZE: &str = Protection::RlimitFsize.name();
    /// CPU time cap (RLIMIT_CPU).
    pub const RLIMIT_CPU: &str = Protection::RlimitCpu.name();
    /// Memory cap per process (RLIMIT_DATA), where no cgroup caps memory.
    pub const RLIMIT_MEMORY: &str = Protection::RlimitMemory.name();
    /// Memory cap of the child's cgroup.
    pub const CGROUP_MEMORY: &str = Protection::CgroupMemory.name();
    /// The memory cap includes swap.
    pub const CGROUP_MEMORY_SWAP: &str = Protection::CgroupMemorySwap.name();
    /// Process count cap of the child's cgroup.
    pub const CGROUP_PIDS: &str = Protection::CgroupPids.name();
    /// New user namespace (tool processes).
    pub const USER_NAMESPACE: &str = Protection::UserNamespace.name();
    /// New pid namespace: the tool sees only its own tree.
    pub const PID_NAMESPACE: &str = Protection::PidNamespace.name();
    /// New mount namespace.
    pub const MOUNT_NAMESPACE: &str = Protection::MountNamespace.name();
    /// A fresh /proc of the new pid namespace.
    pub const FRESH_PROC: &str = Protection::FreshProc.name();
    /// New network namespace: only a down loopback.
    pub const NETWORK_NAMESPACE: &str = Protection::NetworkNamespace.name();
    /// With the network on: the run's private network namespace.
    pub const NETWORK_NAMESPACE_PRIVATE: &str = Protection::NetworkNamespacePrivate.name();
    /// New IPC namespace: no host SysV IPC or POSIX message queues.
    pub const IPC_NAMESPACE: &str = Protection::IpcNamespace.name();
    /// New UTS namespace: the host name is the tool's own.
    pub const UTS_NAMESPACE: &str = Protection::UtsNamespace.name();
    /// New cgroup namespace: the tool's cgroup is the root it sees.
    pub const CGROUP_NAMESPACE: &str = Protection::CgroupNamespace.name();
    /// A fresh tmpfs root with read-only system paths and the writable roots only.
    pub const FILESYSTEM_VIEW: &str = Protection::FilesystemView.name();
    /// A private, size-capped tmpfs /tmp.
    pub const PRIVATE_TMP: &str = Protection::PrivateTmp.name();
    /// `.subagent`, `.claude` and `.git` of a writable root bound read-only.
    pub const WORKSPACE_CONFIG_READ_ONLY: &str = Protection::WorkspaceConfigReadOnly.name();
    /// Landlock filesystem rules: read-only system paths, read-write workspace and tmp.
    pub const LANDLOCK_FS: &str = Protection::LandlockFs.name();
    /// Landlock TCP rules: no bind or connect (network off).
    pub const LANDLOCK_NET: &str = Protection::LandlockNet.name();
    /// Landlock scoping: no signals or abstract unix sockets outside the sandbox.
    pub const LANDLOCK_SCOPE: &str = Protection::LandlockScope.name();
    /// A seccomp filter against ptrace, mount, keyctl, bpf, perf, modules (and inet sockets).
    pub const SECCOMP: &str = Protection::Seccomp.name();
    /// seccomp: no setuid or setgid mode bits (systemd's RestrictSUIDSGID).
    pub const SECCOMP_SUID_SGID: &str = Protection::SeccompSuidSgid.name();
    /// seccomp: no new or joined namespaces (systemd's RestrictNamespaces).
    pub const SECCOMP_NAMESPACES: &str = Protection::SeccompNamespaces.name();
    /// seccomp: sockets of the unix (and inet) families only (systemd's RestrictAddressFamilies).
    pub const SECCOMP_ADDRESS_FAMILIES: &str = Protection::SeccompAddressFamilies.name();
    /// no_new_privs: exec cannot gain privileges.
    pub const NO_NEW_PRIVS: &str = Protection::NoNewPrivs.name();
    /// Every capability dropped before exec.
    pub const NO_CAPABILITIES: &str = Protection::NoCapabilities.name();
}

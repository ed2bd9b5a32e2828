//! What a caller asks of the tool sandbox: which layers, which paths may be
//! read or written, and whether the network is on.
//!
//! Pure data. The defaults are the strict ones: every layer on, network off,
//! the system paths a Python interpreter needs readable, nothing writable
//! but what the caller names (the workspace and a private tmp dir).
//! `/etc/ssl` is listed by its public parts only: `/etc/ssl/private` holds
//! the host's TLS keys.

use std::path::PathBuf;
use std::sync::Arc;

use crate::net::PrivateNetwork;

/// System paths a tool process may read (and execute from), when they exist.
///
/// `/etc` is not listed whole: it holds files such as `/etc/shadow` that
/// a process running as the supervisor's user could read by ownership.
/// Only what the dynamic loader, name lookup, TLS and Python read is.
pub const SYSTEM_READ_ONLY_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/protocols",
    "/etc/services",
    "/etc/mime.types",
    "/etc/os-release",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/alternatives",
    "/etc/python3",
    "/etc/python3.11",
    "/etc/python3.12",
    "/etc/python3.13",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
];

/// Device files a tool process may write.
pub const SYSTEM_READ_WRITE_FILES: &[&str] = &["/dev/null", "/dev/full"];

/// Size of the private `/tmp` of the filesystem view, bytes: a tmpfs, so
/// what a tool writes there is memory (charged to its cgroup) and this cap
/// keeps one call from taking more than this of it.
pub const PRIVATE_TMP_BYTES: u64 = 256 * 1024 * 1024;

/// Entries of a writable root that the filesystem view binds read-only over
/// themselves, or takes the name of with an empty read-only placeholder
/// when absent: configuration the supervisor trusts (`.subagent/`,
/// `.claude/` agent files) and git's hooks and config, which run code on
/// the user's next `git status` or `git commit`.
pub const PROTECTED_WORKSPACE_ENTRIES: &[&str] = &[".subagent", ".claude", ".git"];

/// The layers of the tool sandbox. Each can be switched off on its own, so
/// a test can show that a probe really detects an escape when the layer
/// that stops it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layers {
    /// New user, pid, mount, IPC, UTS and cgroup namespaces with a fresh
    /// `/proc` that shows only the tool's own tree.
    pub namespaces: bool,
    /// The filesystem view (needs `namespaces`): a fresh tmpfs root with
    /// only the system paths (read-only), the writable roots, a private
    /// `/tmp`, a minimal `/dev` and the fresh `/proc`, entered by
    /// `pivot_root`; the host's root is detached.
    pub filesystem_view: bool,
    /// Landlock: reads limited to [`Isolation::read_only`] and
    /// [`Isolation::read_write`], writes to the latter.
    pub landlock: bool,
    /// A seccomp filter against ptrace, mount, keyctl, bpf, module loading,
    /// setuid/setgid modes, new namespaces, socket families other than
    /// unix (and inet with the network on).
    pub seccomp: bool,
    /// Every capability dropped before exec. Besides what capabilities
    /// grant directly, this is what keeps a tool that runs as the
    /// supervisor's own uid from reading the supervisor's `/proc/<pid>/mem`
    /// and `environ`: the kernel refuses those reads to a process whose
    /// capabilities are not a superset of the target's.
    pub capabilities: bool,
}

impl Default for Layers {
    fn default() -> Self {
        Self {
            namespaces: true,
            filesystem_view: true,
            landlock: true,
            seccomp: true,
            capabilities: true,
        }
    }
}

/// The tool sandbox asked for one child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isolation {
    /// Which layers to apply.
    pub layers: Layers,
    /// When false: a new network namespace (only a down `lo`), Landlock's
    /// TCP rules and the seccomp socket filter, as far as each layer is on.
    /// When true: the run's [`Isolation::private_network`], which the
    /// child joins before it makes its own namespaces (without one, the
    /// `network_namespace_private` layer is not applied).
    pub network: bool,
    /// The run's private network (with `network`): its namespaces are
    /// joined, and its `resolv.conf` is the view's `/etc/resolv.conf`.
    pub private_network: Option<Arc<PrivateNetwork>>,
    /// Paths that may be read and executed (directories: everything below).
    pub read_only: Vec<PathBuf>,
    /// Paths that may be read, written, created and removed below.
    pub read_write: Vec<PathBuf>,
    /// The tool's private tmp dir (its `TMPDIR` and `HOME`), when it has
    /// one. Without the filesystem view it is one of `read_write`; with it,
    /// it is a directory of the view's size-capped `/tmp` tmpfs (or a tmpfs
    /// of its own when it lies outside `/tmp`), and the host directory is
    /// not used.
    pub private_tmp: Option<PathBuf>,
    /// Size cap of the view's private `/tmp`, bytes.
    pub tmp_bytes: u64,
    /// Absolute paths that stay read-only although they lie inside one of
    /// `read_write`, besides [`PROTECTED_WORKSPACE_ENTRIES`]: what the host
    /// reads back that sits in the workspace (a sessions dir or results
    /// file the operator put there). Bound read-only over themselves by the
    /// filesystem view when they exist, with the directories above them
    /// held in place; a path outside every writable root needs no
    /// protection.
    pub protected: Vec<PathBuf>,
}

impl Isolation {
    /// Every layer on, network off, the system paths readable, the
    /// writable device files writable, and `read_write` (typically the
    /// workspace and a private tmp dir) writable.
    pub fn strict(read_write: Vec<PathBuf>) -> Self {
        let mut writable: Vec<PathBuf> =
            SYSTEM_READ_WRITE_FILES.iter().map(PathBuf::from).collect();
        writable.extend(read_write);
        Self {
            layers: Layers::default(),
            network: false,
            private_network: None,
            read_only: SYSTEM_READ_ONLY_PATHS.iter().map(PathBuf::from).collect(),
            read_write: writable,
            private_tmp: None,
            tmp_bytes: PRIVATE_TMP_BYTES,
            protected: Vec::new(),
        }
    }
}

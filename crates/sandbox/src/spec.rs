//! What the caller asks for: the program, its environment, its limits, and
//! how strict to be when a limit cannot be enforced.
//!
//! Pure data and defaults; nothing here touches the system except
//! [`allowlisted_env`], which reads this process's environment.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use subagent_protocol::Limits;

use crate::exit_watch::ExitNotice;
use crate::isolation::Isolation;
use crate::layer::WorkspaceLayer;

/// Environment variables a child may inherit by default. Everything else
/// (API keys, tokens, the supervisor's own settings) is dropped.
pub const DEFAULT_ENV_ALLOWLIST: &[&str] = &[
    "PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "TERM",
];

/// Head of each captured stream kept in memory, bytes: enough for the start
/// of an error report.
pub const DEFAULT_KEEP_HEAD_BYTES: usize = 64 * 1024;

/// Tail of each captured stream kept in memory, bytes: enough for the last
/// lines, where a crash usually explains itself.
pub const DEFAULT_KEEP_TAIL_BYTES: usize = 64 * 1024;

/// The variables of this process's environment named in `allow`, in the
/// order the environment lists them. Names match exactly.
pub fn allowlisted_env(allow: &[&str]) -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(name, _)| allow.iter().any(|allowed| name.as_os_str() == *allowed))
        .collect()
}

/// One child to run under limits.
#[derive(Debug)]
pub struct SandboxSpec {
    /// The program; without a `/` it is looked up in the `PATH` of [`Self::env`].
    pub program: PathBuf,
    /// Arguments after the program name.
    pub args: Vec<OsString>,
    /// Working directory of the child; must exist.
    pub cwd: PathBuf,
    /// `cwd` as the caller opened and checked it (a directory fd): the
    /// child enters it by this descriptor (`fchdir`), never by resolving
    /// `cwd` again, and the tool sandbox's view binds it as the writable
    /// root at `cwd`. A component of `cwd` swapped for a symlink after the
    /// caller's check then moves nothing. `None`: `cwd` is resolved at the
    /// start. Closed in the parent once the child is started.
    pub cwd_fd: Option<OwnedFd>,
    /// The child's entire environment; everything else is cleared. Build it
    /// with [`allowlisted_env`] and add what the child needs.
    pub env: Vec<(OsString, OsString)>,
    /// Becomes fd 3 in the child (the worker protocol socket); `None` = fd 3
    /// closed. The parent's copy is closed once the child is started.
    pub protocol_fd: Option<OwnedFd>,
    /// Resource caps.
    pub limits: ResourceLimits,
    /// What to do when a requested cap cannot be enforced.
    pub policy: SandboxPolicy,
    /// Output capture limits.
    pub capture: CaptureLimits,
    /// Time between SIGTERM and SIGKILL when the child is terminated.
    pub grace: Duration,
    /// The tool sandbox's layers (namespaces, Landlock, seccomp) on top of
    /// the above; `None` for a worker, which needs the network and its
    /// own files.
    pub isolation: Option<Isolation>,
    /// How the leader's exit is noticed: a pidfd held from the start (the
    /// default), or opened only after a hang-up, for a supervisor that
    /// counts its descriptors per child.
    pub exit_notice: ExitNotice,
    /// Run once the child's whole tree is dead and reaped, however it
    /// ended (waited for, or dropped and cleaned up without its owner):
    /// the place for checks of what the tree left behind.
    pub after_exit: Option<AfterExit>,
    /// A copy-on-write layer over the working directory, entered before
    /// exec ([`crate::layer`]); its descriptors come back with the child
    /// ([`crate::SandboxedChild::take_layer`]). `None`: the child works in
    /// the directory itself.
    pub layer: Option<WorkspaceLayer>,
    /// The child talks with its caller over stdin and stdout (an MCP
    /// server's stdio): stdin is a pipe, and its write end and stdout's
    /// read end come back with the child, uncaptured
    /// ([`crate::SandboxedChild::take_conversation`]); stderr is captured
    /// as always. `false`: stdin is `/dev/null` and stdout is captured.
    pub conversation: bool,
}

/// Work for the cleanup of a child's tree ([`SandboxSpec::after_exit`]).
/// It runs on a blocking thread; the child's `wait` returns after it.
pub struct AfterExit(Box<dyn FnOnce() + Send>);

impl AfterExit {
    /// `work`, to run once the tree is gone.
    pub fn new(work: impl FnOnce() + Send + 'static) -> Self {
        Self(Box::new(work))
    }

    pub(crate) fn run(self) {
        (self.0)();
    }
}

impl std::fmt::Debug for AfterExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AfterExit(..)")
    }
}

impl SandboxSpec {
    /// A spec with no arguments, an empty environment, no protocol fd, no
    /// resource caps, best-effort policy, default capture limits and the
    /// default kill grace of [`Limits::default`].
    pub fn new(program: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            cwd_fd: None,
            env: Vec::new(),
            protocol_fd: None,
            limits: ResourceLimits::default(),
            policy: SandboxPolicy::default(),
            capture: CaptureLimits::default(),
            grace: Duration::from_millis(Limits::default().kill_grace_ms),
            isolation: None,
            exit_notice: ExitNotice::default(),
            after_exit: None,
            layer: None,
            conversation: false,
        }
    }
}

/// Hard resource caps of one child; `None` leaves that resource alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Memory including swap, bytes (cgroup).
    pub memory_bytes: Option<u64>,
    /// Processes and threads of the whole tree (cgroup). At least 1: the
    /// child itself counts.
    pub pids: Option<u64>,
    /// Largest file the child may write, bytes (RLIMIT_FSIZE).
    pub file_size_bytes: Option<u64>,
    /// Open file descriptors (RLIMIT_NOFILE).
    pub open_files: Option<u64>,
    /// CPU seconds (RLIMIT_CPU).
    pub cpu_seconds: Option<u64>,
}

impl ResourceLimits {
    /// The caps of a protocol [`Limits`].
    pub fn from_limits(l: &Limits) -> Self {
        Self {
            memory_bytes: Some(l.memory_bytes),
            pids: Some(l.pids),
            file_size_bytes: Some(l.file_size_bytes),
            open_files: Some(l.open_files),
            cpu_seconds: l.cpu_seconds,
        }
    }

    /// True when a cgroup is needed to enforce these caps.
    pub(crate) fn wants_cgroup(&self) -> bool {
        self.memory_bytes.is_some() || self.pids.is_some()
    }
}

/// How strict the sandbox is about caps it cannot enforce.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SandboxPolicy {
    /// Run anyway and list the missing protections in the child's status.
    #[default]
    BestEffort,
    /// Refuse to start the child ([`crate::SpawnError::Unsandboxed`]).
    RequireAll,
}

/// Per-stream output limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureLimits {
    /// Stdout bytes after which the whole tree is killed.
    pub stdout_hard_bytes: u64,
    /// Stderr bytes after which the whole tree is killed.
    pub stderr_hard_bytes: u64,
    /// Bytes kept from the start of each stream.
    pub keep_head_bytes: usize,
    /// Bytes kept from the end of each stream.
    pub keep_tail_bytes: usize,
}

impl CaptureLimits {
    /// Hard limits of a protocol [`Limits`] with the default head and tail.
    pub fn from_limits(l: &Limits) -> Self {
        Self {
            stdout_hard_bytes: l.stdout_bytes,
            stderr_hard_bytes: l.stderr_bytes,
            keep_head_bytes: DEFAULT_KEEP_HEAD_BYTES,
            keep_tail_bytes: DEFAULT_KEEP_TAIL_BYTES,
        }
    }
}

impl Default for CaptureLimits {
    fn default() -> Self {
        Self::from_limits(&Limits::default())
    }
}

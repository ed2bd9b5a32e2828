//! Run one child process under hard limits, and make sure it and everything
//! it started is gone afterwards.
//!
//! Used by the supervisor (for worker processes) and by tools (for tool
//! processes). [`spawn`] takes a [`SandboxSpec`] and starts the program:
//! its own process group, an environment of exactly `spec.env`, stdin
//! `/dev/null` (or, for a conversation such as an MCP server's stdio, a
//! pipe from the caller), the protocol socket as fd 3 and no other inherited fd,
//! rlimits (core 0, open files, file size, CPU), a per-child cgroup with
//! memory (including swap) and pids caps where the machine allows it, and
//! `PR_SET_PDEATHSIG` so it dies with us. stdout and stderr are captured with
//! hard limits (head and tail kept). [`KillHandle::terminate`] sends SIGTERM to
//! the whole tree and SIGKILL after a grace period; [`SandboxedChild::wait`]
//! reports a [`ChildExit`] once the tree is dead and reaped, naming
//! descendants that outlived the leader ([`Termination::Leaked`]).
//!
//! Linux only. This crate never waits on "any child" and never signals a
//! process it cannot attribute to the child's tree: a process found by pid
//! (in `/proc` or a cgroup's member list) is signalled through a pidfd taken
//! before checking it is still the process that was found, and a cgroup is
//! frozen while its members are signalled. Nothing it does blocks the
//! caller's async runtime: cgroupfs work runs on its own threads.
//!
//! ```no_run
//! # async fn demo() -> Result<(), subagent_sandbox::SpawnError> {
//! use subagent_sandbox::{SandboxSpec, KillReason, allowlisted_env, DEFAULT_ENV_ALLOWLIST};
//!
//! let mut spec = SandboxSpec::new("/bin/sh", "/tmp");
//! spec.args = vec!["-c".into(), "echo hello".into()];
//! spec.env = allowlisted_env(DEFAULT_ENV_ALLOWLIST);
//! let child = subagent_sandbox::spawn(spec).await?;
//! let killer = child.killer(); // e.g. for a timer: killer.terminate(KillReason::Timeout)
//! let exit = child.wait().await;
//! assert!(exit.termination.is_success());
//! # drop(killer); Ok(()) }
//! ```

// Layers, lowest first; a module imports only from layers below its own:
// unix, procfs, status, job_thread, large_frees -> signal, chores, isolation,
// layer,
// exit_watch -> spec,
// error -> cgroup -> kill -> capture -> exit, leaks -> plan, pre_exec,
// spawner, reaper -> running -> child.
mod capabilities;
mod capture;
mod cgroup;
mod child;
mod chores;
mod error;
mod exit;
mod exit_watch;
mod finish;
mod forked;
pub mod interpreter;
mod isolation;
mod job_thread;
mod kill;
mod large_frees;
mod launch;
mod layer;
mod leaks;
pub mod net;
mod open_files;
mod placeholders;
mod plan;
mod pre_exec;
mod procfs;
mod reaper;
mod running;
mod signal;
mod spawner;
mod spec;
mod status;
mod unix;
mod vfork;

pub use capture::Captured;
pub use cgroup::{CgroupKind, cgroup_support, prewarm_attach};
pub use child::{Conversation, SandboxedChild, spawn};
pub use error::SpawnError;
pub use exit::{ChildExit, ResourceUsage, Termination};
pub use exit_watch::{ExitHint, ExitNotice};
pub use finish::finish_chores;
pub use interpreter::{Interpreter, python_interpreter, python_interpreter_if_known};
pub use isolation::{
    Isolation, IsolationSupport, Layers, OwnCapabilities, PRIVATE_TMP_BYTES,
    PROTECTED_WORKSPACE_ENTRIES, SYSTEM_READ_ONLY_PATHS, SYSTEM_READ_WRITE_FILES,
    drop_own_capabilities, isolation_status, isolation_support, prewarm_isolation_support,
};
pub use kill::{KillHandle, KillReason};
pub use large_frees::{LARGE_BLOCK_BYTES, return_large_frees_to_the_system};
pub use layer::spec::UPPER_DIR;
pub use layer::{LayerJoin, LayerStep, RunLayer, WorkspaceLayer};
pub use open_files::{OpenFilesLimit, open_files_limit, raise_open_files_limit};
pub use plan::resource_status;
pub use procfs::peak_rss_since_exec;
pub use running::PIPE_DRAIN_WINDOW;
pub use spec::{
    AfterExit, CaptureLimits, DEFAULT_ENV_ALLOWLIST, DEFAULT_KEEP_HEAD_BYTES,
    DEFAULT_KEEP_TAIL_BYTES, ResourceLimits, SandboxPolicy, SandboxSpec, allowlisted_env,
};
pub use status::protection;
pub use subagent_protocol::session::{NotApplied, SandboxStatus, Stream};
pub use unix::{RawExit, become_subreaper};

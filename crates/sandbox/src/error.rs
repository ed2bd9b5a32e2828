//! Why a child could not be started. Every message says what happened and
//! what to do next.

use std::io;
use std::path::PathBuf;

use subagent_protocol::session::NotApplied;

/// Why [`crate::spawn`] started nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The policy is [`crate::SandboxPolicy::RequireAll`] and some requested
    /// caps cannot be enforced here.
    #[error(
        "refusing to run unsandboxed: {}; lift those caps, fix the machine, or use the best-effort policy",
        describe(missing)
    )]
    Unsandboxed {
        /// The caps that could not be enforced, with why.
        missing: Vec<NotApplied>,
    },
    /// The program could not be started.
    #[error("failed to start {}: {source}; check the path and that it is executable", program.display())]
    Spawn {
        /// The program as given.
        program: PathBuf,
        /// What the kernel said.
        source: io::Error,
    },
    /// The working directory is missing or not a directory.
    #[error("working directory {} is not usable: {reason}; create it or pick another", cwd.display())]
    Cwd {
        /// The directory as given.
        cwd: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The plumbing around the child (pipes, the spawner thread)
    /// could not be set up.
    #[error(
        "failed to set up {what}: {source}; the process may be out of threads or file descriptors"
    )]
    Setup {
        /// What could not be set up.
        what: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// The working directory could not be put under a copy-on-write
    /// layer ([`crate::SandboxSpec::layer`]).
    #[error("cannot put the workspace under a copy-on-write layer: {}: {source}", step.describe())]
    Layer {
        /// The step that failed.
        step: crate::layer::LayerStep,
        /// What the kernel said.
        source: io::Error,
    },
    /// `spawn` was called outside a tokio runtime.
    #[error("spawn needs a tokio runtime with IO and time enabled; call it from inside one")]
    NoRuntime,
}

fn describe(missing: &[NotApplied]) -> String {
    missing
        .iter()
        .map(|n| format!("{} ({})", n.protection, n.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

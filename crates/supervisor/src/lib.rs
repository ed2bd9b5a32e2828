//! The subagent supervisor: runs subagents as sandboxed worker processes
//! and returns one result object per call.
//!
//! A parent hands it a [`run::RunRequest`]; the [`run::Supervisor`] admits
//! or refuses it (input, agent, depth, spawn gate, spawn cap, concurrency),
//! spawns the worker under `subagent-sandbox`, streams the worker's events
//! into the session file, enforces wall and idle timeouts with
//! Cancel-then-kill escalation, and assembles a sanitized, truncated
//! [`subagent_protocol::result::SubagentResult`].
//!
//! The `subagent` binary (`crates/cli`) is a thin CLI over this library.

#![forbid(unsafe_code)]

pub mod batch;
pub mod call;
pub mod doctor;
pub mod error_chain;
pub mod interrupt;
pub mod jobs;
pub mod layer;
pub mod live;
pub mod prepare;
pub mod replay;
pub mod request;
pub mod resume;
pub mod run;
pub mod sanitize;
pub mod serve;
pub mod telemetry;
pub mod truncate;

// Session files and the untrusted-input readers are a crate of their own
// (`subagent-session`); under their old names here, so callers keep their
// paths.
pub use subagent_session as session;
// Configuration is a crate of its own too (`subagent-config`); its
// modules keep their old paths here.
pub use subagent_config as config;
pub use subagent_config::{agents, env_lookup, mcp};
pub use subagent_session::{terminal_text, units, untrusted_file};

pub use run::{
    CANCEL_WINDOW, GateDecision, RunRequest, SpawnGate, Supervisor, SupervisorConfig, WorkerCommand,
};

//! Running subagents: admission (agent, tool subset, depth, gate,
//! concurrency, spawn cap), one child's life (spawn, handshake, events,
//! timeouts, escalation), the nested subagents it asks for (budget
//! reservation, the tree's spawn cap), the operator's settings as the
//! ceilings of what a request may ask, and the result assembled from it.
//!
//! Declares and re-exports only.

mod assemble;
mod ceiling_error;
mod ceilings;
mod child;
mod config;
mod context;
mod file_tools;
mod link;
mod modes;
mod nested;
mod progress;
mod python;
mod record;
mod request;
mod reservation;
mod supervisor;
mod tool_subset;
mod watch;

pub use ceiling_error::{CeilingError, Owner};
pub use ceilings::{Asked, Ceilings};
pub use config::{CANCEL_WINDOW, DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_PER_CALL, SupervisorConfig};
pub(crate) use context::{ending_of, summarize};
pub use modes::{PREVIOUS_PLACEHOLDER, check_concurrency, substitute_previous};
pub use progress::{ContentEvent, ContentSink, ProgressEvent, ProgressSink};
pub use request::{ResumeFrom, RunRequest, WorkerCommand};
pub use supervisor::{GateDecision, SpawnGate, Supervisor};

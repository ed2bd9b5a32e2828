//! Running subagents: admission (agent, tool subset, depth, gate,
//! concurrency, spawn cap), one child's life (spawn, handshake, events,
//! timeouts, escalation), and the result assembled from it.
//!
//! Declares and re-exports only.

mod assemble;
mod child;
mod context;
mod record;
mod request;
mod supervisor;
mod tool_subset;
mod watch;

pub use request::{RunRequest, WorkerCommand};
pub use supervisor::{GateDecision, SpawnGate, Supervisor, SupervisorConfig};

//! Running subagents, in one direction: decide, act, record.
//!
//! - decide: `supervisor.rs` is the way in (`plan.rs` runs a call's
//!   [`RunPlan`]: single, parallel or chain, composed in `modes.rs`); `admission.rs` admits or refuses
//!   (input, agent, tool subset, depth, gate, slots, spawn caps, a nested
//!   spawn's budget); `spec.rs` builds the task and sandbox specs (the
//!   request and its ceilings are [`crate::request`]'s).
//! - act: `child.rs` runs one child's life: spawn, then `watch.rs` (its
//!   `watch/phase.rs` and the ending table in `stop.rs`) until the tree is
//!   gone, driving the nested runs `nested.rs` builds; they go back up
//!   through the `NestedRunner` trait, never a back reference.
//! - record: `journal.rs` writes the session file and lifecycle lines;
//!   `assemble.rs` turns what happened into the result object.
//!
//! No module here imports one above it (`cargo xtask cycles` checks).
//! Declares and re-exports only.

mod admission;
mod assemble;
mod child;
mod config;
mod context;
mod ended_by;
mod file_tools;
mod journal;
mod layered;
mod link;
mod live_tokens;
mod modes;
mod nested;
mod open_files;
mod plan;
mod progress;
mod python;
mod record;
mod reservation;
mod spec;
mod stop;
mod supervisor;
mod tally;
#[cfg(test)]
pub(crate) mod test_events;
mod todos;
mod tool_subset;
mod watch;
mod workspace;

pub use admission::{GateDecision, SpawnGate};
pub use config::{
    CANCEL_WINDOW, DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_PER_CALL, MAX_CONCURRENT_CEILING,
    SupervisorConfig,
};
pub(crate) use journal::summarize;
pub use link::{FRAME_BUDGET_BYTES, SMALL_FRAME_RESERVE_BYTES};
pub use live_tokens::{CHARS_PER_TOKEN, LiveTokens, streamed_chars, thousands};
pub use modes::{PREVIOUS_PLACEHOLDER, check_concurrency, concurrency_for, substitute_previous};
pub use open_files::{
    FDS_BESIDES_SUBAGENTS, FDS_PER_LIVE_SUBAGENT, OpenFilesTooFew, check_open_files, fds_needed,
    live_subagents_that_fit,
};
pub use plan::RunPlan;
pub use progress::{ContentEvent, ContentSink, MAX_ACTIVE_TODO_BYTES, ProgressEvent, ProgressSink};
// The request and its ceilings are `crate::request`'s; under their old
// names here too, for callers of the library.
pub use crate::request::{
    Asked, CeilingError, Ceilings, Owner, ResumeFrom, RunRequest, WorkerCommand,
};
pub(crate) use stop::ending_of;
pub use supervisor::Supervisor;
pub use tally::{ChildProgress, ProgressTally, ProgressUsage};

//! Running subagents, one step after another (the loop is drawn in
//! docs/architecture.md, "The run loop"):
//!
//! - `supervisor.rs`: `impl Supervisor`, the whole of it: the way in for a
//!   run (`run`), the one dispatcher on a call's [`RunPlan`] (`execute`,
//!   the plan in `plan.rs`) and the modes composed from `run` (batch,
//!   parallel, chain; their pure pieces in `modes.rs`); `config.rs` the
//!   settings it runs children with.
//! - `admit/`: whether a run may start, and its specs.
//! - `child/`: one admitted run's life, spawn to reaped tree.
//! - `record/`: what happened, into the session file and
//!   the result object.
//! - `progress/`: live progress for the caller's display.
//!
//! The steps import in one direction: child uses admit and record; record
//! and progress use neither admit nor child (`cargo xtask cycles` checks
//! files; the groups hold by their module docs). Declares and re-exports
//! only.

mod admit;
mod child;
mod config;
mod modes;
mod plan;
mod progress;
mod record;
mod supervisor;

pub use admit::admission::{GateDecision, SpawnGate};
pub use admit::open_files::{
    FDS_BESIDES_SUBAGENTS, FDS_PER_LIVE_SUBAGENT, OpenFilesTooFew, check_open_files, fds_needed,
    live_subagents_that_fit,
};
pub use child::link::{FRAME_BUDGET_BYTES, SMALL_FRAME_RESERVE_BYTES};
pub use config::{
    CANCEL_WINDOW, DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_PER_CALL, MAX_CONCURRENT_CEILING,
    SupervisorConfig,
};
pub use modes::{PREVIOUS_PLACEHOLDER, check_concurrency, concurrency_for, substitute_previous};
pub use plan::RunPlan;
pub use progress::events::{
    ContentEvent, ContentSink, MAX_ACTIVE_TODO_BYTES, ProgressEvent, ProgressSink,
};
pub use progress::live_tokens::{CHARS_PER_TOKEN, LiveTokens, streamed_chars, thousands};
pub(crate) use record::journal::summarize;
// The request and its ceilings are `crate::request`'s; under their old
// names here too, for callers of the library.
pub use crate::request::{
    Asked, CeilingError, Ceilings, Owner, ResumeFrom, RunRequest, WorkerCommand,
};
pub use progress::tally::{ChildProgress, ProgressTally, ProgressUsage};
#[cfg(test)]
pub(crate) use progress::test_events;
pub(crate) use record::stop::ending_of;
pub use supervisor::Supervisor;

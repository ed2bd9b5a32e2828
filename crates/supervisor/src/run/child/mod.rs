//! Step 2, the child: one admitted run's life (`life.rs`): its session
//! file opened, the worker spawned under the sandbox with its workspace
//! layer (`layered.rs`) and Python (`python.rs`), the socket (`link.rs`)
//! watched frame by frame with wall and idle timeouts and Cancel-then-kill
//! escalation (`watch.rs`, its `watch/phase.rs` and `watch/spawns.rs`),
//! nested runs built (`nested.rs`) and sent back up through the
//! `NestedRunner` trait, never a back reference; `context.rs` is the state
//! the steps share.
//!
//! Must not decide admission (it asks `admit`) or write a session line or
//! a result itself (it hands what happened to `record`). Declares only.

pub(super) mod context;
pub(super) mod file_tools;
pub(super) mod layered;
pub(super) mod life;
pub(super) mod link;
pub(super) mod nested;
pub(super) mod python;
pub(super) mod watch;

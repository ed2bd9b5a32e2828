//! Step 1, admit: whether a run may start and what it starts from, decided
//! before any process or file exists. `admission.rs` is the only place
//! that checks input, agent, tool subset (`tool_subset.rs`), workspace
//! (`workspace.rs`), depth, spawn gate, slots and spawn caps, and a nested
//! spawn's share of its parent's budget (`reservation.rs`); `spec.rs`
//! turns an admitted request into the worker's task and sandbox specs;
//! `open_files.rs` checks the descriptor limit before a batch.
//!
//! Must not start a process, open a session file or import the later
//! steps (child, record): a refusal is a value the caller turns into a
//! result object. Declares only.

pub(super) mod admission;
pub(super) mod open_files;
pub(super) mod reservation;
pub(super) mod spec;
pub(super) mod tool_subset;
pub(super) mod workspace;

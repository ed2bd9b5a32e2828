//! The call_subagent contract (`subagent call`): the JSON a parent's tool
//! writes on the command's stdin ([`input`]) and the Server-Sent Events it
//! reads back ([`sse`]).
//!
//! This module only maps: stdin JSON onto run overrides and a run request,
//! and a child's progress and content onto SSE frames. It must not run
//! anything or write anywhere; the CLI does both.

pub mod input;
pub mod sse;

pub use input::{CallError, CallInput};
pub use sse::{DONE_MARKER, SseKind, SseRelay, frame};

//! Session files: where they live, and the one writer that appends to them.
//!
//! Declares and re-exports only; see [`paths`] and [`writer`].

pub mod paths;
pub mod writer;

pub use paths::{SessionPaths, default_sessions_dir};
pub use writer::{SessionWriter, SessionWriterError, append_to_parent, append_to_parent_blocking};

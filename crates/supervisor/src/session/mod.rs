//! Session files: where they live, the one writer that appends to them,
//! and reading them back for people.
//!
//! Declares and re-exports only; see [`paths`], [`writer`], [`read`],
//! [`format`], [`html`], [`replay`], [`history`] (a file read back into
//! the conversation a resumed run continues) and [`heads`] (every file's
//! header, for the links between runs).

pub mod format;
pub mod heads;
pub mod history;
pub mod html;
pub mod paths;
pub mod read;
pub mod replay;
pub mod writer;

pub use paths::{SessionPaths, default_sessions_dir};
pub use writer::{SessionWriter, SessionWriterError, append_to_parent, append_to_parent_blocking};

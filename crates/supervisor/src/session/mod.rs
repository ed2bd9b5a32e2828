//! Session files: where they live, the one writer that appends to them,
//! and reading them back for people.
//!
//! Declares and re-exports only; see [`paths`], [`writer`], [`read`], [`gc`],
//! [`ending`], [`format`], [`table`], [`html`], [`replay`], [`history`] (a
//! file read back into the conversation a resumed run continues) and
//! [`heads`] (every file's header, for the links between runs); files read
//! back are opened by [`untrusted`] and believed only as far as their
//! [`chain`] (keyed by [`key`]) holds.

pub mod chain;
pub mod display;
pub mod ending;
pub mod format;
pub mod gc;
pub mod heads;
pub mod history;
pub mod html;
pub mod html_chart;
mod html_frame;
pub mod html_text;
pub mod key;
pub mod paths;
pub mod read;
pub mod replay;
pub mod table;
pub mod tail;
pub mod untrusted;
pub mod verified;
pub mod writer;

pub use paths::{SessionPaths, default_sessions_dir};
pub use writer::{
    SessionWriter, SessionWriterError, append_to_parent, append_to_parent_blocking,
    append_to_same_blocking,
};

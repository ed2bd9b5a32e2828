//! How a call ran (`single`, `parallel`, `chain`, `management`): written in
//! result objects and in session files' lifecycle lines, so it sits below
//! both ([`crate::result`] re-exports it where it was always named).
//!
//! A serialized form only; it decides nothing.

use serde::{Deserialize, Serialize};

/// How the call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One child.
    Single,
    /// Several children at once.
    Parallel,
    /// Children one after another, each fed the previous output.
    Chain,
    /// No child ran: a management answer (depth guard, listing, refusal).
    Management,
}

impl Mode {
    /// The mode as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Parallel => "parallel",
            Mode::Chain => "chain",
            Mode::Management => "management",
        }
    }
}

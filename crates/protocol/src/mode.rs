//! How a call runs its children ([`RunMode`]: `single`, `parallel`,
//! `chain`), the one spelling of it that the CLI, both servers, the jobs
//! registry and session files' lifecycle lines share; and how a result
//! object says it ran ([`Mode`]: a run mode, or `management` when no
//! child ran). Both sit below results and session lines, which write them.
//!
//! Serialized forms only; they decide nothing. The spellings are a wire
//! format (session files, serve and MCP messages): a variant is renamed
//! only with a format-version bump.

use serde::{Deserialize, Serialize};

/// How a call runs its children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunMode {
    /// One child.
    #[default]
    Single,
    /// Several children at once.
    Parallel,
    /// Children one after another, each fed the previous output.
    Chain,
}

impl RunMode {
    /// Every run mode, in the order help texts list them.
    pub const ALL: [RunMode; 3] = [RunMode::Single, RunMode::Parallel, RunMode::Chain];

    /// The mode as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Single => "single",
            RunMode::Parallel => "parallel",
            RunMode::Chain => "chain",
        }
    }
}

impl std::fmt::Display for RunMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the call that made a result ran: a [`RunMode`], or `management`
/// for an answer no child gave (a depth guard, a listing, a refusal).
/// Written as one lowercase string either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// No child ran: a management answer.
    Management,
    /// Children ran, this way.
    #[serde(untagged)]
    Run(RunMode),
}

impl Mode {
    /// The mode as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Management => "management",
            Mode::Run(mode) => mode.as_str(),
        }
    }

    /// The run mode, `None` for a management answer.
    pub fn run_mode(self) -> Option<RunMode> {
        match self {
            Mode::Management => None,
            Mode::Run(mode) => Some(mode),
        }
    }
}

impl From<RunMode> for Mode {
    fn from(mode: RunMode) -> Self {
        Mode::Run(mode)
    }
}

#[cfg(test)]
#[path = "mode_tests.rs"]
mod tests;

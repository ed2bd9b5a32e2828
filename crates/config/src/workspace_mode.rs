//! How a run's tools see the workspace and when its changes are applied:
//! the two settings flags, agent files and config files name. Names and
//! parsing only; the layer that carries them out is the supervisor's.

use std::fmt;
use std::str::FromStr;

/// How a run's tools see the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkspaceIsolation {
    /// Through a copy-on-write layer of its own; changes are applied when
    /// the run completes.
    #[default]
    Overlay,
    /// The workspace itself: writes land as they happen.
    None,
}

/// When a run's changes are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApplyMode {
    /// When the run completes.
    #[default]
    OnSuccess,
    /// Never by the run: kept for `subagent apply`.
    Never,
}

impl WorkspaceIsolation {
    /// The name flags and files use.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceIsolation::Overlay => "overlay",
            WorkspaceIsolation::None => "none",
        }
    }
}

impl ApplyMode {
    /// The name flags and files use.
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyMode::OnSuccess => "on-success",
            ApplyMode::Never => "never",
        }
    }
}

impl FromStr for WorkspaceIsolation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "overlay" => Ok(WorkspaceIsolation::Overlay),
            "none" => Ok(WorkspaceIsolation::None),
            other => Err(format!("isolation `{other}` is not one of: overlay, none")),
        }
    }
}

impl FromStr for ApplyMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "on-success" | "on_success" => Ok(ApplyMode::OnSuccess),
            "never" => Ok(ApplyMode::Never),
            other => Err(format!("apply `{other}` is not one of: on-success, never")),
        }
    }
}

impl fmt::Display for WorkspaceIsolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ApplyMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

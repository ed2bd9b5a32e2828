//! What a run changed in its workspace, and what became of it: the
//! `changes` object of a single result and the `changes` line of a session
//! file. JSON types (never on the wire): optional fields are omitted when
//! absent, names are camelCase.

use serde::{Deserialize, Serialize};

/// A run's changes (a run with a copy-on-write layer: `--isolation
/// overlay`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// Every path the run changed, in path order.
    pub files: Vec<ChangedFile>,
    /// Paths applied to the workspace.
    pub applied: Vec<String>,
    /// Paths left alone because the workspace's file changed after the
    /// run started (the workspace's version is kept).
    pub conflicts: Vec<ChangeIssue>,
    /// Paths never applied: under `.git`, `.subagent`, `.claude` or another
    /// protected path, setuid or setgid, a device, FIFO or socket, a
    /// symlink out of the workspace.
    pub refused: Vec<ChangeIssue>,
    /// Why nothing was applied, when nothing was: the run did not complete,
    /// or `--apply never`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub not_applied: Option<String>,
    /// Where the changes left unapplied are kept (`subagent diff RUN`,
    /// `subagent apply RUN`), when they are.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub layer: Option<String>,
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangedFile {
    /// Relative to the workspace.
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
    /// Bytes of the new content (0 for deletions and directories).
    pub bytes: u64,
    /// The path it was renamed from (`kind: renamed`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub from: Option<String>,
}

/// What happened to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// New.
    Added,
    /// Its content, mode or type changed.
    Modified,
    /// Removed.
    Deleted,
    /// Moved from `from`, content unchanged.
    Renamed,
}

impl ChangeKind {
    /// The name the JSON uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Renamed => "renamed",
        }
    }
}

/// A path that was not applied, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeIssue {
    /// Relative to the workspace.
    pub path: String,
    /// Why, for a person.
    pub reason: String,
}

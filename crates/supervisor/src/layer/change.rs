//! One change of a run's layer, as collected and as kept: the path, what
//! happened to it, what the path holds now, and whether it may be applied.
//!
//! Data only; the JSON shape of a kept layer's manifest is this module's
//! serde derive.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use subagent_protocol::changes::{ChangeKind, ChangedFile};

/// What a changed path holds after the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Node {
    /// A regular file of `bytes` bytes.
    File { mode: u32, bytes: u64 },
    /// A directory (its entries are changes of their own).
    Dir { mode: u32 },
    /// A symbolic link.
    Symlink { target: String },
    /// A FIFO, socket or device: never applied.
    Special { what: String },
    /// Nothing: the path was deleted.
    Gone,
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Change {
    /// Relative to the workspace; UTF-8 (a name that is not is refused
    /// when collected).
    pub(crate) path: String,
    pub(crate) kind: ChangeKind,
    pub(crate) node: Node,
    /// For `renamed`: the path it came from.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) from: Option<String>,
    /// Why it is never applied, when it is not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) refused: Option<String>,
}

impl Change {
    pub(crate) fn new(path: String, kind: ChangeKind, node: Node) -> Self {
        Self {
            path,
            kind,
            node,
            from: None,
            refused: None,
        }
    }

    pub(crate) fn rel(&self) -> &Path {
        Path::new(&self.path)
    }

    /// Bytes of the new content.
    pub(crate) fn bytes(&self) -> u64 {
        match self.node {
            Node::File { bytes, .. } => bytes,
            _ => 0,
        }
    }

    /// The entry of the result's `changes.files`.
    pub(crate) fn to_file(&self) -> ChangedFile {
        ChangedFile {
            path: self.path.clone(),
            kind: self.kind,
            bytes: self.bytes(),
            from: self.from.clone(),
        }
    }
}

/// Opens the new content of a changed file: from the live layer, or from
/// a kept layer's copy.
pub(crate) trait Contents {
    fn open(&self, change: &Change) -> std::io::Result<std::fs::File>;
}

/// `path`'s parent and name, for `*at` calls (`("", name)` at the root).
pub(crate) fn split(path: &Path) -> (PathBuf, PathBuf) {
    let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = path
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    (parent, name)
}

//! A unified diff of changes against the workspace as it is now, in git's
//! form (`diff --git`, `--- a/`, `+++ b/`, mode and rename lines), for
//! `subagent diff RUN`. Binary content (a NUL byte, or not UTF-8) is named,
//! not shown.
//!
//! Reads only.

use std::fmt::Write as _;
use std::os::fd::BorrowedFd;
use std::path::Path;

use similar::TextDiff;
use subagent_protocol::changes::ChangeKind;

use super::change::{Change, Contents, Node};
use super::collect::{open_file, read_up_to};

/// Largest file shown in a diff, bytes; larger ones are named.
const DIFF_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The diff of `changes` against `workspace`, reading new contents
/// through `contents`.
pub(crate) fn unified(
    changes: &[Change],
    workspace: BorrowedFd<'_>,
    contents: &dyn Contents,
) -> String {
    let mut out = String::new();
    for change in changes {
        let path = &change.path;
        let old_path = change.from.as_deref().unwrap_or(path);
        let _ = writeln!(out, "diff --git a/{old_path} b/{path}");
        if let Some(reason) = &change.refused {
            let _ = writeln!(out, "# refused: {reason}");
        }
        match change.kind {
            ChangeKind::Added => {
                let _ = writeln!(out, "new file mode {}", mode_of(&change.node));
            }
            ChangeKind::Deleted => {
                let _ = writeln!(out, "deleted file");
            }
            ChangeKind::Renamed => {
                let _ = writeln!(out, "rename from {old_path}\nrename to {path}");
            }
            ChangeKind::Modified => {}
        }
        let old = if change.kind == ChangeKind::Added {
            Some(Vec::new())
        } else {
            read(workspace, Path::new(old_path))
        };
        let new = match &change.node {
            Node::Gone => Some(Vec::new()),
            Node::File { .. } if change.refused.is_none() => contents
                .open(change)
                .ok()
                .and_then(|f| read_up_to(f, DIFF_FILE_BYTES).ok().flatten()),
            Node::Symlink { target } => Some(target.clone().into_bytes()),
            Node::Dir { mode } => {
                let _ = writeln!(out, "directory, mode {mode:o}");
                continue;
            }
            _ => None,
        };
        match (old, new) {
            (Some(old), Some(new)) => match (text(&old), text(&new)) {
                (Some(old), Some(new)) => {
                    let diff = TextDiff::from_lines(old, new);
                    let from = if change.kind == ChangeKind::Added {
                        "/dev/null".to_owned()
                    } else {
                        format!("a/{old_path}")
                    };
                    let to = if change.kind == ChangeKind::Deleted {
                        "/dev/null".to_owned()
                    } else {
                        format!("b/{path}")
                    };
                    let _ = write!(out, "{}", diff.unified_diff().header(&from, &to));
                }
                _ => {
                    let _ = writeln!(out, "Binary files a/{old_path} and b/{path} differ");
                }
            },
            _ => {
                let _ = writeln!(out, "(content not shown: not readable, or over 8 MiB)");
            }
        }
    }
    out
}

fn mode_of(node: &Node) -> String {
    match node {
        Node::File { mode, .. } => format!("{:o}", 0o100_000 | mode),
        Node::Dir { mode } => format!("{:o}", 0o040_000 | mode),
        Node::Symlink { .. } => "120000".into(),
        _ => "0".into(),
    }
}

fn read(root: BorrowedFd<'_>, rel: &Path) -> Option<Vec<u8>> {
    open_file(root, rel)
        .ok()
        .and_then(|f| read_up_to(f, DIFF_FILE_BYTES).ok().flatten())
}

fn text(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

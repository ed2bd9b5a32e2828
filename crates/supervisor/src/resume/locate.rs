//! Which session file a resume names. The operator's CLI may name a run by
//! id, unique prefix or file; a server's client (serve `resume`, MCP
//! `resume`) names a run id only, and reaches only the runs whose recorded
//! workspace lies within the server's: the prefix is matched against the
//! chained headers of those runs alone, and an ambiguous prefix says how
//! many of them match, never which, so no run id is learned from an error.
//!
//! It reads headers (first lines, chained: [`crate::session::heads`]) and
//! never the rest of a file; it decides nothing about continuing.

use std::path::{Path, PathBuf};

use super::ResumeError;
use crate::session::heads::first_header;
use crate::session::read::{find_session, list_session_files};

/// Longest run id a server's client may give: ids are UUIDs (36), and a
/// prefix is shorter.
const MAX_RUN_ID: usize = 64;

/// The session file `target` names for the operator: a path, or a run id
/// (or a unique prefix of one) under `sessions_dir`.
pub fn locate(sessions_dir: &Path, target: &str) -> Result<PathBuf, ResumeError> {
    find_session(sessions_dir, target).map_err(|source| ResumeError::Find {
        target: target.to_owned(),
        source,
    })
}

/// The session file of run `target` (an id or a unique prefix of one) for
/// a server's client: among the runs under `sessions_dir` whose chained
/// header names a workspace within `workspace`, and no other.
pub fn locate_in_reach(
    sessions_dir: &Path,
    target: &str,
    workspace: &Path,
) -> Result<PathBuf, ResumeError> {
    let looks_like_id = !target.is_empty()
        && target.len() <= MAX_RUN_ID
        && target
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !looks_like_id {
        return Err(ResumeError::NotAnId {
            target: target.chars().take(MAX_RUN_ID * 2).collect(),
        });
    }
    let not_found = || ResumeError::NotInReach {
        target: target.to_owned(),
        workspace: workspace.to_owned(),
    };
    let workspace = std::fs::canonicalize(workspace).map_err(|_| not_found())?;
    let files = list_session_files(sessions_dir).map_err(|_| not_found())?;
    let mut found: Vec<PathBuf> = files
        .into_iter()
        // File names start with the run id: a cheap first cut before the
        // headers are read.
        .filter(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(target))
        })
        .filter(|f| {
            first_header(f).is_some_and(|(_, header)| {
                header.run_id.starts_with(target)
                    && std::fs::canonicalize(&header.cwd)
                        .is_ok_and(|cwd| cwd.starts_with(&workspace))
            })
        })
        .collect();
    match found.len() {
        0 => Err(not_found()),
        1 => Ok(found.remove(0)),
        count => Err(ResumeError::AmbiguousInReach {
            target: target.to_owned(),
            count,
        }),
    }
}

//! `subagent sessions gc`: choosing session files older than an age (by
//! their header's timestamp) and removing them with their full-output
//! siblings, their runs' kept copy-on-write layers
//! (`<sessions dir>/layers/<runId>/`) and the date dirs they leave empty.
//!
//! It deletes only whole files the caller chose from [`plan_gc`]; it never
//! edits a session file.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use subagent_protocol::session::SessionEntry;

use super::read::{ReadError, ReadItem, list_session_files, parse_line, parse_timestamp};
use crate::untrusted_file::open_read_existing;

/// A session file chosen for removal, with its full-output sibling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcVictim {
    /// The `.jsonl` file.
    pub session_file: PathBuf,
    /// The `.output.txt` sibling, when it exists.
    pub output_file: Option<PathBuf>,
    /// The header's timestamp.
    pub started_at: String,
    /// The run's kept changes (`layers/<runId>/`), when it has any.
    pub kept_layer: Option<PathBuf>,
}

/// Session files whose header timestamp is older than `older_than` before
/// `now`. The start is taken from the header, not the file's mtime, because
/// a copied or restored file keeps its content but not its mtime. Files
/// without a readable header are never chosen.
pub fn plan_gc(
    sessions_dir: &Path,
    older_than: Duration,
    now: SystemTime,
) -> Result<Vec<GcVictim>, ReadError> {
    let Some(cutoff) = now.checked_sub(older_than) else {
        return Ok(Vec::new());
    };
    let mut victims = Vec::new();
    for file in list_session_files(sessions_dir)? {
        // A file that cannot be read as a session file (a link, a FIFO, a
        // device) has no readable header: never chosen, never a reason to
        // stop.
        let Ok(Some((started_at, run_id))) = header_of(&file) else {
            continue;
        };
        if parse_timestamp(&started_at).is_none_or(|t| t >= cutoff) {
            continue;
        }
        let output = file.with_extension("output.txt");
        // A header is the run's own writing, read back: its id names a
        // directory of the layers dir only when it is a plain name.
        let kept_layer = Some(crate::paths::layers_dir(sessions_dir).join(&run_id)).filter(|dir| {
            !run_id.is_empty()
                && !run_id.starts_with('.')
                && !run_id.contains('/')
                && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        });
        victims.push(GcVictim {
            output_file: output.is_file().then_some(output),
            session_file: file,
            started_at,
            kept_layer,
        });
    }
    Ok(victims)
}

/// Longest header line read (1 MiB): a header with a long task, not a
/// file of one endless line.
const HEADER_LINE_CAP: u64 = 1024 * 1024;

/// The timestamp and run id of the first line, when it is a `session`
/// header.
fn header_of(path: &Path) -> Result<Option<(String, String)>, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_owned(),
        source,
    };
    let file = open_read_existing(path)?.file;
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(std::io::Read::take(file, HEADER_LINE_CAP)),
        &mut first,
    )
    .map_err(io)?;
    Ok(match parse_line(1, first.trim_end_matches('\n')) {
        ReadItem::Line(l) => match l.entry {
            SessionEntry::Session(header) => Some((l.timestamp, header.run_id)),
            _ => None,
        },
        _ => None,
    })
}

/// Removes the victims' files, then the day, month and year dirs under
/// `sessions_dir` left empty. Returns every path removed, in order.
pub fn remove_sessions(
    sessions_dir: &Path,
    victims: &[GcVictim],
) -> Result<Vec<PathBuf>, ReadError> {
    let mut removed = Vec::new();
    for v in victims {
        for file in std::iter::once(&v.session_file).chain(v.output_file.as_ref()) {
            match std::fs::remove_file(file) {
                Ok(()) => removed.push(file.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(ReadError::Io {
                        path: file.clone(),
                        source,
                    });
                }
            }
        }
        if let Some(layer) = &v.kept_layer {
            match std::fs::remove_dir_all(layer) {
                Ok(()) => removed.push(layer.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(ReadError::Io {
                        path: layer.clone(),
                        source,
                    });
                }
            }
        }
        // Day, then month, then year; stop at the first that is not empty
        // and never go above the sessions dir.
        let mut dir = v.session_file.parent();
        for _ in 0..3 {
            let Some(d) = dir else { break };
            if d == sessions_dir || !d.starts_with(sessions_dir) {
                break;
            }
            let empty = std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_none());
            if !empty || std::fs::remove_dir(d).is_err() {
                break;
            }
            removed.push(d.to_owned());
            dir = d.parent();
        }
    }
    Ok(removed)
}

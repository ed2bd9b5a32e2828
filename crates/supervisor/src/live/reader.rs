//! `subagent ps`'s side: the live records under a sessions dir whose
//! writer provably lives, as entries with their durations worked out.
//!
//! Every file in `.live/` is untrusted input: opened without following a
//! link or waiting on a FIFO ([`crate::untrusted_file`]), read no further
//! than [`MAX_RECORD_BYTES`], and believed only as the module doc of
//! [`super`] says (seal, lock held by the process the record names, that
//! process's start time). A record nobody holds a lock on is a dead run's
//! (its supervisor was killed before it could remove it) and is removed;
//! nothing else is ever written or removed.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::record::{LiveRecord, LiveState, MAX_RECORD_BYTES, RecordError};
use super::spare::SPARE_PREFIX;
use super::{LIVE_DIR, lock, process};
use crate::session::key::{SessionKey, session_key};
use crate::untrusted_file::open_read;

/// Reads of one record before it is given up: a read that meets a rewrite
/// sees a torn record whose seal fails; the next read sees a whole one.
const READ_ATTEMPTS: usize = 3;

/// One live run as `subagent ps` shows it (and prints with `--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveEntry {
    /// The run's id.
    pub run_id: String,
    /// The id of the run that started it (nested runs), else `null`.
    pub parent_run_id: Option<String>,
    /// The agent it runs.
    pub agent: String,
    /// The model it asks.
    pub model: String,
    /// What it does now (`queued`, `starting`, `waiting_for_model`,
    /// `streaming`, `running_tool`, `working`, `finishing`).
    pub state: LiveState,
    /// The tool that runs, in state `running_tool`, else `null`.
    pub tool: Option<String>,
    /// How long it has been in that state, ms.
    pub state_ms: u64,
    /// How long since its worker last sent an event, ms (to within a
    /// second; since the run started, before the first event).
    pub silent_ms: u64,
    /// True when `silentMs` is past the threshold asked for.
    pub silent: bool,
    /// Model turns begun.
    pub turns: u32,
    /// Prompt tokens billed at the full price, finished turns.
    pub input_tokens: u64,
    /// Prompt tokens the provider's cache handled.
    pub cached_input_tokens: u64,
    /// Completion tokens, finished turns.
    pub output_tokens: u64,
    /// US dollars so far.
    pub cost: f64,
    /// The worker's pid, once spawned.
    pub pid: Option<u32>,
    /// The supervisor's pid (the `subagent run`, `serve` or `batch`
    /// process that runs it).
    pub supervisor_pid: u32,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// How long it has run, ms.
    pub elapsed_ms: u64,
    /// Its session file, once created.
    pub session_file: Option<String>,
}

/// What a look at the live records found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveListing {
    /// The live runs, oldest first.
    pub runs: Vec<LiveEntry>,
    /// Files that were not believed: not sealed under this user's key, or
    /// held by a process other than the one they name.
    pub not_believed: usize,
    /// Dead runs' records removed (no process held them).
    pub removed: usize,
}

/// Why the live records cannot be listed.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// `.live` is there but is no directory of this user's.
    #[error(
        "{} is not a directory of this user's (a link or a file put there?); remove it and the next run makes it again",
        path.display()
    )]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// It cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No key to check seals with.
    #[error(transparent)]
    Key(#[from] crate::session::key::KeyError),
}

/// The live runs under `sessions_dir`, at this moment; a run silent
/// longer than `silent_after` is flagged.
pub fn list_live(sessions_dir: &Path, silent_after: Duration) -> Result<LiveListing, LiveError> {
    let dir = sessions_dir.join(LIVE_DIR);
    let meta = match std::fs::symlink_metadata(&dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LiveListing::default()),
        Err(source) => return Err(LiveError::Io { path: dir, source }),
    };
    if !meta.is_dir() {
        return Err(LiveError::NotADirectory { path: dir });
    }
    let key = session_key()?;
    let entries = std::fs::read_dir(&dir).map_err(|source| LiveError::Io {
        path: dir.clone(),
        source,
    })?;
    let now = unix_ms(SystemTime::now());
    let mut starts = StartTimes::default();
    let mut listing = LiveListing::default();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            listing.not_believed += 1;
            continue;
        };
        // A record being made is named `.<id>.new` until it is locked; a
        // spare ([`super::spare`]) is kept locked by its process, and is
        // removed once nobody holds it.
        if name.starts_with('.') {
            if name.starts_with(SPARE_PREFIX) && unheld(&entry.path()) {
                let _ = std::fs::remove_file(entry.path());
            }
            continue;
        }
        match read_record(&entry.path(), name, key, &mut starts) {
            Verdict::Live(record) => listing.runs.push(entry_of(*record, now, silent_after)),
            Verdict::Dead => {
                if std::fs::remove_file(entry.path()).is_ok() {
                    listing.removed += 1;
                }
            }
            Verdict::Gone => {}
            Verdict::NotBelieved => listing.not_believed += 1,
        }
    }
    listing
        .runs
        .sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
    Ok(listing)
}

/// What one file of `.live/` is.
enum Verdict {
    /// A live run's record.
    Live(Box<LiveRecord>),
    /// Nobody holds it: its writer is dead.
    Dead,
    /// It went while it was looked at (its run ended).
    Gone,
    /// Not a record to believe.
    NotBelieved,
}

/// Start times of the supervisors met, each asked of `/proc` once.
#[derive(Default)]
struct StartTimes(HashMap<u32, Option<u64>>);

impl StartTimes {
    fn of(&mut self, pid: u32) -> Option<u64> {
        *self
            .0
            .entry(pid)
            .or_insert_with(|| process::start_time(pid))
    }
}

fn read_record(path: &Path, name: &str, key: &SessionKey, starts: &mut StartTimes) -> Verdict {
    let opened = match open_read(path) {
        Ok(Some(opened)) => opened,
        Ok(None) => return Verdict::Gone,
        Err(_) => return Verdict::NotBelieved,
    };
    let Ok(holder) = lock::holder(&opened.file) else {
        return Verdict::NotBelieved;
    };
    let record = read_sealed(&opened.file, key);
    let holder = match (holder, &record) {
        (Some(pid), _) => pid,
        // A process never sees its own locks as a conflict: a record of
        // this very process (a library caller listing its own runs) shows
        // as unlocked, and is believed on its seal, pid and start time.
        (None, Some(own)) if own.supervisor_pid == std::process::id() => own.supervisor_pid,
        (None, _) => return Verdict::Dead,
    };
    let Some(record) = record else {
        return Verdict::NotBelieved;
    };
    let believed = record.run_id == name
        && record.supervisor_pid == holder
        && holder != 0
        && starts.of(holder) == Some(record.supervisor_start);
    if believed {
        Verdict::Live(Box::new(record))
    } else {
        Verdict::NotBelieved
    }
}

/// Whether nobody holds a lock on the regular file at `path`.
fn unheld(path: &Path) -> bool {
    matches!(open_read(path), Ok(Some(opened)) if matches!(lock::holder(&opened.file), Ok(None)))
}

/// The record in `file` when its seal holds, read again when a read met
/// a rewrite.
fn read_sealed(file: &std::fs::File, key: &SessionKey) -> Option<LiveRecord> {
    let cap = usize::try_from(MAX_RECORD_BYTES).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; cap];
    for _ in 0..READ_ATTEMPTS {
        let read = read_head(file, &mut buf).ok()?;
        match LiveRecord::open(key, &buf[..read]) {
            Ok(record) => return Some(record),
            Err(RecordError::Unreadable) => return None,
            Err(RecordError::Unsealed | RecordError::BadSeal) => {}
        }
    }
    None
}

/// Reads from the start of `file` into `buf` until it is full or the file
/// ends; the bytes read.
fn read_head(file: &std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn entry_of(record: LiveRecord, now: u64, silent_after: Duration) -> LiveEntry {
    let since = |at: u64| now.saturating_sub(at);
    let silent_ms = since(record.last_event_ms);
    let silent_after_ms = u64::try_from(silent_after.as_millis()).unwrap_or(u64::MAX);
    LiveEntry {
        started_at: subagent_protocol::time::rfc3339_ms(
            UNIX_EPOCH + Duration::from_millis(record.started_ms),
        ),
        elapsed_ms: since(record.started_ms),
        state_ms: since(record.state_since_ms),
        silent_ms,
        silent: silent_ms > silent_after_ms,
        run_id: record.run_id,
        parent_run_id: record.parent_run_id,
        agent: record.agent,
        model: record.model,
        state: record.state,
        tool: record.tool,
        turns: record.turns,
        input_tokens: record.input_tokens,
        cached_input_tokens: record.cached_input_tokens,
        output_tokens: record.output_tokens,
        cost: record.cost,
        pid: record.worker_pid,
        supervisor_pid: record.supervisor_pid,
        session_file: record.session_file,
    }
}

fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;

//! A run's side of its live record: made when the run begins (locked
//! before it is given its name, so a record at a run's name is always one
//! its writer locked), brought up to date as the run's state changes, and
//! removed when the run ends, its [`LiveRun`] dropped however the run ended.
//!
//! Cheap by construction, since every run keeps one: the run loop only
//! marks the record changed (a mutex held for a field update, an atomic, at
//! most one channel send per write); one thread per process seals and
//! writes records, in place, so a record is written at most once however
//! many changes came while it waited. Events that change no state (streamed
//! text, usage, logs) ask for a write at most every [`REFRESH`]; a state
//! change asks at once.
//!
//! It never fails a run: a record that cannot be made (no key, a sessions
//! dir that cannot take it) is logged once at debug level and the run goes
//! on without one (it is then missing from `subagent ps`). It writes only
//! under `<sessions dir>/.live/`.

use std::fs::File;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use subagent_protocol::WorkerEvent;

use super::record::{LiveRecord, LiveState, bounded};
use super::{LIVE_DIR, lock, process, spare};
use crate::session::key::{SessionKey, session_key};
use crate::session::run_ids::run_id_of_file_name;
use crate::untrusted_file::create_temp;

/// How stale a record may be about events that change no state (its
/// `lastEventMs`, its tokens): one second, which `subagent ps` shows as is.
pub const REFRESH: Duration = Duration::from_secs(1);

/// Stack of the writer thread: it seals and writes a few hundred bytes.
const WRITER_STACK_BYTES: usize = 128 * 1024;

/// One run's live record, kept while the run lives; dropping it removes
/// the record. A run without a record (see the module doc) holds `None`.
#[derive(Debug, Default)]
pub struct LiveRun {
    slot: Option<Arc<Slot>>,
}

/// A record as its writer holds it.
#[derive(Debug)]
struct Slot {
    path: PathBuf,
    /// Opened once, locked, never opened again by this process (see
    /// [`super::lock`]).
    file: File,
    key: &'static SessionKey,
    now: Mutex<Now>,
    /// A write is asked for and not yet done: the run loop sends the slot
    /// to the writer thread only when this was false.
    pending: AtomicBool,
    /// Removed: the thread writes it no more.
    removed: AtomicBool,
}

/// What the record says, and what the writer needs to keep it so.
#[derive(Debug)]
struct Now {
    record: LiveRecord,
    /// Tool calls running now: (call id, name), oldest first.
    tools: Vec<(String, String)>,
    /// When a write was last asked for.
    asked: Instant,
}

impl LiveRun {
    /// The record of run `run_id` of `agent` asking `model`, made under
    /// `sessions_dir`; `parent_session` is the session file of the run
    /// that started it, for a nested run. State `starting`.
    pub fn begin(
        sessions_dir: &Path,
        run_id: &str,
        agent: &str,
        model: &str,
        parent_session: Option<&Path>,
    ) -> Self {
        let now = unix_ms(SystemTime::now());
        let record = LiveRecord {
            run_id: run_id.to_owned(),
            parent_run_id: parent_session.and_then(parent_run_id),
            agent: bounded(agent),
            model: bounded(model),
            state: LiveState::Starting,
            tool: None,
            state_since_ms: now,
            last_event_ms: now,
            started_ms: now,
            turns: 0,
            input_tokens: 0,
            cached_input_tokens: 0,
            output_tokens: 0,
            cost: 0.0,
            worker_pid: None,
            supervisor_pid: std::process::id(),
            supervisor_start: own_start_time(),
            session_file: None,
        };
        match make(sessions_dir, record) {
            Ok(slot) => Self {
                slot: Some(Arc::new(slot)),
            },
            Err(why) => {
                tracing::debug!(run_id, "no live record for `subagent ps`: {why}");
                Self::default()
            }
        }
    }

    /// The run's id as the record names it, if there is a record.
    pub fn run_id(&self) -> Option<String> {
        self.update(|now| (now.record.run_id.clone(), false))
    }

    /// The run waits for a concurrency slot (`true`) or stopped waiting.
    pub fn queued(&self, waiting: bool) {
        let state = if waiting {
            LiveState::Queued
        } else {
            LiveState::Starting
        };
        self.update(|now| (now.enter(state, None), true));
    }

    /// The run's session file was created at `file`.
    pub fn session_file(&self, file: &Path) {
        let file = file.display().to_string();
        self.update(|now| {
            now.record.session_file = Some(file);
            ((), true)
        });
    }

    /// The worker was spawned as `pid`.
    pub fn worker_started(&self, pid: u32) {
        self.update(|now| {
            now.record.worker_pid = Some(pid);
            ((), true)
        });
    }

    /// The worker reported its result, or the supervisor stopped it.
    pub fn finishing(&self) {
        self.update(|now| (now.enter(LiveState::Finishing, None), true));
    }

    /// The worker sent `event`.
    pub fn observe(&self, event: &WorkerEvent) {
        self.update(|now| {
            now.record.last_event_ms = unix_ms(SystemTime::now());
            let changed = now.take(event);
            ((), changed)
        });
    }

    /// Applies `change` to the record: `(value, changed)`; a changed state
    /// asks for a write at once, any other change at most every [`REFRESH`].
    fn update<T>(&self, change: impl FnOnce(&mut Now) -> (T, bool)) -> Option<T> {
        let slot = self.slot.as_ref()?;
        let mut now = slot.now.lock().unwrap_or_else(PoisonError::into_inner);
        let (value, urgent) = change(&mut now);
        let due = urgent || now.asked.elapsed() >= REFRESH;
        if due {
            now.asked = Instant::now();
        }
        drop(now);
        if due && !slot.pending.swap(true, Ordering::AcqRel) {
            ask_write(slot);
        }
        Some(value)
    }
}

impl Now {
    /// Enters `state` (naming `tool`); true when that is a change.
    fn enter(&mut self, state: LiveState, tool: Option<String>) -> bool {
        if self.record.state == state && self.record.tool == tool {
            return false;
        }
        self.record.state = state;
        self.record.tool = tool;
        self.record.state_since_ms = unix_ms(SystemTime::now());
        true
    }

    /// Takes in a worker event; true when the state changed.
    fn take(&mut self, event: &WorkerEvent) -> bool {
        if self.record.state == LiveState::Finishing {
            return false;
        }
        match event {
            WorkerEvent::TurnStart { turn } => {
                self.record.turns = self.record.turns.max(*turn);
                self.tools.clear();
                self.enter(LiveState::WaitingForModel, None)
            }
            WorkerEvent::TextDelta { .. } | WorkerEvent::ReasoningDelta { .. }
                if self.tools.is_empty() =>
            {
                self.enter(LiveState::Streaming, None)
            }
            WorkerEvent::ToolCall { call_id, name, .. } => {
                self.tools.push((bounded(call_id), bounded(name)));
                self.enter(LiveState::RunningTool, Some(bounded(name)))
            }
            WorkerEvent::ToolResult { call_id, .. } => {
                self.tools.retain(|(id, _)| id != call_id);
                match self.tools.last() {
                    Some((_, name)) => {
                        let name = name.clone();
                        self.enter(LiveState::RunningTool, Some(name))
                    }
                    None => self.enter(LiveState::Working, None),
                }
            }
            WorkerEvent::AssistantMessageEnd { .. } if self.tools.is_empty() => {
                self.enter(LiveState::Working, None)
            }
            WorkerEvent::Usage { usage, .. } => {
                let r = &mut self.record;
                r.input_tokens = r.input_tokens.saturating_add(usage.input);
                r.cached_input_tokens = r
                    .cached_input_tokens
                    .saturating_add(usage.cache_read.saturating_add(usage.cache_write));
                r.output_tokens = r.output_tokens.saturating_add(usage.output);
                r.cost += usage.cost;
                false
            }
            _ => false,
        }
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.removed.store(true, Ordering::Release);
            // Renamed away or unlinked here, not on the thread: a run that
            // ended is gone from `subagent ps` before its caller hears of
            // its end. A file the writer thread still holds is unlinked;
            // its lock goes with the thread's handle.
            let kept = match Arc::try_unwrap(slot) {
                Ok(slot) => match slot.path.parent() {
                    Some(dir) => spare::keep(dir, &slot.path, slot.file).map_err(|_| slot.path),
                    None => Err(slot.path),
                },
                Err(slot) => Err(slot.path.clone()),
            };
            if let Err(path) = kept {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The run id of the run whose session file is `parent_session`; `None`
/// when that file is no run's (a server's own file of lifecycle lines).
fn parent_run_id(parent_session: &Path) -> Option<String> {
    let name = parent_session.file_name()?.to_str()?;
    let id = run_id_of_file_name(name);
    let is_run_id = matches!(id.len(), 8 | 32) && id.bytes().all(|b| b.is_ascii_hexdigit());
    is_run_id.then(|| id.to_owned())
}

/// Makes the record: a temporary file in `.live/` (a directory of this
/// user's alone), locked and written, then renamed to the run's id.
fn make(sessions_dir: &Path, record: LiveRecord) -> Result<Slot, String> {
    let key = session_key().map_err(|e| e.to_string())?;
    let dir = live_dir(sessions_dir)?;
    let path = dir.join(&record.run_id);
    let sealed = record.seal(key);
    let file = match spare::take(&dir) {
        Some(spare) => match write_record(&spare.file, &sealed)
            .and_then(|()| std::fs::rename(&spare.path, &path))
        {
            Ok(()) => spare.file,
            Err(_) => {
                let _ = std::fs::remove_file(&spare.path);
                created(&dir, &path, &sealed)?
            }
        },
        None => created(&dir, &path, &sealed)?,
    };
    Ok(Slot {
        path,
        file,
        key,
        now: Mutex::new(Now {
            record,
            tools: Vec::new(),
            asked: Instant::now(),
        }),
        pending: AtomicBool::new(false),
        removed: AtomicBool::new(false),
    })
}

/// A new record file at `path` holding `sealed`: made under a temporary
/// name, locked and written, then renamed.
fn created(dir: &Path, path: &Path, sealed: &[u8]) -> Result<File, String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.new"));
    let file = create_temp(&temp).map_err(|e| e.to_string())?;
    let made = lock::lock(&file)
        .and_then(|()| write_record(&file, sealed))
        .and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = made {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(file)
}

/// `<sessions_dir>/.live`, made mode 0700 if missing; refused unless it is
/// a directory (not a link to one) of this user's.
fn live_dir(sessions_dir: &Path) -> Result<PathBuf, String> {
    let dir = sessions_dir.join(LIVE_DIR);
    // The sessions dir as the session writer makes it; `.live` private.
    let made =
        std::fs::create_dir_all(sessions_dir).and_then(|()| {
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
                other => other,
            }
        });
    if let Err(e) = made {
        return Err(format!("cannot make {}: {e}", dir.display()));
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| e.to_string())?;
    if !meta.is_dir() || meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(format!(
            "{} is not a directory of this user's; remove it",
            dir.display()
        ));
    }
    Ok(dir)
}

/// Writes `sealed` over the record in place (the lock stays on this file)
/// and cuts what an older, longer record left after it.
fn write_record(file: &File, sealed: &[u8]) -> std::io::Result<()> {
    file.write_all_at(sealed, 0)?;
    file.set_len(sealed.len() as u64)
}

/// Hands `slot` to the writer thread (written here if there is none).
fn ask_write(slot: &Arc<Slot>) {
    match writer_thread() {
        Some(sender) => {
            if let Err(back) = sender.send(Arc::clone(slot)) {
                write_now(&back.0);
            }
        }
        None => write_now(slot),
    }
}

/// Seals and writes the record as it is now.
fn write_now(slot: &Slot) {
    slot.pending.store(false, Ordering::Release);
    if slot.removed.load(Ordering::Acquire) {
        return;
    }
    let sealed = {
        let now = slot.now.lock().unwrap_or_else(PoisonError::into_inner);
        now.record.seal(slot.key)
    };
    if let Err(e) = write_record(&slot.file, &sealed) {
        tracing::debug!(path = %slot.path.display(), "cannot update the live record: {e}");
    }
}

/// The one thread of this process that writes live records; `None` when
/// it cannot be started (records are then written by the run loop).
fn writer_thread() -> Option<&'static Sender<Arc<Slot>>> {
    static THREAD: OnceLock<Option<Sender<Arc<Slot>>>> = OnceLock::new();
    THREAD
        .get_or_init(|| {
            let (send, receive) = channel::<Arc<Slot>>();
            std::thread::Builder::new()
                .name("subagent-live".to_owned())
                .stack_size(WRITER_STACK_BYTES)
                .spawn(move || {
                    for slot in receive {
                        write_now(&slot);
                    }
                })
                .ok()
                .map(|_| send)
        })
        .as_ref()
}

/// This process's start time, read once.
fn own_start_time() -> u64 {
    static START: OnceLock<u64> = OnceLock::new();
    *START.get_or_init(process::own_start_time)
}

fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;

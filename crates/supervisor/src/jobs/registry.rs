//! The job registry: starts runs on one [`Supervisor`] as jobs, keeps each
//! job's state, progress and result, and answers status, wait, cancel and
//! list.
//!
//! Each job is one tokio task. Progress reaches the right job through a
//! task-local job id: the supervisor calls its progress sink inline from
//! the task that drives the run (nested and parallel children included), so
//! the sink knows whose event it is without the run layer knowing about
//! jobs. The sink only updates a map under a short lock and sends on a
//! broadcast channel; it never blocks (the sink's contract).
//!
//! The parent session file is held under an exclusive `flock` for the life
//! of the registry: a file nobody holds belongs to a server that is gone,
//! which is how [`Jobs::recover_interrupted`] tells a dead server's runs from
//! a live one's.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use nix::fcntl::Flock;
use serde::Serialize;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::session::{AgentEvent, RunMode, SessionEntry, SessionLine};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::lifecycle::{InterruptedRun, job_end_line, job_start_line, mark_interrupted};
use super::server_file::open_locked;
use super::state::JobState;
use super::streaming::Streaming;
use crate::run::{ProgressEvent, ProgressSink, RunPlan, RunRequest, Supervisor, SupervisorConfig};
use crate::session::append_to_parent;

/// Progress updates buffered per subscriber; a slower one skips the oldest
/// (progress is a view, the result is what counts).
const PROGRESS_CAPACITY: usize = 1024;

/// Endings buffered per subscriber: endings are few, one per job.
const ENDINGS_CAPACITY: usize = 1024;

tokio::task_local! {
    /// The job whose task is running: the progress sink's way to tell jobs apart.
    static CURRENT_JOB: JobId;
}

/// A job's id: 8 hex characters, like a run id, but naming the whole spawn.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct JobId(pub String);

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl JobId {
    fn new() -> Self {
        Self(
            uuid::Uuid::new_v4()
                .simple()
                .to_string()
                .chars()
                .take(8)
                .collect(),
        )
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// Single, parallel or chain.
    pub mode: RunMode,
    /// The resolved runs (exactly one for `Single`). A request without a
    /// parent session file gets the registry's.
    pub requests: Vec<RunRequest>,
    /// `Parallel` only: children running at once, as the call's plan says
    /// ([`RunPlan::concurrency`]); `None` runs every one at once, up to the
    /// supervisor's limit.
    pub concurrency: Option<usize>,
    /// A background job's ending is announced on [`Jobs::subscribe_endings`]
    /// with `background: true`; the caller does not wait for it.
    pub background: bool,
}

/// A job as status and list show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    /// The job.
    pub job_id: JobId,
    /// Where it is.
    pub state: JobState,
    /// Its agent (the first request's).
    pub agent: String,
    /// single, parallel or chain.
    pub mode: RunMode,
    /// True when it was started in the background.
    pub background: bool,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// Progress so far.
    pub streaming: Streaming,
    /// Its ending lifecycle line, once over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending: Option<SessionLine>,
    /// Its result, once over (none for interrupted runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<SubagentResult>,
}

/// A progress update of a running job.
#[derive(Debug, Clone)]
pub struct JobProgress {
    /// The job.
    pub job_id: JobId,
    /// `queued` or `running`.
    pub state: JobState,
    /// Its progress so far.
    pub streaming: Streaming,
}

/// A job that ended.
#[derive(Debug, Clone)]
pub struct JobEnded {
    /// The job.
    pub job_id: JobId,
    /// True when started in the background.
    pub background: bool,
    /// Its ending lifecycle line (as written to the parent file).
    pub line: SessionLine,
}

/// Failures of the registry.
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    /// The parent session file could not be created or opened.
    #[error("open the server's session file {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another live server holds the parent session file.
    #[error(
        "the session file {0} is in use by another running server; pass a different --parent-session"
    )]
    Busy(PathBuf),
    /// A job request without any run.
    #[error("a job needs at least one task")]
    Empty,
    /// Recovery could not read or append a file.
    #[error("mark interrupted runs in {path}: {source}")]
    Recover {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

struct Entry {
    status: JobStatus,
    cancel: CancellationToken,
    done: watch::Receiver<Option<SubagentResult>>,
}

type Table = Arc<Mutex<BTreeMap<JobId, Entry>>>;

/// The registry. Cheap to clone (shared state); must be used inside a
/// tokio runtime.
#[derive(Clone)]
pub struct Jobs {
    supervisor: Arc<Supervisor>,
    table: Table,
    order: Arc<Mutex<Vec<JobId>>>,
    parent_session: Option<PathBuf>,
    /// Where the runs' session files are: recovery touches none elsewhere.
    sessions_dir: PathBuf,
    /// Held for the registry's life: the parent file's flock.
    _lock: Option<Arc<Flock<File>>>,
    progress: broadcast::Sender<JobProgress>,
    endings: broadcast::Sender<JobEnded>,
    requested_by: String,
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs")
            .field("parent_session", &self.parent_session)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Jobs {
    /// A registry over a supervisor built from `config` (its progress sink,
    /// if any, still gets every event). With `parent_session`, the file is
    /// created if missing and locked, runs a dead server left in it without
    /// an ending are marked interrupted, and every job's lifecycle lines go
    /// there.
    pub fn new(
        mut config: SupervisorConfig,
        parent_session: Option<PathBuf>,
    ) -> Result<Self, JobsError> {
        let table: Table = Arc::new(Mutex::new(BTreeMap::new()));
        let (progress, _) = broadcast::channel(PROGRESS_CAPACITY);
        let (endings, _) = broadcast::channel(ENDINGS_CAPACITY);
        let previous = config.progress.take();
        let sink_table = Arc::clone(&table);
        let sink_tx = progress.clone();
        config.progress = Some(ProgressSink::new(move |event: &ProgressEvent| {
            if let Some(previous) = &previous {
                previous.emit(event);
            }
            let Ok(job_id) = CURRENT_JOB.try_with(Clone::clone) else {
                return;
            };
            let (state, streaming) = {
                let mut table = lock(&sink_table);
                let Some(entry) = table.get_mut(&job_id) else {
                    return;
                };
                if !entry.status.streaming.observe(event) {
                    return;
                }
                if entry.status.state.is_live() {
                    entry.status.state = JobState::live(&entry.status.streaming);
                }
                (entry.status.state, entry.status.streaming.clone())
            };
            // No subscriber is fine: progress is only a view.
            let _ = sink_tx.send(JobProgress {
                job_id,
                state,
                streaming,
            });
        }));
        let requested_by = config.requested_by.clone();
        let lock_file = match &parent_session {
            Some(path) => Some(Arc::new(open_locked(path, true).map_err(|source| {
                if source.kind() == std::io::ErrorKind::WouldBlock {
                    JobsError::Busy(path.clone())
                } else {
                    JobsError::Open {
                        path: path.clone(),
                        source,
                    }
                }
            })?)),
            None => None,
        };
        let sessions_dir = config.sessions_dir.clone();
        let jobs = Self {
            sessions_dir,
            supervisor: Arc::new(Supervisor::new(config)),
            table,
            order: Arc::new(Mutex::new(Vec::new())),
            parent_session: parent_session.clone(),
            _lock: lock_file,
            progress,
            endings,
            requested_by,
        };
        if let Some(path) = &parent_session {
            // This file may be a dead server's, reused: its open runs are over.
            let runs = mark_interrupted(path, &jobs.sessions_dir).map_err(|source| {
                JobsError::Recover {
                    path: path.clone(),
                    source,
                }
            })?;
            jobs.remember_interrupted(runs);
        }
        Ok(jobs)
    }

    /// The supervisor the jobs run on (for its limits and `running()`).
    pub fn supervisor(&self) -> &Supervisor {
        &self.supervisor
    }

    /// Where the runs' session files are.
    pub fn sessions_dir(&self) -> &Path {
        &self.sessions_dir
    }

    /// The file this registry writes job lifecycle lines to.
    pub fn parent_session(&self) -> Option<&Path> {
        self.parent_session.as_deref()
    }

    pub(super) fn remember_interrupted(&self, runs: Vec<InterruptedRun>) {
        let mut table = lock(&self.table);
        let mut order = lock(&self.order);
        for run in runs {
            let job_id = JobId(run.start.job_id.clone());
            let (_, done) = watch::channel(None);
            order.push(job_id.clone());
            table.insert(
                job_id.clone(),
                Entry {
                    status: JobStatus {
                        job_id,
                        state: JobState::Interrupted,
                        agent: run.start.agent_name.clone(),
                        mode: run.start.mode,
                        background: true,
                        started_at: run.start.started_at.clone(),
                        streaming: Streaming::default(),
                        ending: Some(run.ending),
                        result: None,
                    },
                    cancel: CancellationToken::new(),
                    done,
                },
            );
        }
    }

    /// Live progress of every job.
    pub fn subscribe_progress(&self) -> broadcast::Receiver<JobProgress> {
        self.progress.subscribe()
    }

    /// The ending of every job, foreground and background.
    pub fn subscribe_endings(&self) -> broadcast::Receiver<JobEnded> {
        self.endings.subscribe()
    }

    /// Starts a job and returns its id at once; the runs go on in a task of
    /// their own. [`Self::wait`] gives the result.
    pub fn start(&self, request: JobRequest) -> Result<JobId, JobsError> {
        let JobRequest {
            mode,
            mut requests,
            concurrency,
            background,
        } = request;
        let Some(first) = requests.first().cloned() else {
            return Err(JobsError::Empty);
        };
        let job_id = JobId::new();
        let started = Instant::now();
        let started_at = subagent_protocol::time::now_rfc3339_ms();
        let start_line = job_start_line(
            &job_id.0,
            &self.requested_by,
            &first.agent,
            mode,
            &first.provider.model,
            &started_at,
        );
        let SessionEntry::AgentEvent(start_event) = &start_line.entry else {
            return Err(JobsError::Empty);
        };
        let start_event: AgentEvent = start_event.clone();
        for r in &mut requests {
            if r.parent_session.is_none() {
                r.parent_session.clone_from(&self.parent_session);
            }
        }
        let cancel = CancellationToken::new();
        let (done_tx, done) = watch::channel(None);
        {
            let mut table = lock(&self.table);
            table.insert(
                job_id.clone(),
                Entry {
                    status: JobStatus {
                        job_id: job_id.clone(),
                        // Queued when every slot is taken now; the
                        // run's own progress corrects a slot that frees
                        // meanwhile (its `Started`).
                        state: if self.supervisor.running() < self.supervisor.max_concurrent() {
                            JobState::Running
                        } else {
                            JobState::Queued
                        },
                        agent: first.agent.clone(),
                        mode,
                        background,
                        started_at,
                        streaming: Streaming::default(),
                        ending: None,
                        result: None,
                    },
                    cancel: cancel.clone(),
                    done,
                },
            );
            lock(&self.order).push(job_id.clone());
        }
        let this = self.clone();
        let id = job_id.clone();
        tokio::spawn(CURRENT_JOB.scope(job_id.clone(), async move {
            this.write_parent(&start_line).await;
            let plan = RunPlan::new(mode, requests).with_concurrency(concurrency);
            let result = this.supervisor.execute(plan, cancel).await;
            let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let end_line = job_end_line(&start_event, &result, duration_ms);
            this.write_parent(&end_line).await;
            {
                let mut table = lock(&this.table);
                if let Some(entry) = table.get_mut(&id) {
                    entry.status.state = JobState::of_ending(&end_line);
                    entry.status.ending = Some(end_line.clone());
                    entry.status.result = Some(result.clone());
                }
            }
            // The ending is announced before waiters wake, so a caller that
            // waited for every job has every ending in its receiver.
            let _ = this.endings.send(JobEnded {
                job_id: id,
                background,
                line: end_line,
            });
            let _ = done_tx.send(Some(result));
        }));
        Ok(job_id)
    }

    async fn write_parent(&self, line: &SessionLine) {
        if let Some(parent) = &self.parent_session
            && let Err(e) = append_to_parent(parent, line).await
        {
            tracing::warn!(file = %parent.display(), error = %e, "could not write a job lifecycle line");
        }
    }

    /// The job's status, or `None` for an unknown id.
    pub fn status(&self, job_id: &JobId) -> Option<JobStatus> {
        lock(&self.table).get(job_id).map(|e| e.status.clone())
    }

    /// Waits for the job to end and returns its result; `None` for an
    /// unknown id or a job that has no result (interrupted).
    pub async fn wait(&self, job_id: &JobId) -> Option<SubagentResult> {
        let (mut done, state) = {
            let table = lock(&self.table);
            let entry = table.get(job_id)?;
            (entry.done.clone(), entry.status.state)
        };
        if state == JobState::Interrupted {
            return None;
        }
        let result = done.wait_for(Option::is_some).await.ok()?;
        result.clone()
    }

    /// Asks the job to stop (Cancel to its workers, then their groups are
    /// killed); it ends `aborted`. Returns false for an unknown id or a job
    /// already over.
    pub fn cancel(&self, job_id: &JobId) -> bool {
        let table = lock(&self.table);
        match table.get(job_id) {
            Some(entry) if entry.status.state.is_live() => {
                entry.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Cancels every running job (the server is stopping).
    pub fn cancel_all(&self) {
        for entry in lock(&self.table).values() {
            entry.cancel.cancel();
        }
    }

    /// Every job known, in the order started (interrupted ones first, as
    /// they were found at start-up).
    pub fn list(&self) -> Vec<JobStatus> {
        let table = lock(&self.table);
        lock(&self.order)
            .iter()
            .filter_map(|id| table.get(id).map(|e| e.status.clone()))
            .collect()
    }

    /// The ids of the jobs not over yet (queued or running).
    pub fn running(&self) -> Vec<JobId> {
        self.list()
            .into_iter()
            .filter(|s| s.state.is_live())
            .map(|s| s.job_id)
            .collect()
    }

    /// Waits until every job running now has ended.
    pub async fn wait_all(&self) {
        for id in self.running() {
            let _ = self.wait(&id).await;
        }
    }
}

/// Opens (creating) `path` for appending and takes its exclusive flock
/// without waiting: held by a live server means busy.
#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;

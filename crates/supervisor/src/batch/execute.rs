//! Running a batch's prepared tasks through one supervisor, `concurrency`
//! at a time, appending one fsynced line per finished task to the results
//! file, and keeping the counts a progress display reads ([`BatchProgress`]).
//!
//! A results file that something replaced while the batch ran (renamed a
//! file over it, moved or removed it) stops the batch at the next append,
//! or at the end: see [`super::results`].
//!
//! Crash safety: a result line is on disk before the task counts as done,
//! so a SIGKILL loses only tasks in flight, and those run again on the
//! next start. A task that the batch's cancel cut short, or that the
//! machine failed (its session file lost, its worker never started), is
//! not recorded, so a resume runs it.
//!
//! It never builds a runtime, watches signals or draws: the caller owns
//! the runtime and the cancel token, and reads [`BatchProgress`] to draw.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::StreamExt;
use subagent_protocol::ErrorCode;
use tokio_util::sync::CancellationToken;

use super::{CliExitOf, ResultLine, ResultsWriter, Tally, machine_fault};
use crate::run::{ProgressEvent, ProgressSink, ProgressTally};
use crate::{RunRequest, Supervisor};

/// A fault that stops the whole batch: the results file cannot be written,
/// or the machine failed a task. The task it hit is not recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchStop {
    /// What happened, naming the task.
    pub message: String,
    /// Why: what the caller's exit status is chosen from.
    pub cause: BatchStopCause,
}

/// Why a batch stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchStopCause {
    /// The results file could not be written, or was replaced while the
    /// batch ran: its record is not where it was asked to be.
    ResultsLost,
    /// The machine, not the task, failed a task (a lost session file, a
    /// protection that could not be applied, a worker that did not start),
    /// with the task's error code.
    TaskFault(ErrorCode),
}

/// How a batch's run ended.
#[derive(Debug, Clone)]
pub struct BatchOutcome {
    /// The recorded tasks.
    pub tally: Tally,
    /// Tasks a cancel or a fault kept from finishing (not written; they run
    /// next time).
    pub not_run: u64,
    /// Why the batch stopped before its end, when a fault did.
    pub stopped: Option<BatchStop>,
}

/// What the tasks share while they run; a progress display reads it (from
/// a thread of its own), so no task and no progress sink ever draws.
#[derive(Debug)]
pub struct BatchProgress {
    total: u64,
    tally: Mutex<Tally>,
    running: AtomicU64,
    not_run: AtomicU64,
    /// The supervisor's progress events added up: the running tasks'
    /// tokens and cost so far.
    live: Mutex<ProgressTally>,
    /// The first fault that stopped the batch.
    stopped: Mutex<Option<BatchStop>>,
}

impl BatchProgress {
    /// The counts of a batch of `total` tasks, none started.
    pub fn new(total: u64) -> Self {
        Self {
            total,
            tally: Mutex::new(Tally::default()),
            running: AtomicU64::new(0),
            not_run: AtomicU64::new(0),
            live: Mutex::new(ProgressTally::default()),
            stopped: Mutex::new(None),
        }
    }

    /// Tasks this batch runs.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The recorded tasks so far.
    pub fn tally(&self) -> Tally {
        self.tally.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Tasks running now.
    pub fn running(&self) -> u64 {
        self.running.load(Ordering::SeqCst)
    }

    /// Tokens and cost so far of the tasks still running.
    pub fn live_usage(&self) -> (u64, f64) {
        self.live.lock().map_or((0, 0.0), |live| {
            let running = live.running_usage();
            (running.tokens(), running.cost)
        })
    }

    /// The running tasks' task lists (`todo_write`), summed: items done and
    /// items.
    pub fn live_todos(&self) -> (usize, usize) {
        self.live.lock().map_or((0, 0), |live| live.running_todos())
    }

    /// The supervisor's progress sink that keeps the running tasks' usage.
    pub fn sink(self: &Arc<Self>) -> ProgressSink {
        let state = Arc::clone(self);
        ProgressSink::new(move |event| state.on_progress(event))
    }

    /// Keeps the first fault and stops the batch: tasks not started yet are
    /// not started, running ones are cancelled (and not recorded).
    fn stop(&self, stop: BatchStop, cancel: &CancellationToken) {
        if let Ok(mut slot) = self.stopped.lock() {
            slot.get_or_insert(stop);
        }
        cancel.cancel();
    }

    /// Keeps the running tasks' usage; returns at once (it is called inline
    /// by the supervisor, see `ProgressSink`).
    fn on_progress(&self, event: &ProgressEvent) {
        if let Ok(mut live) = self.live.lock() {
            live.observe(event);
        }
    }
}

/// Runs `requests` (id, request) on `supervisor`, `concurrency` at a time,
/// recording each finished task in `writer`, until all ran or `cancel`
/// fired. `progress` must be the one whose [`BatchProgress::sink`] the
/// supervisor reports to.
pub async fn execute(
    supervisor: &Supervisor,
    requests: Vec<(String, RunRequest)>,
    concurrency: usize,
    writer: ResultsWriter,
    cancel: &CancellationToken,
    progress: &Arc<BatchProgress>,
    cli_exit: CliExitOf,
) -> BatchOutcome {
    let writer = Arc::new(Mutex::new(writer));
    // Boxed, and the list of them rebuilt: every run's future keeps its
    // request for the run's whole life, and the list's own buffer lives as
    // long as the batch; inline, a batch of thousands held each request
    // three times over (BENCHMARKS.md, `scale.live_5000`).
    let mut requests: Vec<(String, Box<RunRequest>)> = requests
        .into_iter()
        .map(|(id, request)| (id, Box::new(request)))
        .collect();
    // The collect reuses the old list's buffer in place (std's in-place
    // iteration), sized for the unboxed requests: shrunk, that is given back.
    requests.shrink_to_fit();
    futures_util::stream::iter(requests)
        .map(|(id, request)| {
            run_one(
                supervisor,
                (id, request),
                cancel,
                progress,
                &writer,
                cli_exit,
            )
        })
        .buffer_unordered(concurrency)
        .collect::<Vec<()>>()
        .await;
    // A file renamed over the results after the last append is told too.
    let verified = tokio::task::spawn_blocking(move || match writer.lock() {
        Ok(mut w) => w.verify().map_err(|e| e.to_string()),
        Err(_) => Ok(()),
    })
    .await
    .unwrap_or(Ok(()));
    if let Err(message) = verified {
        let cause = BatchStopCause::ResultsLost;
        progress.stop(BatchStop { message, cause }, cancel);
    }
    BatchOutcome {
        tally: progress.tally(),
        not_run: progress.not_run.load(Ordering::SeqCst),
        stopped: progress.stopped.lock().ok().and_then(|e| e.clone()),
    }
}

/// Runs one task and records it; a task the batch's cancel cut short is
/// not recorded, so a re-run runs it.
async fn run_one(
    supervisor: &Supervisor,
    (id, request): (String, Box<RunRequest>),
    cancel: &CancellationToken,
    shared: &Arc<BatchProgress>,
    writer: &Arc<Mutex<ResultsWriter>>,
    cli_exit: CliExitOf,
) {
    if cancel.is_cancelled() {
        shared.not_run.fetch_add(1, Ordering::SeqCst);
        return;
    }
    shared.running.fetch_add(1, Ordering::SeqCst);
    let agent = request.agent.clone();
    let started = Instant::now();
    let result = supervisor.run(*request, cancel.clone()).await;
    shared.running.fetch_sub(1, Ordering::SeqCst);
    let code = result.details.error.as_ref().map(|e| e.code);
    if cancel.is_cancelled() && code == Some(ErrorCode::SubagentCancelled) {
        shared.not_run.fetch_add(1, Ordering::SeqCst);
        return;
    }
    if let Some(fault) = machine_fault(&result) {
        // Not the task's doing: recording it would make a resume skip a
        // task that never truly ran (or whose record is torn).
        shared.not_run.fetch_add(1, Ordering::SeqCst);
        let message = format!("task `{id}`: {fault}");
        let cause = BatchStopCause::TaskFault(code.unwrap_or(ErrorCode::SubagentFailed));
        shared.stop(BatchStop { message, cause }, cancel);
        return;
    }
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let line = ResultLine::from_result(&id, &agent, &result, ms, cli_exit);
    // The fsync blocks; off the runtime's threads so other children's
    // watches keep their timeouts.
    let to_write = line.clone();
    let writer = Arc::clone(writer);
    let written = tokio::task::spawn_blocking(move || match writer.lock() {
        Ok(mut w) => w.append(&to_write).map_err(|e| e.to_string()),
        Err(_) => Err("the results writer is poisoned".to_owned()),
    })
    .await
    .unwrap_or_else(|e| Err(format!("the results writer stopped: {e}")));
    match written {
        Ok(()) => {
            if let Ok(mut tally) = shared.tally.lock() {
                tally.add(&line);
            }
        }
        Err(message) => {
            // Running on would lose every later result: stop the batch.
            let cause = BatchStopCause::ResultsLost;
            shared.stop(BatchStop { message, cause }, cancel);
        }
    }
}

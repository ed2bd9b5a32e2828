//! A long-lived thread that runs jobs one at a time, in the order they were
//! handed over, started on first use and kept for the life of the process.
//! The spawner ([`crate::spawner`]) and the chores thread
//! ([`crate::chores`]) are two of these.
//!
//! A job that panics does not end the thread: the spawner's end would fire
//! every child's parent-death signal, the chores thread's would strand the
//! kills queued behind it.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::sync::mpsc;

/// One unit of work for a job thread.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// A job thread, started by the first [`Self::submit`].
#[derive(Debug)]
pub(crate) struct JobThread {
    name: &'static str,
    /// Runs first on the new thread, before any job.
    init: fn(),
    started: OnceLock<Result<mpsc::Sender<Job>, StartFailure>>,
}

/// Why the thread could not be started, kept instead of the `io::Error`
/// (which is not `Clone`) so every caller gets an equal error.
#[derive(Debug, Clone, Copy)]
struct StartFailure {
    os_error: Option<i32>,
    kind: io::ErrorKind,
}

impl StartFailure {
    fn of(error: &io::Error) -> Self {
        Self {
            os_error: error.raw_os_error(),
            kind: error.kind(),
        }
    }

    fn error(self) -> io::Error {
        self.os_error
            .map_or_else(|| io::Error::from(self.kind), io::Error::from_raw_os_error)
    }
}

/// Why a job was not handed over (no `Debug`: it holds the job).
pub(crate) enum Refused {
    /// The thread could not be started.
    NoThread(io::Error, Job),
    /// The thread is gone (it never ends by itself, so this is a bug or an
    /// exiting process).
    Gone(Job),
}

impl JobThread {
    /// A thread named `name` that runs `init` once before its first job.
    pub(crate) const fn new(name: &'static str, init: fn()) -> Self {
        Self {
            name,
            init,
            started: OnceLock::new(),
        }
    }

    /// Hands `job` over, starting the thread if this is the first job; when
    /// that is impossible, gives the job back.
    pub(crate) fn submit(&self, job: Job) -> Result<(), Refused> {
        let started = self.started.get_or_init(|| self.start());
        match started {
            Ok(jobs) => jobs
                .send(job)
                .map_err(|mpsc::SendError(job)| Refused::Gone(job)),
            Err(failure) => Err(Refused::NoThread(failure.error(), job)),
        }
    }

    /// Whether the thread is running (started by a job, and not failed to
    /// start).
    pub(crate) fn is_started(&self) -> bool {
        self.started.get().is_some_and(Result::is_ok)
    }

    fn start(&self) -> Result<mpsc::Sender<Job>, StartFailure> {
        let (sender, jobs) = mpsc::channel::<Job>();
        let init = self.init;
        std::thread::Builder::new()
            .name(self.name.into())
            .spawn(move || {
                init();
                while let Ok(job) = jobs.recv() {
                    let _ = catch_unwind(AssertUnwindSafe(job));
                }
            })
            .map(|_| sender)
            .map_err(|e| StartFailure::of(&e))
    }
}

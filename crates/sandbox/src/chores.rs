//! The one long-lived thread that does the sandbox's blocking chores for
//! callers on an async runtime: signalling a cgroup's members, removing a
//! cgroup dropped unused, paying the first cgroup migration's wait early
//! ([`crate::cgroup::prewarm_attach`]), and cleaning up after a dropped
//! child whose cleanup thread could not be started.
//!
//! cgroupfs writes can block (removal retries while the kernel tears the
//! last members down; freezing waits for the members to stop), and a caller
//! may run the sandbox on a runtime with two worker threads: none of that
//! may happen on them. Nothing that touches cgroupfs is called from async
//! code or a `Drop` except through [`run`] or [`call`]; the unit tests hold
//! every cgroupfs entry point to that ([`assert_off_runtime`]).
//!
//! Not tokio's blocking pool: a chore handed over while the caller's runtime
//! shuts down (a child dropped with its runtime) must still run, and the
//! pool cancels queued work at shutdown; it also panics when it cannot start
//! a thread. Should this thread be impossible to start, a chore runs on the
//! caller's thread: a late kill beats a lost one.

use std::cell::Cell;

use crate::job_thread::{JobThread, Refused};

static CHORES: JobThread = JobThread::new("subagent-chores", mark_chores_thread);

thread_local! {
    /// True on the chores thread itself.
    static ON_CHORES_THREAD: Cell<bool> = const { Cell::new(false) };
}

fn mark_chores_thread() {
    ON_CHORES_THREAD.set(true);
}

/// Runs `chore` on the chores thread. On the chores thread itself it runs
/// at once: a chore queued behind the one that queues it could deadlock
/// (a cleanup that waits for a kill it queued).
pub(crate) fn run(chore: impl FnOnce() + Send + 'static) {
    if ON_CHORES_THREAD.get() {
        chore();
        return;
    }
    if let Err(Refused::NoThread(_, job) | Refused::Gone(job)) = CHORES.submit(Box::new(chore)) {
        job();
    }
}

/// Whether the chores thread was started: a program that never handed a
/// chore over has none to wait for at its end.
pub(crate) fn started() -> bool {
    CHORES.is_started()
}

/// Runs `chore` on the chores thread and waits for what it returns; `None`
/// when the chore panicked. (Only the tests wait on a chore now: a child's
/// plan runs on the spawner thread, see [`crate::launch`].)
#[cfg(test)]
pub(crate) async fn call<T: Send + 'static>(
    chore: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    run(move || {
        let _ = reply.send(chore());
    });
    answer.await.ok()
}

#[cfg(test)]
thread_local! {
    /// True while this thread runs [`as_blocking_work`]: a thread of a
    /// runtime's blocking pool, where blocking is what it is for.
    static BLOCKING_WORK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` marked as blocking work, for code on a runtime's blocking
/// pool (`spawn_blocking`), which may block: [`assert_off_runtime`] lets it
/// through there, and only there.
#[cfg(test)]
pub(crate) fn as_blocking_work<R>(work: impl FnOnce() -> R) -> R {
    /// Puts the mark back even when `work` panics: the pool reuses threads.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            BLOCKING_WORK.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(BLOCKING_WORK.with(|flag| flag.replace(true)));
    work()
}

/// Runs `work`; the mark is for the unit tests' guard only.
#[cfg(not(test))]
#[inline(always)]
pub(crate) fn as_blocking_work<R>(work: impl FnOnce() -> R) -> R {
    work()
}

/// Cgroupfs work found running on a runtime's thread, for the unit tests
/// to check after the fact: a panic in a capture task or a `Drop` on a
/// worker thread could otherwise go unseen.
#[cfg(test)]
static ON_RUNTIME: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Fails a unit test when cgroupfs work (`what`) runs on a thread that is
/// inside a tokio runtime, and records it; compiled to nothing outside unit
/// tests.
#[cfg(test)]
pub(crate) fn assert_off_runtime(what: &str) {
    let on_runtime =
        tokio::runtime::Handle::try_current().is_ok() && !BLOCKING_WORK.with(std::cell::Cell::get);
    if on_runtime {
        ON_RUNTIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(what.to_owned());
    }
    assert!(
        !on_runtime,
        "{what} ran on an async runtime's thread; hand it to chores::run"
    );
}

/// Fails a unit test when cgroupfs work runs on a thread inside a tokio
/// runtime; compiled to nothing outside unit tests.
#[cfg(not(test))]
#[inline(always)]
pub(crate) fn assert_off_runtime(_what: &str) {}

#[cfg(test)]
#[path = "chores_tests.rs"]
mod tests;

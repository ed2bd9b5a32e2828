//! How a leader's exit is noticed: with [`ExitNotice::AfterHangUp`] no
//! thread and no pidfd is held while the child runs, and an exit that
//! comes without a hang-up (a background job holding the pipes) is still
//! seen.

use std::time::Duration;

use subagent_sandbox::{ExitNotice, RawExit, SandboxSpec, SandboxedChild, spawn};

use super::leaks::leftover_holding_the_pipes;
use super::support::{assert_nothing_alive, finish, marker, marker_alone, sh};

fn after_hang_up(mut spec: SandboxSpec) -> SandboxSpec {
    spec.exit_notice = ExitNotice::AfterHangUp;
    spec
}

fn count(dir: &str) -> usize {
    std::fs::read_dir(dir).expect("read /proc/self").count()
}

#[tokio::test]
async fn a_child_watched_after_its_hang_up_is_seen_to_exit_with_its_status() {
    let marker = marker().await;
    let child = spawn(after_hang_up(sh("echo hi; exit 3", &marker, &[])))
        .await
        .unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(exit.raw, RawExit::Exited(3));
    assert_eq!(exit.stdout.lossy_text(), "hi\n");
    assert_nothing_alive(&marker, &[pid]);
}

/// The background `sleep` keeps the pipes open after the shell exits: no
/// hang-up comes, and only the backstop poll sees the exit (without it the
/// wait would last until the sleep ends, past the test's wait limit).
#[tokio::test]
async fn an_exit_without_a_hang_up_is_still_seen_and_the_holder_reported() {
    let marker = marker().await;
    let spec = after_hang_up(sh("sleep 60 & echo started", &marker, &[]));
    leftover_holding_the_pipes(spec, &marker).await;
}

/// Twenty live children cost two fds each (their pipes) and no thread when
/// watched after a hang-up; three each (a pidfd more) when watched from the
/// start, still without a thread.
#[tokio::test]
async fn live_children_cost_no_thread_and_a_pidfd_only_when_asked() {
    // Alone: every other test's children and fds would move the counts.
    let marker = marker_alone().await;
    const LIVE: usize = 20;
    for (notice, fds_each) in [(ExitNotice::AfterHangUp, 2), (ExitNotice::Pidfd, 3)] {
        // One child first, so threads started once per process (the
        // spawner, the chores thread) are in the baseline.
        let mut first = sh("exit 0", &marker, &[]);
        first.exit_notice = notice;
        finish(spawn(first).await.unwrap()).await;
        let (threads, fds) = (count("/proc/self/task"), count("/proc/self/fd"));
        let mut children: Vec<SandboxedChild> = Vec::new();
        for _ in 0..LIVE {
            let mut spec = sh("exec sleep 60", &marker, &[]);
            spec.exit_notice = notice;
            children.push(spawn(spec).await.unwrap());
        }
        // Every child's wait is being polled, as a supervisor's would be.
        let pids: Vec<u32> = children.iter().map(SandboxedChild::pid).collect();
        let killers: Vec<_> = children.iter().map(SandboxedChild::killer).collect();
        let waits: Vec<_> = children
            .into_iter()
            .map(|c| tokio::spawn(c.wait()))
            .collect();
        // The test's runtime has one thread: yielding runs every spawned
        // wait up to its first wait on the child.
        tokio::task::yield_now().await;
        let (threads_live, fds_live) = (count("/proc/self/task"), count("/proc/self/fd"));
        assert_eq!(
            fds_live - fds,
            LIVE * fds_each,
            "{notice:?}: {fds} fds before, {fds_live} with {LIVE} live"
        );
        assert!(
            threads_live <= threads + 1,
            "{notice:?}: {threads} threads before, {threads_live} with {LIVE} live"
        );
        for killer in &killers {
            killer.kill_now(subagent_sandbox::KillReason::Cancelled);
        }
        for wait in waits {
            let exit = tokio::time::timeout(Duration::from_secs(30), wait)
                .await
                .expect("a killed child's wait ended")
                .expect("the wait did not panic");
            assert_eq!(exit.raw, RawExit::Signaled(libc::SIGKILL));
        }
        assert_nothing_alive(&marker, &pids);
        // And every pidfd and pipe is closed again once the waits ended.
        let fds_after = count("/proc/self/fd");
        assert_eq!(
            fds_after, fds,
            "{notice:?}: {fds} fds before, {fds_after} after the waits"
        );
    }
}

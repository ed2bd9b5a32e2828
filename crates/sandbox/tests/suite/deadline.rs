//! Termination: SIGTERM to the whole group, SIGKILL after the grace period,
//! on monotonic time; the first reason recorded wins.

use std::time::{Duration, Instant};

use subagent_sandbox::{KillReason, RawExit, Termination, spawn};

use super::support::{assert_nothing_alive, finish, marker, protocol_pair, read_until, sh};

#[tokio::test]
async fn sigterm_ignoring_tree_is_killed_after_the_grace_period() {
    let marker = marker().await;
    let (theirs, mut ours) = protocol_pair();
    let mut spec = sh(
        "trap '' TERM; sleep 30 & echo ready >&3; wait",
        &marker,
        &[],
    );
    spec.protocol_fd = Some(theirs);
    let grace = spec.grace;
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    read_until(&mut ours, "ready").await;
    let killer = child.killer();
    let asked = Instant::now();
    killer.terminate(KillReason::Timeout);
    let exit = finish(child).await;
    let took = asked.elapsed();
    assert_eq!(exit.termination, Termination::Timeout);
    assert_eq!(
        exit.raw,
        RawExit::Signaled(libc::SIGKILL),
        "SIGTERM was ignored, SIGKILL ended it"
    );
    assert!(
        took >= grace,
        "killed after {took:?}, before the {grace:?} grace"
    );
    assert!(exit.usage.wall >= grace);
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn cooperative_tree_ends_on_sigterm_without_waiting_for_the_grace() {
    let marker = marker().await;
    let (theirs, mut ours) = protocol_pair();
    let mut spec = sh("sleep 30 & echo ready >&3; wait", &marker, &[]);
    spec.protocol_fd = Some(theirs);
    spec.grace = Duration::from_secs(20);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    read_until(&mut ours, "ready").await;
    let asked = Instant::now();
    child.killer().terminate(KillReason::Cancelled);
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Cancelled);
    assert_eq!(exit.raw, RawExit::Signaled(libc::SIGTERM));
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "took {:?}",
        asked.elapsed()
    );
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn first_recorded_reason_wins() {
    let marker = marker().await;
    let (theirs, mut ours) = protocol_pair();
    let mut spec = sh("echo ready >&3; exec sleep 30", &marker, &[]);
    spec.protocol_fd = Some(theirs);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    read_until(&mut ours, "ready").await;
    let killer = child.killer();
    killer.terminate(KillReason::IdleTimeout);
    killer.terminate(KillReason::Timeout);
    killer.kill_now(KillReason::Cancelled);
    assert_eq!(killer.reason(), Some(KillReason::IdleTimeout));
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::IdleTimeout);
    // After the tree is reaped, the handle is inert.
    killer.kill_now(KillReason::Timeout);
    killer.terminate(KillReason::Timeout);
    assert_eq!(killer.reason(), Some(KillReason::IdleTimeout));
    assert_nothing_alive(&marker, &[pid]);
}

use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use super::*;
use crate::{CaptureLimits, KillReason, SandboxPolicy, SandboxSpec, SpawnError, Termination};

/// Longest a test waits for a dropped child's leader to be reaped.
const GONE_WAIT_LIMIT: Duration = Duration::from_secs(10);

/// What the guard's own test records on purpose; other tests ignore it.
const PROBE: &str = "the guard's own test probe";

#[tokio::test]
async fn cgroup_work_on_a_runtime_thread_is_caught() {
    let caught = std::panic::catch_unwind(|| assert_off_runtime(PROBE));
    assert!(caught.is_err(), "the guard let runtime-thread work through");
    let recorded = ON_RUNTIME.lock().unwrap().clone();
    assert!(recorded.iter().any(|w| w == PROBE), "{recorded:?}");
    // Off any runtime, the same work passes.
    std::thread::spawn(|| assert_off_runtime("a plain thread's work"))
        .join()
        .unwrap();
}

#[tokio::test]
async fn a_chore_queued_by_a_chore_runs_at_once() {
    // Queued behind the running chore instead, a cleanup that waits for a
    // kill it queued would wait forever.
    let ran_inside = call(|| {
        let (done, seen) = std::sync::mpsc::channel();
        run(move || done.send(()).unwrap());
        seen.try_recv().is_ok()
    })
    .await;
    assert_eq!(ran_inside, Some(true));
}

/// The leader `pid` that started at `start` is gone: no such process, or
/// the pid now belongs to another one.
fn gone(pid: u32, start: u64) -> bool {
    crate::procfs::stat(pid).is_none_or(|s| s.start_ticks != start)
}

fn sleeper(script: &str) -> SandboxSpec {
    let mut spec = SandboxSpec::new("/bin/sh", std::env::temp_dir());
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.grace = Duration::from_millis(100);
    spec.limits.pids = Some(8);
    spec.limits.memory_bytes = Some(256 << 20);
    spec
}

/// Every path of a child with a cgroup that touches cgroupfs from async code
/// or a drop (planning, SIGTERM then SIGKILL, a capture's output-limit kill,
/// the drop guard, a refused spawn dropping its fresh cgroup) is run on a
/// runtime with two worker threads; [`assert_off_runtime`] at every
/// cgroupfs entry point fails (and records) any of it done on them. Each
/// child is a single process, so its leader being gone means nothing is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cgroup_work_never_runs_on_the_callers_runtime() {
    if let Err(reason) = crate::cgroup_support() {
        // The rule of tests/suite/support.rs `needs`, which unit tests
        // cannot reach: CI machines have cgroups.
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(!ci, "CI machines have cgroups: {reason}");
        eprintln!("skipping: it needs a writable cgroup hierarchy: {reason}");
        return;
    }

    // Planning, then SIGTERM (ignored once the shell says so) and SIGKILL
    // after the grace.
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let mut spec = sleeper("trap '' TERM; echo ready >&3; exec sleep 30");
    spec.protocol_fd = Some(theirs.into());
    let child = crate::spawn(spec).await.unwrap();
    let (pid, start) = (
        child.pid(),
        crate::procfs::stat(child.pid()).unwrap().start_ticks,
    );
    ours.set_nonblocking(true).unwrap();
    let mut ours = tokio::net::UnixStream::from_std(ours).unwrap();
    let mut ready = [0u8; 6];
    tokio::time::timeout(GONE_WAIT_LIMIT, ours.read_exact(&mut ready))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&ready, b"ready\n");
    child.killer().terminate(KillReason::Timeout);
    let exit = child.wait().await;
    assert_eq!(exit.termination, Termination::Timeout, "{exit:?}");
    assert_eq!(exit.raw, crate::RawExit::Signaled(libc::SIGKILL));
    assert!(gone(pid, start));

    // A capture task's kill at the output limit.
    let mut spec = sleeper("exec yes");
    spec.capture = CaptureLimits {
        stdout_hard_bytes: 4096,
        ..CaptureLimits::default()
    };
    let child = crate::spawn(spec).await.unwrap();
    let (pid, start) = (
        child.pid(),
        crate::procfs::stat(child.pid()).unwrap().start_ticks,
    );
    let exit = child.wait().await;
    assert!(
        matches!(exit.termination, Termination::OutputLimit { .. }),
        "{exit:?}"
    );
    assert!(gone(pid, start));

    // The drop guard.
    let child = crate::spawn(sleeper("exec sleep 30")).await.unwrap();
    let (pid, start) = (
        child.pid(),
        crate::procfs::stat(child.pid()).unwrap().start_ticks,
    );
    drop(child);
    let deadline = Instant::now() + GONE_WAIT_LIMIT;
    while !gone(pid, start) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(gone(pid, start), "the dropped child {pid} is still there");

    // A refusal after its cgroup was made (the memory cap went in, the
    // pids cap of 0 cannot): the fresh cgroup is dropped on this runtime.
    let mut spec = sleeper("exit 0");
    spec.limits.pids = Some(0);
    spec.policy = SandboxPolicy::RequireAll;
    let refused = crate::spawn(spec).await.unwrap_err();
    assert!(
        matches!(refused, SpawnError::Unsandboxed { .. }),
        "{refused}"
    );
    // Chores run in order: once this one has run, so has the removal.
    call(|| ()).await.unwrap();

    let mut on_runtime = ON_RUNTIME.lock().unwrap().clone();
    on_runtime.retain(|w| w != PROBE);
    assert!(
        on_runtime.is_empty(),
        "cgroupfs work on the runtime: {on_runtime:?}"
    );
}

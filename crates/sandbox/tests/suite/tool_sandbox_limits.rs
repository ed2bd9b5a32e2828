//! The tool sandbox's process limits on a real Python process: a daemon
//! dies with the call (the pid namespace), fork and memory bombs hit their
//! caps, endless output is cut, and a deadline kills the whole tree, each
//! leaving nothing alive.

use std::time::Duration;

use subagent_sandbox::{KillReason, Termination, spawn};

use super::support::{
    MIB, assert_nothing_alive, finish, marker, needs_cgroups, needs_tool_sandbox,
};
use super::tool_sandbox_support::{dirs, python_spec, run, run_spec, strict, without};

#[tokio::test]
async fn a_setsid_daemon_dies_with_the_call() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    // The parent exits only once the daemon is up (in its own session, its
    // stdio closed), so the test does not race the daemon's start.
    let daemon = "import os, time\nr, w = os.pipe()\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.closerange(0, 3)\n        os.write(w, b'up')\n        os.close(w)\n        time.sleep(60)\n    os._exit(0)\nos.close(w)\nassert os.read(r, 2) == b'up'\nprint('parent done')";
    let exit = run(daemon, &dirs, strict(&dirs)).await;
    assert_eq!(
        exit.termination,
        Termination::Exited { code: 0 },
        "{exit:?}"
    );
    // The namespace took the daemon down with pid 1: nothing was left for
    // the leak scan to find (run() asserted nothing with the marker lives).
    assert!(exit.leaked_pids.is_empty(), "{exit:?}");
    // Control: without the pid namespace the daemon outlives the call and
    // only the leak scan catches it.
    let control = run(
        daemon,
        &dirs,
        without(strict(&dirs), |l| l.namespaces = false),
    )
    .await;
    assert!(!control.leaked_pids.is_empty(), "control: {control:?}");
}

#[tokio::test]
async fn fork_bomb_hits_the_pids_cap_and_leaves_nothing() {
    if !needs_tool_sandbox() || needs_cgroups().is_none() {
        return;
    }
    let dirs = dirs();
    let marker = marker().await;
    // Every process forks until a fork is refused, then exits 3: the leader
    // ends by itself once the cap bites, so the verdict is the cap's, not
    // the safety timer's.
    let bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        os._exit(3)";
    let mut spec = python_spec(bomb, &dirs, &marker, strict(&dirs));
    spec.limits.pids = Some(32);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let killer = child.killer();
    let timer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        killer.terminate(KillReason::Timeout);
    });
    let exit = finish(child).await;
    timer.abort();
    assert_eq!(exit.termination, Termination::PidsLimit, "{exit:?}");
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn memory_bomb_ends_with_memory_limit() {
    if !needs_tool_sandbox() || needs_cgroups().is_none() {
        return;
    }
    let dirs = dirs();
    let marker = marker().await;
    let mut spec = python_spec(
        "b = b'x' * (1024 * 1024 * 1024)\nprint(len(b))",
        &dirs,
        &marker,
        strict(&dirs),
    );
    spec.limits.memory_bytes = Some(128 * MIB);
    let exit = run_spec(spec, &marker).await;
    assert_eq!(exit.termination, Termination::MemoryLimit, "{exit:?}");
}

#[tokio::test]
async fn endless_output_is_cut_at_the_cap() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let marker = marker().await;
    let mut spec = python_spec(
        "while True:\n    print('y' * 1000)",
        &dirs,
        &marker,
        strict(&dirs),
    );
    spec.capture.stdout_hard_bytes = MIB;
    let exit = run_spec(spec, &marker).await;
    assert!(
        matches!(exit.termination, Termination::OutputLimit { .. }),
        "{exit:?}"
    );
}

#[tokio::test]
async fn sleeping_past_the_deadline_is_killed_whole() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let marker = marker().await;
    let code = "import subprocess, time\nsubprocess.Popen(['sleep', '60'])\ntime.sleep(60)";
    let child = spawn(python_spec(code, &dirs, &marker, strict(&dirs)))
        .await
        .unwrap();
    let pid = child.pid();
    let killer = child.killer();
    let started = std::time::Instant::now();
    let timer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        killer.terminate(KillReason::Timeout);
    });
    let exit = finish(child).await;
    timer.await.unwrap();
    assert_eq!(exit.termination, Termination::Timeout, "{exit:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_nothing_alive(&marker, &[pid]);
}

//! Descendants that outlive the leader are found, killed, reaped and
//! reported, with and without a cgroup.

use subagent_sandbox::{SandboxSpec, Termination, spawn};

use super::support::{assert_nothing_alive, finish, marker, marker_alone, needs_cgroups, sh};

/// Puts the child in its own cgroup (a generous pids cap needs one).
fn with_cgroup(mut spec: SandboxSpec) -> SandboxSpec {
    spec.limits.pids = Some(64);
    spec
}

/// `spec` leaves a process holding its pipes after its leader exits: it is
/// killed and reported, the leader is not, and nothing is left.
pub(super) async fn leftover_holding_the_pipes(spec: SandboxSpec, marker: &str) {
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert!(
        matches!(exit.termination, Termination::Leaked { ref pids } if !pids.is_empty()),
        "{:?}",
        exit.termination
    );
    assert!(!exit.leaked_pids.is_empty());
    assert!(!exit.leaked_pids.contains(&pid), "the leader is not a leak");
    assert_eq!(exit.stdout.lossy_text(), "started\n");
    assert_nothing_alive(marker, &[&[pid][..], &exit.leaked_pids].concat());
}

#[tokio::test]
async fn setsid_grandchild_holding_the_pipes_is_killed_and_reported() {
    let marker = marker().await;
    let spec = sh("setsid sleep 30 & echo started", &marker, &[]);
    leftover_holding_the_pipes(spec, &marker).await;
}

#[tokio::test]
async fn setsid_grandchild_in_a_cgroup_is_killed_and_reported() {
    if needs_cgroups().is_none() {
        return;
    }
    let marker = marker().await;
    let spec = with_cgroup(sh("setsid sleep 30 & echo started", &marker, &[]));
    leftover_holding_the_pipes(spec, &marker).await;
}

const DAEMON: &str = "(setsid sleep 30 </dev/null >/dev/null 2>&1 &); echo parent-done";

async fn double_forked_daemon(spec: SandboxSpec, marker: &str) {
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(exit.stdout.lossy_text(), "parent-done\n");
    assert_eq!(exit.leaked_pids.len(), 1, "{:?}", exit.leaked_pids);
    assert_eq!(
        exit.termination,
        Termination::Leaked {
            pids: exit.leaked_pids.clone()
        }
    );
    assert_nothing_alive(marker, &[&[pid][..], &exit.leaked_pids].concat());
}

#[tokio::test]
async fn double_forked_daemon_reparented_to_us_is_killed_and_reported() {
    // Alone: see `support::TURNS` for why orphans need it without a cgroup.
    let marker = marker_alone().await;
    double_forked_daemon(sh(DAEMON, &marker, &[]), &marker).await;
}

#[tokio::test]
async fn double_forked_daemon_in_a_cgroup_is_killed_and_reported() {
    if needs_cgroups().is_none() {
        return;
    }
    let marker = marker().await;
    double_forked_daemon(with_cgroup(sh(DAEMON, &marker, &[])), &marker).await;
}

#[tokio::test]
async fn grandchild_that_finishes_within_the_drain_window_is_not_a_leak() {
    let marker = marker().await;
    let child = spawn(sh("(sleep 0.02; echo late) & echo early", &marker, &[]))
        .await
        .unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Exited { code: 0 });
    assert!(exit.leaked_pids.is_empty(), "{:?}", exit.leaked_pids);
    assert_eq!(exit.stdout.lossy_text(), "early\nlate\n");
    assert_nothing_alive(&marker, &[pid]);
}

/// A grandchild that exited unreaped under a leader that never waits for it
/// becomes our zombie when the leader exits: it holds no pipe and is no
/// longer listed in `cgroup.procs`, yet the cgroup's pids count still
/// charges it, so the cleanup must not take its shortcut and must reap it.
#[tokio::test]
async fn zombie_grandchild_reparented_to_us_is_reaped_with_a_cgroup() {
    if needs_cgroups().is_none() {
        return;
    }
    let marker = marker().await;
    let script = "(exec sh -c 'echo $$; exec >/dev/null 2>&1; exit 0') & exec sleep 0.2";
    let child = spawn(with_cgroup(sh(script, &marker, &[]))).await.unwrap();
    let exit = finish(child).await;
    assert!(exit.termination.is_success(), "{:?}", exit.termination);
    let grandchild: u32 = exit.stdout.lossy_text().trim().parse().unwrap();
    assert!(
        !std::path::Path::new(&format!("/proc/{grandchild}")).exists(),
        "the zombie grandchild {grandchild} was left unreaped"
    );
}

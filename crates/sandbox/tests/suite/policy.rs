//! RequireAll refuses to start a child whose caps cannot all be enforced;
//! BestEffort runs it and says what is missing.

use subagent_sandbox::{SandboxPolicy, SpawnError, Termination, protection, spawn};

use super::support::{assert_nothing_alive, finish, marker, needs_cgroups, sh};

#[tokio::test]
async fn require_all_with_an_unenforceable_cap_refuses_and_starts_nothing() {
    let marker = marker().await;
    let dir = tempfile::tempdir().unwrap();
    let witness = dir.path().join("started");
    let mut spec = sh("touch \"$1\"", &marker, &[witness.to_str().unwrap()]);
    spec.limits.pids = Some(0);
    spec.policy = SandboxPolicy::RequireAll;
    let err = spawn(spec).await.unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("refusing to run unsandboxed: "), "{text}");
    match err {
        SpawnError::Unsandboxed { missing } => {
            assert!(
                missing
                    .iter()
                    .any(|m| m.protection == protection::CGROUP_PIDS),
                "{missing:?}"
            );
        }
        other => panic!("expected Unsandboxed, got {other:?}"),
    }
    assert!(!witness.exists(), "nothing may run");
    assert_nothing_alive(&marker, &[]);
}

#[tokio::test]
async fn best_effort_runs_and_lists_the_missing_cap() {
    let marker = marker().await;
    let mut spec = sh("exit 0", &marker, &[]);
    spec.limits.pids = Some(0);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let missing = &child.status().not_applied;
    assert!(
        missing
            .iter()
            .any(|m| m.protection == protection::CGROUP_PIDS),
        "{missing:?}"
    );
    assert!(
        !child
            .status()
            .applied
            .iter()
            .any(|a| a == protection::CGROUP_PIDS)
    );
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Exited { code: 0 });
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn require_all_runs_when_every_cap_is_enforceable() {
    if needs_cgroups().is_none() {
        return;
    }
    let marker = marker().await;
    let mut spec = sh("exit 0", &marker, &[]);
    spec.limits.pids = Some(8);
    spec.limits.open_files = Some(64);
    spec.limits.file_size_bytes = Some(1 << 20);
    spec.policy = SandboxPolicy::RequireAll;
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    assert!(
        child.status().not_applied.is_empty(),
        "{:?}",
        child.status()
    );
    let exit = finish(child).await;
    assert!(exit.termination.is_success());
    assert_nothing_alive(&marker, &[pid]);
}

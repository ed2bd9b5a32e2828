//! Memory and pids caps enforced by the child's own cgroup. These need a
//! writable cgroup hierarchy: see [`super::support::needs`].

use std::path::PathBuf;

use subagent_sandbox::{CgroupKind, Termination, protection, spawn};

use super::support::{
    MIB, assert_applied, assert_nothing_alive, finish, marker, needs_cgroups, sh,
};

const PYTHON: &str = "/usr/bin/python3";

#[tokio::test]
async fn memory_cap_ends_a_hog_with_memory_limit() {
    if needs_cgroups().is_none() {
        return;
    }
    let marker = marker().await;
    let mut spec = sh(
        &format!("exec {PYTHON} -c \"b = b'x' * (512 * 1024 * 1024); print(len(b))\""),
        &marker,
        &[],
    );
    spec.limits.memory_bytes = Some(64 * MIB);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    assert_applied(&child, protection::CGROUP_MEMORY);
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::MemoryLimit, "{exit:?}");
    assert!(
        exit.stdout.head.is_empty(),
        "the allocation must not succeed"
    );
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn fork_bomb_is_contained_by_the_pids_cap_and_fully_reaped() {
    if needs_cgroups().is_none() {
        return;
    }
    let marker = marker().await;
    let mut spec = sh(
        "i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done; wait",
        &marker,
        &[],
    );
    spec.limits.pids = Some(32);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    assert_applied(&child, protection::CGROUP_PIDS);
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::PidsLimit, "{exit:?}");
    assert!(
        exit.leaked_pids.len() < 32,
        "the cap held: {}",
        exit.leaked_pids.len()
    );
    assert!(
        !exit.leaked_pids.is_empty(),
        "the sleeps were left behind and killed"
    );
    assert_nothing_alive(&marker, &[&[pid][..], &exit.leaked_pids].concat());
}

#[tokio::test]
async fn child_cgroup_is_removed_after_the_run() {
    let Some(kind) = needs_cgroups() else {
        return;
    };
    let marker = marker().await;
    let mut spec = sh("cat /proc/self/cgroup", &marker, &[]);
    spec.limits.pids = Some(16);
    spec.limits.memory_bytes = Some(256 * MIB);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Exited { code: 0 });
    let text = exit.stdout.lossy_text();
    let (controller, ours) = match &kind {
        CgroupKind::V1 { memory, .. } => ("memory", memory.clone()),
        CgroupKind::V2 { dir, .. } => ("", dir.clone()),
        other => panic!("a cgroup layout this test does not know: {other:?}"),
    };
    let line = text
        .lines()
        .find(|l| {
            l.split(':')
                .nth(1)
                .is_some_and(|c| c.split(',').any(|c| c == controller))
        })
        .unwrap_or_else(|| panic!("no {controller} line in {text}"));
    let name = line.rsplit('/').next().unwrap();
    assert!(
        name.starts_with("subagent-"),
        "the child ran in its own cgroup: {line}"
    );
    let dir: PathBuf = ours.join(name);
    assert!(!dir.exists(), "{} was not removed", dir.display());
    assert_nothing_alive(&marker, &[pid]);
}

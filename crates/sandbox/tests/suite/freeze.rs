//! Signalling a cgroup's members with the cgroup frozen: while frozen no
//! member can exit and free its pid for a stranger, and the cgroup is
//! thawed after every round, so the signals land (a frozen process keeps
//! even a SIGKILL pending). Needs a cgroup freezer: see
//! [`super::support::needs`].

use subagent_sandbox::{CgroupKind, KillReason, RawExit, Termination, spawn};

use super::support::{
    assert_nothing_alive, finish, marker, needs_cgroup_freezer, protocol_pair, read_until, sh,
};

/// Asserts that `pid` runs in a freezable cgroup of its own: on v1 its
/// line of the freezer hierarchy in `/proc/<pid>/cgroup` names a
/// `subagent-` cgroup.
fn assert_in_own_freezer(pid: u32, kind: &CgroupKind) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let controller = match kind {
        CgroupKind::V1 { .. } => "freezer",
        _ => "",
    };
    let line = text.lines().find(|l| {
        l.split(':')
            .nth(1)
            .is_some_and(|c| c.split(',').any(|c| c == controller))
    });
    assert!(line.is_some(), "no {controller:?} line in {text}");
    let line = line.unwrap();
    let name = line.rsplit('/').next().unwrap();
    assert!(
        name.starts_with("subagent-"),
        "not in its own cgroup: {line}"
    );
}

#[tokio::test]
async fn a_tree_killed_while_frozen_dies_whole() {
    let Some(kind) = needs_cgroup_freezer() else {
        return;
    };
    let marker = marker().await;
    let (theirs, mut ours) = protocol_pair();
    // Nothing here heeds SIGTERM, and one member left the process group, so
    // the SIGKILL to the cgroup's members is what ends it. Without a thaw
    // after that round the frozen tree would never die and `finish` would
    // time out.
    let mut spec = sh(
        "trap '' TERM; setsid sleep 30 & sleep 30 & echo ready >&3; wait",
        &marker,
        &[],
    );
    spec.protocol_fd = Some(theirs);
    spec.limits.pids = Some(16);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    read_until(&mut ours, "ready").await;
    assert_in_own_freezer(pid, &kind);
    child.killer().terminate(KillReason::Timeout);
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Timeout, "{exit:?}");
    assert_eq!(exit.raw, RawExit::Signaled(libc::SIGKILL));
    assert_nothing_alive(&marker, &[&[pid][..], &exit.leaked_pids].concat());
}

#[tokio::test]
async fn a_member_outside_the_group_gets_its_sigterm_after_the_thaw() {
    if needs_cgroup_freezer().is_none() {
        return;
    }
    let marker = marker().await;
    let (theirs, mut ours) = protocol_pair();
    // The inner shell left the process group: only the signal to the
    // cgroup's members reaches it, sent while the cgroup is frozen. It can
    // answer only once the cgroup is thawed again.
    let inner = "trap 'echo bye >&3; exit 0' TERM; echo ready >&3; while :; do sleep 1; done";
    let mut spec = sh("setsid sh -c \"$1\" & wait", &marker, &[inner]);
    spec.protocol_fd = Some(theirs);
    spec.limits.pids = Some(16);
    // Far beyond the test's wait: the answer must come from SIGTERM.
    spec.grace = std::time::Duration::from_secs(60);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    read_until(&mut ours, "ready").await;
    child.killer().terminate(KillReason::Cancelled);
    read_until(&mut ours, "bye").await;
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Cancelled, "{exit:?}");
    assert_nothing_alive(&marker, &[&[pid][..], &exit.leaked_pids].concat());
}

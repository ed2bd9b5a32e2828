//! The drop guard: however a child goes away without `wait`, its whole tree
//! is killed and reaped.

use subagent_sandbox::{SandboxedChild, spawn};

use super::support::{
    Marker, alive_with_marker, assert_eventually_nothing_alive, marker, protocol_pair, read_until,
    sh,
};

const TREE: &str = "sleep 30 & setsid sleep 30 & echo ready >&3; wait";

/// Waits until the tree has `count` live processes (a background job may
/// still be between fork and exec when "ready" arrives).
async fn wait_for_tree_of(count: usize, marker: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    // The sample that ends the wait is the one judged: a second look can
    // miss a process whose /proc entry is unreadable for the moment of its
    // exec.
    let alive = loop {
        let alive = alive_with_marker(marker);
        if alive.len() == count || std::time::Instant::now() >= deadline {
            break alive;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    assert_eq!(alive.len(), count, "the tree never formed: {alive:?}");
}

/// Starts `TREE` and waits until all three of its processes run.
async fn start_tree() -> (Marker, SandboxedChild) {
    let marker = marker().await;
    let (theirs, mut ours) = protocol_pair();
    let mut spec = sh(TREE, &marker, &[]);
    spec.protocol_fd = Some(theirs);
    let child = spawn(spec).await.unwrap();
    read_until(&mut ours, "ready").await;
    wait_for_tree_of(3, &marker).await;
    (marker, child)
}

#[tokio::test]
async fn dropping_the_child_kills_and_reaps_the_tree() {
    let (marker, child) = start_tree().await;
    let pid = child.pid();
    drop(child);
    assert_eventually_nothing_alive(&marker, &[pid]).await;
}

#[tokio::test]
async fn aborting_the_waiting_task_kills_and_reaps_the_tree() {
    let (marker, child) = start_tree().await;
    let pid = child.pid();
    let task = tokio::spawn(child.wait());
    tokio::task::yield_now().await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eventually_nothing_alive(&marker, &[pid]).await;
}

#[tokio::test]
async fn panic_in_the_owner_kills_and_reaps_the_tree() {
    let (marker, child) = start_tree().await;
    let pid = child.pid();
    let owner = tokio::spawn(async move {
        let _child = child;
        panic!("the owner fails while holding the child");
    });
    assert!(owner.await.unwrap_err().is_panic());
    assert_eventually_nothing_alive(&marker, &[pid]).await;
}

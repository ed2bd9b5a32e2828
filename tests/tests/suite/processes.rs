//! Processes of a run, from its session file: the worker leader (named by
//! pid in the lifecycle lines) was reaped. The `/proc` readers every test
//! uses (no survivor, nothing running in a dir) are the workspace's one
//! copy, `subagent_test_support::processes`, re-exported here.

use std::path::Path;

use serde_json::Value;

pub use subagent_test_support::processes::{
    assert_no_survivors, assert_nothing_runs_in, processes_in, running_in, survivors,
};

/// The worker leader (pid from the session's lifecycle line) is gone: not
/// running, and not a zombie either, i.e. it was reaped.
pub fn assert_reaped(lines: &[Value]) {
    if let Some(pid) = unreaped_leader(lines) {
        panic!("worker {pid} is still in the process table (running or unreaped)");
    }
}

/// The worker leader's pid (from the session's lifecycle lines) while it is
/// still in the process table.
pub fn unreaped_leader(lines: &[Value]) -> Option<u64> {
    let pid = lines.iter().rev().find_map(|l| l["pid"].as_u64())?;
    Path::new(&format!("/proc/{pid}")).exists().then_some(pid)
}

//! A supervisor SIGKILLed in the middle of a tool call leaves its cgroups
//! behind, nested ones included (its worker's tool cgroup, the spares made
//! ahead); the next supervisor's sweep takes every one of them down, in
//! every hierarchy mounted here, and nothing of the dead run survives.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::json;

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::wait_until;
use super::support::*;

/// The mount points of every cgroup hierarchy (v1 and v2) of this process.
fn cgroup_mounts() -> Vec<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    mountinfo
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let fstype = after.split(' ').next()?;
            let mount_point = before.split(' ').nth(4)?;
            (fstype == "cgroup" || fstype == "cgroup2").then(|| PathBuf::from(mount_point))
        })
        .collect()
}

/// Every cgroup directory under `root` whose name starts with one of
/// `prefixes`, however deep.
fn cgroups_named(root: &Path, prefixes: &[String], found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if prefixes.iter().any(|p| name.starts_with(p.as_str())) {
            found.push(path.clone());
        }
        cgroups_named(&path, prefixes, found);
    }
}

/// The cgroups, in every hierarchy, named for one of `pids`
/// (`subagent-<pid>-...`, the names a supervisor or worker gives its own).
pub(super) fn cgroups_of(pids: &[u32]) -> Vec<PathBuf> {
    let prefixes: Vec<String> = pids.iter().map(|p| format!("subagent-{p}-")).collect();
    let mut found = Vec::new();
    for mount in cgroup_mounts() {
        cgroups_named(&mount, &prefixes, &mut found);
    }
    found
}

#[test]
fn a_supervisor_killed_mid_tool_call_leaves_no_cgroup_after_the_next_one_starts() {
    if !cgroups_or_skip("stale cgroup sweep") {
        return;
    }
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let code = "import pathlib, time\npathlib.Path('started').write_text('1')\ntime.sleep(120)\n";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_py", "python_execute", &json!({"code": code})),
        text_turn("never reached"),
    ]);
    let mut first = model
        .run_command(workspace.path(), sessions.path())
        .args(["--task", "sleep in python", "--tools", "python_execute"])
        // The tool's file tells the test it runs: in place, not in a layer.
        .args(["--timeout", "120", "--isolation", "none"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the tool to run", || {
        workspace.path().join("started").exists()
    });
    let supervisor = first.id();
    let worker = worker_pid(sessions.path());
    let left = cgroups_of(&[supervisor, worker]);
    let nested = left.iter().any(|dir| {
        dir.parent().is_some_and(|p| {
            p.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with(&format!("subagent-{supervisor}-"))
            })
        })
    });
    assert!(
        nested,
        "the tool runs in a cgroup nested in the worker's: {left:#?}"
    );

    // SAFETY: kill sends a signal to the child we started.
    unsafe { libc::kill(supervisor as libc::pid_t, libc::SIGKILL) };
    first.wait().unwrap();
    wait_until("the dead run's processes to go", || {
        processes_in(workspace.path()).is_empty()
    });
    assert!(
        !cgroups_of(&[supervisor]).is_empty(),
        "a killed supervisor cannot remove its own cgroups"
    );

    // The next supervisor sweeps as it makes its first child's cgroup.
    let out = fixture_cli(sessions.path())
        .args(["--task", "fixture:success"])
        .arg("--workspace")
        .arg(workspace.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let still = cgroups_of(&[supervisor, worker]);
    assert!(still.is_empty(), "left behind: {still:#?}");
    assert_nothing_runs_in(workspace.path());
}

/// The worker's pid, from the session file's start line, once written.
fn worker_pid(sessions: &Path) -> u32 {
    let read = || {
        jsonl_files(sessions).iter().find_map(|file| {
            std::fs::read_to_string(file)
                .ok()?
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .find_map(|l| l["pid"].as_u64())
        })
    };
    wait_until("the session file's start line", || read().is_some());
    u32::try_from(read().unwrap()).unwrap()
}

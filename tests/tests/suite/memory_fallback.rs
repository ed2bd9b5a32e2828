//! A memory ceiling without cgroups: the real CLI run as a user who cannot
//! write any cgroup (made by the test, as root) still caps the worker and
//! each tool process, through RLIMIT_DATA, and says so in the result and
//! in the session header.

use std::os::unix::fs::chown;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::batch_faults::root_or_skip;
use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// The unprivileged user the tests run the CLI as.
const USER: &str = "subagent-test";

/// (uid, gid) of [`USER`], created first when missing.
fn test_user() -> (u32, u32) {
    let id = |flag: &str| {
        Command::new("id")
            .args([flag, USER])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
    };
    if id("-u").is_none() {
        let status = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                USER,
            ])
            .status()
            .unwrap();
        assert!(status.success(), "useradd {USER}");
    }
    (id("-u").unwrap(), id("-g").unwrap())
}

/// `subagent ARGS` as [`USER`], with HOME in `home`.
fn as_user(user: (u32, u32), home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("setpriv");
    c.arg(format!("--reuid={}", user.0))
        .arg(format!("--regid={}", user.1))
        .args(["--clear-groups", "--"])
        .arg(binary("subagent"))
        .args(args)
        .env("HOME", home)
        .env_remove("SUBAGENT_WORKER")
        .stdin(Stdio::null());
    c
}

fn result_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON result ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            p.as_str()
                .map_or_else(|| p["protection"].to_string(), str::to_owned)
        })
        .map(|p| p.trim_matches('"').to_owned())
        .collect()
}

/// A directory the user owns: the workspace, sessions and HOME of a run.
fn owned_dir(user: (u32, u32)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["ws", "sessions"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        chown(dir.path().join(sub), Some(user.0), Some(user.1)).unwrap();
    }
    chown(dir.path(), Some(user.0), Some(user.1)).unwrap();
    dir
}

#[test]
fn without_a_writable_cgroup_a_tool_allocating_a_gigabyte_is_stopped_by_the_rlimit() {
    if !root_or_skip("memory fallback (tool)") {
        return;
    }
    let user = test_user();
    let dir = owned_dir(user);
    let (ws, sessions) = (dir.path().join("ws"), dir.path().join("sessions"));
    let code = "b = bytearray(1024 ** 3)\nprint('allocated', len(b))\n";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_py", "python_execute", &json!({"code": code})),
        text_turn("done"),
    ]);
    let base_url = model.base_url();
    let out = as_user(
        user,
        dir.path(),
        &[
            "run",
            "--provider",
            "openai-chat",
            "--model",
            "scripted",
            "--base-url",
            &base_url,
            "--workspace",
            ws.to_str().unwrap(),
            "--sessions-dir",
            sessions.to_str().unwrap(),
            "--tools",
            "python_execute",
            "--tool-memory",
            "256M",
            "--task",
            "allocate a gigabyte",
            "--json",
        ],
    )
    .output()
    .unwrap();
    let result = result_of(&out);
    assert_eq!(out.status.code(), Some(0), "{result:#}");
    assert_valid_result(&result);
    let single = &result["details"]["results"][0];
    // The worker itself: no cgroup, the rlimit instead.
    assert!(
        names(&single["sandbox"]["applied"]).contains(&"rlimit_memory".to_owned()),
        "{single:#}"
    );
    assert!(
        names(&single["sandbox"]["notApplied"]).contains(&"cgroup_memory".to_owned()),
        "{single:#}"
    );
    let lines = check_session_file(Path::new(single["sessionFile"].as_str().unwrap()));
    let header = &lines[0]["toolSandbox"];
    let missing = names(&header["notApplied"]);
    for layer in ["cgroup_memory", "cgroup_memory_swap", "cgroup_pids"] {
        assert!(missing.contains(&layer.to_owned()), "{layer}: {header:#}");
    }
    assert!(
        names(&header["applied"]).contains(&"rlimit_memory".to_owned()),
        "{header:#}"
    );
    let tool = lines
        .iter()
        .find(|l| l["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool result: {lines:#?}"));
    let output = tool["output"].as_str().unwrap();
    assert!(output.contains("MemoryError"), "{output}");
    assert!(!output.contains("allocated 1073741824"), "{output}");
    assert_nothing_runs_in(&ws);
}

#[test]
fn without_a_writable_cgroup_a_worker_over_its_memory_is_stopped_by_the_rlimit() {
    if !root_or_skip("memory fallback (worker)") {
        return;
    }
    let user = test_user();
    let dir = owned_dir(user);
    let (ws, sessions) = (dir.path().join("ws"), dir.path().join("sessions"));
    let out = as_user(
        user,
        dir.path(),
        &[
            "run",
            "--worker",
            FIXTURE,
            "--model",
            "fixture-model",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--workspace",
            ws.to_str().unwrap(),
            "--sessions-dir",
            sessions.to_str().unwrap(),
            "--memory",
            "64M",
            "--task",
            "fixture:memory",
            "--json",
        ],
    )
    .output()
    .unwrap();
    let result = result_of(&out);
    assert_eq!(out.status.code(), Some(1), "{result:#}");
    let single = &result["details"]["results"][0];
    assert!(
        names(&single["sandbox"]["applied"]).contains(&"rlimit_memory".to_owned()),
        "{single:#}"
    );
    // The hog never got its 4 GiB: its allocation failed and it aborted.
    assert_ne!(single["output"], "allocated 4096 MiB", "{single:#}");
    assert_eq!(single["termination"]["signal"], libc::SIGABRT, "{single:#}");
    assert_children_reaped(&result);
    assert_nothing_runs_in(&ws);
}

#[test]
fn a_tool_killed_by_its_workers_cap_is_told_the_workers_limit_not_its_own() {
    if !cgroups_or_skip("memory message names the cap that fired") {
        return;
    }
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    // Touched page by page, so the memory is charged as it grows.
    let code = "b = bytearray(768 * 1024 ** 2)\nprint('allocated', len(b))\n";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_py", "python_execute", &json!({"code": code})),
        text_turn("done"),
    ]);
    let out = model
        .run_command(workspace.path(), sessions.path())
        .args(["--tools", "python_execute", "--json"])
        .args(["--memory", "256M", "--tool-memory", "1G"])
        .args(["--task", "allocate"])
        .output()
        .unwrap();
    let result = result_of(&out);
    let single = &result["details"]["results"][0];
    let lines = check_session_file(Path::new(single["sessionFile"].as_str().unwrap()));
    let tool = lines
        .iter()
        .find(|l| l["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool result: {lines:#?}"));
    let output = tool["output"].as_str().unwrap();
    assert!(
        output.contains("the memory limit of the worker that runs this tool"),
        "{output}"
    );
    assert!(!output.contains("1024 MiB"), "{output}");
    assert_nothing_runs_in(workspace.path());
}

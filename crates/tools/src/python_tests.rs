use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use subagent_protocol::PythonInterpreter;

use super::*;
use crate::run::{ToolCallOutput, run_tool};

fn ctx(workspace: &Path) -> ToolContext {
    ToolContext::new(workspace)
}

/// Runs `code` and asserts that no process it started outlives the call:
/// a marker comment puts the call on the interpreter's command line.
async fn python(code: &str, ctx: &ToolContext) -> ToolCallOutput {
    let marker = unique_marker("call");
    let code = format!("{code}\n# {marker}");
    let arguments = serde_json::json!({ "code": code }).to_string();
    let out = run_tool(&PythonExecute, &arguments, ctx).await;
    assert_eq!(alive_with(&marker), Vec::<u32>::new(), "{out:?}");
    out
}

#[tokio::test]
async fn prints_and_exit_code_reach_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = python("print(6 * 7)", &ctx(dir.path())).await;
    assert_eq!(
        out,
        ToolCallOutput {
            output: "exit code 0\n--- stdout ---\n42\n--- stderr: (empty) ---\n".into(),
            is_error: false,
        }
    );
}

#[tokio::test]
async fn an_exception_is_a_tool_error_with_the_traceback() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        "print('before')\nraise ValueError('bad input')",
        &ctx(dir.path()),
    )
    .await;
    assert!(out.is_error, "{out:?}");
    assert!(out.output.contains("exit code 1"), "{}", out.output);
    assert!(out.output.contains("before"), "{}", out.output);
    assert!(
        out.output.contains("ValueError: bad input"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn files_written_to_the_workspace_stay_and_the_cwd_is_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        "import os\nopen('result.txt', 'w').write('kept')\nprint(os.getcwd())",
        &ctx(dir.path()),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let canonical = dir.path().canonicalize().unwrap();
    assert!(
        out.output.contains(&canonical.display().to_string()),
        "{}",
        out.output
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("result.txt")).unwrap(),
        "kept"
    );
}

#[tokio::test]
async fn the_environment_is_the_allowlist_with_a_private_home() {
    let dir = tempfile::tempdir().unwrap();
    let code = "import os\nprint(sorted(k for k in os.environ if k != 'LC_CTYPE'))\nprint(os.environ['HOME'] == os.environ['TMPDIR'], os.path.isdir(os.environ['HOME']))";
    let out = python(code, &ctx(dir.path())).await;
    assert_eq!(
        out.output,
        "exit code 0\n--- stdout ---\n['HOME', 'LANG', 'PATH', 'TMPDIR']\nTrue True\n--- stderr: (empty) ---\n"
    );
}

#[tokio::test]
async fn the_private_tmp_is_removed_after_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let out = python("import os\nprint(os.environ['TMPDIR'])", &ctx(dir.path())).await;
    let tmp = out.output.lines().nth(2).unwrap().to_owned();
    assert!(tmp.contains("subagent-tool-"), "{}", out.output);
    assert!(!Path::new(&tmp).exists(), "{tmp} still exists");
}

#[tokio::test]
async fn writing_outside_the_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x.txt");
    let code = format!("open({:?}, 'w').write('x')", target.display().to_string());
    let out = python(&code, &ctx(dir.path())).await;
    assert!(out.is_error, "{out:?}");
    // The filesystem view has no such directory; Landlock, where the view
    // is missing, refuses the write.
    assert!(
        out.output.contains("FileNotFoundError") || out.output.contains("PermissionError"),
        "{}",
        out.output
    );
    assert!(!target.exists());
}

#[tokio::test]
async fn a_setuid_copy_of_id_cannot_be_made_in_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let code = "import os, shutil\nshutil.copy('/usr/bin/id', 'id')\nos.chmod('id', 0o4755)";
    let out = python(code, &ctx(dir.path())).await;
    assert!(out.is_error, "{out:?}");
    assert!(out.output.contains("PermissionError"), "{}", out.output);
    let mode = std::fs::metadata(dir.path().join("id"))
        .unwrap()
        .permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o6000,
        0,
        "{mode:?}"
    );
}

#[tokio::test]
async fn a_host_unix_socket_outside_the_workspace_is_not_there() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let socket = outside.path().join("engine.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let code = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({:?})\nprint('connected')",
        socket.display().to_string()
    );
    let out = python(&code, &ctx(dir.path())).await;
    assert!(out.is_error, "{out:?}");
    assert!(!out.output.contains("connected"), "{}", out.output);
}

#[tokio::test]
async fn git_hooks_and_agent_config_in_the_workspace_are_read_only() {
    let dir = tempfile::tempdir().unwrap();
    for sub in [".git/hooks", ".subagent", ".claude/agents"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    let code = "for path in ('.git/hooks/pre-commit', '.subagent/config.toml', '.claude/agents/x.md'):\n    try:\n        open(path, 'w').write('planted')\n        print(path, 'written')\n    except OSError as e:\n        print(path, e.strerror)\nopen('ordinary.txt', 'w').write('fine')";
    let out = python(code, &ctx(dir.path())).await;
    assert!(!out.is_error, "{out:?}");
    for path in [
        ".git/hooks/pre-commit",
        ".subagent/config.toml",
        ".claude/agents/x.md",
    ] {
        assert!(
            out.output
                .contains(&format!("{path} Read-only file system")),
            "{}",
            out.output
        );
        assert!(!dir.path().join(path).exists(), "{path}");
    }
    assert!(dir.path().join("ordinary.txt").exists());
}

#[tokio::test]
async fn network_is_off_by_default_and_private_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).close()\nprint('connected')"
    );
    let off = python(&code, &ctx(dir.path())).await;
    assert!(off.is_error, "{off:?}");
    assert!(!off.output.contains("connected"), "{}", off.output);
    // With the network on, the host's loopback stays out of reach (issue
    // 33): the tool has the run's private network.
    let mut allowed = ctx(dir.path());
    allowed.process.allow_network = true;
    let on = python(&code, &allowed).await;
    assert!(on.is_error, "{on:?}");
    assert!(!on.output.contains("connected"), "{}", on.output);
    if !subagent_sandbox::net::network_stack_found() {
        assert!(on.output.contains("apt-get install"), "{}", on.output);
        return;
    }
    assert!(
        on.output.contains("ConnectionRefusedError"),
        "{}",
        on.output
    );
    // Private networks allowed: the host's loopback too, at 127.0.0.1
    // through pasta (the stack such a run gets first), at the gateway
    // through slirp4netns.
    let mut private = ctx(dir.path());
    private.process.allow_network = true;
    private.web.addresses = crate::web::AddressPolicy::allowing_private_networks(true);
    let host = match subagent_sandbox::net::current_stack_for(true).map(|s| s.kind) {
        Ok(subagent_sandbox::net::StackKind::Slirp4netns) => {
            subagent_sandbox::net::slirp::SLIRP_GATEWAY_V4.to_string()
        }
        _ => "127.0.0.1".to_owned(),
    };
    let reached = python(&code.replace("'127.0.0.1'", &format!("'{host}'")), &private).await;
    assert!(!reached.is_error, "{reached:?}");
    assert!(reached.output.contains("connected"), "{}", reached.output);
}

#[tokio::test]
async fn sleeping_past_the_timeout_is_stopped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let arguments =
        serde_json::json!({ "code": "print('started')\nimport time\ntime.sleep(30)", "timeout_seconds": 1 })
            .to_string();
    let started = Instant::now();
    let out = run_tool(&PythonExecute, &arguments, &ctx(dir.path())).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(out.is_error, "{out:?}");
    assert!(out.output.contains("timed out after 1 s"), "{}", out.output);
    assert!(
        out.output.contains("started"),
        "output printed before the kill is kept: {}",
        out.output
    );
}

#[tokio::test]
async fn a_timeout_above_the_maximum_is_clamped() {
    let mut ctx = ctx(Path::new("."));
    ctx.timeout = Duration::from_secs(60);
    ctx.max_timeout = Duration::from_secs(120);
    assert_eq!(
        call_timeout(Some(1e9), &ctx).unwrap(),
        Duration::from_secs(120)
    );
    assert_eq!(
        call_timeout(Some(2.5), &ctx).unwrap(),
        Duration::from_millis(2500)
    );
    assert_eq!(call_timeout(None, &ctx).unwrap(), Duration::from_secs(60));
    assert!(call_timeout(Some(0.0), &ctx).is_err());
    assert!(call_timeout(Some(f64::NAN), &ctx).is_err());
}

#[tokio::test]
async fn huge_output_is_capped_for_the_model_with_head_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        "for i in range(200000):\n    print('line', i)",
        &ctx(dir.path()),
    )
    .await;
    assert!(out.output.contains("line 0\n"), "head kept");
    assert!(out.output.contains("omitted"), "a marker says what was cut");
    assert!(
        out.output.len() < 60 * 1024,
        "{} bytes shown",
        out.output.len()
    );
}

#[tokio::test]
async fn endless_output_stops_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let out = python("while True:\n    print('y' * 1000)", &ctx(dir.path())).await;
    assert!(out.is_error, "{out:?}");
    assert!(
        out.output.contains("stopped: stdout passed 1 MiB"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn a_memory_bomb_is_stopped_at_the_memory_limit() {
    if subagent_sandbox::cgroup_support().is_err() {
        assert!(std::env::var_os("CI").is_none(), "CI machines have cgroups");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(dir.path());
    ctx.process.memory_bytes = 128 * 1024 * 1024;
    let out = python("b = b'x' * (1024 * 1024 * 1024)\nprint(len(b))", &ctx).await;
    assert!(out.is_error, "{out:?}");
    assert!(
        out.output.contains("memory limit of 128 MiB"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn oversized_code_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let code = format!("x = '{}'", "a".repeat(MAX_CODE_BYTES));
    let out = python(&code, &ctx(dir.path())).await;
    assert!(out.is_error);
    assert!(
        out.output.contains("more than the 102400 accepted"),
        "{}",
        out.output
    );
}

/// Live processes whose command line contains `marker`.
fn alive_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .collect()
}

fn unique_marker(name: &str) -> String {
    format!("{name}-{}-{:?}", std::process::id(), Instant::now())
}

#[tokio::test]
async fn a_daemon_in_its_own_session_does_not_outlive_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_marker("daemon");
    let code = format!(
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker:?}], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nprint('started')"
    );
    let out = python(&code, &ctx(dir.path())).await;
    assert!(out.output.contains("started"), "{}", out.output);
    assert_eq!(alive_with(&marker), Vec::<u32>::new());
}

#[tokio::test]
async fn a_timed_out_tree_is_gone_when_the_call_returns() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_marker("timeout");
    let code = format!(
        "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker:?}])\ntime.sleep(60)"
    );
    let arguments = serde_json::json!({ "code": code, "timeout_seconds": 1 }).to_string();
    let out = run_tool(&PythonExecute, &arguments, &ctx(dir.path())).await;
    assert!(out.output.contains("timed out"), "{}", out.output);
    assert_eq!(alive_with(&marker), Vec::<u32>::new());
}

#[tokio::test]
async fn a_dropped_call_kills_its_process() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_marker("dropped");
    let code = format!("import time\nprint({marker:?}, flush=True)\ntime.sleep(60)");
    let ctx = ctx(dir.path());
    let arguments = serde_json::json!({ "code": code });
    let call = PythonExecute.call(arguments, &ctx);
    // Drop the call once the process is up, as the worker does on cancel.
    let outcome = tokio::time::timeout(Duration::from_secs(2), call).await;
    assert!(
        outcome.is_err(),
        "the call should still be running: {outcome:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !alive_with(&marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(alive_with(&marker), Vec::<u32>::new());
}

/// The interpreter this process would resolve, as the supervisor sends it.
async fn sent_interpreter() -> PythonInterpreter {
    let found = subagent_sandbox::python_interpreter().await.unwrap();
    PythonInterpreter::Found {
        executable: found.executable.to_str().unwrap().to_owned(),
        prefixes: found
            .prefixes
            .iter()
            .map(|p| p.to_str().unwrap().to_owned())
            .collect(),
    }
}

#[tokio::test]
async fn a_pending_interpreter_is_waited_for_and_then_used() {
    let dir = tempfile::tempdir().unwrap();
    let (sender, later) = tokio::sync::watch::channel(None);
    let ctx = ctx(dir.path()).with_python(Some(&PythonInterpreter::Pending), Some(later));
    let call = python("print(6 * 7)", &ctx);
    tokio::pin!(call);
    // Nothing can run before the interpreter arrives: the call is still
    // waiting after the first poll, with no process started.
    assert!(futures_util::FutureExt::now_or_never(call.as_mut()).is_none());
    sender.send_replace(Some(sent_interpreter().await));
    let out = call.await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.output.contains("42"), "{}", out.output);
}

#[tokio::test]
async fn a_pending_interpreter_that_never_comes_is_a_clear_tool_error() {
    let dir = tempfile::tempdir().unwrap();
    let (sender, later) = tokio::sync::watch::channel(None);
    drop(sender);
    // A closed channel, and no channel at all.
    for later in [Some(later), None] {
        let ctx = ctx(dir.path()).with_python(Some(&PythonInterpreter::Pending), later);
        let out = python("print(1)", &ctx).await;
        assert!(out.is_error, "{out:?}");
        assert!(
            out.output.contains("never sent the Python interpreter"),
            "{}",
            out.output
        );
    }
}

#[tokio::test]
async fn a_missing_interpreter_sent_later_reaches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let (sender, later) = tokio::sync::watch::channel(None);
    let ctx = ctx(dir.path()).with_python(Some(&PythonInterpreter::Pending), Some(later));
    sender.send_replace(Some(PythonInterpreter::Missing {
        reason: "python3 cannot be started; install Python 3".into(),
    }));
    let out = python("print(1)", &ctx).await;
    assert!(out.is_error, "{out:?}");
    assert!(out.output.contains("install Python 3"), "{}", out.output);
}

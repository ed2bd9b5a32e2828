//! MCP servers for subagents (issue 36) end to end: the real `subagent` CLI
//! with servers nobody here wrote, installed from the registries into the
//! cache on first use (`mcp-server-time` from PyPI,
//! `@modelcontextprotocol/server-filesystem` and `server-everything` from
//! npm), configured in the user's config.toml the way Codex configures
//! them, and a scripted model calling their tools as `mcp__SERVER__TOOL`.
//! Then servers that crash, hang and flood (the worker's fixture server),
//! each a tool error within its timeout. After every run, nothing runs in
//! the workspace (every server ran there).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::acting_tools_e2e::results;
use super::cached_installs::{npm_packages, python_venv};
use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
use super::support::*;
use super::tools_e2e::{Workspace, run_cli_with_env};

const TIME_SERVER: &str = "mcp-server-time==2026.10.19";
const NPM_SERVERS: [&str; 2] = [
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-everything@2026.8.31",
];

/// The real servers' config.toml, or `None` (skipped) when they cannot be
/// installed here.
fn real_servers_config(test: &str) -> Option<String> {
    let venv = python_venv(test, "mcp-server-time-2026.10.19", &[TIME_SERVER])?;
    let npm = npm_packages(test, "mcp-npm-servers-2026.8.31", &NPM_SERVERS)?;
    let package = |name: &str| {
        npm.join("node_modules/@modelcontextprotocol")
            .join(name)
            .join("dist/index.js")
            .display()
            .to_string()
    };
    Some(format!(
        r#"
[mcp_servers.time]
command = "{python}"
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
startup_timeout_sec = 30

[mcp_servers.fs]
command = "node"
args = ["{fs}", "/"]
startup_timeout_sec = 30

[mcp_servers.every]
command = "node"
args = ["{every}", "stdio"]
startup_timeout_sec = 30
"#,
        python = venv.join("bin/python").display(),
        fs = package("server-filesystem"),
        every = package("server-everything"),
    ))
}

/// A user config dir holding `config`; `XDG_CONFIG_HOME` for the run.
fn user_config(config: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("subagent")).unwrap();
    std::fs::write(home.path().join("subagent/config.toml"), config).unwrap();
    home
}

fn run_with_config(
    model: &ScriptedModel,
    workspace: &Workspace,
    sessions: &Path,
    config_home: &Path,
    tools: &str,
) -> (Value, Vec<Value>) {
    let config_home = config_home.display().to_string();
    let out = run_cli_with_env(
        model,
        workspace,
        sessions,
        &["--task", "Use the servers.", "--tools", tools],
        &[("XDG_CONFIG_HOME", &config_home)],
    );
    checked(&out, 0)
}

/// The one run of a `--json` result.
fn run_of(result: &Value) -> &Value {
    &result["details"]["results"][0]
}

/// The messages of the session file's log lines.
fn log_messages(lines: &[Value]) -> Vec<String> {
    of_type(lines, "log")
        .iter()
        .filter_map(|l| l["message"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn real_servers_from_pypi_and_npm_answer_through_the_cli_inside_the_sandbox() {
    let test = "real_servers_from_pypi_and_npm_answer_through_the_cli_inside_the_sandbox";
    let Some(config) = real_servers_config(test) else {
        return;
    };
    let home = user_config(&config);
    let workspace = Workspace::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "the host's secret\n").unwrap();
    let inside = workspace.path().join("notes.txt").display().to_string();
    let model = ScriptedModel::start(vec![
        tool_call_turn(
            "time",
            "mcp__time__get_current_time",
            &json!({"timezone": "UTC"}),
        ),
        tool_call_turn(
            "inside",
            "mcp__fs__read_text_file",
            &json!({"path": inside}),
        ),
        tool_call_turn(
            "outside",
            "mcp__fs__read_text_file",
            &json!({"path": secret.display().to_string()}),
        ),
        tool_call_turn("image", "mcp__every__get-tiny-image", &json!({})),
        tool_call_turn("echo", "mcp__every__echo", &json!({"message": "hi"})),
        text_turn("done"),
    ]);
    let sessions = tempfile::tempdir().unwrap();
    let (result, lines) = run_with_config(
        &model,
        &workspace,
        sessions.path(),
        home.path(),
        "mcp__time,mcp__fs__read_text_file,mcp__every",
    );
    assert_eq!(run_of(&result)["stopReason"], "completed", "{result}");
    let offered = offered_tools(&model.requests()[0]);
    for wanted in [
        "mcp__time__get_current_time",
        "mcp__time__convert_time",
        "mcp__fs__read_text_file",
        "mcp__every__echo",
        "mcp__every__get-tiny-image",
    ] {
        assert!(offered.iter().any(|o| o == wanted), "{wanted}: {offered:?}");
    }
    assert!(
        !offered.iter().any(|o| o == "mcp__fs__write_file"),
        "only the named tool of fs: {offered:?}"
    );
    let results = results(&lines);
    let by_id = |id: &str| results.iter().find(|r| r.0 == id).unwrap().clone();
    let (_, time, failed) = by_id("time");
    assert!(!failed && time.contains("\"timezone\": \"UTC\""), "{time}");
    let (_, notes, failed) = by_id("inside");
    assert!(
        !failed && notes.contains("needle: the line to find"),
        "{notes}"
    );
    let (_, denied, failed) = by_id("outside");
    assert!(
        failed && !denied.contains("the host's secret"),
        "a file outside the workspace must not be readable through the server: {denied}"
    );
    let (_, image, failed) = by_id("image");
    assert!(
        !failed && image.contains("[image content: image/png,") && image.contains("not shown"),
        "{image}"
    );
    assert_eq!(by_id("echo").1, "Echo: hi");
    let logs = log_messages(&lines);
    for server in ["time", "fs", "every"] {
        for event in ["started in", "stopped"] {
            assert!(
                logs.iter()
                    .any(|m| m.contains(&format!("the MCP server `{server}` {event}"))),
                "{server} {event}: {logs:#?}"
            );
        }
    }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/worker/tests/fixtures/mcp_fixture.py")
}

#[test]
fn servers_that_crash_hang_or_flood_are_tool_errors_and_the_run_completes() {
    let fixtures = fixture().parent().unwrap().display().to_string();
    let mut config = String::new();
    for mode in ["crash", "hang", "flood"] {
        config.push_str(&format!(
            "[mcp_servers.{mode}]\ncommand = \"/usr/bin/python3\"\nargs = [\"{}\", \"{mode}\"]\n\
             read_only = [\"{fixtures}\"]\ntool_timeout_sec = 1\n\n",
            fixture().display()
        ));
    }
    let home = user_config(&config);
    let workspace = Workspace::new();
    let model = ScriptedModel::start(vec![
        tool_call_turn("crash", "mcp__crash__echo", &json!({"text": "x"})),
        tool_call_turn("hang", "mcp__hang__echo", &json!({"text": "x"})),
        tool_call_turn("flood", "mcp__flood__echo", &json!({"text": "x"})),
        text_turn("went on"),
    ]);
    let sessions = tempfile::tempdir().unwrap();
    let begun = std::time::Instant::now();
    let (result, lines) = run_with_config(
        &model,
        &workspace,
        sessions.path(),
        home.path(),
        "mcp__crash__echo,mcp__hang__echo,mcp__flood__echo",
    );
    assert_eq!(run_of(&result)["stopReason"], "completed", "{result}");
    assert_eq!(run_of(&result)["output"], "went on");
    let results = results(&lines);
    assert_eq!(results.len(), 3, "{results:#?}");
    for (id, output, failed) in &results {
        assert!(*failed, "{id}: {output}");
    }
    assert!(
        results[0].1.contains("has exited (exit code 3)")
            && results[0].1.contains("crashing on purpose"),
        "{results:#?}"
    );
    for (_, output, _) in &results[1..] {
        assert!(output.contains("did not answer within 1 s"), "{output}");
    }
    // Two 1 s timeouts and the stops; far from the 60 s run timeout.
    let took = begun.elapsed();
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
}

/// A console script whose `#!` interpreter is installed outside the system
/// directories (as a uv- or pyenv-managed Python is) starts inside the
/// sandbox: the interpreter's installation is given read-only with the
/// script's. Here the interpreter is a launcher in its own prefix that
/// runs the system Python; nothing else would show that prefix.
#[test]
fn a_console_script_under_an_interpreter_outside_the_system_dirs_starts() {
    let installs = tempfile::tempdir().unwrap();
    let launcher = installs.path().join("managed-python/bin/python3");
    std::fs::create_dir_all(launcher.parent().unwrap()).unwrap();
    std::fs::write(&launcher, "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n").unwrap();
    let server = installs.path().join("tool-venv/bin/mcp-fixture");
    std::fs::create_dir_all(server.parent().unwrap()).unwrap();
    let code = std::fs::read_to_string(fixture()).unwrap();
    std::fs::write(&server, format!("#!{}\n{code}", launcher.display())).unwrap();
    for file in [&launcher, &server] {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let home = user_config(&format!(
        "[mcp_servers.script]\ncommand = \"{}\"\nargs = [\"ok\"]\n",
        server.display()
    ));
    let workspace = Workspace::new();
    let model = ScriptedModel::start(vec![
        tool_call_turn("echo", "mcp__script__echo", &json!({"text": "started"})),
        text_turn("done"),
    ]);
    let sessions = tempfile::tempdir().unwrap();
    let (result, lines) = run_with_config(
        &model,
        &workspace,
        sessions.path(),
        home.path(),
        "mcp__script__echo",
    );
    assert_eq!(run_of(&result)["stopReason"], "completed", "{result}");
    let results = results(&lines);
    assert_eq!(
        results,
        vec![("echo".to_owned(), "started".to_owned(), false)],
        "{:#?}",
        log_messages(&lines)
    );
}

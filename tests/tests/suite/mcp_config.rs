//! Issue 36, the supervisor's half: MCP servers configured in Codex's
//! shape (`[mcp_servers.NAME]` in config.toml) are selected by Claude
//! Code's tool names (`mcp__NAME`, `mcp__NAME__TOOL`) and reach the worker
//! as `TaskSpec::mcp_servers` (the fixture worker echoes them), through
//! the real binary:
//! - a run selecting a server gets it resolved (absolute program, timeouts
//!   in ms, its tool selection), and the MCP names stay out of its tools;
//! - an unknown or disabled server is refused, listing the configured ones;
//! - attack: the operator's key passed to a server (`env_vars` naming the
//!   provider's key variable, or OPENAI_API_KEY) is refused before any
//!   process starts;
//! - attack: a server whose program lies in the workspace (which the model
//!   can write) is refused;
//! - a `call` payload asking for a server its operator's `--tools` does not
//!   include is refused with the ceiling's error.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::support::*;

const PROD_KEY: &str = "prod-key-abcdefghijklmnop";

/// A user config dir whose config.toml is `text`.
fn user_config(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("subagent")).unwrap();
    std::fs::write(dir.path().join("subagent/config.toml"), text).unwrap();
    dir
}

/// `subagent run fixture:echo-spec ARGS` in `workspace` with `config` as
/// the user config dir.
fn run(config: &Path, workspace: &Path, args: &[&str]) -> Output {
    let out = Command::new(binary("subagent"))
        .args(["run", "--worker", FIXTURE, "--model", "fixture-model"])
        .args(["--base-url", "http://127.0.0.1:9/v1", "--provider", "prod"])
        .arg("--workspace")
        .arg(workspace)
        .arg("--sessions-dir")
        .arg(workspace.join(".sessions"))
        .args(args)
        .args(["--task", "fixture:echo-spec"])
        .env("XDG_CONFIG_HOME", config)
        .env("PROD_KEY", PROD_KEY)
        .env("OPENAI_API_KEY", "openai-key-abcdefghijklmnop")
        .env("MCP_TOKEN", "server-token")
        .env_remove("SUBAGENT_WORKER")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace);
    out
}

const PROVIDER: &str = "[providers.prod]\nkind = \"openai-chat\"\nmodel = \"fixture-model\"\n\
                        api_key_env = \"PROD_KEY\"\n";

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_refused(out: &Output, fragments: &[&str]) {
    let all = text(out);
    assert_eq!(out.status.code(), Some(2), "not refused: {all}");
    assert!(all.contains("INVALID_INPUT"), "{all}");
    for fragment in fragments {
        assert!(all.contains(fragment), "`{fragment}` not in {all}");
    }
}

/// The worker's echo of its spec.
fn echoed(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(out));
    let start = stdout.find('{').unwrap_or(0);
    let end = stdout.rfind('}').map_or(stdout.len(), |i| i + 1);
    serde_json::from_str(&stdout[start..end]).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn a_configured_server_is_selected_by_its_tool_names_and_reaches_the_worker() {
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config(&format!(
        "{PROVIDER}[mcp_servers.time]\ncommand = \"sh\"\nargs = [\"-c\", \"true\"]\n\
         env = {{ TZ = \"UTC\" }}\nenv_vars = [\"MCP_TOKEN\"]\ntool_timeout_sec = 5\n\
         disabled_tools = [\"convert_time\"]\n\
         [mcp_servers.off]\ncommand = \"sh\"\nenabled = false\n"
    ));
    let spec = echoed(&run(
        config.path(),
        workspace.path(),
        &["--tools", "bash_read,mcp__time"],
    ));
    assert_eq!(spec["tools"], json!(["bash_read"]), "{spec}");
    let server = &spec["mcpServers"][0];
    assert_eq!(server["name"], "time", "{spec}");
    assert!(
        server["command"].as_str().unwrap().ends_with("/sh"),
        "{spec}"
    );
    assert!(
        server["command"].as_str().unwrap().starts_with('/'),
        "{spec}"
    );
    assert_eq!(server["env"], json!(["TZ", "MCP_TOKEN"]));
    assert_eq!(server["startupMs"], 10_000);
    assert_eq!(server["toolMs"], 5_000);
    assert_eq!(server["only"], Value::Null);
    assert_eq!(server["disabled"], json!(["convert_time"]));

    // One tool of it: only that one.
    let spec = echoed(&run(
        config.path(),
        workspace.path(),
        &["--tools", "mcp__time__get_current_time"],
    ));
    assert_eq!(spec["tools"], json!([]));
    assert_eq!(spec["mcpServers"][0]["only"], json!(["get_current_time"]));

    // Unknown, and disabled (as unknown, with a hint), and a turned-off tool.
    assert_refused(
        &run(config.path(), workspace.path(), &["--tools", "mcp__nope"]),
        &[
            "no MCP server named `nope`",
            "configured: time",
            "[mcp_servers.nope]",
        ],
    );
    assert_refused(
        &run(config.path(), workspace.path(), &["--tools", "mcp__off"]),
        &["`enabled = false`"],
    );
    assert_refused(
        &run(
            config.path(),
            workspace.path(),
            &["--tools", "mcp__time__convert_time"],
        ),
        &["`convert_time`", "disabled_tools"],
    );
}

/// Attack: the operator's config hands the provider's key to a server.
#[test]
fn a_server_is_never_given_the_providers_key() {
    let workspace = tempfile::tempdir().unwrap();
    for env in [
        "env_vars = [\"PROD_KEY\"]",
        "env_vars = [\"OPENAI_API_KEY\"]",
        "env = { KEY = \"prod-key-abcdefghijklmnop\" }",
    ] {
        let config = user_config(&format!(
            "{PROVIDER}[mcp_servers.leaky]\ncommand = \"sh\"\n{env}\n"
        ));
        assert_refused(
            &run(config.path(), workspace.path(), &["--tools", "mcp__leaky"]),
            &[
                "MCP server `leaky`",
                "provider",
                "never goes to an MCP server",
            ],
        );
    }
}

/// Attack: a server program the model could have written.
#[test]
fn a_server_program_inside_the_workspace_is_refused() {
    let workspace = tempfile::tempdir().unwrap();
    let planted = workspace.path().join("server.sh");
    std::fs::write(&planted, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = user_config(&format!(
        "{PROVIDER}[mcp_servers.planted]\ncommand = \"{}\"\n",
        planted.display()
    ));
    assert_refused(
        &run(
            config.path(),
            workspace.path(),
            &["--tools", "mcp__planted"],
        ),
        &["MCP server `planted`", "inside the workspace"],
    );
}

#[test]
fn a_call_cannot_ask_for_a_server_its_operator_did_not_give() {
    let dir = tempfile::tempdir().unwrap();
    let config = user_config(&format!(
        "{PROVIDER}[mcp_servers.time]\ncommand = \"sh\"\n[mcp_servers.fs]\ncommand = \"sh\"\n"
    ));
    let call = |payload: Value| {
        let mut command = Command::new(binary("subagent"));
        command
            .args(["call", "--worker", FIXTURE, "--model", "fixture-model"])
            .args(["--provider", "prod", "--tools", "bash_read,mcp__time"])
            .arg("--workspace")
            .arg(dir.path())
            .arg("--sessions-dir")
            .arg(dir.path().join("sessions"))
            .env("XDG_CONFIG_HOME", config.path())
            .env("PROD_KEY", PROD_KEY)
            .env_remove("SUBAGENT_WORKER");
        let out = spawn_with_stdin(&mut command, payload.to_string().as_bytes())
            .wait_with_output()
            .unwrap();
        assert_nothing_runs_in(dir.path());
        out
    };
    for asked in [json!(["mcp__fs"]), json!(["mcp__fs__read_file"])] {
        let out = call(json!({"prompt": "fixture:echo-spec", "tool_subset": asked}));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{stdout}");
        assert!(
            stdout.starts_with("Error: INVALID_INPUT: ") && stdout.contains("`mcp__fs"),
            "{stdout}"
        );
    }
    // Narrower than the operator's: one tool of its whole server.
    let out = call(json!({"prompt": "fixture:echo-spec",
        "tool_subset": ["mcp__time__get_current_time"]}));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("get_current_time"), "{stdout}");
}

/// Claude Code's `.mcp.json` of a project counts once the project is
/// trusted, like its config and agent files: a tool may have written it.
#[test]
fn a_projects_mcp_json_counts_only_once_trusted() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workspace.path().join(".git")).unwrap();
    std::fs::write(
        workspace.path().join(".mcp.json"),
        r#"{"mcpServers": {
            "time": {"type": "stdio", "command": "sh", "args": ["-c", "${MCP_ARG:-true}"],
                     "env": {"TOKEN": "${MCP_TOKEN}"}},
            "remote": {"type": "http", "url": "https://example.invalid/mcp"}
        }}"#,
    )
    .unwrap();
    let config = user_config(PROVIDER);
    let untrusted = run(config.path(), workspace.path(), &["--tools", "mcp__time"]);
    assert_refused(
        &untrusted,
        &["no MCP server named `time`", "configured: none"],
    );
    assert!(
        text(&untrusted).contains("ignoring the project configuration"),
        "{}",
        text(&untrusted)
    );

    let trusted = Command::new(binary("subagent"))
        .arg("trust")
        .arg(workspace.path())
        .env("XDG_CONFIG_HOME", config.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{}", text(&trusted));
    let out = run(config.path(), workspace.path(), &["--tools", "mcp__time"]);
    assert!(
        text(&out).contains("`remote` is skipped"),
        "an HTTP server is named in a warning: {}",
        text(&out)
    );
    let spec = echoed(&out);
    let server = &spec["mcpServers"][0];
    assert_eq!(server["name"], "time", "{spec}");
    assert_eq!(server["args"], json!(["-c", "true"]));
    assert_eq!(server["env"], json!(["TOKEN"]));
}

#[test]
fn config_show_lists_servers_with_their_values_masked() {
    let config = user_config(&format!(
        "{PROVIDER}[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n\
         env = {{ SECRET = \"literal-secret-value\" }}\nenv_vars = [\"MCP_TOKEN\"]\n"
    ));
    let out = Command::new(binary("subagent"))
        .args(["config", "show"])
        .env("XDG_CONFIG_HOME", config.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("mcp_servers.time.command") && all.contains("uvx mcp-server-time"),
        "{all}"
    );
    assert!(
        all.contains("SECRET=***") && all.contains("MCP_TOKEN (passed through)"),
        "{all}"
    );
    assert!(!all.contains("literal-secret-value"), "{all}");
}

#[test]
fn doctor_lists_servers_and_warns_of_a_missing_command() {
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config(&format!(
        "{PROVIDER}[mcp_servers.time]\ncommand = \"sh\"\n\
         [mcp_servers.gone]\ncommand = \"no-such-mcp-server-xyz\"\n"
    ));
    let out = Command::new(binary("subagent"))
        .args(["doctor", "--workspace"])
        .arg(workspace.path())
        .env("XDG_CONFIG_HOME", config.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let all = text(&out);
    let line = |name: &str| {
        all.lines()
            .find(|l| l.contains(&format!("mcp server {name}:")))
            .unwrap_or_else(|| panic!("no line for {name}: {all}"))
            .to_owned()
    };
    assert!(
        line("time").starts_with("ok") && line("time").contains("config.toml"),
        "{all}"
    );
    let gone = line("gone");
    assert!(
        gone.starts_with("warning")
            && gone.contains("not found on PATH")
            && gone.contains("install"),
        "{gone}"
    );
}

/// `web`, a user agent file whose `mcpServers` defines `inl` (running
/// `command`) and whose tools select it.
fn agent_with_inline_server(config: &Path, command: &str) {
    let agents = config.join("subagent/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("web.md"),
        format!(
            "---\nname: web\ndescription: Browses.\ntools: bash_read, mcp__inl\nmcpServers:\n\
             \x20 - inl:\n      command: \"{command}\"\n      args: [\"-c\", \"true\"]\n---\n\
             You browse.\n"
        ),
    )
    .unwrap();
}

#[test]
fn an_agent_files_own_server_reaches_the_worker_and_is_confined_like_a_configured_one() {
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config(PROVIDER);
    agent_with_inline_server(config.path(), "sh");
    let spec = echoed(&run(config.path(), workspace.path(), &["--agent", "web"]));
    assert_eq!(spec["tools"], json!(["bash_read"]), "{spec}");
    let server = &spec["mcpServers"][0];
    assert_eq!(server["name"], "inl", "{spec}");
    assert!(
        server["command"].as_str().unwrap().ends_with("/sh"),
        "{spec}"
    );

    // Attack: the agent file's server is a program the model can write.
    let planted = workspace.path().join("server.sh");
    std::fs::write(&planted, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    agent_with_inline_server(config.path(), &planted.display().to_string());
    assert_refused(
        &run(config.path(), workspace.path(), &["--agent", "web"]),
        &["MCP server `inl`", "inside the workspace"],
    );
}

#[test]
fn agents_ls_warnings_names_the_mcp_servers_nobody_defines() {
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config(&format!("{PROVIDER}[mcp_servers.time]\ncommand = \"sh\"\n"));
    agent_with_inline_server(config.path(), "sh");
    std::fs::write(
        config.path().join("subagent/agents/ghostly.md"),
        "---\nname: ghostly\ndescription: Haunts.\n\
         tools: bash_read, mcp__time, mcp__ghost__boo, mcp__ghost__hiss\n---\nBoo.\n",
    )
    .unwrap();
    let out = Command::new(binary("subagent"))
        .args(["agents", "ls", "--warnings", "--workspace"])
        .arg(workspace.path())
        .env("XDG_CONFIG_HOME", config.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("no MCP server named"))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one line for ghost, none for time or inl: {stderr}"
    );
    assert!(
        lines[0].contains("agent ghostly")
            && lines[0].contains("`ghost`")
            && lines[0].contains("[mcp_servers.ghost]"),
        "{stderr}"
    );
}

#[test]
fn a_batch_selects_servers_by_its_tool_names_for_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = user_config(&format!("{PROVIDER}[mcp_servers.time]\ncommand = \"sh\"\n"));
    agent_with_inline_server(config.path(), "sh");
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        "{\"id\": \"flags\", \"task\": \"fixture:echo-spec\"}\n\
         {\"id\": \"agent\", \"task\": \"fixture:echo-spec\", \"agent\": \"web\"}\n",
    )
    .unwrap();
    let out = Command::new(binary("subagent"))
        .arg("batch")
        .arg(&tasks)
        .arg("--results")
        .arg(dir.path().join("results.jsonl"))
        .args([
            "--worker",
            FIXTURE,
            "--model",
            "fixture-model",
            "--provider",
            "prod",
        ])
        .args([
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--tools",
            "bash_read,mcp__time",
        ])
        .arg("--workspace")
        .arg(dir.path())
        .arg("--sessions-dir")
        .arg(dir.path().join("sessions"))
        .env("XDG_CONFIG_HOME", config.path())
        .env("PROD_KEY", PROD_KEY)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_nothing_runs_in(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let results = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    let specs: Vec<(String, Value)> = results
        .lines()
        .map(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            let output = line["output"].as_str().unwrap_or_default().to_owned();
            let spec = serde_json::from_str(&output).unwrap_or_else(|e| panic!("{e}: {line}"));
            (line["id"].as_str().unwrap().to_owned(), spec)
        })
        .collect();
    let spec = |id: &str| specs.iter().find(|(i, _)| i == id).unwrap().1.clone();
    assert_eq!(spec("flags")["mcpServers"][0]["name"], "time", "{specs:?}");
    assert_eq!(spec("flags")["tools"], json!(["bash_read"]), "{specs:?}");
    // The batch's --tools are every line's: the agent's own server is not
    // among them, so the line gets the flags' selection.
    assert_eq!(spec("agent")["mcpServers"][0]["name"], "time", "{specs:?}");
}

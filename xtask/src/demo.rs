//! `cargo xtask demo`: the main job, end to end, on this machine, from
//! nothing: installs what is missing (as root; `.ci/run` does the same),
//! builds the local model and the binaries, starts llama-server with
//! SmolLM2-135M on 127.0.0.1, and shows through the real `subagent` CLI:
//! a question answered, a structured-output task that validates, a run that
//! hits a limit on purpose, then the operator's view of the session files.
//! The server is stopped however the demo ends.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use anyhow::{Context, Result, bail};

use crate::llama_server::RunningServer;
use crate::{cmd, deps, local_model};

/// The schema of the structured-output step.
const CAPITAL_SCHEMA: &str = r#"{"type":"object","properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"additionalProperties":false}"#;

/// Exit status of `subagent run` for an exceeded budget
/// (crates/supervisor/src/exit_codes.rs).
const EXIT_BUDGET_EXCEEDED: i32 = 4;

/// Runs the demo.
pub fn run(task: &str, policy: deps::Policy) -> Result<()> {
    let root = crate::paths::repo_root();
    eprintln!(
        "xtask demo: setting up first. On a fresh machine this installs what is missing \
         and builds llama-server once (about 20-30 minutes on 2 cores; cached in {}); \
         later runs start at once.",
        crate::paths::cache_root()?.display()
    );
    let model = local_model::ensure(policy)?;
    // So a demo run with --allow-network gets the tools' private network.
    deps::ensure(&[deps::SLIRP4NETNS, deps::PASTA], policy)?;
    cmd::run(
        cmd::cargo()
            .current_dir(&root)
            .args(["build", "-p", "subagent-cli", "--bins"]),
    )?;
    let target = crate::paths::target_dir(&root)?;
    // The server's chatter would bury the showcase; it goes to a log that
    // an error points at.
    let server_log = target.join("demo-llama-server.log");
    // Killed however the demo ends (on drop).
    let server = RunningServer::start(&model.server, &model.model, &server_log)
        .with_context(|| format!("llama-server's output is in {}", server_log.display()))?;

    let demo = Demo {
        subagent: target.join("debug/subagent"),
        sessions: target.join("demo-sessions"),
        base_url: server.base_url(),
        scratch: target.join("demo-scratch"),
    };
    for dir in [&demo.sessions, &demo.scratch] {
        std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }

    heading("1/4  a question, answered by the local model (SmolLM2-135M)");
    let first = demo.run(&["--task", task, "--max-tokens", "96"])?;
    expect_exit(&first, 0)?;
    let result = json(&first)?;
    println!("{}", text_of(&result));
    println!("usage: {}", result["details"]["results"][0]["usage"]);
    let first_run = result["details"]["runId"].as_str().map(str::to_owned);

    heading(
        "2/4  structured output: the provider enforces a JSON Schema, the supervisor validates",
    );
    let schema = demo.scratch.join("capital.schema.json");
    std::fs::write(&schema, CAPITAL_SCHEMA)?;
    let second = demo.run(&[
        "--task",
        "What is the capital of France? Answer with the city and the country.",
        "--output-mode",
        "native",
        "--output-schema",
        &schema.display().to_string(),
        "--max-tokens",
        "64",
    ])?;
    expect_exit(&second, 0)?;
    let result = json(&second)?;
    println!(
        "structuredOutput: {}",
        result["details"]["results"][0]["structuredOutput"]
    );

    heading("3/4  a limit hit on purpose: one model turn for a task that must call report_back");
    let third = demo.run(&[
        "--task",
        "Name a colour.",
        "--output-schema",
        &schema.display().to_string(),
        "--max-turns",
        "1",
        "--max-tokens",
        "32",
    ])?;
    expect_exit(&third, EXIT_BUDGET_EXCEEDED)?;
    let result = json(&third)?;
    println!(
        "exit status {}; error {}: {}",
        third.status.code().unwrap_or(-1),
        result["details"]["error"]["code"],
        result["details"]["error"]["message"]
    );

    heading("4/4  the operator's view: the session files");
    demo.show(&["sessions", "ls", "--limit", "3"])?;
    if let Some(run_id) = first_run {
        demo.show(&["sessions", "show", &run_id])?;
    }

    heading("done");
    let sessions = shell_quote(&demo.sessions.display().to_string());
    let subagent = shell_quote(&demo.subagent.display().to_string());
    println!("The session files stay in {sessions}; list them again with");
    println!("  {subagent} sessions ls --sessions-dir {sessions}");
    println!(
        "To give the local model tasks of your own, serve it with \
         `cargo xtask local-model serve` (127.0.0.1:{}) and run",
        local_model::DEFAULT_PORT
    );
    println!(
        "  {subagent} run --base-url http://127.0.0.1:{}/v1 --model smollm2 --task '...'",
        local_model::DEFAULT_PORT
    );
    Ok(())
}

/// The `subagent` binary and where this demo's runs go.
struct Demo {
    subagent: PathBuf,
    sessions: PathBuf,
    base_url: String,
    scratch: PathBuf,
}

impl Demo {
    /// `subagent run` against the local model with `extra` flags, `--json`.
    fn run(&self, extra: &[&str]) -> Result<Output> {
        let mut run = Command::new(&self.subagent);
        run.args(["run", "--agent", "general"])
            .args(["--provider", "openai-chat", "--model", "smollm2"])
            .args(["--base-url", &self.base_url])
            .arg("--sessions-dir")
            .arg(&self.sessions)
            .arg("--workspace")
            .arg(&self.scratch)
            .arg("--json")
            .args(extra)
            .stdin(Stdio::null());
        println!("$ {}", shell_line(&run));
        run.output()
            .with_context(|| format!("run {}", self.subagent.display()))
    }

    /// Runs `subagent ARGS --sessions-dir DIR` with its output on the terminal.
    fn show(&self, args: &[&str]) -> Result<()> {
        let mut command = Command::new(&self.subagent);
        command.args(args).arg("--sessions-dir").arg(&self.sessions);
        cmd::run(&mut command)
    }
}

/// The command as a line a reader can paste into a shell: arguments with
/// blanks or shell characters in single quotes.
fn shell_line(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|arg| shell_quote(&arg.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

fn heading(text: &str) {
    println!("\n=== {text} ===");
}

fn expect_exit(output: &Output, code: i32) -> Result<()> {
    if output.status.code() == Some(code) {
        return Ok(());
    }
    let _ = std::io::stderr().write_all(&output.stderr);
    bail!(
        "subagent exited with {} (expected {code}); its stdout:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout)
    )
}

fn json(output: &Output) -> Result<serde_json::Value> {
    serde_json::from_slice(&output.stdout).context("the result is not JSON")
}

fn text_of(result: &serde_json::Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
#[path = "demo_tests.rs"]
mod tests;

//! The seed's call_subagent parent (a faithful stand-in, see
//! `seed_call_subagent.py`) running `subagent call --sse --exit-zero` as
//! its subprocess, unchanged: it passes `url` as the full endpoint its own
//! client posts to, discards stdout on a non-zero exit and keeps only
//! `output_text`. Against the scripted model it gets the answer; on an
//! unreachable provider, an unset key variable, a timeout and a spent turn
//! budget it gets `Error: <the real reason>`, from a stream that ends
//! exactly `output_text`, `response_end`; against the real llama-server it
//! gets the model's text. No process of a run survives it.

use std::process::{Child, Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

const PARENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/suite/seed_call_subagent.py"
);

/// The variable the parent's `api_key_name` names: its provider kind's own.
const KEY_VAR: &str = "OPENAI_API_KEY";

/// A variable the operator allows a payload to name (`[call]
/// allowed_api_key_env`) and leaves unset.
const UNSET_KEY_VAR: &str = "SUBAGENT_SEED_PARENT_UNSET_KEY";

/// A parent with its workspace, sessions dir and runner command.
struct Parent {
    workspace: tempfile::TempDir,
    sessions: tempfile::TempDir,
    /// The operator's user config dir.
    config: tempfile::TempDir,
    /// Flags after the operator's `subagent call --sse --exit-zero ...`.
    extra: Vec<String>,
}

impl Parent {
    /// Built before any model starts: a first test builds the binaries,
    /// which may outlast a scripted model's lifetime on a loaded machine.
    fn new(extra: &[&str]) -> Self {
        binary("subagent");
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("notes.txt"), "needle on line one\n").unwrap();
        let config = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(config.path().join("subagent")).unwrap();
        std::fs::write(
            config.path().join("subagent/config.toml"),
            format!("[call]\nallowed_api_key_env = [\"{UNSET_KEY_VAR}\"]\n"),
        )
        .unwrap();
        Self {
            workspace,
            sessions: tempfile::tempdir().unwrap(),
            config,
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// The runner command the operator configures for the parent.
    fn command(&self) -> Vec<String> {
        let mut command: Vec<String> = vec![
            binary("subagent").display().to_string(),
            "call".into(),
            "--sse".into(),
            "--exit-zero".into(),
            "--workspace".into(),
            self.workspace.path().display().to_string(),
            "--sessions-dir".into(),
            self.sessions.path().display().to_string(),
        ];
        if !self.extra.iter().any(|flag| flag == "--timeout") {
            command.extend(["--timeout".into(), "60".into()]);
        }
        command.extend(self.extra.iter().cloned());
        command
    }

    /// The parent's tool called once with `prompt`, the parent's settings
    /// naming `url` and `key_var`; started, not waited for.
    fn spawn(&self, url: &str, key_var: &str, prompt: &str, tools: &[&str]) -> Child {
        let case = json!({
            "command": self.command(),
            "parent": {
                "model": "scripted",
                "provider": "openai-chat",
                "url": url,
                "api_key_name": key_var,
                "think": false,
                "temperature": 0.8,
                "max_tokens": 512,
            },
            "call": {"prompt": prompt, "system_prompt": null, "tool_subset": tools},
        });
        Command::new("python3")
            .arg(PARENT)
            .arg(case.to_string())
            .env(KEY_VAR, TEST_API_KEY)
            .env_remove(UNSET_KEY_VAR)
            .env("XDG_CONFIG_HOME", self.config.path())
            .env_remove("SUBAGENT_WORKER")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// The parent's report once it is done; nothing of the run survives.
    fn report(&self, child: Child) -> Report {
        let out = child.wait_with_output().unwrap();
        assert_nothing_runs_in(self.workspace.path());
        assert!(
            out.status.success(),
            "the parent failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        Report(report)
    }

    /// The one call through the parent, waited for.
    fn call(&self, url: &str, key_var: &str, prompt: &str, tools: &[&str]) -> Report {
        let child = self.spawn(url, key_var, prompt, tools);
        self.report(child)
    }

    /// The session files of the runs: valid, ended, their workers reaped.
    fn sessions(&self) -> Vec<Vec<Value>> {
        jsonl_files(self.sessions.path())
            .iter()
            .map(|file| {
                let lines = check_session_file(file);
                assert_reaped(&lines);
                lines
            })
            .collect()
    }
}

struct Report(Value);

impl Report {
    fn returned(&self) -> &str {
        self.0["returned"].as_str().unwrap()
    }

    /// The events the parser met, a run of `output_text` (one answer
    /// streamed in pieces) as one.
    fn events(&self) -> Vec<&str> {
        let mut events: Vec<&str> = self.0["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap())
            .collect();
        events.dedup_by(|a, b| *a == "output_text" && *b == "output_text");
        events
    }
}

/// A URL of 127.0.0.1 where nothing listens.
fn unreachable_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // The listener is closed here: nothing answers on that port.
    format!("http://127.0.0.1:{port}/v1/chat/completions")
}

/// Asserts a failure reached the parent as `Error: <code>: ...` naming
/// `reason`, after `before` and with nothing else after it.
fn assert_real_reason(report: &Report, before: &[&str], code: &str, reason: &str) {
    let returned = report.returned();
    assert!(
        returned.starts_with(&format!("Error: {code}")) && returned.contains(reason),
        "the parent's model got {returned:?}, not the reason {reason:?}"
    );
    assert!(!returned.contains("exited with code"), "{returned}");
    let mut expected: Vec<&str> = before.to_vec();
    expected.extend(["output_text", "response_end"]);
    assert_eq!(report.events(), expected);
    assert_eq!(report.0["exit_codes"], json!([0]));
}

#[test]
fn the_seed_parent_gets_the_answer_through_its_full_endpoint_url() {
    let answer = "The needle is on line one of notes.txt.";
    let parent = Parent::new(&[]);
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_read", &json!({"path": "notes.txt"})),
        text_turn(answer),
        text_turn("Second answer."),
    ]);
    // The parent's url is the endpoint its own client posts to.
    let url = format!("{}/chat/completions", model.base_url());
    let report = parent.call(&url, KEY_VAR, "Where is the needle?", &["bash_read"]);
    assert_eq!(report.returned(), answer);
    assert_eq!(
        report.events(),
        [
            "tool_call",
            "tool_result",
            "block_end",
            "output_text",
            "block_end",
            "response_end"
        ]
    );

    // With a trailing slash too.
    let report = parent.call(&format!("{url}/"), KEY_VAR, "Again.", &[]);
    assert_eq!(report.returned(), "Second answer.");
    assert_eq!(model.requests().len(), 3);
    assert_eq!(parent.sessions().len(), 2);
}

#[test]
fn the_seed_parent_gets_the_real_reason_of_each_failure() {
    let parent = Parent::new(&[]);

    // Nothing listens at the provider's URL: the worker's words reach it.
    let report = parent.call(&unreachable_url(), KEY_VAR, "Hello?", &[]);
    assert_real_reason(
        &report,
        &[],
        "SUBAGENT_FAILED",
        "could not reach the provider",
    );

    // The key variable the parent names is not set: refused before a run.
    let model = ScriptedModel::start(vec![text_turn("never sent")]);
    let url = format!("{}/chat/completions", model.base_url());
    let report = parent.call(&url, UNSET_KEY_VAR, "Hello?", &[]);
    assert_real_reason(&report, &[], "", &format!("{UNSET_KEY_VAR} is not set"));
    assert!(
        model.requests().is_empty(),
        "a refused call asked the model"
    );

    // A turn budget spent after a tool call: the partial stream, then the reason.
    let limited = Parent::new(&["--max-turns", "1"]);
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_read", &json!({"path": "notes.txt"})),
        text_turn("never sent"),
    ]);
    let url = format!("{}/chat/completions", model.base_url());
    let report = limited.call(&url, KEY_VAR, "Where is the needle?", &["bash_read"]);
    assert_real_reason(
        &report,
        &["tool_call", "tool_result"],
        "SUBAGENT_BUDGET_EXCEEDED",
        "turn",
    );
    assert_eq!(parent.sessions().len(), 1);
    assert_eq!(limited.sessions().len(), 1);
}

#[test]
fn the_seed_parent_gets_the_timeout_of_a_model_that_never_answers() {
    let parent = Parent::new(&["--timeout", "5"]);
    let model = ScriptedModel::start_held(vec![text_turn("never sent")]);
    let url = format!("{}/chat/completions", model.base_url());
    // The timeout fires whether or not the request got out by then.
    let report = parent.call(&url, KEY_VAR, "Take your time.", &[]);
    assert_real_reason(&report, &[], "SUBAGENT_TIMEOUT", "");
    let sessions = parent.sessions();
    assert_eq!(sessions.len(), 1);
}

#[test]
fn the_seed_parent_gets_the_real_models_answer() {
    let Some(server) = super::llama::LlamaServer::start_or_skip("seed_parent_real_model") else {
        return;
    };
    let parent = Parent::new(&[]);
    let case = json!({
        "command": parent.command(),
        "parent": {
            "model": "smollm2",
            "provider": "openai-chat",
            "url": format!("{}/chat/completions", server.base_url()),
            "api_key_name": null,
            "think": false,
            "temperature": 0.0,
            "max_tokens": 32,
        },
        "call": {"prompt": "Name one colour.", "system_prompt": null, "tool_subset": []},
    });
    let out = Command::new("python3")
        .arg(PARENT)
        .arg(case.to_string())
        .env_remove("SUBAGENT_WORKER")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_nothing_runs_in(parent.workspace.path());
    assert!(out.status.success());
    let report = Report(serde_json::from_slice(&out.stdout).unwrap());
    let returned = report.returned();
    assert!(
        !returned.trim().is_empty() && !returned.starts_with("Error:"),
        "{returned:?}"
    );
    // What the parent returns is what the session recorded the model saying.
    let sessions = parent.sessions();
    assert_eq!(sessions.len(), 1);
    let recorded: String = sessions[0]
        .iter()
        .filter(|l| l["type"] == "message" && l["role"] == "assistant")
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(returned, recorded);
}

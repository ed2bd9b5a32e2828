//! Tools end to end: the real `subagent` CLI starts the real supervisor,
//! which spawns the real `subagent-worker`, whose agent loop calls the real
//! tools in a temporary workspace on the orders of a scripted model
//! ([`super::scripted_model`]). Asserts what the session file records, what
//! the model was sent back, which tools it was offered, and that no process
//! of the run survives it.

use std::path::Path;
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_protocol::tool_names::READ_ONLY_TOOLS;

use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
use super::support::*;

/// A workspace with real files: sources, a text file with a searchable
/// line, a .gitignore'd file that the file tools must not show, and a big
/// file (20,000 lines of ~90 bytes) for the output cap.
pub(super) struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "ignored.txt\n").unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/main.rs"),
            "fn main() {\n    println!(\"hello\");\n}\n",
        )
        .unwrap();
        std::fs::write(
            root.join("src/lib.rs"),
            "//! The answer.\npub fn answer() -> u32 {\n    42\n}\n",
        )
        .unwrap();
        std::fs::write(
            root.join("notes.txt"),
            "alpha\nbeta\nneedle: the line to find\ngamma\n",
        )
        .unwrap();
        std::fs::write(root.join("ignored.txt"), "needle: must stay hidden\n").unwrap();
        let padding = "x".repeat(50);
        let big: String = (0..20_000)
            .map(|i| format!("line {i} of the big file {padding}\n"))
            .collect();
        std::fs::write(root.join("big.txt"), big).unwrap();
        Self { dir }
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// One CLI run against `model` in `workspace`; `extra` are more flags.
pub(super) fn run_cli(
    model: &ScriptedModel,
    workspace: &Workspace,
    sessions: &Path,
    extra: &[&str],
) -> Output {
    run_cli_with_env(model, workspace, sessions, extra, &[])
}

/// [`run_cli`] with `env` added to the supervisor's environment.
pub(super) fn run_cli_with_env(
    model: &ScriptedModel,
    workspace: &Workspace,
    sessions: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    // The worker is the real one found next to `subagent`.
    let out = model
        .run_command(workspace.path(), sessions)
        .args(["--timeout", "60", "--json"])
        .args(extra)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    // The worker and any tool process ran with the workspace as their cwd:
    // once the CLI has returned, none may be left.
    assert_nothing_runs_in(workspace.path());
    out
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    v.sort();
    v
}

/// The tool message the model was sent for `call_id`, if any.
fn tool_message<'a>(request: &'a Value, call_id: &str) -> Option<&'a Value> {
    request["messages"]
        .as_array()?
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
}

const ALL_FOUR: &str = "bash_find,bash_ripgrep,bash_read,python_execute";

#[test]
fn tools_run_in_the_workspace_and_every_call_and_result_is_recorded() {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    let final_text = "Found notes.txt; the answer is 42.";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_find", "bash_find", &json!({"pattern": "*.txt"})),
        tool_call_turn("call_grep", "bash_ripgrep", &json!({"pattern": "needle"})),
        tool_call_turn("call_read", "bash_read", &json!({"path": "src/lib.rs"})),
        tool_call_turn("call_py", "python_execute", &json!({"code": "print(6*7)"})),
        tool_call_turn("call_missing", "bash_read", &json!({"path": "missing.txt"})),
        text_turn(final_text),
    ]);
    let out = run_cli(
        &model,
        &workspace,
        sessions.path(),
        &[
            "--task",
            "Look around and compute 6*7.",
            "--tools",
            ALL_FOUR,
        ],
    );
    let (json, lines) = checked(&out, 0);
    assert_eq!(json["content"][0]["text"], final_text);
    assert_eq!(model.replies_left(), 0, "every scripted turn was asked for");

    // A tool_call line and a tool_result line per call, in order.
    let calls: Vec<(&str, &str)> = of_type(&lines, "tool_call")
        .iter()
        .map(|l| (l["callId"].as_str().unwrap(), l["name"].as_str().unwrap()))
        .collect();
    let expected = vec![
        ("call_find", "bash_find"),
        ("call_grep", "bash_ripgrep"),
        ("call_read", "bash_read"),
        ("call_py", "python_execute"),
        ("call_missing", "bash_read"),
    ];
    assert_eq!(calls, expected);
    let results = of_type(&lines, "tool_result");
    let result_ids: Vec<(&str, &str)> = results
        .iter()
        .map(|l| (l["callId"].as_str().unwrap(), l["name"].as_str().unwrap()))
        .collect();
    assert_eq!(result_ids, expected);
    let output = |i: usize| results[i]["output"].as_str().unwrap();
    let errors: Vec<bool> = results
        .iter()
        .map(|l| l["isError"].as_bool().unwrap())
        .collect();
    assert_eq!(
        errors,
        vec![false, false, false, false, true],
        "outputs: {results:#?}"
    );

    // The real tool output.
    assert!(output(0).contains("notes.txt"), "bash_find: {}", output(0));
    assert!(
        !output(0).contains("ignored.txt"),
        "bash_find lists a .gitignore'd file: {}",
        output(0)
    );
    assert!(
        output(1).contains("notes.txt:3:needle: the line to find"),
        "bash_ripgrep: {}",
        output(1)
    );
    assert!(
        !output(1).contains("must stay hidden"),
        "bash_ripgrep searched a .gitignore'd file: {}",
        output(1)
    );
    let numbered = |n: &str, text: &str| {
        output(2)
            .lines()
            .any(|l| l.trim_start().starts_with(n) && l.ends_with(text))
    };
    assert!(
        numbered("1", "//! The answer.") && numbered("3", "    42"),
        "bash_read numbers its lines: {}",
        output(2)
    );
    assert_eq!(
        output(3).lines().filter(|l| l.trim() == "42").count(),
        1,
        "python_execute: {}",
        output(3)
    );
    assert!(
        output(4).contains("missing.txt"),
        "bash_read error: {}",
        output(4)
    );

    // The model got each result back, the failing one included, and went
    // on: a request after the error carries it.
    let requests = model.requests();
    assert_eq!(requests.len(), 6, "one request per scripted turn");
    for (i, (id, _)) in expected.iter().enumerate() {
        let sent = tool_message(&requests[i + 1], id)
            .unwrap_or_else(|| panic!("request {} lacks the result of {id}", i + 2));
        assert_eq!(sent["content"], results[i]["output"], "{id}");
    }

    // Every request offered exactly the chosen tools.
    for (i, request) in requests.iter().enumerate() {
        assert_eq!(
            offered_tools(request),
            sorted(&["bash_find", "bash_ripgrep", "bash_read", "python_execute"]),
            "request {}",
            i + 1
        );
    }
    assert_eq!(json["details"]["results"][0]["usage"]["turns"], 6);
}

/// Checks one capped tool result: the omission marker, the caps kept, head
/// and tail present, and the model shown exactly the capped text.
fn assert_capped(result: &Value, sent: &Value, head: &str, tail: &str) {
    let limits = subagent_protocol::Limits::default();
    let text = result["output"].as_str().unwrap();
    let name = result["name"].as_str().unwrap();
    assert_eq!(result["isError"], false, "{}", &text[..text.len().min(500)]);
    let marker = text
        .lines()
        .find(|l| l.starts_with("[... ") && l.ends_with(" lines omitted ...]"))
        .unwrap_or_else(|| panic!("no omission marker in the {name} result"));
    let bytes_omitted: u64 = marker
        .trim_start_matches("[... ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(bytes_omitted > 0, "{marker}");
    // The cut adds the marker line and at most one line break before it.
    let kept = text.len() - marker.len();
    assert!(
        kept as u64 <= limits.tool_output_bytes + 2,
        "{name} keeps {kept} bytes, the cap is {}",
        limits.tool_output_bytes
    );
    assert!(
        text.lines().count() as u64 <= limits.tool_output_lines + 1,
        "{name} keeps {} lines, the cap is {}",
        text.lines().count(),
        limits.tool_output_lines
    );
    assert!(text.contains(head), "{name}: head {head:?} kept");
    assert!(text.contains(tail), "{name}: tail {tail:?} kept");
    assert_eq!(
        sent["content"], result["output"],
        "the model saw the capped text"
    );
}

/// Runs one tool call that floods, then a final answer; returns the
/// session's tool_result line and the tool message the model was sent.
fn flood(tool: &str, arguments: Value) -> (Value, Value) {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_flood", tool, &arguments),
        text_turn("That was long."),
    ]);
    let out = run_cli(
        &model,
        &workspace,
        sessions.path(),
        &["--task", "Flood.", "--tools", tool],
    );
    let (_, lines) = checked(&out, 0);
    let results = of_type(&lines, "tool_result");
    assert_eq!(results.len(), 1, "{results:#?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let sent = tool_message(&requests[1], "call_flood").unwrap().clone();
    (results[0].clone(), sent)
}

#[test]
fn a_search_result_beyond_the_tool_output_cap_is_cut_with_a_marker() {
    // 2,000 hits of ~90 bytes: past both the 50 KiB and the 2,000-line cap.
    let (result, sent) = flood(
        "bash_ripgrep",
        json!({"pattern": "of the big file", "path": "big.txt", "max_matches": 2000}),
    );
    assert_capped(
        &result,
        &sent,
        "big.txt:1:line 0 of the big file",
        "big.txt:2000:line 1999 of the big file",
    );
}

#[test]
fn python_output_beyond_the_tool_output_cap_is_cut_with_a_marker() {
    // 100,000 lines, ~580 KB: past the output shown to the model, below the
    // tool process's own stdout limit (1 MiB, which would stop the process
    // and make the call an error).
    let (result, sent) = flood(
        "python_execute",
        json!({"code": "for i in range(100000):\n    print(i)"}),
    );
    assert_capped(&result, &sent, "\n100\n101\n", "99998\n99999");
}

#[test]
fn the_chosen_subset_is_all_the_model_is_offered() {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![text_turn("ok")]);
    let out = run_cli(
        &model,
        &workspace,
        sessions.path(),
        &["--task", "t", "--tools", " bash_read , bash_find "],
    );
    checked(&out, 0);
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        offered_tools(&requests[0]),
        sorted(&["bash_find", "bash_read"])
    );
}

#[test]
fn tools_none_offers_no_tools() {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![text_turn("ok"), text_turn("ok")]);
    for none in ["none", ""] {
        let out = run_cli(
            &model,
            &workspace,
            sessions.path(),
            &["--task", "t", "--tools", none],
        );
        checked(&out, 0);
    }
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(offered_tools(request), Vec::<String>::new(), "{request:#}");
    }
}

#[test]
fn the_explorer_agent_is_offered_the_read_only_tools_by_default() {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![text_turn("ok")]);
    let out = run_cli(
        &model,
        &workspace,
        sessions.path(),
        &["--task", "t", "--agent", "explorer"],
    );
    checked(&out, 0);
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(offered_tools(&requests[0]), sorted(READ_ONLY_TOOLS));
    let system = requests[0]["messages"][0]["content"].as_str().unwrap_or("");
    assert!(
        system.contains("relative to the workspace"),
        "system prompt: {system}"
    );
}

/// python_execute's code that hunts for `secret` everywhere under /proc and
/// in its own environment, printing `FOUND <where>` or `NOT FOUND (n pids)`.
fn proc_hunt_code(secret: &str) -> String {
    // Spelled backwards so the code's own command line is no find.
    let reversed: String = secret.chars().rev().collect();
    format!(
        r#"import os
secret = {reversed:?}[::-1].encode()
found = [k for k, v in os.environ.items() if secret in v.encode()]
pids = [p for p in os.listdir('/proc') if p.isdigit()]
for pid in pids:
    for name in ('environ', 'cmdline', 'mem'):
        try:
            with open(f'/proc/{{pid}}/{{name}}', 'rb') as f:
                if secret in f.read(1 << 20):
                    found.append(f'{{pid}}/{{name}}')
        except OSError:
            pass
print('FOUND ' + ','.join(found) if found else f'NOT FOUND ({{len(pids)}} pids)')"#
    )
}

#[test]
fn a_secret_in_the_supervisors_environment_is_nowhere_a_tool_can_look() {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    let secret = format!("planted-{}-s3cr3t-value", std::process::id());
    let model = ScriptedModel::start(vec![
        tool_call_turn(
            "call_hunt",
            "python_execute",
            &json!({"code": proc_hunt_code(&secret)}),
        ),
        text_turn("done"),
    ]);
    // In the supervisor's environment, under a name no masking knows,
    // and as the API key the worker holds in memory.
    let out = run_cli_with_env(
        &model,
        &workspace,
        sessions.path(),
        &[
            "--tools",
            "python_execute",
            "--task",
            "Look for secrets.",
            "--api-key-env",
            "PLANTED_API_KEY",
        ],
        &[("PLANTED_VALUE", &secret), ("PLANTED_API_KEY", &secret)],
    );
    let (_, lines) = checked(&out, 0);
    let result = of_type(&lines, "tool_result")
        .first()
        .map(|l| l["output"].as_str().unwrap().to_owned())
        .unwrap();
    assert!(result.contains("NOT FOUND (1 pids)"), "{result}");
    // The header says which layers the tool processes got.
    let applied = sandbox_layers(&lines[0]);
    for layer in [
        "pid_namespace",
        "fresh_proc",
        "landlock_fs",
        "seccomp",
        "no_capabilities",
    ] {
        assert!(applied.contains(&layer), "{layer} not in {applied:?}");
    }
}

//! How a run ended, where the operator looks: real `subagent run`s against
//! the scripted loopback model, then `sessions ls` and `sessions show` as
//! an operator types them. A run stopped by `--max-turns` after it wrote
//! text keeps its code, message and limit on its ending line; an answer the
//! output cap cut is `completed` with `stopReason: max_tokens`, exit 0, and
//! says so; one run's input tokens read the same in the result, the
//! session file, `ls` and `show`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn_with, tool_call_turn};
use super::support::*;

/// `subagent sessions <args> --sessions-dir dir`, its stdout (exit 0).
pub(super) fn sessions_out(dir: &Path, args: &[&str]) -> String {
    let out: Output = Command::new(binary("subagent"))
        .arg("sessions")
        .args(args)
        .arg("--sessions-dir")
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "sessions {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A scripted run with `args`; the result, the exit code and the session
/// file's lines (checked: every failed ending says why).
pub(super) fn scripted_run(
    replies: Vec<Vec<u8>>,
    workspace: &Path,
    sessions: &Path,
    args: &[&str],
) -> (Value, Option<i32>, Vec<Value>) {
    // Built first: the model's server lives a bounded time from its start.
    binary("subagent");
    let model = ScriptedModel::start(replies);
    let out = model
        .run_command(workspace, sessions)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let result: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is no JSON result ({e}); stderr: {stderr}"));
    assert_valid_result(&result);
    assert_children_reaped(&result);
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap_or_else(|| panic!("no session file: {result:#}"))
        .to_owned();
    let lines = check_session_file(Path::new(&file));
    (result, out.status.code(), lines)
}

/// A first turn that writes text and calls a tool, which `--max-turns 1`
/// then stops: the text is the run's partial answer.
pub(super) fn text_then_budget_replies() -> Vec<Vec<u8>> {
    vec![
        super::sessions_html::text_and_tool_call_turn(
            "Here is most of the answer: the notes say hello.",
            "call_read",
            "bash_read",
            &json!({"path": "notes.txt"}),
        ),
        tool_call_turn("call_never", "bash_read", &json!({"path": "notes.txt"})),
    ]
}

#[test]
fn a_run_stopped_by_max_turns_after_text_keeps_its_reason_in_ending_ls_and_show() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "hello\n").unwrap();
    let (result, code, lines) = scripted_run(
        text_then_budget_replies(),
        workspace.path(),
        sessions.path(),
        &[
            "--max-turns",
            "1",
            "--tools",
            "bash_read",
            "--task",
            "Read notes.txt",
        ],
    );
    assert_eq!(code, Some(super::exit_codes::BUDGET_EXCEEDED), "{result:#}");
    let single = &result["details"]["results"][0];
    assert!(
        single["output"]
            .as_str()
            .unwrap()
            .contains("most of the answer"),
        "the partial text is kept: {result:#}"
    );
    assert_eq!(single["limit"], json!({"name": "maxTurns", "value": 1}));
    let message = result["details"]["error"]["message"].as_str().unwrap();

    // The ending line: failed, with the code, the message and the limit.
    let ending = lines.last().unwrap();
    assert_eq!(ending["status"], "failed", "{ending}");
    assert_eq!(
        ending["error"],
        json!({"code": "SUBAGENT_BUDGET_EXCEEDED", "message": message,
               "limit": {"name": "maxTurns", "value": 1}}),
        "{ending}"
    );
    assert_eq!(ending["stopReason"], "max_turns");

    let table = sessions_out(sessions.path(), &["ls"]);
    let row = table.lines().nth(1).unwrap();
    assert!(row.contains("failed SUBAGENT_BUDGET_EXCEEDED"), "{table}");
    let listed: Value =
        serde_json::from_str(&sessions_out(sessions.path(), &["ls", "--json"])).unwrap();
    assert_eq!(listed[0]["error"]["code"], "SUBAGENT_BUDGET_EXCEEDED");
    assert_eq!(listed[0]["error"]["limit"]["name"], "maxTurns");

    let run_id = ending["jobId"].as_str().unwrap();
    let shown = sessions_out(sessions.path(), &["show", run_id]);
    let closing = &shown[shown.rfind("status failed").unwrap()..];
    assert!(
        closing.contains(&format!("error  SUBAGENT_BUDGET_EXCEEDED: {message}")),
        "{closing}"
    );
    assert!(closing.contains("limit  maxTurns = 1"), "{closing}");
}

/// Chat Completions usage with part of the prompt served from the cache.
fn cached_usage() -> Value {
    json!({"prompt_tokens": 104, "completion_tokens": 5, "total_tokens": 109,
           "prompt_tokens_details": {"cached_tokens": 93}})
}

#[test]
fn an_answer_cut_by_max_tokens_is_completed_exit_0_with_stop_reason_max_tokens() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (result, code, lines) = scripted_run(
        vec![text_turn_with(
            &["Once upon ", "a time there"],
            "length",
            cached_usage(),
        )],
        workspace.path(),
        sessions.path(),
        &["--max-tokens", "5", "--task", "Tell a long story"],
    );
    assert_eq!(code, Some(0), "{result:#}");
    let single = &result["details"]["results"][0];
    assert_eq!(single["stopReason"], "max_tokens", "{result:#}");
    assert!(result["details"]["error"].is_null(), "{result:#}");
    let ending = lines.last().unwrap();
    assert_eq!(ending["status"], "completed");
    assert_eq!(ending["stopReason"], "max_tokens");
    assert!(ending["error"].is_null());

    let table = sessions_out(sessions.path(), &["ls"]);
    assert!(table.contains("completed max_tokens"), "{table}");
    let shown = sessions_out(
        sessions.path(),
        &["show", ending["jobId"].as_str().unwrap()],
    );
    assert!(shown.contains("stop length: cut by max_tokens"), "{shown}");
    assert!(
        shown.contains("the answer was cut by the model's output cap (max_tokens)"),
        "{shown}"
    );
}

#[test]
fn one_runs_input_tokens_read_the_same_in_result_session_ls_and_show() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (result, code, lines) = scripted_run(
        vec![text_turn_with(&["All ", "done."], "stop", cached_usage())],
        workspace.path(),
        sessions.path(),
        &["--task", "Say done"],
    );
    assert_eq!(code, Some(0), "{result:#}");
    // Input is the prompt less what the cache served: 104 - 93.
    let usage = &result["details"]["results"][0]["usage"];
    assert_eq!(
        (&usage["input"], &usage["cacheRead"]),
        (&json!(11), &json!(93))
    );
    assert_eq!(lines.last().unwrap()["usage"], *usage);

    let listed: Value =
        serde_json::from_str(&sessions_out(sessions.path(), &["ls", "--json"])).unwrap();
    assert_eq!(listed[0]["usage"], *usage);
    let table = sessions_out(sessions.path(), &["ls"]);
    assert!(
        table
            .lines()
            .next()
            .unwrap()
            .contains("TOKENS IN(+CACHED)/OUT"),
        "{table}"
    );
    assert!(table.contains(" 11(+93)/5 "), "{table}");
    let shown = sessions_out(
        sessions.path(),
        &["show", listed[0]["runId"].as_str().unwrap()],
    );
    assert!(
        shown.contains("11 in / 5 out tokens (cache read 93, write 0)"),
        "{shown}"
    );
}

#[test]
fn the_html_export_of_a_failed_run_shows_code_message_and_limit_in_chromium() {
    let test = "the_html_export_of_a_failed_run_shows_code_message_and_limit";
    let Some(chromium) = super::sessions_html::chromium_or_skip(test) else {
        return;
    };
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "hello\n").unwrap();
    let (result, _, lines) = scripted_run(
        text_then_budget_replies(),
        workspace.path(),
        sessions.path(),
        &[
            "--max-turns",
            "1",
            "--tools",
            "bash_read",
            "--task",
            "Read notes.txt",
        ],
    );
    let message = result["details"]["error"]["message"].as_str().unwrap();
    let run_id = lines.last().unwrap()["jobId"].as_str().unwrap().to_owned();

    let artifacts = artifacts_dir(test);
    let page = artifacts.join("run.html");
    let written =
        super::sessions_html::export(sessions.path(), &[&run_id, "-o", page.to_str().unwrap()]);
    assert_eq!(written.status.code(), Some(0));
    let dom = super::sessions_html::dump_dom(&chromium, &page);
    // The DOM Chromium rendered: beside the red "failed" and the partial
    // answer, the code, the message and the limit, on the ending line and
    // in the closing status.
    assert!(dom.contains("most of the answer"), "{dom}");
    let reason = format!(
        "<dd class=\"reason-error\">SUBAGENT_BUDGET_EXCEEDED: {}</dd>",
        message
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    );
    assert_eq!(dom.matches(&reason).count(), 2, "{reason}\n{dom}");
    assert_eq!(
        dom.matches("<dd class=\"reason-limit\">maxTurns = 1</dd>")
            .count(),
        2,
        "{dom}"
    );
    let closing = &dom[dom.find("<footer id=\"closing\">").unwrap()..];
    assert!(
        closing.contains("<span class=\"status failed\">failed</span>"),
        "{closing}"
    );
    assert!(closing.contains(&reason), "{closing}");

    // A picture of the page for a person to look at.
    let shot = artifacts.join("failed-run.png");
    super::sessions_html::headless(
        &chromium,
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600".to_owned(),
            "--hide-scrollbars".to_owned(),
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "{}",
        png.len()
    );
    eprintln!("{test}: screenshot in {}", shot.display());
}

//! `subagent serve --mcp` driven by a real MCP client: the Python `mcp`
//! SDK from PyPI (pinned [`MCP_VERSION`], a 2.x release), installed on
//! first use into a venv under the cache root, running
//! `serve_mcp_client.py` (stdio_client + ClientSession) against the real
//! binary with the fixture worker. The script reports what it saw as JSON;
//! the assertions are here. Every test proves the server and every worker
//! are gone once the client has closed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::llama::LlamaServer;
use super::support::*;

/// The `mcp` release the client runs (the SDK's 2.x API).
const MCP_VERSION: &str = "2.3.0";

/// The client script; written into each test's directory.
const CLIENT: &str = include_str!("serve_mcp_client.py");

/// The python of a venv with `mcp` installed, made on first use (see
/// [`super::cached_installs`]).
pub(super) fn mcp_python(test: &str) -> Option<PathBuf> {
    let requirement = format!("mcp=={MCP_VERSION}");
    super::cached_installs::python_venv(test, &format!("python-mcp-{MCP_VERSION}"), &[&requirement])
        .map(|venv| venv.join("bin/python"))
}

/// One test's directories: sessions, and the workspace every process of
/// the server runs in (so [`assert_nothing_runs_in`] sees them all).
pub(super) struct Setup {
    _dir: tempfile::TempDir,
    pub(super) sessions: PathBuf,
    pub(super) workspace: PathBuf,
    script: PathBuf,
}

pub(super) fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::create_dir_all(&workspace).unwrap();
    let script = dir.path().join("serve_mcp_client.py");
    std::fs::write(&script, CLIENT).unwrap();
    Setup {
        _dir: dir,
        sessions,
        workspace,
        script,
    }
}

/// The server flags that run the fixture worker.
pub(super) const FIXTURE_SERVER: [&str; 6] = [
    "--worker",
    FIXTURE,
    "--model",
    "fixture-model",
    "--base-url",
    "http://127.0.0.1:9/v1",
];

/// Runs the client's `scenario` against `subagent serve --mcp` with the
/// fixture worker; returns its report once the client and server are gone.
fn client_report(python: &Path, setup: &Setup, scenario: &str) -> Value {
    client_report_with(python, setup, scenario, &FIXTURE_SERVER)
}

/// [`client_report`] with the server's model and worker flags given.
fn client_report_with(python: &Path, setup: &Setup, scenario: &str, server: &[&str]) -> Value {
    report_of(client_command(python, setup, scenario, server))
}

/// The client running `scenario` against the server with `server` flags.
pub(super) fn client_command(
    python: &Path,
    setup: &Setup,
    scenario: &str,
    server: &[&str],
) -> Command {
    let mut command = Command::new(python);
    command
        .arg(&setup.script)
        .arg(scenario)
        .arg(binary("subagent"))
        .args(["serve", "--mcp"])
        .args(server)
        .arg("--sessions-dir")
        .arg(&setup.sessions)
        .arg("--workspace")
        .arg(&setup.workspace)
        .env_remove("OPENAI_API_KEY")
        .current_dir(&setup.workspace)
        .stdin(Stdio::null());
    command
}

/// Runs the client; its report once the client and server are gone.
pub(super) fn report_of(mut client: Command) -> Value {
    let out = client.output().unwrap();
    assert!(
        out.status.success(),
        "client failed: {}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the client's report is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every child's session file under `dir`, each checked (valid lines, a
/// closing lifecycle line, its worker reaped); returns their texts. The
/// server's own file (under `serve/`) is checked by
/// [`check_server_file`] instead: it holds only lifecycle lines.
fn checked_session_files(dir: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && path.file_name().is_some_and(|n| n == "serve") {
                for file in std::fs::read_dir(&path).unwrap().flatten() {
                    check_server_file(&file.path());
                }
            } else if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                assert_reaped(&check_session_file(&path));
                texts.push(std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    texts
}

/// The server's file: every line valid, every job that started has ended.
fn check_server_file(path: &Path) {
    let validator = schema("session-line.schema.json");
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for line in &lines {
        assert_validates(&validator, line, &format!("a line of {}", path.display()));
    }
    let of = |event: &str| lines.iter().filter(|l| l["eventType"] == event).count();
    let ends = of("subagent:complete") + of("subagent:error") + of("subagent:aborted");
    assert_eq!(of("subagent:start"), ends, "{}: {text}", path.display());
}

pub(super) fn texts(call: &Value) -> Vec<&str> {
    call["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

#[test]
fn mcp_client_lists_three_tools_and_gets_text_structured_output_errors_and_progress() {
    let Some(python) = mcp_python("mcp_client_lists_three_tools") else {
        return;
    };
    let setup = setup();
    let report = client_report(&python, &setup, "calls");
    assert_eq!(report["server"], "subagent");

    let tools = report["tools"].as_object().unwrap();
    let mut names: Vec<&str> = tools.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["subagent", "subagent_cancel", "subagent_status"]);
    let spawn = &tools["subagent"];
    for property in [
        "agent",
        "task",
        "tasks",
        "mode",
        "outputSchema",
        "background",
        "model",
        "limits",
    ] {
        assert!(
            spawn["properties"].get(property).is_some(),
            "{property}: {spawn}"
        );
    }
    assert_eq!(
        spawn["properties"]["mode"]["enum"],
        json!(["single", "parallel", "chain"])
    );
    assert_eq!(tools["subagent_status"]["required"], json!(["jobId"]));
    assert_eq!(tools["subagent_cancel"]["required"], json!(["jobId"]));

    // Without a schema: the answer as text, no structured content.
    let plain = &report["plain"];
    assert_eq!(plain["isError"], false);
    assert_eq!(texts(plain), ["fixture done: fixture:success"]);
    assert_eq!(plain["structuredContent"], Value::Null);

    // Progress of that call: turn, tool and tokens, in a growing count.
    let progress = report["progress"].as_array().unwrap();
    let messages: Vec<&str> = progress
        .iter()
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    for wanted in [
        "started general on fixture-model",
        "turn 1",
        "tool bash_read",
        "tokens 10 in, 5 out",
        "ended ok",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(wanted)),
            "{wanted} not in {messages:?}"
        );
    }
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");

    // With a schema: the object as structuredContent.
    let structured = &report["structured"];
    assert_eq!(structured["isError"], false);
    assert_eq!(structured["structuredContent"], json!({"capital": "Paris"}));

    // A failed run and a malformed call are error results naming the code,
    // in one text block: the error is not said twice.
    assert_eq!(report["failed"]["isError"], true);
    let failed = texts(&report["failed"]);
    assert_eq!(failed.len(), 1, "{}", report["failed"]);
    assert!(failed[0].starts_with("SUBAGENT_FAILED: "), "{failed:?}");
    assert_eq!(report["invalid"]["isError"], true);
    assert!(
        texts(&report["invalid"])[0].starts_with("INVALID_INPUT: "),
        "{}",
        report["invalid"]
    );

    // A parallel call with a schema: every child's object, in task order.
    assert_eq!(
        report["parallel"]["structuredContent"],
        json!({"results": [{"capital": "Paris"}, {"capital": "Paris"}]})
    );

    // success, structured, fail and the two parallel children.
    assert_eq!(checked_session_files(&setup.sessions).len(), 5);
    assert_nothing_runs_in(&setup.workspace);
}

#[test]
fn mcp_client_cancelling_a_call_stops_its_run_and_the_server_keeps_serving() {
    let Some(python) = mcp_python("mcp_client_cancelling_a_call") else {
        return;
    };
    let setup = setup();
    let report = client_report(&python, &setup, "cancel");
    // The client cancelled once the sleeping run had begun its turn.
    let before: Vec<&str> = report["progressBeforeCancel"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(before.iter().any(|m| m.contains("turn 1")), "{before:?}");
    assert_eq!(
        report.get("longCall"),
        None,
        "the cancelled call returned: {report}"
    );
    assert_eq!(report["after"]["isError"], false);
    assert_eq!(texts(&report["after"]), ["fixture done: fixture:success"]);

    let files = checked_session_files(&setup.sessions);
    assert_eq!(files.len(), 2);
    assert!(
        files.iter().any(|text| text.contains("subagent:aborted")),
        "no aborted run among {files:#?}"
    );
    assert_nothing_runs_in(&setup.workspace);
}

#[test]
fn mcp_client_runs_background_jobs_asks_their_status_and_cancels_one() {
    let Some(python) = mcp_python("mcp_client_runs_background_jobs") else {
        return;
    };
    let setup = setup();
    let report = client_report(&python, &setup, "jobs");
    let started = &report["sleepStarted"];
    assert_eq!(started["isError"], false);
    let job_id = started["structuredContent"]["jobId"].as_str().unwrap();
    assert_eq!(job_id.len(), 8, "{started}");
    assert_eq!(started["structuredContent"]["state"], "running");

    let running = &report["sleepRunning"]["structuredContent"];
    assert_eq!(running["jobId"], job_id);
    assert_eq!(running["state"], "running");
    assert_eq!(running["background"], true);

    // Cancel answers once the job is over: aborted, its ending recorded.
    let cancelled = &report["sleepCancelled"];
    assert_eq!(cancelled["structuredContent"]["state"], "aborted");
    assert_eq!(
        cancelled["structuredContent"]["ending"]["eventType"],
        "subagent:aborted"
    );
    // The status line, then the error once, in one block.
    let cancelled_texts = texts(cancelled);
    assert_eq!(cancelled_texts.len(), 2, "{cancelled}");
    assert!(
        cancelled_texts[1].starts_with("SUBAGENT_CANCELLED: "),
        "{cancelled}"
    );
    assert_eq!(
        cancelled_texts[1]
            .matches("cancelled by the caller")
            .count(),
        1,
        "{cancelled}"
    );

    let done = &report["successDone"];
    assert_eq!(done["structuredContent"]["state"], "completed");
    assert_eq!(done["structuredContent"]["streaming"]["turnCount"], 1);
    assert!(
        texts(done).contains(&"fixture done: fixture:success"),
        "{done}"
    );

    assert_eq!(report["unknown"]["isError"], true);
    assert_eq!(
        texts(&report["unknown"]),
        ["INVALID_INPUT: no job nosuchjob"]
    );

    let files = checked_session_files(&setup.sessions);
    assert_eq!(files.len(), 2);
    assert!(files.iter().any(|t| t.contains("subagent:aborted")));
    assert_nothing_runs_in(&setup.workspace);
}

#[test]
fn mcp_client_drives_the_real_worker_against_a_scripted_model() {
    use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
    let Some(python) = mcp_python("mcp_client_drives_the_real_worker") else {
        return;
    };
    let setup = setup();
    std::fs::write(setup.workspace.join("notes.txt"), "hello from the notes\n").unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_read", &json!({"path": "notes.txt"})),
        text_turn("The notes say hello."),
        tool_call_turn("call_2", "report_back", &json!({"capital": "Paris"})),
    ]);
    let worker = binary("subagent-worker");
    let base_url = model.base_url();
    let report = client_report_with(
        &python,
        &setup,
        "real",
        &[
            "--worker",
            worker.to_str().unwrap(),
            "--provider",
            "openai-chat",
            "--model",
            "scripted",
            "--base-url",
            &base_url,
            "--tools",
            "bash_read",
        ],
    );
    assert_eq!(report["read"]["isError"], false, "{report}");
    assert_eq!(texts(&report["read"]), ["The notes say hello."]);
    let progress: Vec<&str> = report["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for wanted in ["turn 1", "tool bash_read", "turn 2", "ended ok"] {
        assert!(
            progress.iter().any(|m| m.contains(wanted)),
            "{wanted} not in {progress:?}"
        );
    }
    assert_eq!(report["capital"]["isError"], false, "{report}");
    assert_eq!(
        report["capital"]["structuredContent"],
        json!({"capital": "Paris"})
    );

    // The file's text reached the model as the tool's result, and the
    // call's outputSchema reached it as the report_back tool.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].to_string().contains("hello from the notes"));
    assert_eq!(
        offered_tools(&requests[2]),
        vec!["bash_read", "report_back"]
    );
    assert_eq!(checked_session_files(&setup.sessions).len(), 2);
    assert_nothing_runs_in(&setup.workspace);
}

#[test]
fn mcp_client_resumes_a_run_by_the_id_its_result_names() {
    use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
    let Some(python) = mcp_python("mcp_client_resumes_a_run") else {
        return;
    };
    let setup = setup();
    std::fs::write(setup.workspace.join("notes.txt"), "hello from the notes\n").unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_read", &json!({"path": "notes.txt"})),
        text_turn("The notes say hello."),
        text_turn("Still hello."),
    ]);
    let worker = binary("subagent-worker");
    let base_url = model.base_url();
    let report = client_report_with(
        &python,
        &setup,
        "resume",
        &[
            "--worker",
            worker.to_str().unwrap(),
            "--provider",
            "openai-chat",
            "--model",
            "scripted",
            "--base-url",
            &base_url,
            "--tools",
            "bash_read",
        ],
    );
    assert_eq!(report["first"]["isError"], false, "{report}");
    let first_id = report["firstMeta"]["runId"].as_str().unwrap();
    assert_eq!(first_id.len(), 32, "{report}");
    assert_eq!(report["second"]["isError"], false, "{report}");
    assert_eq!(texts(&report["second"]), ["Still hello."]);
    let second_id = report["secondMeta"]["runId"].as_str().unwrap();
    assert_ne!(first_id, second_id);
    assert_eq!(report["missing"]["isError"], true, "{report}");
    assert!(
        texts(&report["missing"])[0].contains("cannot resume \"deadbeef\""),
        "{report}"
    );

    // The follow-up was sent after the first run's whole conversation.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let before = requests[1]["messages"].as_array().unwrap();
    let now = requests[2]["messages"].as_array().unwrap();
    assert_eq!(now.len(), before.len() + 2, "{now:#?}");
    assert_eq!(now[..before.len()], before[..]);
    assert_eq!(now[before.len()]["content"], "The notes say hello.");
    assert_eq!(
        now[before.len() + 1],
        json!({"role": "user", "content": "And again?"})
    );
    let files = checked_session_files(&setup.sessions);
    assert_eq!(files.len(), 2);
    assert!(
        files
            .iter()
            .any(|t| t.contains(&format!("\"resumedFrom\":{{\"runId\":\"{first_id}\""))),
        "{files:#?}"
    );
    assert_nothing_runs_in(&setup.workspace);
}

#[test]
fn mcp_client_gets_an_answer_and_progress_from_the_real_model() {
    let Some(server) = LlamaServer::start_or_skip("mcp_client_gets_an_answer_from_the_real_model")
    else {
        return;
    };
    let Some(python) = mcp_python("mcp_client_gets_an_answer_from_the_real_model") else {
        return;
    };
    let setup = setup();
    let worker = binary("subagent-worker");
    let base_url = server.base_url();
    let report = client_report_with(
        &python,
        &setup,
        "hello",
        &[
            "--worker",
            worker.to_str().unwrap(),
            "--model",
            "smollm2",
            "--base-url",
            &base_url,
            "--temperature",
            "0",
            "--max-tokens",
            "32",
            "--max-turns",
            "2",
            "--tools",
            "none",
            "--timeout",
            "120s",
        ],
    );
    let hello = &report["hello"];
    assert_eq!(hello["isError"], false, "{report}");
    assert!(
        !texts(hello).is_empty() && !texts(hello)[0].trim().is_empty(),
        "{report}"
    );
    let progress: Vec<&str> = report["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        progress
            .iter()
            .any(|m| m.contains("started general on smollm2")),
        "{progress:?}"
    );
    assert!(
        progress.iter().any(|m| m.contains("turn 1")),
        "{progress:?}"
    );
    // The real model's token counts reach the client.
    assert!(
        progress
            .iter()
            .any(|m| m.contains(": tokens ") && !m.contains("tokens 0 in")),
        "{progress:?}"
    );
    assert!(
        progress.iter().any(|m| m.ends_with("ended ok")),
        "{progress:?}"
    );
    assert_eq!(checked_session_files(&setup.sessions).len(), 1);
    assert_nothing_runs_in(&setup.workspace);
}

#[test]
fn mcp_client_closing_stops_the_server_and_its_background_runs() {
    let Some(python) = mcp_python("mcp_client_closing_stops_the_server") else {
        return;
    };
    let setup = setup();
    let report = client_report(&python, &setup, "leave");
    assert_eq!(report["leftRunning"], "running");
    // The client has closed and the server is gone: its job was aborted,
    // not left to run, and its worker is gone too.
    let files = checked_session_files(&setup.sessions);
    assert_eq!(files.len(), 1);
    assert!(files[0].contains("subagent:aborted"), "{}", files[0]);
    assert_nothing_runs_in(&setup.workspace);
}

#[test]
fn mcp_calls_and_jobs_over_the_concurrency_limit_wait_queued_instead_of_being_refused() {
    let Some(python) = mcp_python("mcp_calls_and_jobs_over_the_concurrency_limit") else {
        return;
    };
    let setup = setup();
    // The MCP SDK hands the server only HOME, PATH and a few others: the
    // user config goes under HOME.
    let home = setup.sessions.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".config/subagent")).unwrap();
    std::fs::write(
        home.join(".config/subagent/config.toml"),
        "max_concurrent = 1\n",
    )
    .unwrap();
    let mut client = client_command(&python, &setup, "over_the_limit", &FIXTURE_SERVER);
    client.env("HOME", &home);
    let report = report_of(client);

    let started = &report["queuedStarted"];
    assert_eq!(started["isError"], false, "{started}");
    assert_eq!(started["structuredContent"]["state"], "queued");
    assert_eq!(
        report["queuedStatus"]["structuredContent"]["state"],
        "queued"
    );
    // Cancelled while queued: aborted, and no worker ever ran for it.
    let cancelled = &report["queuedCancelled"]["structuredContent"];
    assert_eq!(cancelled["state"], "aborted", "{cancelled}");
    let result = &cancelled["result"];
    assert_valid_result(result);
    assert_eq!(result["details"]["error"]["code"], "SUBAGENT_CANCELLED");
    assert!(result["details"]["results"][0]["termination"].is_null());

    // The foreground call waited, said so, then ran.
    let foreground = &report["foreground"];
    assert_eq!(foreground["isError"], false, "{foreground}");
    assert_eq!(texts(foreground), ["fixture done: fixture:success"]);
    let progress: Vec<&str> = report["foregroundProgress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let at = |what: &str| progress.iter().position(|m| m.contains(what));
    let (queued, running, ended) = (
        at(": queued general: 1 of 1 slots are taken"),
        at(": running: it has a slot"),
        at(": ended ok"),
    );
    assert!(
        queued.is_some() && queued < running && running < ended,
        "{progress:#?}"
    );

    // A parallel call without a concurrency runs under the limit of 1; one
    // that asks for more than the limit is refused, naming it.
    assert_eq!(
        report["parallel"]["isError"], false,
        "{}",
        report["parallel"]
    );
    let too_many = &report["tooMany"];
    assert_eq!(too_many["isError"], true, "{too_many}");
    assert!(texts(too_many)[0].contains("use 1 to 1"), "{too_many}");
    // The jobs registry runs a background job's plan with its concurrency,
    // so the same rule refuses it.
    let too_many = &report["tooManyBackground"];
    assert_eq!(too_many["isError"], true, "{too_many}");
    assert!(texts(too_many)[0].contains("use 1 to 1"), "{too_many}");

    checked_session_files(&setup.sessions);
    assert_nothing_runs_in(&setup.workspace);
}

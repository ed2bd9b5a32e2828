//! `subagent serve --stdio` driven through pipes by a stdlib Python client
//! (`serve_stdio_client.py`, written into each test's directory) against
//! the real binary and the fixture worker. The client checks the protocol
//! as it goes and reports what it saw; the files and processes are checked
//! here. Every test proves that no worker outlived the server.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::*;

/// The client script.
const CLIENT: &str = include_str!("serve_stdio_client.py");

struct Setup {
    dir: tempfile::TempDir,
    script: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("client.py");
        std::fs::write(&script, CLIENT).unwrap();
        std::fs::create_dir_all(dir.path().join("workspace")).unwrap();
        Self { dir, script }
    }

    fn sessions(&self) -> PathBuf {
        self.dir.path().join("sessions")
    }

    fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    fn notified(&self) -> PathBuf {
        self.dir.path().join("notified.json")
    }

    /// Runs one scenario of the client against the fixture worker; its report.
    fn scenario(&self, name: &str) -> Value {
        self.scenario_with(name, json!({}))
    }

    /// [`Self::scenario`] with config keys of the client's replaced
    /// (`worker`, `model`, `base_url`, `extra` flags).
    fn scenario_with(&self, name: &str, overrides: Value) -> Value {
        let mut config = json!({
            "subagent": binary("subagent"),
            "fixture": FIXTURE,
            "sessions": self.sessions(),
            "workspace": self.workspace(),
            "notified": self.notified(),
        });
        for (key, value) in overrides.as_object().unwrap() {
            config[key] = value.clone();
        }
        let out = Command::new("python3")
            .arg(&self.script)
            .arg(name)
            .arg(config.to_string())
            .output()
            .expect("python3 runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "client scenario {name} failed:\n{stderr}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().unwrap_or_default();
        let report: Value = serde_json::from_str(last)
            .unwrap_or_else(|e| panic!("report of {name}: {e}: {stdout}"));
        check_against_schemas(&report);
        report
    }

    /// The server files in `<sessions>/serve/`, each as its lines.
    fn serve_files(&self) -> Vec<(PathBuf, Vec<Value>)> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.sessions().join("serve"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|f| {
                let lines = lines_of_file(&f);
                (f, lines)
            })
            .collect()
    }
}

/// Every request the client sent matches the request schema (and the ones
/// malformed on purpose do not), and
/// every line the server wrote match the published schemas; the ending
/// notifications carry valid session lines and responses valid results.
fn check_against_schemas(report: &Value) {
    let requests = schema("serve-request.schema.json");
    let messages = schema("serve-message.schema.json");
    let session_line = schema("session-line.schema.json");
    let sent = report["sent"].as_array().unwrap();
    for request in report["bad"].as_array().unwrap() {
        assert!(
            !requests.is_valid(request),
            "the schema accepts the bad request {request}"
        );
    }
    for request in sent {
        assert_validates(&requests, request, "request");
    }
    let seen = report["seen"].as_array().unwrap();
    assert!(!seen.is_empty(), "the server said nothing");
    for message in seen {
        assert_validates(&messages, message, "message");
        let method = message["method"].as_str().unwrap_or_default();
        if method.starts_with("subagent:") {
            assert_validates(&session_line, &message["params"], "ending line");
        }
        if message["result"]["result"].is_object() {
            assert_valid_result(&message["result"]["result"]);
        }
    }
}

/// The lines of `path` as the server sent them: each line's `chain` value
/// belongs to the file (what `sessions verify` checks), not to the line a
/// client or `--notify-cmd` gets.
fn lines_of_file(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut line: Value = serde_json::from_str(l).unwrap();
            line.as_object_mut().unwrap().remove("chain");
            line
        })
        .collect()
}

fn lifecycle<'a>(lines: &'a [Value], job: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "agent_event" && l["jobId"] == job)
        .collect()
}

/// Waits (bounded) until no process runs in `dir`: a killed server's
/// workers get their parent-death signal asynchronously.
fn nothing_runs_in_soon(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && !processes_in(dir).is_empty() {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_nothing_runs_in(dir);
}

#[test]
fn serve_stdio_foreground_spawns_answer_with_results_and_stream_progress() {
    let setup = Setup::new();
    let report = setup.scenario("foreground");
    assert_eq!(report["exit"], 0);
    for key in ["single", "parallel", "chain"] {
        let result = &report[key]["result"];
        assert_valid_result(result);
        assert_children_reaped(result);
    }
    // The server's own file has each job's start and end.
    let files = setup.serve_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let job = report["single"]["jobId"].as_str().unwrap();
    let events: Vec<_> = lifecycle(&files[0].1, job)
        .iter()
        .map(|l| l["eventType"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(events, ["subagent:start", "subagent:complete"]);
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_background_job_is_announced_recorded_and_waitable() {
    let setup = Setup::new();
    let report = setup.scenario("background");
    assert_eq!(report["exit"], 0);
    assert_valid_result(&report["result"]);
    assert_children_reaped(&report["result"]);
    let job = report["job"].as_str().unwrap();
    // The pushed line is the one on disk in the server's file.
    let files = setup.serve_files();
    let on_disk = lifecycle(&files[0].1, job);
    assert_eq!(on_disk.last().copied(), Some(&report["line"]));
    // The child's own file ends with its terminal lifecycle line.
    let child = report["line"]["sessionFile"].as_str().unwrap();
    let lines = check_session_file(Path::new(child));
    assert_eq!(lines.last().unwrap()["eventType"], "subagent:complete");
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_cancel_aborts_a_running_job_and_leaves_no_process() {
    let setup = Setup::new();
    let report = setup.scenario("cancel");
    assert_eq!(report["exit"], 0);
    assert_valid_result(&report["result"]);
    assert_children_reaped(&report["result"]);
    let job = report["job"].as_str().unwrap();
    let files = setup.serve_files();
    let last = lifecycle(&files[0].1, job)
        .last()
        .copied()
        .cloned()
        .unwrap();
    assert_eq!(last["eventType"], "subagent:aborted");
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_malformed_lines_are_answered_and_the_server_keeps_serving() {
    let setup = Setup::new();
    let report = setup.scenario("malformed");
    assert_eq!(report["exit"], 0);
    let codes: Vec<&str> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["error"]["code"].as_str().unwrap())
        .collect();
    for code in [
        "PARSE_ERROR",
        "UNKNOWN_METHOD",
        "INVALID_PARAMS",
        "INVALID_REQUEST",
    ] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}");
    }
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_killed_server_takes_its_workers_and_the_next_marks_the_run_interrupted() {
    let setup = Setup::new();
    let killed = setup.scenario("killed");
    let job = killed["job"].as_str().unwrap();
    nothing_runs_in_soon(&setup.workspace());
    // The dead server's file: the job and its child started, nothing ended.
    let files = setup.serve_files();
    assert_eq!(files.len(), 1);
    let (dead_file, dead_lines) = &files[0];
    assert_eq!(lifecycle(dead_lines, job).len(), 1);
    let child_start = dead_lines
        .iter()
        .find(|l| l["eventType"] == "subagent:start" && l["sessionFile"].is_string())
        .expect("the child's start line")
        .clone();
    let child_run = child_start["jobId"].as_str().unwrap();

    let restarted = setup.scenario("restarted");
    assert_eq!(restarted["exit"], 0);
    let interrupted: Vec<&str> = restarted["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["state"] == "interrupted")
        .map(|j| j["jobId"].as_str().unwrap())
        .collect();
    assert!(interrupted.contains(&job), "{interrupted:?}");
    assert!(interrupted.contains(&child_run), "{interrupted:?}");
    // Both files now end those runs with an interrupted line.
    let dead_lines = lines_of_file(dead_file);
    for run in [job, child_run] {
        let last = lifecycle(&dead_lines, run)
            .last()
            .copied()
            .cloned()
            .unwrap();
        assert_eq!(last["eventType"], "subagent:aborted");
        assert!(
            last["summary"]
                .as_str()
                .unwrap()
                .starts_with("interrupted:"),
            "{last}"
        );
    }
    let child_file = child_start["sessionFile"].as_str().unwrap();
    let child_lines = check_session_file(Path::new(child_file));
    let last = child_lines.last().unwrap();
    assert_eq!(last["eventType"], "subagent:aborted");
    assert!(
        last["summary"]
            .as_str()
            .unwrap()
            .starts_with("interrupted:"),
        "{last}"
    );
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_notify_cmd_receives_each_lifecycle_line_even_after_stdin_closed() {
    let setup = Setup::new();
    let report = setup.scenario("notify");
    assert_eq!(report["exit"], 0);
    let text = std::fs::read_to_string(setup.notified()).unwrap();
    let mut got: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    got.sort_by_key(|l| l["jobId"].as_str().unwrap().to_owned());
    let mut pushed: Vec<Value> = report["lines"]
        .as_object()
        .unwrap()
        .values()
        .cloned()
        .collect();
    pushed.sort_by_key(|l| l["jobId"].as_str().unwrap().to_owned());
    assert_eq!(got.len(), 2, "{text}");
    assert_eq!(got, pushed);
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_closing_stdin_cancels_foreground_jobs_and_exits() {
    let setup = Setup::new();
    let report = setup.scenario("eof");
    assert_eq!(report["exit"], 0);
    assert!(report["seconds"].as_f64().unwrap() < 15.0, "{report}");
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_sigterm_cancels_background_jobs_records_them_and_exits() {
    let setup = Setup::new();
    let report = setup.scenario("terminated");
    assert_eq!(report["exit"], 0);
    assert_eq!(report["line"]["status"], "aborted");
    let child = report["line"]["sessionFile"].as_str().unwrap();
    let lines = check_session_file(Path::new(child));
    assert_reaped(&lines);
    assert_nothing_runs_in(&setup.workspace());
}

/// A client that keeps stdin open does not keep the server alive past a
/// SIGTERM or SIGINT (issue 32: it ignored them until stdin closed): the
/// server cancels both jobs, answers the foreground spawn, announces the
/// background ending, and exits 0 with no worker left.
#[test]
fn serve_stdio_sigterm_or_sigint_with_stdin_open_cancels_every_job_and_exits() {
    for signal in ["SIGTERM", "SIGINT"] {
        let setup = Setup::new();
        let report = setup.scenario_with("terminated_stdin_open", json!({ "signal": signal }));
        assert_eq!(
            report["exited_with_stdin_open"], true,
            "{signal}: the server did not exit while stdin stayed open"
        );
        assert_eq!(report["exit"], 0, "{signal}");
        assert_eq!(
            report["answer"]["result"]["state"], "aborted",
            "{signal}: {}",
            report["answer"]
        );
        assert_eq!(
            report["aborted"],
            json!([report["background"]]),
            "{signal}: {report}"
        );
        assert_nothing_runs_in(&setup.workspace());
    }
}

/// [`Setup::scenario`] under a user config of `max_concurrent = 1`.
fn one_slot_scenario(setup: &Setup, name: &str) -> Value {
    let config = setup.dir.path().join("config");
    std::fs::create_dir_all(config.join("subagent")).unwrap();
    std::fs::write(config.join("subagent/config.toml"), "max_concurrent = 1\n").unwrap();
    setup.scenario_with(name, json!({"env": {"XDG_CONFIG_HOME": config}}))
}

/// The run of a job cancelled while queued: cancelled, no process ever
/// ran for it, and a session file that says so.
fn assert_cancelled_in_queue(result: &Value) {
    assert_eq!(result["details"]["error"]["code"], "SUBAGENT_CANCELLED");
    let single = &result["details"]["results"][0];
    assert!(single["termination"].is_null(), "a worker ran: {single:#}");
    let lines = check_session_file(Path::new(single["sessionFile"].as_str().unwrap()));
    assert!(lines.iter().all(|l| l["pid"].is_null()), "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "limit"
                && l["detail"].as_str().is_some_and(|d| d.contains("queued"))),
        "{lines:#?}"
    );
}

#[test]
fn serve_stdio_jobs_over_the_concurrency_limit_are_queued_then_run() {
    let setup = Setup::new();
    let report = one_slot_scenario(&setup, "over_the_limit");
    assert_eq!(report["exit"], 0);
    assert_valid_result(&report["result"]);
    assert!(report["result"]["details"]["error"].is_null());
    assert_children_reaped(&report["result"]);
    assert_cancelled_in_queue(&report["cancelled"]);
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_sigterm_ends_a_queued_job_aborted_without_a_worker() {
    let setup = Setup::new();
    let report = one_slot_scenario(&setup, "over_the_limit_terminated");
    assert_eq!(report["exit"], 0);
    assert_eq!(report["line"]["status"], "aborted");
    assert_eq!(report["line"]["error"]["code"], "SUBAGENT_CANCELLED");
    let child = report["line"]["sessionFile"].as_str().unwrap();
    let lines = check_session_file(Path::new(child));
    assert!(lines.iter().all(|l| l["pid"].is_null()), "{lines:#?}");
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_gets_an_answer_and_token_counts_from_the_real_model() {
    let test = "serve_stdio_gets_an_answer_and_token_counts_from_the_real_model";
    let Some(server) = super::llama::LlamaServer::start_or_skip(test) else {
        return;
    };
    let setup = Setup::new();
    let report = setup.scenario_with(
        "real",
        json!({
            "worker": binary("subagent-worker"),
            "model": "smollm2",
            "base_url": server.base_url(),
            "extra": ["--temperature", "0", "--max-tokens", "32", "--max-turns", "2",
                      "--tools", "none", "--timeout", "120s"],
        }),
    );
    assert_eq!(report["exit"], 0);
    assert_valid_result(&report["result"]);
    assert_children_reaped(&report["result"]);
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_streams_real_tool_calls_and_returns_structured_output_from_the_scripted_model() {
    use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
    let answer = "The needle is on line one of notes.txt.";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_read", &json!({"path": "notes.txt"})),
        text_turn(answer),
        tool_call_turn("call_2", "report_back", &json!({"capital": "Paris"})),
    ]);
    let setup = Setup::new();
    std::fs::write(setup.workspace().join("notes.txt"), "needle on line one\n").unwrap();
    let report = setup.scenario_with(
        "scripted",
        json!({
            "worker": binary("subagent-worker"),
            "model": "scripted",
            "base_url": model.base_url(),
            "extra": ["--tools", "bash_read", "--timeout", "60s"],
        }),
    );
    assert_eq!(report["exit"], 0);
    for key in ["tool", "structured"] {
        assert_valid_result(&report[key]);
        assert_children_reaped(&report[key]);
    }
    assert_eq!(report["tool"]["content"][0]["text"], answer);
    assert_eq!(
        report["structured"]["details"]["results"][0]["structuredOutput"],
        json!({"capital": "Paris"})
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(offered_tools(&requests[0]), ["bash_read"]);
    assert!(offered_tools(&requests[2]).contains(&"report_back".to_owned()));
    assert_nothing_runs_in(&setup.workspace());
}

#[test]
fn serve_stdio_spawns_resume_a_run_in_the_foreground_and_in_the_background() {
    use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_read", &json!({"path": "notes.txt"})),
        text_turn("Line one."),
        text_turn("Still line one."),
        text_turn("Yes, line one."),
    ]);
    let setup = Setup::new();
    std::fs::write(setup.workspace().join("notes.txt"), "needle on line one\n").unwrap();
    let report = setup.scenario_with(
        "resumed",
        json!({
            "worker": binary("subagent-worker"),
            "model": "scripted",
            "base_url": model.base_url(),
            "extra": ["--tools", "bash_read", "--timeout", "60s"],
        }),
    );
    assert_eq!(report["exit"], 0);
    for (key, turns, text) in [
        ("second", 2, "Still line one."),
        ("third", 3, "Yes, line one."),
    ] {
        let result = &report[key];
        assert_valid_result(result);
        assert_children_reaped(result);
        assert_eq!(result["content"][0]["text"], text, "{result:#}");
        assert_eq!(result["details"]["results"][0]["continuedFrom"], turns);
    }
    // Each request carries the one before it, its answer and the follow-up.
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    for (i, follow_up) in [(2, "And again?"), (3, "Once more?")] {
        let before = requests[i - 1]["messages"].as_array().unwrap();
        let now = requests[i]["messages"].as_array().unwrap();
        assert_eq!(now.len(), before.len() + 2, "{now:#?}");
        assert_eq!(now[..before.len()], before[..]);
        assert_eq!(now[before.len()]["role"], "assistant");
        assert_eq!(
            now[before.len() + 1],
            json!({"role": "user", "content": follow_up})
        );
    }
    assert_nothing_runs_in(&setup.workspace());
}

/// The jobs library by itself (what `serve --mcp` builds on): a background
/// job's progress reaches its subscriber under its id, cancel ends it
/// aborted with its ending announced and on disk, and the worker is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_library_runs_cancels_and_records_a_background_job() {
    use subagent_protocol::RunMode;
    use subagent_supervisor::jobs::{JobRequest, JobState, Jobs};
    let fixture = Fixture::new("sleep");
    let parent = fixture.dir.path().join("serve").join("server.jsonl");
    let jobs = Jobs::new(fixture.config(), Some(parent.clone())).unwrap();
    let mut progress = jobs.subscribe_progress();
    let mut endings = jobs.subscribe_endings();
    let job = jobs
        .start(JobRequest {
            mode: RunMode::Single,
            requests: vec![fixture.request()],
            concurrency: None,
            background: true,
        })
        .unwrap();
    // The sleeping fixture starts its first turn, then waits forever.
    loop {
        let update = tokio::time::timeout(Duration::from_secs(30), progress.recv())
            .await
            .expect("progress within 30 s")
            .unwrap();
        assert_eq!(update.job_id, job);
        if update.streaming.turn_count >= 1 {
            break;
        }
    }
    assert_eq!(jobs.status(&job).unwrap().state, JobState::Running);
    assert!(jobs.cancel(&job));
    let result = jobs.wait(&job).await.expect("a result");
    assert_eq!(
        result.details.error.as_ref().map(|e| e.code.to_string()),
        Some("SUBAGENT_CANCELLED".to_owned())
    );
    let ended = endings.recv().await.unwrap();
    assert_eq!(
        (ended.job_id.clone(), ended.background),
        (job.clone(), true)
    );
    assert_eq!(jobs.status(&job).unwrap().state, JobState::Aborted);
    let on_disk = lines_of_file(&parent);
    let last = lifecycle(&on_disk, &job.0)
        .last()
        .copied()
        .cloned()
        .unwrap();
    assert_eq!(last, serde_json::to_value(&ended.line).unwrap());
    assert_eq!(last["eventType"], "subagent:aborted");
    assert_no_survivors(&fixture.marker);
}

/// A server whose input ends at once (nothing for stdio, the handshake for
/// MCP) ends while the supervisor's background probe of the tool sandbox
/// (a forked child) may still run: the server waits for it, so nothing of
/// it outlives the server. Twenty short servers of each kind, each checked
/// the moment it has exited.
#[test]
fn servers_that_end_at_once_leave_no_child_behind() {
    let handshake: String = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "short-server-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect();
    for (mode, input) in [("--stdio", String::new()), ("--mcp", handshake)] {
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let mut command = Command::new(binary("subagent"));
            command
                .args(["serve", mode, "--worker", FIXTURE, "--model", "m"])
                .args(["--base-url", "http://127.0.0.1:9/v1"])
                .arg("--sessions-dir")
                .arg(dir.path().join("sessions"))
                .env("HOME", dir.path())
                .env("XDG_CONFIG_HOME", dir.path().join(".config"))
                .current_dir(dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let out = spawn_with_stdin(&mut command, input.as_bytes())
                .wait_with_output()
                .unwrap();
            assert!(out.status.success(), "serve {mode}: {out:?}");
            assert_nothing_runs_in(dir.path());
        }
    }
}

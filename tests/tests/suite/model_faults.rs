//! Model faults end to end: the real `subagent` CLI runs the real worker
//! against a real llama-server (or the scripted model, for tool calls)
//! behind [`FaultProxy`], which breaks the model's side on purpose: rate
//! limits, server errors, resets, cut and malformed streams, a slow drip, a
//! 50 MB answer, and tool calls no tool can run.
//!
//! Every case asserts that the run ends in bounded time with the right
//! error code and a readable message, that the result and the session file
//! validate against the shared schemas and record what happened (retries,
//! limit hits, tool errors), that the proxy saw exactly the attempts the
//! retry policy allows, and that no process the run started survives it.
//! RELIABILITY.md lists each fault beside the test that proves it.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_worker::agent::MAX_TOOL_CALLS_PER_TURN;
use subagent_worker::provider::MAX_TURN_STREAM_BYTES;
use subagent_worker::provider::retry::DEFAULT_MAX_ATTEMPTS;

use super::fault_proxy::{Fault, FaultProxy, RetryAfter, chat_chunk};
use super::llama::LlamaServer;
use super::scripted_model::{ScriptedModel, text_turn};
use super::support::{
    assert_nothing_runs_in, assert_reaped, assert_valid_result, binary, check_session_file,
};

/// Wall timeout given to every run, seconds: a run here takes seconds (the
/// slowest, three attempts with backoff or a 50 MB answer, about five), but
/// a llama-server answer on a machine busy with other tests can take tens.
const RUN_TIMEOUT_SECS: &str = "120";

/// Longest any run may take before the test kills it and fails: the wall
/// timeout plus the supervisor's cancel and kill grace.
const RUN_DEADLINE: Duration = Duration::from_secs(150);

/// Attempts per model request, the first one included.
const MAX_ATTEMPTS: usize = DEFAULT_MAX_ATTEMPTS as usize;

fn upstream(server: &LlamaServer) -> Option<SocketAddr> {
    Some(SocketAddr::from(([127, 0, 0, 1], server.port)))
}

/// How one CLI run ended.
struct Run {
    json: Value,
    exit: i32,
    stderr: String,
    lines: Vec<Value>,
    elapsed: Duration,
    _workspace: tempfile::TempDir,
}

impl Run {
    fn code(&self) -> Option<&str> {
        self.json["details"]["error"]["code"].as_str()
    }
    fn message(&self) -> &str {
        self.json["details"]["error"]["message"]
            .as_str()
            .unwrap_or_default()
    }
    fn text(&self) -> &str {
        self.json["content"][0]["text"].as_str().unwrap_or_default()
    }
    fn single(&self) -> &Value {
        &self.json["details"]["results"][0]
    }
    fn lines_of(&self, ty: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["type"] == ty).collect()
    }
    /// The worker's log lines in the session file that mention `needle`.
    fn logs_with(&self, needle: &str) -> Vec<String> {
        self.lines_of("log")
            .into_iter()
            .filter_map(|l| l["message"].as_str())
            .filter(|m| m.contains(needle))
            .map(str::to_owned)
            .collect()
    }
    fn last_event(&self) -> &str {
        self.lines.last().unwrap()["eventType"].as_str().unwrap()
    }

    /// The run failed with `code`, the matching exit status and a message
    /// containing every part of `says`.
    fn assert_failed(&self, code: &str, exit: i32, says: &[&str]) {
        assert_eq!(self.code(), Some(code), "{:#}", self.json);
        assert_eq!(self.exit, exit, "exit status; stderr: {}", self.stderr);
        for part in says {
            assert!(
                self.message().contains(part),
                "message should say {part:?}: {}",
                self.message()
            );
        }
        assert_eq!(self.last_event(), "subagent:error");
    }

    fn assert_succeeded(&self) {
        assert_eq!(self.code(), None, "{:#}", self.json);
        assert_eq!(self.exit, 0, "stderr: {}", self.stderr);
        assert!(!self.text().trim().is_empty(), "the model's answer arrived");
        assert_eq!(self.last_event(), "subagent:complete");
    }
}

/// Runs `subagent run` against `base_url` with short limits and `extra`
/// flags, and checks what every run must keep: it ends before
/// [`RUN_DEADLINE`], prints a result that validates, leaves a session file
/// that validates and ends in a lifecycle line, and leaves no process
/// behind (the worker reaped, nothing running in its workspace).
fn run_cli(base_url: &str, extra: &[&str]) -> Run {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join("notes.txt"),
        "alpha\nneedle: the line to find\n",
    )
    .unwrap();
    let sessions = workspace.path().join(".sessions");
    // Before the clock starts: finding them may build them first.
    let (subagent, worker) = (binary("subagent"), binary("subagent-worker"));
    let started = Instant::now();
    let child = Command::new(subagent)
        .arg("run")
        .args([
            "--task",
            "Say hello.",
            "--model",
            "smollm2",
            "--base-url",
            base_url,
        ])
        .arg("--worker")
        .arg(worker)
        .arg("--workspace")
        .arg(workspace.path())
        .arg("--sessions-dir")
        .arg(&sessions)
        .args([
            "--temperature",
            "0",
            "--max-tokens",
            "12",
            "--max-turns",
            "3",
        ])
        .args(["--timeout", RUN_TIMEOUT_SECS, "--json"])
        .args(extra)
        .args(if extra.contains(&"--provider") {
            &[][..]
        } else {
            &["--provider", "openai-chat"][..]
        })
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(RUN_DEADLINE) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // SAFETY: kill(2) on the pid of our own child, still unreaped
            // (its waiter thread has not returned), so the pid is not reused.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("subagent run did not end within {RUN_DEADLINE:?}");
        }
    };
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let json: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not a result ({e}): {stdout}\nstderr: {stderr}"));
    assert_valid_result(&json);
    let session = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap_or_else(|| panic!("no session file in {json:#}"));
    let lines = check_session_file(Path::new(session));
    assert_reaped(&lines);
    assert_nothing_runs_in(workspace.path());
    eprintln!(
        "run ended in {elapsed:?}: exit {:?}, {}",
        output.status.code(),
        json["details"]["error"]
    );
    Run {
        json,
        exit: output.status.code().unwrap_or(-1),
        stderr,
        lines,
        elapsed,
        _workspace: workspace,
    }
}

/// How many model requests the proxy saw (each one attempt: the proxy
/// closes every connection after one answer), all to one endpoint.
fn attempts(proxy: &FaultProxy) -> usize {
    let seen = proxy.requests();
    for request in &seen {
        assert_eq!(request.path, seen[0].path);
        assert!(
            ["/v1/chat/completions", "/v1/messages", "/v1/responses"]
                .contains(&request.path.as_str()),
            "{}",
            request.path
        );
    }
    seen.len()
}

/// The gaps between consecutive requests the proxy saw.
fn gaps(proxy: &FaultProxy) -> Vec<Duration> {
    proxy
        .requests()
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at))
        .collect()
}

/// The worker logged one retry line per retried attempt.
fn assert_retries_logged(run: &Run, retries: usize, cause: &str) {
    let logged = run.logs_with("retrying in");
    assert_eq!(
        logged.len(),
        retries,
        "one retry line per retried attempt: {logged:#?}"
    );
    for line in &logged {
        assert!(
            line.contains(cause),
            "retry line names the cause {cause:?}: {line}"
        );
    }
}

// ---- rate limits and server errors: retried, then success or a clear failure

#[test]
fn fault_429_with_retry_after_seconds_is_waited_out_then_succeeds() {
    let Some(server) = LlamaServer::start_or_skip("fault_429_with_retry_after_seconds") else {
        return;
    };
    let rate_limited = Fault::Status {
        status: 429,
        retry_after: Some(RetryAfter::Seconds(2)),
    };
    let proxy = FaultProxy::start(upstream(&server), vec![rate_limited], Fault::Forward);
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_succeeded();
    assert_eq!(attempts(&proxy), 2, "one 429, then the retry");
    // The backoff alone would wait at most 0.5 s before the second attempt.
    assert!(
        gaps(&proxy)[0] >= Duration::from_millis(1900),
        "Retry-After: 2 was honoured: {:?}",
        gaps(&proxy)
    );
    assert_retries_logged(&run, 1, "HTTP 429");
}

#[test]
fn fault_429_with_retry_after_http_date_is_waited_out_then_succeeds() {
    let Some(server) = LlamaServer::start_or_skip("fault_429_with_retry_after_http_date") else {
        return;
    };
    // An HTTP date has whole seconds: 3 s ahead is 2 to 3 s away when parsed.
    let rate_limited = Fault::Status {
        status: 429,
        retry_after: Some(RetryAfter::HttpDateIn(Duration::from_secs(3))),
    };
    let proxy = FaultProxy::start(upstream(&server), vec![rate_limited], Fault::Forward);
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_succeeded();
    assert_eq!(attempts(&proxy), 2);
    assert!(
        gaps(&proxy)[0] >= Duration::from_millis(1900),
        "the Retry-After date was honoured: {:?}",
        gaps(&proxy)
    );
    assert_retries_logged(&run, 1, "HTTP 429");
}

#[test]
fn fault_429_without_retry_after_backs_off_then_succeeds() {
    let Some(server) = LlamaServer::start_or_skip("fault_429_without_retry_after") else {
        return;
    };
    let rate_limited = Fault::Status {
        status: 429,
        retry_after: None,
    };
    let proxy = FaultProxy::start(
        upstream(&server),
        vec![rate_limited.clone(), rate_limited],
        Fault::Forward,
    );
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_succeeded();
    assert_eq!(attempts(&proxy), 3, "two 429s, then the third attempt");
    // Exponential backoff with equal jitter: 0.25-0.5 s, then 0.5-1 s.
    let gaps = gaps(&proxy);
    assert!(gaps[0] >= Duration::from_millis(240), "{gaps:?}");
    assert!(gaps[1] >= Duration::from_millis(490), "{gaps:?}");
    assert_retries_logged(&run, 2, "HTTP 429");
}

#[test]
fn fault_5xx_statuses_are_retried_then_succeed() {
    let Some(server) = LlamaServer::start_or_skip("fault_5xx_statuses_are_retried") else {
        return;
    };
    for statuses in [[500, 502], [503, 529]] {
        let plan = statuses
            .iter()
            .map(|&status| Fault::Status {
                status,
                retry_after: None,
            })
            .collect();
        let proxy = FaultProxy::start(upstream(&server), plan, Fault::Forward);
        let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
        run.assert_succeeded();
        assert_eq!(attempts(&proxy), 3, "{statuses:?}, then success");
        assert_retries_logged(&run, 2, "HTTP 5");
    }
}

#[test]
fn fault_retries_work_the_same_on_the_messages_and_responses_apis() {
    let Some(server) = LlamaServer::start_or_skip("fault_retries_on_messages_and_responses") else {
        return;
    };
    // Anthropic's "overloaded" status on the Messages API, and a reset on
    // the Responses API: the retry rules are the dialects' shared ones.
    let overloaded = Fault::Status {
        status: 529,
        retry_after: None,
    };
    for (provider, fault, cause) in [
        ("anthropic", overloaded, "HTTP 529"),
        (
            "openai-responses",
            Fault::ResetBeforeResponse,
            "could not reach the provider",
        ),
    ] {
        let proxy = FaultProxy::start(upstream(&server), vec![fault], Fault::Forward);
        let run = run_cli(
            &proxy.base_url(),
            &["--tools", "none", "--provider", provider],
        );
        run.assert_succeeded();
        assert_eq!(attempts(&proxy), 2, "{provider}");
        assert_retries_logged(&run, 1, cause);
    }
}

#[test]
fn fault_5xx_that_never_stops_fails_after_every_attempt() {
    for status in [500, 502, 503, 529] {
        let failing = Fault::Status {
            status,
            retry_after: None,
        };
        let proxy = FaultProxy::start(None, Vec::new(), failing);
        let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
        run.assert_failed(
            "SUBAGENT_FAILED",
            1,
            &[
                &format!("HTTP {status}"),
                &format!("injected HTTP {status} by the fault proxy"),
                &format!("gave up after {MAX_ATTEMPTS} attempts"),
            ],
        );
        assert_eq!(attempts(&proxy), MAX_ATTEMPTS, "HTTP {status}");
        assert_retries_logged(&run, MAX_ATTEMPTS - 1, &format!("HTTP {status}"));
    }
}

#[test]
fn fault_429_that_never_stops_fails_with_the_rate_limit_in_the_message() {
    let rate_limited = Fault::Status {
        status: 429,
        retry_after: Some(RetryAfter::Seconds(0)),
    };
    let proxy = FaultProxy::start(None, Vec::new(), rate_limited);
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_failed(
        "SUBAGENT_FAILED",
        1,
        &["HTTP 429 (rate_limit_error)", "gave up after 3 attempts"],
    );
    assert_eq!(attempts(&proxy), MAX_ATTEMPTS);
}

#[test]
fn fault_retry_after_longer_than_the_idle_timeout_ends_as_an_idle_timeout() {
    // The worker honours Retry-After up to 60 s; the run's idle limit is
    // shorter, so the supervisor stops the wait (Cancel reaches the backoff
    // sleep) instead of the run hanging for a minute.
    let rate_limited = Fault::Status {
        status: 429,
        retry_after: Some(RetryAfter::Seconds(60)),
    };
    let proxy = FaultProxy::start(None, Vec::new(), rate_limited);
    let run = run_cli(
        &proxy.base_url(),
        &["--tools", "none", "--idle-timeout", "2"],
    );
    run.assert_failed("SUBAGENT_TIMEOUT", 3, &["idle timeout"]);
    assert!(run.elapsed < Duration::from_secs(15), "{:?}", run.elapsed);
    assert_eq!(attempts(&proxy), 1, "no second attempt before the stop");
    assert!(
        run.lines_of("limit")
            .iter()
            .any(|l| l["limit"] == "idle_timeout"),
        "the session file records the idle limit"
    );
}

// ---- connection faults

#[test]
fn fault_connection_reset_before_the_response_is_retried_then_succeeds() {
    let Some(server) = LlamaServer::start_or_skip("fault_connection_reset_before_the_response")
    else {
        return;
    };
    let proxy = FaultProxy::start(
        upstream(&server),
        vec![Fault::ResetBeforeResponse, Fault::ResetBeforeResponse],
        Fault::Forward,
    );
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_succeeded();
    assert_eq!(attempts(&proxy), 3, "two resets, then success");
    assert_retries_logged(&run, 2, "could not reach the provider");
}

#[test]
fn fault_connection_reset_every_time_fails_as_unreachable() {
    let proxy = FaultProxy::start(None, Vec::new(), Fault::ResetBeforeResponse);
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_failed(
        "SUBAGENT_FAILED",
        1,
        &["could not reach the provider", "gave up after 3 attempts"],
    );
    assert_eq!(attempts(&proxy), MAX_ATTEMPTS);
}

#[test]
fn fault_connection_reset_mid_stream_fails_without_a_retry() {
    let Some(server) = LlamaServer::start_or_skip("fault_connection_reset_mid_stream") else {
        return;
    };
    // After three events some text reached the caller: a retry would show
    // it twice, so the turn fails and keeps what arrived.
    let proxy = FaultProxy::start(
        upstream(&server),
        vec![Fault::ResetMidStream { after_events: 3 }],
        Fault::Forward,
    );
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_failed(
        "SUBAGENT_FAILED",
        1,
        &["model turn 1 failed", "the connection broke mid-stream"],
    );
    assert_eq!(attempts(&proxy), 1, "not retried");
    assert!(run.logs_with("retrying in").is_empty());
}

#[test]
fn fault_stream_cut_mid_event_fails_as_a_truncated_stream() {
    let Some(server) = LlamaServer::start_or_skip("fault_stream_cut_mid_event") else {
        return;
    };
    let proxy = FaultProxy::start(
        upstream(&server),
        vec![Fault::CutMidEvent { after_events: 2 }],
        Fault::Forward,
    );
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_failed(
        "SUBAGENT_FAILED",
        1,
        &["malformed stream", "ended in the middle of an event"],
    );
    assert_eq!(attempts(&proxy), 1, "not retried");
}

#[test]
fn fault_slow_drip_past_the_idle_timeout_is_stopped_as_idle() {
    let Some(server) = LlamaServer::start_or_skip("fault_slow_drip_past_the_idle_timeout") else {
        return;
    };
    // One byte every 100 ms: bytes keep coming (the worker's own idle limit
    // between chunks never fires) but no event completes within 2 s, so the
    // run makes no progress and the supervisor's idle limit stops it.
    let proxy = FaultProxy::start(
        upstream(&server),
        Vec::new(),
        Fault::SlowDrip {
            every: Duration::from_millis(100),
        },
    );
    let run = run_cli(
        &proxy.base_url(),
        &["--tools", "none", "--idle-timeout", "2"],
    );
    run.assert_failed("SUBAGENT_TIMEOUT", 3, &["idle timeout"]);
    assert!(run.elapsed < Duration::from_secs(15), "{:?}", run.elapsed);
    assert_eq!(run.single()["stopReason"], "idle_timeout");
    assert!(
        run.lines_of("limit")
            .iter()
            .any(|l| l["limit"] == "idle_timeout"),
        "the session file records the idle limit"
    );
    assert_eq!(attempts(&proxy), 1);
}

#[test]
fn fault_malformed_json_in_a_delta_fails_clearly_without_a_retry() {
    let Some(server) = LlamaServer::start_or_skip("fault_malformed_json_in_a_delta") else {
        return;
    };
    let proxy = FaultProxy::start(
        upstream(&server),
        vec![Fault::MalformedDelta],
        Fault::Forward,
    );
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_failed(
        "SUBAGENT_FAILED",
        1,
        &[
            "invalid JSON in a chat.completion.chunk event",
            // The message quotes the bad data, so the operator sees it.
            r#"{"choices":[{"index":0,"delta":{"content":"cut"#,
        ],
    );
    assert_eq!(attempts(&proxy), 1, "not retried");
}

#[test]
fn fault_50_mb_answer_is_stopped_at_the_turn_limit_and_kept_as_truncated_output() {
    let proxy = FaultProxy::start(
        None,
        Vec::new(),
        Fault::Huge {
            bytes: 50 * 1000 * 1000,
        },
    );
    let run = run_cli(&proxy.base_url(), &["--tools", "none"]);
    run.assert_failed(
        "SUBAGENT_OUTPUT_TRUNCATED",
        5,
        &[
            "model turn 1 stopped",
            &format!("passed the limit of {MAX_TURN_STREAM_BYTES} bytes for one turn"),
        ],
    );
    assert_eq!(attempts(&proxy), 1, "not retried");
    // The head of the answer is kept: in the result (itself truncated to
    // the returned-text cap) and in full beside the session file.
    assert!(
        run.text().starts_with("All work and no play"),
        "{}",
        &run.text()[..200.min(run.text().len())]
    );
    let truncated = &run.single()["truncated"];
    assert!(truncated.is_object(), "{:#}", run.single());
    let full = std::fs::read_to_string(truncated["fullOutputPath"].as_str().unwrap()).unwrap();
    assert!(
        full.len() > 1024 * 1024 && full.len() <= MAX_TURN_STREAM_BYTES,
        "kept {} bytes",
        full.len()
    );
}

// ---- tool-call faults (scripted model turns: SmolLM2 does not call tools)

/// One SSE turn whose tool calls have raw (possibly invalid) argument
/// text: `(call id, tool name, arguments)`.
fn raw_tool_calls_turn(calls: &[(String, String, String)]) -> Vec<u8> {
    let mut sse = String::new();
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        let delta = json!({"tool_calls": [{
            "index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": arguments}}]});
        sse.push_str(&format!("data: {}\n\n", chat_chunk(delta, None)));
    }
    sse.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        chat_chunk(json!({}), Some("tool_calls"))
    ));
    sse.into_bytes()
}

/// The tool messages the model was sent back in request `n`.
fn tool_messages(model: &ScriptedModel, n: usize) -> Vec<Value> {
    model.requests()[n]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect()
}

#[test]
fn fault_tool_call_with_invalid_json_arguments_is_a_tool_error_the_model_reads() {
    let call = (
        "call_bad".to_owned(),
        "bash_read".to_owned(),
        r#"{"path": "notes.txt""#.to_owned(),
    );
    let model = ScriptedModel::start(vec![
        raw_tool_calls_turn(&[call]),
        text_turn("The arguments were broken."),
    ]);
    let run = run_cli(&model.base_url(), &[]);
    run.assert_succeeded();
    let results = run.lines_of("tool_result");
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["isError"], true);
    let output = results[0]["output"].as_str().unwrap();
    assert!(
        output.contains("invalid JSON arguments for tool `bash_read`"),
        "{output}"
    );
    // The session file keeps what the model wrote, unparsed.
    assert_eq!(
        run.lines_of("tool_call")[0]["args"]["_raw"],
        r#"{"path": "notes.txt""#
    );
    let sent_back = tool_messages(&model, 1);
    assert_eq!(sent_back.len(), 1);
    assert_eq!(sent_back[0]["tool_call_id"], "call_bad");
    assert!(
        sent_back[0]["content"]
            .as_str()
            .unwrap()
            .contains("invalid JSON arguments"),
        "the model reads the error: {sent_back:#?}"
    );
}

#[test]
fn fault_call_to_an_unknown_tool_is_a_tool_error_naming_the_real_ones() {
    let call = (
        "call_unknown".to_owned(),
        "delete_everything".to_owned(),
        r#"{"path": "/"}"#.to_owned(),
    );
    let model = ScriptedModel::start(vec![
        raw_tool_calls_turn(&[call]),
        text_turn("That tool does not exist."),
    ]);
    let run = run_cli(&model.base_url(), &[]);
    run.assert_succeeded();
    let results = run.lines_of("tool_result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["isError"], true);
    let output = results[0]["output"].as_str().unwrap();
    assert!(
        output.contains("unknown tool `delete_everything`; available tools: bash, bash_find"),
        "{output}"
    );
    let sent_back = tool_messages(&model, 1);
    assert_eq!(sent_back.len(), 1);
    assert!(
        sent_back[0]["content"]
            .as_str()
            .unwrap()
            .contains("unknown tool `delete_everything`")
    );
}

#[test]
fn fault_a_thousand_tool_calls_in_one_turn_run_up_to_the_cap_and_the_rest_are_tool_errors() {
    let calls: Vec<(String, String, String)> = (0..1000)
        .map(|i| {
            (
                format!("call_{i}"),
                "bash_read".to_owned(),
                r#"{"path": "notes.txt"}"#.to_owned(),
            )
        })
        .collect();
    let model = ScriptedModel::start(vec![
        raw_tool_calls_turn(&calls),
        text_turn("Read it a thousand times."),
    ]);
    let run = run_cli(&model.base_url(), &[]);
    run.assert_succeeded();
    assert_eq!(run.lines_of("tool_call").len(), 1000, "every call recorded");
    let results = run.lines_of("tool_result");
    assert_eq!(results.len(), 1000, "every call answered");
    let (ran, refused) = results.split_at(MAX_TOOL_CALLS_PER_TURN);
    for result in ran {
        assert_eq!(result["isError"], false, "{result}");
        assert!(result["output"].as_str().unwrap().contains("needle"));
    }
    for result in refused {
        assert_eq!(result["isError"], true, "{result}");
        assert!(
            result["output"].as_str().unwrap().contains(&format!(
                "not run: a turn may make at most {MAX_TOOL_CALLS_PER_TURN} tool calls"
            )),
            "{result}"
        );
    }
    assert_eq!(
        run.logs_with("made 1000 tool calls").len(),
        1,
        "the session file says why"
    );
    // The model reads an answer to every call, in order, and goes on.
    let sent_back = tool_messages(&model, 1);
    assert_eq!(sent_back.len(), 1000);
    assert_eq!(sent_back[999]["tool_call_id"], "call_999");
    assert_eq!(model.requests().len(), 2);
}

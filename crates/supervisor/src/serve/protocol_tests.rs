use pretty_assertions::assert_eq;

use super::*;
use crate::config::LimitKey;
use subagent_protocol::RunMode;

fn bad(line: &str) -> BadLine {
    parse_line(line).expect_err("the line must be refused")
}

#[test]
fn a_single_spawn_reads_with_its_overrides() {
    let request = parse_line(
        r#"{"id": 7, "method": "spawn", "params": {"agent": "general", "task": "hi",
            "outputSchema": {"type": "object"}, "background": true, "model": "m",
            "limits": {"maxTurns": 3}}}"#,
    )
    .unwrap();
    assert_eq!(request.id, json!(7));
    let Method::Spawn(spawn) = request.method else {
        panic!("a spawn");
    };
    assert_eq!(spawn.mode, RunMode::Single);
    assert_eq!(spawn.tasks, vec!["hi".to_owned()]);
    assert_eq!(spawn.agent.as_deref(), Some("general"));
    assert_eq!(spawn.model.as_deref(), Some("m"));
    assert!(spawn.background);
    assert_eq!(
        spawn.output_schema_json.as_deref(),
        Some(r#"{"type":"object"}"#)
    );
    assert!(spawn.limits.get(LimitKey::MaxTurns).is_some());
    assert_eq!(spawn.tools, None);
}

#[test]
fn a_spawn_may_name_tools_network_and_workspace_for_the_server_to_check() {
    let request = parse_line(
        r#"{"id": 1, "method": "spawn", "params": {"task": "hi", "tools": ["bash_read"],
            "allowNetwork": false, "workspace": "sub"}}"#,
    )
    .unwrap();
    let Method::Spawn(spawn) = request.method else {
        panic!("a spawn");
    };
    assert_eq!(spawn.tools, Some(vec!["bash_read".to_owned()]));
    assert_eq!(spawn.allow_network, Some(false));
    assert_eq!(spawn.workspace, Some(std::path::PathBuf::from("sub")));
}

#[test]
fn tasks_run_in_parallel_unless_the_mode_says_chain() {
    let mode = |line: &str| match parse_line(line).unwrap().method {
        Method::Spawn(s) => s.mode,
        other => panic!("not a spawn: {other:?}"),
    };
    assert_eq!(
        mode(r#"{"id":1,"method":"spawn","params":{"tasks":["a","b"]}}"#),
        RunMode::Parallel
    );
    assert_eq!(
        mode(r#"{"id":1,"method":"spawn","params":{"tasks":["a","b"],"mode":"chain"}}"#),
        RunMode::Chain
    );
}

#[test]
fn malformed_lines_get_an_error_naming_the_problem_and_the_id_when_known() {
    let not_json = bad("{nope");
    assert_eq!(
        (not_json.id.clone(), not_json.code),
        (Value::Null, ResponseCode::ParseError)
    );

    let unknown = bad(r#"{"id":"a","method":"explode"}"#);
    assert_eq!(
        (unknown.id.clone(), unknown.code),
        (json!("a"), ResponseCode::UnknownMethod)
    );
    assert!(unknown.message.contains("explode"), "{}", unknown.message);

    let no_task = bad(r#"{"id":2,"method":"spawn","params":{"agent":"general"}}"#);
    assert_eq!(
        (no_task.id.clone(), no_task.code),
        (json!(2), ResponseCode::InvalidParams)
    );
    assert!(no_task.message.contains("task"), "{}", no_task.message);

    let both = bad(r#"{"id":3,"method":"spawn","params":{"task":"a","tasks":["b"]}}"#);
    assert!(both.message.contains("not both"), "{}", both.message);

    let typo = bad(r#"{"id":4,"method":"spawn","params":{"task":"a","bakground":true}}"#);
    assert!(typo.message.contains("bakground"), "{}", typo.message);

    let limit = bad(r#"{"id":5,"method":"spawn","params":{"task":"a","limits":{"turns":3}}}"#);
    assert!(limit.message.contains("limits.turns"), "{}", limit.message);

    let no_job = bad(r#"{"id":6,"method":"status","params":{}}"#);
    assert!(no_job.message.contains("jobId"), "{}", no_job.message);

    let array = bad("[1,2]");
    assert_eq!(array.code, ResponseCode::InvalidRequest);
}

#[test]
fn an_ending_notification_is_named_after_its_event_and_carries_the_line() {
    use subagent_protocol::session::{AgentEvent, LifecycleStatus, RunMode};
    let line = SessionLine::now(SessionEntry::AgentEvent(AgentEvent {
        event_type: LifecycleEvent::Error,
        job_id: "abcd1234".into(),
        requested_by: "t".into(),
        agent_name: "general".into(),
        mode: RunMode::Single,
        pid: None,
        started_at: "2026-01-01T00:00:00.000Z".into(),
        completed_at: None,
        duration_ms: None,
        model: "m".into(),
        usage: None,
        status: Some(LifecycleStatus::Failed),
        summary: None,
        session_file: None,
        error: None,
        stop_reason: None,
    }));
    let v: Value = serde_json::from_str(&ending(&line)).unwrap();
    assert_eq!(v["method"], "subagent:error");
    assert_eq!(v["params"]["jobId"], "abcd1234");
    assert_eq!(v["params"]["type"], "agent_event");
    assert!(v.get("id").is_none());
}

#[test]
fn error_codes_are_spelled_as_the_schema_names_them() {
    let spelled: Vec<Value> = [
        ResponseCode::ParseError,
        ResponseCode::InvalidRequest,
        ResponseCode::UnknownMethod,
        ResponseCode::InvalidParams,
        ResponseCode::InvalidInput,
        ResponseCode::UnknownJob,
    ]
    .iter()
    .map(|code| {
        let line: Value = serde_json::from_str(&error_response(&json!(1), *code, "m")).unwrap();
        line["error"]["code"].clone()
    })
    .collect();
    assert_eq!(
        spelled,
        [
            "PARSE_ERROR",
            "INVALID_REQUEST",
            "UNKNOWN_METHOD",
            "INVALID_PARAMS",
            "INVALID_INPUT",
            "UNKNOWN_JOB"
        ]
        .map(|code| json!(code))
    );
    assert_eq!(
        spelled[4],
        json!(subagent_protocol::ErrorCode::InvalidInput.as_str())
    );
}

#[test]
fn a_progress_notification_carries_the_jobs_state() {
    let line = progress(
        &JobId("ab12cd34".to_owned()),
        JobState::Queued,
        &Streaming::default(),
    );
    let value: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(value["method"], "progress");
    assert_eq!(value["params"]["jobId"], "ab12cd34");
    assert_eq!(value["params"]["state"], "queued");
    assert_eq!(value["params"]["details"]["streaming"]["turnCount"], 0);
}

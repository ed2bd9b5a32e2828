use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::ErrorCode;
use subagent_protocol::Usage;
use subagent_protocol::result::{Details, Mode, SingleResult};

use super::*;
use crate::config::RawLimit;

fn args(value: Value) -> Option<JsonObject> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

#[test]
fn a_single_task_with_overrides_is_read() {
    let call = parse_spawn(args(json!({
        "agent": "explorer",
        "task": "find it",
        "model": "m",
        "outputSchema": {"type": "object"},
        "limits": {"maxTurns": 3, "timeout": "90s"}
    })))
    .unwrap();
    assert_eq!(call.agent.as_deref(), Some("explorer"));
    assert_eq!(call.tasks, vec!["find it".to_owned()]);
    assert_eq!(call.mode, RunMode::Single);
    assert_eq!(call.model.as_deref(), Some("m"));
    assert_eq!(
        call.output_schema_json.as_deref(),
        Some(r#"{"type":"object"}"#)
    );
    assert_eq!(
        call.limits.get(LimitKey::MaxTurns),
        Some(LimitKey::MaxTurns.parse(RawLimit::Integer(3)).unwrap())
    );
    assert_eq!(
        call.limits.get(LimitKey::Timeout),
        Some(LimitKey::Timeout.parse(RawLimit::Text("90s")).unwrap())
    );
    assert!(!call.background);
}

#[test]
fn several_tasks_need_a_mode() {
    let err = parse_spawn(args(json!({"tasks": ["a", "b"]}))).unwrap_err();
    assert!(err.contains("parallel or chain"), "{err}");
    let call = parse_spawn(args(json!({"task": "a", "tasks": ["b"], "mode": "chain"}))).unwrap();
    assert_eq!(call.tasks, vec!["a".to_owned(), "b".to_owned()]);
    assert_eq!(call.mode, RunMode::Chain);
}

#[test]
fn bad_arguments_are_refused_with_what_is_wrong() {
    for (value, needle) in [
        (json!({}), "no task"),
        (json!({"task": "  "}), "no task"),
        (json!({"task": "a", "bogus": 1}), "bogus"),
        (json!({"task": "a", "outputSchema": "x"}), "outputSchema"),
        (
            json!({"task": "a", "limits": {"maxTurnz": 1}}),
            "limits.maxTurnz",
        ),
        (
            json!({"task": "a", "limits": {"timeout": "soon"}}),
            "limits.timeout",
        ),
        (json!({"task": "a", "concurrency": 2}), "concurrency"),
        (json!({"task": "a", "mode": "sideways"}), "sideways"),
    ] {
        let err = parse_spawn(args(value.clone())).unwrap_err();
        assert!(err.contains(needle), "{value}: {err}");
    }
}

#[test]
fn job_tools_need_a_job_id() {
    assert_eq!(
        parse_job_id(args(json!({"jobId": "ab12cd34"}))).unwrap(),
        "ab12cd34"
    );
    assert!(parse_job_id(args(json!({}))).is_err());
    assert!(parse_job_id(None).is_err());
}

#[test]
fn the_three_tools_are_listed_with_object_schemas() {
    let tools = tool_list();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, vec![SPAWN_TOOL, STATUS_TOOL, CANCEL_TOOL]);
    for tool in &tools {
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
    }
    assert_eq!(
        tools[1].input_schema.get("required"),
        Some(&json!(["jobId"]))
    );
}

fn single(structured: Option<Value>) -> SingleResult {
    serde_json::from_value::<SingleResult>(json!({
        "agent": "general", "task": "t", "exitCode": 0,
        "usage": serde_json::to_value(Usage::default()).unwrap()
    }))
    .map(|mut r| {
        r.structured_output = structured;
        r
    })
    .unwrap()
}

fn result(mode: Mode, results: Vec<SingleResult>, error: Option<ErrorInfo>) -> SubagentResult {
    SubagentResult {
        content: vec![ContentItem::Text {
            text: "the answer".to_owned(),
        }],
        details: Details {
            mode,
            run_id: None,
            results,
            error,
        },
    }
}

use subagent_protocol::result::ErrorInfo;

#[test]
fn structured_output_is_returned_only_with_a_schema() {
    let r = result(
        Mode::Run(RunMode::Single),
        vec![single(Some(json!({"city": "Paris"})))],
        None,
    );
    let with = call_result(&r, true);
    assert_eq!(with.structured_content, Some(json!({"city": "Paris"})));
    assert_eq!(with.is_error, Some(false));
    let without = call_result(&r, false);
    assert_eq!(without.structured_content, None);
    assert_eq!(
        serde_json::to_value(&without.content).unwrap()[0]["text"],
        json!("the answer")
    );
}

#[test]
fn a_parallel_call_returns_every_structured_output() {
    let r = result(
        Mode::Run(RunMode::Parallel),
        vec![single(Some(json!({"n": 1}))), single(None)],
        None,
    );
    assert_eq!(
        call_result(&r, true).structured_content,
        Some(json!({"results": [{"n": 1}, null]}))
    );
}

#[test]
fn a_failure_is_an_error_result_with_its_code_first() {
    let r = result(
        Mode::Run(RunMode::Single),
        vec![single(None)],
        Some(ErrorInfo {
            code: ErrorCode::SubagentTimeout,
            message: "wall timeout".to_owned(),
        }),
    );
    let out = call_result(&r, true);
    assert_eq!(out.is_error, Some(true));
    assert_eq!(out.structured_content, None);
    let content = serde_json::to_value(&out.content).unwrap();
    assert_eq!(
        content,
        json!([{"type": "text", "text": "SUBAGENT_TIMEOUT: wall timeout\n\nthe answer"}])
    );
}

#[test]
fn a_failure_says_its_error_once_in_one_text_block() {
    let timeout = ErrorInfo {
        code: ErrorCode::SubagentTimeout,
        message: "wall timeout".to_owned(),
    };
    let with_text = |text: &str| {
        let mut r = result(
            Mode::Run(RunMode::Single),
            vec![single(None)],
            Some(timeout.clone()),
        );
        r.content = vec![ContentItem::Text {
            text: text.to_owned(),
        }];
        r
    };
    let cases = [
        // The result's text is the message again.
        ("wall timeout", "SUBAGENT_TIMEOUT: wall timeout"),
        // The diagnostic: its first line repeats the error, the rest is new.
        (
            "subagent failed (SUBAGENT_TIMEOUT): wall timeout\nlast event: turn_start",
            "SUBAGENT_TIMEOUT: wall timeout\n\nlast event: turn_start",
        ),
        (
            "subagent failed (SUBAGENT_TIMEOUT): wall timeout",
            "SUBAGENT_TIMEOUT: wall timeout",
        ),
        // A partial answer is kept.
        (
            "I was about to",
            "SUBAGENT_TIMEOUT: wall timeout\n\nI was about to",
        ),
    ];
    for (text, expected) in cases {
        let out = call_result(&with_text(text), false);
        let content = serde_json::to_value(&out.content).unwrap();
        assert_eq!(
            content,
            json!([{"type": "text", "text": expected}]),
            "{text}"
        );
    }
}

#[test]
fn a_background_start_gives_the_job_id_as_text_and_structured_content() {
    let out = job_started("ab12cd34", JobState::Running);
    assert_eq!(out.is_error, Some(false));
    assert_eq!(
        out.structured_content,
        Some(json!({"jobId": "ab12cd34", "state": "running"}))
    );
    let content = serde_json::to_value(&out.content).unwrap();
    assert!(content[0]["text"].as_str().unwrap().contains("ab12cd34"));
}

#[test]
fn a_background_start_over_the_concurrency_limit_says_it_is_queued() {
    let out = job_started("ab12cd34", JobState::Queued);
    assert_eq!(
        out.structured_content,
        Some(json!({"jobId": "ab12cd34", "state": "queued"}))
    );
    let content = serde_json::to_value(&out.content).unwrap();
    let text = content[0]["text"].as_str().unwrap();
    assert!(text.contains("queued") && text.contains("slot"), "{text}");
}

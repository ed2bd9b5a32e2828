//! Result objects of every shape validate against `result.schema.json`:
//! success in every mode, each error code as a refusal and as a failed
//! child, structured output and truncation; broken objects are rejected.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_protocol::result::{
    ContentItem, Details, DisplayItem, ErrorInfo, LimitName, LimitReached, Mode, SingleResult,
    SubagentResult, TodoItem, TodoStatus, Truncation,
};
use subagent_protocol::usage::Usage;
use subagent_protocol::{ErrorCode, RunMode};

use super::schemas::{assert_valid, errors, validator};

fn usage() -> Usage {
    Usage {
        input: 1_000,
        output: 200,
        cache_read: 50,
        cache_write: 0,
        cost: 0.0031,
        turns: 2,
    }
}

fn full_single_result() -> SingleResult {
    SingleResult {
        usage: usage(),
        session_file: Some("sessions/2026/11/22/a1b2c3d4-reviewer.jsonl".into()),
        output: Some("Two risky changes.".into()),
        display_items: Some(vec![
            DisplayItem::Text {
                text: "Looking.".into(),
            },
            DisplayItem::ToolCall {
                name: "bash_ripgrep".into(),
                args: json!({"pattern": "unsafe"}),
            },
        ]),
        model: Some("smollm2-135m-instruct".into()),
        duration_ms: Some(1_234),
        stop_reason: Some("completed".into()),
        todos: Some(vec![
            TodoItem {
                content: "Read the diff".into(),
                status: TodoStatus::Completed,
                active_form: Some("Reading the diff".into()),
            },
            TodoItem {
                content: "List the risks".into(),
                status: TodoStatus::InProgress,
                active_form: None,
            },
        ]),
        ..SingleResult::new("reviewer", "Review the diff.", 0)
    }
}

fn with_json_round_trip(result: &SubagentResult) -> Value {
    let value = serde_json::to_value(result).expect("serialize result");
    let back: SubagentResult = serde_json::from_value(value.clone()).expect("deserialize result");
    assert_eq!(&back, result);
    value
}

#[test]
fn successful_results_validate_in_every_mode() {
    let v = validator("result.schema.json");
    for mode in [RunMode::Single, RunMode::Parallel, RunMode::Chain].map(Mode::from) {
        let result = SubagentResult {
            content: vec![ContentItem::Text {
                text: "Two risky changes.".into(),
            }],
            details: Details {
                mode,
                run_id: Some("a1b2c3d4".into()),
                results: vec![full_single_result(), full_single_result()],
                error: None,
            },
        };
        let value = with_json_round_trip(&result);
        assert_eq!(value["content"][0]["type"], "text");
        assert_eq!(value["details"]["mode"], mode.as_str());
        assert_eq!(value["details"]["results"][0]["exitCode"], 0);
        assert_eq!(value["details"]["results"][0]["usage"]["cacheRead"], 50);
        assert_eq!(
            value["details"]["results"][0]["todos"],
            json!([
                {"content": "Read the diff", "status": "completed", "activeForm": "Reading the diff"},
                {"content": "List the risks", "status": "in_progress"}
            ])
        );
        assert!(value["details"].get("error").is_none(), "absent, not null");
        assert_valid(&v, &value, mode.as_str());
    }
}

#[test]
fn every_error_code_validates_as_a_refusal() {
    let v = validator("result.schema.json");
    for code in ErrorCode::ALL {
        let result = SubagentResult::refusal(code, format!("refused: {code}; fix the input"));
        let value = with_json_round_trip(&result);
        assert_eq!(value["details"]["mode"], "management");
        assert_eq!(value["details"]["error"]["code"], code.as_str());
        assert_eq!(value["details"]["results"], json!([]));
        assert_valid(&v, &value, code.as_str());
    }
}

#[test]
fn every_error_code_validates_as_a_failed_single_result() {
    let v = validator("result.schema.json");
    for code in ErrorCode::ALL {
        let message = format!("child failed with {code}; see the session file");
        let result = SubagentResult {
            content: vec![ContentItem::Text {
                text: message.clone(),
            }],
            details: Details {
                mode: Mode::Run(RunMode::Single),
                run_id: Some("deadbeef".into()),
                results: vec![SingleResult {
                    error: Some(message.clone()),
                    stop_reason: Some("error".into()),
                    limit: Some(LimitReached::count(LimitName::WallTimeoutMs, 900_000)),
                    ..SingleResult::new("reviewer", "task", 1)
                }],
                error: Some(ErrorInfo { code, message }),
            },
        };
        let value = with_json_round_trip(&result);
        assert_eq!(value["details"]["results"][0]["exitCode"], 1);
        assert_valid(&v, &value, code.as_str());
    }
}

#[test]
fn structured_output_and_truncation_validate() {
    let v = validator("result.schema.json");
    let result = SubagentResult {
        content: vec![ContentItem::Text {
            text: "head of the output\n[... 5000 bytes cut; full output in out.txt]".into(),
        }],
        details: Details {
            mode: Mode::Run(RunMode::Single),
            run_id: Some("cafe0001".into()),
            results: vec![SingleResult {
                structured_output: Some(json!({"verdict": "ok", "risks": [1, 2]})),
                stop_reason: Some("report_back".into()),
                truncated: Some(Truncation {
                    original_bytes: 9_000,
                    original_lines: 120,
                    bytes_cut: 5_000,
                    full_output_path: Some("out.txt".into()),
                }),
                ..full_single_result()
            }],
            error: Some(ErrorInfo {
                code: ErrorCode::SubagentOutputTruncated,
                message: "output truncated to 4000 bytes; full output in out.txt".into(),
            }),
        },
    };
    let value = with_json_round_trip(&result);
    let single = &value["details"]["results"][0];
    assert_eq!(single["structuredOutput"]["verdict"], "ok");
    assert_eq!(single["truncated"]["bytesCut"], 5_000);
    assert_eq!(single["truncated"]["fullOutputPath"], "out.txt");
    assert_valid(&v, &value, "structured + truncated");
}

#[test]
fn result_schema_rejects_broken_results() {
    let v = validator("result.schema.json");
    let good = with_json_round_trip(&SubagentResult::refusal(
        ErrorCode::UnknownAgent,
        "no such agent",
    ));
    let mut no_details = good.clone();
    no_details.as_object_mut().unwrap().remove("details");
    assert!(!errors(&v, &no_details).is_empty());

    let mut lowercase_code = good.clone();
    lowercase_code["details"]["error"]["code"] = json!("unknown_agent");
    assert!(!errors(&v, &lowercase_code).is_empty());

    let mut result = SubagentResult::refusal(ErrorCode::SubagentFailed, "x");
    result.details.results.push(SingleResult::new("a", "t", 1));
    let mut missing_usage = serde_json::to_value(&result).unwrap();
    missing_usage["details"]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("usage");
    let found = errors(&v, &missing_usage);
    assert!(found.iter().any(|e| e.contains("usage")), "{found:?}");
}

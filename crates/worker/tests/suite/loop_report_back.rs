//! Structured output: the `report_back` tool and the native schema mode.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::{ErrorCode, OutputMode, StopReason, TaskSpec};
use subagent_worker::provider::ChatMessage;

use super::loop_support::{calls, run, spec, text};

const PERSON: &str = r#"{
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"]
}"#;

fn with_schema(mode: OutputMode) -> TaskSpec {
    let mut spec = spec();
    spec.output_schema_json = Some(PERSON.to_owned());
    spec.output_mode = mode;
    spec
}

#[tokio::test]
async fn report_back_is_offered_with_the_schema_and_announced_in_the_system_prompt() {
    let ran = run(
        &with_schema(OutputMode::ReportBack),
        vec![calls(
            "",
            &[("report_back", r#"{"name": "Ada", "age": 36}"#)],
        )],
        None,
    )
    .await;
    let request = &ran.requests[0];
    let report_back = request
        .tools
        .iter()
        .find(|t| t.name == "report_back")
        .expect("report_back offered");
    assert_eq!(
        report_back.parameters,
        serde_json::from_str::<serde_json::Value>(PERSON).unwrap()
    );
    assert!(request.system_prompt.starts_with("You are a test.\n\n"));
    assert!(
        request
            .system_prompt
            .contains("call the `report_back` tool"),
        "{}",
        request.system_prompt
    );
    assert_eq!(request.native_schema, None);
}

#[tokio::test]
async fn invalid_report_back_twice_then_valid_ends_with_the_structured_output() {
    let ran = run(
        &with_schema(OutputMode::ReportBack),
        vec![
            calls("", &[("report_back", r#"{"name": 7}"#)]),
            calls("", &[("report_back", r#"{"name": "Ada", "age"#)]),
            calls(
                "here it is",
                &[
                    ("report_back", r#"{"name": "Ada", "age": 36}"#),
                    ("echo", r#"{"text": "after"}"#),
                ],
            ),
        ],
        None,
    )
    .await;
    assert_eq!(ran.requests.len(), 3);
    let first = ran.tool_results()[0].1.clone();
    let first_lines: Vec<&str> = first.lines().collect();
    assert_eq!(
        first_lines[0],
        "report_back rejected (attempt 1 of 3): the arguments do not match the output schema:"
    );
    let mut violations = first_lines[1..3].to_vec();
    violations.sort_unstable();
    assert_eq!(
        violations,
        vec![
            "- (root): \"age\" is a required property",
            "- /name: 7 is not of type \"string\""
        ]
    );
    assert_eq!(first_lines[3], "Fix these and call report_back again.");
    // The model is shown exactly what the event recorded.
    assert!(matches!(
        ran.last_message_of(1),
        ChatMessage::ToolResult { output, is_error: true, .. } if *output == first
    ));
    let second = ran.tool_results()[1].1.clone();
    assert!(
        second.starts_with(
            "report_back rejected (attempt 2 of 3): the arguments are not valid JSON: "
        ),
        "{second}"
    );
    assert_eq!(ran.outcome.stop_reason, StopReason::ReportBack);
    assert_eq!(ran.outcome.error, None);
    let structured: serde_json::Value =
        serde_json::from_str(ran.outcome.structured_output_json.as_deref().unwrap()).unwrap();
    assert_eq!(structured, json!({"name": "Ada", "age": 36}));
    let final_text: serde_json::Value = serde_json::from_str(&ran.outcome.final_text).unwrap();
    assert_eq!(final_text, structured);
    // The other call of the ending turn still ran and was recorded.
    assert_eq!(
        ran.tool_results()[2..].to_vec(),
        vec![
            (
                "report_back".to_owned(),
                "result accepted; the task is complete".to_owned(),
                false
            ),
            ("echo".to_owned(), "after".to_owned(), false),
        ]
    );
}

#[tokio::test]
async fn three_invalid_report_backs_fail_the_run() {
    let bad = || calls("trying", &[("report_back", r#"{"name": "Ada"}"#)]);
    let ran = run(
        &with_schema(OutputMode::ReportBack),
        vec![bad(), bad(), bad(), bad()],
        None,
    )
    .await;
    assert_eq!(ran.requests.len(), 3);
    let error = ran.outcome.error.clone().expect("an error");
    assert_eq!(error.code, ErrorCode::SubagentStructuredOutputInvalid);
    assert!(
        error.message.contains("3 report_back calls"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("\"age\" is a required property"),
        "{}",
        error.message
    );
    assert!(
        ran.tool_results()[2]
            .1
            .ends_with("No attempts are left; the run ends.")
    );
    assert_eq!(ran.outcome.structured_output_json, None);
    assert_eq!(ran.outcome.final_text, "trying");
}

#[tokio::test]
async fn stopping_without_report_back_gets_one_reminder_then_fails() {
    let ran = run(
        &with_schema(OutputMode::ReportBack),
        vec![
            text("Ada, 36"),
            text("I said: Ada, 36"),
            text("never asked"),
        ],
        None,
    )
    .await;
    assert_eq!(ran.requests.len(), 2);
    let reminders: Vec<&ChatMessage> = ran.requests[1]
        .messages
        .iter()
        .filter(|m| matches!(m, ChatMessage::User { text } if text.contains("without calling `report_back`")))
        .collect();
    assert_eq!(reminders.len(), 1);
    assert!(matches!(ran.last_message_of(1), ChatMessage::User { .. }));
    let error = ran.outcome.error.clone().expect("an error");
    assert_eq!(error.code, ErrorCode::SubagentStructuredOutputInvalid);
    assert!(
        error
            .message
            .starts_with("the model finished without calling report_back"),
        "{}",
        error.message
    );
    assert_eq!(ran.outcome.final_text, "I said: Ada, 36");
}

#[tokio::test]
async fn native_mode_sets_the_schema_and_validates_the_final_text() {
    let ran = run(
        &with_schema(OutputMode::Native),
        vec![text(r#"{"name": "Ada", "age": 36}"#)],
        None,
    )
    .await;
    let native = ran.requests[0]
        .native_schema
        .as_ref()
        .expect("native schema");
    assert_eq!(
        native.schema,
        serde_json::from_str::<serde_json::Value>(PERSON).unwrap()
    );
    assert!(
        ran.requests[0]
            .tools
            .iter()
            .all(|t| t.name != "report_back")
    );
    assert_eq!(ran.outcome.error, None);
    assert_eq!(ran.outcome.stop_reason, StopReason::Completed);
    let structured: serde_json::Value =
        serde_json::from_str(ran.outcome.structured_output_json.as_deref().unwrap()).unwrap();
    assert_eq!(structured, json!({"name": "Ada", "age": 36}));
}

#[tokio::test]
async fn native_mode_with_an_invalid_answer_lists_the_violations() {
    let ran = run(
        &with_schema(OutputMode::Native),
        vec![text(r#"{"name": 1}"#)],
        None,
    )
    .await;
    let error = ran.outcome.error.clone().expect("an error");
    assert_eq!(error.code, ErrorCode::SubagentStructuredOutputInvalid);
    assert!(
        error
            .message
            .contains("- /name: 1 is not of type \"string\""),
        "{}",
        error.message
    );
    assert!(
        error
            .message
            .contains("- (root): \"age\" is a required property"),
        "{}",
        error.message
    );
    let ran = run(
        &with_schema(OutputMode::Native),
        vec![text("Ada, 36")],
        None,
    )
    .await;
    let error = ran.outcome.error.clone().expect("an error");
    assert_eq!(error.code, ErrorCode::SubagentStructuredOutputInvalid);
    assert!(
        error
            .message
            .starts_with("the final answer is not valid JSON"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn an_invalid_schema_is_invalid_input_with_zero_provider_calls() {
    for (schema, expected) in [
        ("{not json", "the output schema is not valid JSON"),
        (
            r#"{"type": 5}"#,
            "the output schema is not a valid JSON Schema",
        ),
    ] {
        let mut spec = with_schema(OutputMode::ReportBack);
        spec.output_schema_json = Some(schema.to_owned());
        let ran = run(&spec, vec![text("never used")], None).await;
        let error = ran.outcome.error.clone().expect("an error");
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(error.message.starts_with(expected), "{}", error.message);
        assert!(ran.requests.is_empty());
        assert!(ran.events.is_empty());
    }
}

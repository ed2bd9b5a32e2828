use super::*;

#[test]
fn tool_calls_become_display_items_and_session_lines_with_secrets_masked() {
    let mut r = EventRecord::default();
    let s = Sanitizer::new(vec!["supersecretkey".to_owned()], None);
    let (line, progress) = r.observe(
        WorkerEvent::ToolCall {
            turn: 1,
            call_id: "c1".into(),
            name: "bash_read".into(),
            arguments_json: r#"{"path":"a","k":"supersecretkey"}"#.into(),
        },
        &s,
    );
    assert!(progress);
    let json = serde_json::to_string(&line.unwrap()).unwrap();
    assert!(json.contains("\"type\":\"tool_call\""), "{json}");
    assert!(!json.contains("supersecretkey"), "{json}");
    assert_eq!(
        r.display_items,
        vec![DisplayItem::ToolCall {
            name: "bash_read".into(),
            args: serde_json::json!({"path":"a","k":"***"})
        }]
    );
}

#[test]
fn invalid_tool_arguments_are_kept_raw() {
    let mut r = EventRecord::default();
    r.observe(
        WorkerEvent::ToolCall {
            turn: 1,
            call_id: "c".into(),
            name: "x".into(),
            arguments_json: "{not json".into(),
        },
        &Sanitizer::default(),
    );
    assert_eq!(
        r.display_items[0],
        DisplayItem::ToolCall {
            name: "x".into(),
            args: serde_json::json!({"_raw": "{not json"})
        }
    );
}

#[test]
fn deltas_are_progress_but_not_lines_and_logs_are_lines_but_not_progress() {
    let mut r = EventRecord::default();
    let s = Sanitizer::default();
    let (line, progress) = r.observe(WorkerEvent::TextDelta { text: "hel".into() }, &s);
    assert!(line.is_none() && progress);
    let (line, progress) = r.observe(
        WorkerEvent::Log {
            level: LogLevel::Error,
            message: "boom".into(),
        },
        &s,
    );
    assert!(line.is_some() && !progress);
    assert_eq!(r.partial_text, "hel");
    assert_eq!(r.last_error_log.as_deref(), Some("boom"));
}

#[test]
fn partial_text_is_bounded() {
    let mut r = EventRecord::default();
    let chunk = "x".repeat(64 * 1024);
    for _ in 0..64 {
        r.observe(
            WorkerEvent::TextDelta {
                text: chunk.clone(),
            },
            &Sanitizer::default(),
        );
    }
    assert_eq!(r.partial_text.len(), MAX_PARTIAL_TEXT);
}

/// The `responseId` the session line of an assistant message gets when the
/// worker sends `sent`.
fn recorded_response_id(sent: &str) -> serde_json::Value {
    let mut r = EventRecord::default();
    let s = Sanitizer::new(vec!["supersecretkey".to_owned()], None);
    let (line, _) = r.observe(
        WorkerEvent::AssistantMessageEnd {
            turn: 1,
            text: "done".into(),
            stop_reason: "stop".into(),
            response_id: Some(sent.to_owned()),
        },
        &s,
    );
    let json: serde_json::Value = serde_json::to_value(line.unwrap()).unwrap();
    json["responseId"].clone()
}

#[test]
fn a_response_id_from_the_worker_is_held_to_the_rule_and_masked() {
    assert_eq!(recorded_response_id("chatcmpl-1"), "chatcmpl-1");
    // The worker is not trusted with what reaches the file: an escape
    // sequence or an endless id is dropped, a secret in one is masked.
    assert!(recorded_response_id("id\u{1b}[2Jforged").is_null());
    assert!(recorded_response_id(&"a".repeat(257)).is_null());
    let masked = recorded_response_id("resp-supersecretkey");
    assert!(
        masked
            .as_str()
            .is_some_and(|id| !id.contains("supersecretkey")),
        "{masked}"
    );
}

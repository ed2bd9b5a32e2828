use pretty_assertions::assert_eq;

use super::*;
use crate::run::test_events::{started, turn};

fn text(run_id: &str, text: &str) -> ContentEvent {
    ContentEvent::TextDelta {
        run_id: run_id.into(),
        text: text.into(),
    }
}

#[test]
fn frames_match_the_seed_framing() {
    assert_eq!(
        frame(SseKind::OutputStructured, "", r#"{"capital":"Paris"}"#),
        "event: output_structured\n\
         data: {\"id\":\"\",\"delta\":\"{\\\"capital\\\":\\\"Paris\\\"}\",\"type\":\"output_structured\"}\n"
    );
    assert_eq!(
        frame(SseKind::ResponseEnd, "", ""),
        "event: response_end\ndata: {\"id\":\"\",\"delta\":\"\",\"type\":\"response_end\"}\n"
    );
}

#[test]
fn relay_keeps_the_roots_content_and_ends_turns() {
    let mut relay = SseRelay::default();
    assert!(relay.on_progress(&started("root")).is_empty());
    assert!(relay.on_progress(&turn("root", 1)).is_empty());
    assert_eq!(
        relay.on_content(&text("root", "Hel")),
        Some(frame(SseKind::OutputText, "", "Hel"))
    );
    let call = ContentEvent::ToolCall {
        run_id: "root".into(),
        call_id: "c1".into(),
        name: "bash_read".into(),
        arguments_json: r#"{"path":"a"}"#.into(),
    };
    assert_eq!(
        relay.on_content(&call),
        Some(frame(
            SseKind::ToolCall,
            "c1",
            r#"{"name":"bash_read","arguments":"{\"path\":\"a\"}"}"#
        ))
    );
    // A nested child's start and text are not the answer.
    assert!(relay.on_progress(&started("child")).is_empty());
    assert!(relay.on_progress(&turn("child", 1)).is_empty());
    assert_eq!(relay.on_content(&text("child", "inner")), None);
    assert_eq!(
        relay.on_progress(&turn("root", 2)),
        vec![frame(SseKind::BlockEnd, "", "")]
    );
    assert_eq!(
        relay.finish(Some("{}"), None),
        vec![
            frame(SseKind::BlockEnd, "", ""),
            frame(SseKind::OutputStructured, "", "{}"),
            frame(SseKind::ResponseEnd, "", ""),
        ]
    );
}

#[test]
fn a_failure_after_a_turn_ends_with_the_error_and_no_block_end_of_its_own() {
    let mut relay = SseRelay::default();
    relay.on_progress(&started("root"));
    relay.on_progress(&turn("root", 1));
    relay.on_content(&text("root", "partial"));
    assert_eq!(
        relay.finish(None, Some("TIMEOUT: wall")),
        vec![
            frame(SseKind::OutputText, "", "Error: TIMEOUT: wall"),
            frame(SseKind::ResponseEnd, "", ""),
        ]
    );
}

#[test]
fn a_run_refused_before_any_turn_ends_with_the_error_and_response_end() {
    let mut relay = SseRelay::default();
    assert_eq!(
        relay.finish(None, Some("no")),
        vec![
            frame(SseKind::OutputText, "", "Error: no"),
            frame(SseKind::ResponseEnd, "", ""),
        ]
    );
}

use pretty_assertions::assert_eq;
use subagent_protocol::result::{SingleResult, SubagentResult};
use subagent_protocol::{ErrorCode, ProviderKind, ProviderSpec, Usage};

use super::*;

fn request(caller_depth: u32, max_depth: u32) -> RunRequest {
    let provider = ProviderSpec::new(ProviderKind::OpenaiChat, "http://127.0.0.1:9/v1", "m");
    RunRequest {
        caller_depth,
        max_depth,
        ..RunRequest::new("general", "t", provider)
    }
}

#[test]
fn a_grandchild_may_run_only_below_the_depth_limit() {
    // A top-level child (depth 1) under --max-depth 2 may spawn at depth 2.
    assert_eq!(check_depth(&request(0, 2)), Ok(()));
    // At the default limit of 1 it may not: its child would be at depth 2.
    let refused = check_depth(&request(0, 1)).unwrap_err();
    assert!(
        refused.contains("depth 2") && refused.contains("limit is 1"),
        "{refused}"
    );
    assert!(check_depth(&request(1, 2)).is_err());
}

#[test]
fn the_tree_cap_counts_every_spawn_and_stops_at_the_cap() {
    let tree = SpawnTree::new(2);
    assert_eq!(tree.take_one(), Ok(()));
    assert_eq!(tree.take_one(), Ok(()));
    assert_eq!(tree.take_one(), Err(2));
    assert_eq!(tree.take_one(), Err(2), "a refusal does not use up the cap");
}

fn finished(text: &str, usage: Usage) -> SubagentResult {
    let mut single = SingleResult::new("general", "t", 0);
    single.usage = usage;
    SubagentResult {
        content: vec![ContentItem::Text { text: text.into() }],
        details: subagent_protocol::result::Details {
            mode: Mode::Single,
            run_id: Some("abcd1234".into()),
            results: vec![single],
            error: None,
        },
    }
}

#[test]
fn a_finished_grandchild_replies_with_its_text_and_usage() {
    let usage = Usage {
        turns: 2,
        cost: 0.5,
        ..Usage::default()
    };
    let reply = reply_of("c#0".into(), &finished("the answer", usage));
    assert_eq!(
        reply,
        SubagentReply {
            call_id: "c#0".into(),
            is_error: false,
            output: "the answer".into(),
            usage,
            error_code: None,
        }
    );
}

#[test]
fn structured_output_is_the_reply_when_there_is_some() {
    let mut result = finished("{\"n\":1}", Usage::default());
    result.details.results[0].structured_output = Some(serde_json::json!({"n": 1}));
    assert_eq!(reply_of("c".into(), &result).output, r#"{"n":1}"#);
}

#[test]
fn a_refused_grandchild_replies_with_its_code_and_message() {
    let result = SubagentResult::refusal(ErrorCode::UnknownAgent, "no agent named `nope`");
    let reply = reply_of("c".into(), &result);
    assert!(reply.is_error);
    assert_eq!(reply.error_code, Some(ErrorCode::UnknownAgent));
    assert_eq!(reply.output, "UNKNOWN_AGENT: no agent named `nope`");
}

#[test]
fn an_unaffordable_spawn_is_denied_with_the_figures() {
    let reply = unaffordable("c".into(), Unaffordable::Turns { asked: 5, left: 1 });
    assert_eq!(reply.error_code, Some(ErrorCode::SubagentSpawnDenied));
    assert!(
        reply.output.starts_with("SUBAGENT_SPAWN_DENIED"),
        "{}",
        reply.output
    );
    assert!(reply.output.contains("5 model turns") && reply.output.contains("1 left"));
}

use pretty_assertions::assert_eq;
use subagent_protocol::RunMode;
use subagent_protocol::result::{Mode, SingleResult, SubagentResult};
use subagent_protocol::{ErrorCode, Usage};

use super::*;

fn finished(text: &str, usage: Usage) -> SubagentResult {
    let mut single = SingleResult::new("general", "t", 0);
    single.usage = usage;
    SubagentResult {
        content: vec![ContentItem::Text { text: text.into() }],
        details: subagent_protocol::result::Details {
            mode: Mode::Run(RunMode::Single),
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

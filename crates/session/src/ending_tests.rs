use pretty_assertions::assert_eq;
use subagent_protocol::ErrorCode;
use subagent_protocol::result::{LimitName, LimitReached, SingleResult, SubagentResult};
use subagent_protocol::session::EndingError;

use super::*;

#[test]
fn each_dialects_output_cap_stop_reads_as_cut() {
    for cut in ["length", "max_tokens", "max_output_tokens"] {
        assert!(is_cut_by_max_tokens(cut), "{cut}");
    }
    for whole in [
        "stop",
        "tool_calls",
        "end_turn",
        "completed",
        "",
        "content_filter",
    ] {
        assert!(!is_cut_by_max_tokens(whole), "{whole}");
    }
}

fn failed(code: ErrorCode, limit: Option<LimitReached>) -> SubagentResult {
    let mut result = SubagentResult::refusal(code, "the turn budget of 3 ran out");
    let mut single = SingleResult::new("general", "t", 1);
    single.limit = limit;
    single.stop_reason = Some("max_turns".into());
    result.details.results.push(single);
    result
}

#[test]
fn a_failed_results_code_message_and_limit_become_the_endings_reason() {
    let limit = LimitReached::count(LimitName::MaxTurns, 3);
    let result = failed(ErrorCode::SubagentBudgetExceeded, Some(limit.clone()));
    assert_eq!(
        ending_error(&result),
        Some(EndingError {
            code: "SUBAGENT_BUDGET_EXCEEDED".into(),
            message: "the turn budget of 3 ran out".into(),
            limit: Some(limit),
        })
    );
    assert_eq!(ending_stop_reason(&result).as_deref(), Some("max_turns"));
}

#[test]
fn a_result_without_an_error_gives_no_reason() {
    let mut result = failed(ErrorCode::SubagentFailed, None);
    result.details.error = None;
    assert_eq!(ending_error(&result), None);
}

#[test]
fn limits_read_in_their_units() {
    let cases = [
        (
            LimitReached::count(LimitName::WallTimeoutMs, 4_000),
            "wallTimeoutMs = 4.0s",
        ),
        (
            LimitReached::count(LimitName::MemoryBytes, 512 * 1024 * 1024),
            "memoryBytes = 512.0 MiB",
        ),
        (LimitReached::count(LimitName::MaxTurns, 3), "maxTurns = 3"),
        (
            LimitReached::dollars(LimitName::MaxCost, 0.5).unwrap(),
            "maxCost = $0.50",
        ),
    ];
    for (limit, want) in cases {
        assert_eq!(limit_text(&limit), want);
    }
}

#[test]
fn the_ls_note_is_the_code_or_the_cut() {
    let error = EndingError {
        code: "SUBAGENT_TIMEOUT".into(),
        message: "m".into(),
        limit: None,
    };
    assert_eq!(
        status_note(Some(&error), Some("timeout")),
        "SUBAGENT_TIMEOUT"
    );
    assert_eq!(status_note(None, Some("max_tokens")), "max_tokens");
    assert_eq!(status_note(None, Some("completed")), "");
    assert_eq!(status_note(None, None), "");
}

#[test]
fn reason_rows_give_error_then_limit_or_the_cut_note() {
    let error = EndingError {
        code: "SUBAGENT_BUDGET_EXCEEDED".into(),
        message: "the turn budget of 3 ran out".into(),
        limit: Some(LimitReached::count(LimitName::MaxTurns, 3)),
    };
    assert_eq!(
        reason_rows(Some(&error), Some("max_turns")),
        vec![
            (
                "error",
                "SUBAGENT_BUDGET_EXCEEDED: the turn budget of 3 ran out".to_owned()
            ),
            ("limit", "maxTurns = 3".to_owned()),
        ]
    );
    assert_eq!(
        reason_rows(None, Some("max_tokens")),
        vec![("note", CUT_NOTE.to_owned())]
    );
    assert!(reason_rows(None, Some("completed")).is_empty());
}

use subagent_protocol::ErrorCode;
use subagent_protocol::result::{SingleResult, SubagentResult};

use super::*;

fn ok(text: &str) -> SubagentResult {
    let mut single = SingleResult::new("general", "t", 0);
    single.output = Some(text.to_owned());
    SubagentResult {
        content: vec![ContentItem::Text {
            text: text.to_owned(),
        }],
        details: Details {
            mode: Mode::Run(RunMode::Single),
            run_id: Some("abcd1234".into()),
            results: vec![single],
            error: None,
        },
    }
}

fn failed(code: ErrorCode, message: &str) -> SubagentResult {
    let mut r = ok("partial");
    r.details.error = Some(ErrorInfo {
        code,
        message: message.to_owned(),
    });
    r
}

#[test]
fn previous_placeholder_is_replaced_everywhere_and_other_braces_are_kept() {
    assert_eq!(
        substitute_previous("summarise {previous}; then {previous} {other}", "X"),
        "summarise X; then X {other}"
    );
    assert_eq!(substitute_previous("no placeholder", "X"), "no placeholder");
}

#[test]
fn concurrency_outside_one_to_the_global_limit_is_refused_naming_the_maximum() {
    assert!(check_concurrency(1, 16).is_ok());
    assert!(check_concurrency(16, 16).is_ok());
    let message = check_concurrency(999, 16).unwrap_err();
    assert!(message.contains("1 to 16"), "{message}");
    assert!(check_concurrency(0, 16).is_err());
}

#[test]
fn batch_summary_lists_index_status_and_answer_head_then_totals() {
    let tasks = vec!["first".to_owned(), "second".to_owned()];
    let long = format!(
        "line one\nline two\nline three\nline four {}",
        "x".repeat(500)
    );
    let children = vec![
        ok(&long),
        failed(ErrorCode::SubagentTimeout, "wall timeout"),
    ];
    let text = batch_summary(&tasks, &children);
    assert!(text.starts_with("[1] completed: first\nline one\nline two\nline three ..."));
    assert!(!text.contains("line four"));
    assert!(text.contains("[2] failed (SUBAGENT_TIMEOUT): second\nwall timeout"));
    assert!(text.ends_with("2 tasks: 1 completed, 1 failed"), "{text}");
}

#[test]
fn the_first_failure_in_task_order_decides_the_error_code() {
    let children = vec![
        ok("a"),
        failed(ErrorCode::SubagentBudgetExceeded, "budget"),
        failed(ErrorCode::SubagentTimeout, "timeout"),
    ];
    let error = first_failure(&children).unwrap();
    assert_eq!(error.code, ErrorCode::SubagentBudgetExceeded);
    assert!(
        error
            .message
            .starts_with("2 of 3 tasks failed; the first (#2)")
    );
    assert!(first_failure(&[ok("a"), ok("b")]).is_none());
}

#[test]
fn combined_batch_keeps_results_in_task_order_under_one_run_id() {
    let tasks = vec!["a".to_owned(), "b".to_owned()];
    let combined = combine_batch(&tasks, vec![ok("A"), ok("B")]);
    assert_eq!(combined.details.mode, Mode::Run(RunMode::Parallel));
    assert_eq!(combined.details.results.len(), 2);
    assert_eq!(combined.details.results[1].output.as_deref(), Some("B"));
    assert_eq!(combined.details.run_id.as_deref().map(str::len), Some(32));
    assert!(combined.details.error.is_none());
}

#[test]
fn a_finished_chain_returns_the_last_output() {
    let combined = combine_chain(2, vec![ok("one"), ok("two")]);
    assert_eq!(chain_text(2, &[ok("one"), ok("two")]), "two");
    assert_eq!(combined.details.mode, Mode::Run(RunMode::Chain));
    assert_eq!(combined.details.results.len(), 2);
    assert!(combined.details.error.is_none());
}

#[test]
fn a_failed_step_is_the_chain_error_and_the_skipped_steps_are_named() {
    let ran = vec![failed(ErrorCode::SubagentFailed, "provider down")];
    let text = chain_text(3, &ran);
    assert!(
        text.ends_with(
            "chain stopped at step 1 of 3 (SUBAGENT_FAILED): 2 later steps were not run"
        ),
        "{text}"
    );
    let combined = combine_chain(3, ran);
    let error = combined.details.error.unwrap();
    assert_eq!(error.code, ErrorCode::SubagentFailed);
    assert_eq!(error.message, "step 1 of 3 failed: provider down");
    assert_eq!(combined.details.results.len(), 1);
}

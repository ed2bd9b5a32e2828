//! Turn and cost budgets end the run cleanly with the partial output.

use pretty_assertions::assert_eq;
use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{Budget, ErrorCode, StopReason, Usage};

use super::loop_support::{Turn, calls, run, spec};

fn working(n: u32, input_tokens: u64) -> Turn {
    match calls(
        &format!("working on it {n}"),
        &[("echo", r#"{"text": "x"}"#)],
    ) {
        Turn::Reply { text, calls, .. } => Turn::Reply {
            text,
            calls,
            usage: Usage {
                input: input_tokens,
                ..Usage::default()
            },
        },
        other => other,
    }
}

#[tokio::test]
async fn max_turns_stops_the_run_and_keeps_the_last_text() {
    let mut spec = spec();
    spec.budget = Budget {
        max_turns: 2,
        max_cost: None,
    };
    let ran = run(&spec, (1..=5).map(|n| working(n, 0)).collect(), None).await;
    assert_eq!(ran.requests.len(), 2);
    assert_eq!(ran.outcome.stop_reason, StopReason::MaxTurns);
    assert_eq!(ran.outcome.final_text, "working on it 2");
    assert_eq!(ran.outcome.usage.turns, 2);
    let error = ran.outcome.error.clone().expect("a budget error");
    assert_eq!(error.code, ErrorCode::SubagentBudgetExceeded);
    assert!(error.message.contains("max_turns = 2"), "{}", error.message);
    assert!(
        error.message.contains("Raise max_turns"),
        "{}",
        error.message
    );
    // The last turn's tool call still ran and was recorded.
    assert_eq!(ran.tool_results().len(), 2);
}

#[tokio::test]
async fn max_cost_stops_the_run_once_spending_reaches_it() {
    let mut spec = spec();
    spec.budget = Budget {
        max_turns: 50,
        max_cost: Some(0.25),
    };
    // $1 per million input tokens, 100k tokens a turn: $0.10 a turn, so
    // the third turn crosses $0.25 and no fourth turn starts.
    let price = ModelPrice {
        input: 1.0,
        ..ModelPrice::default()
    };
    let ran = run(
        &spec,
        (1..=5).map(|n| working(n, 100_000)).collect(),
        Some(price),
    )
    .await;
    assert_eq!(ran.requests.len(), 3);
    assert_eq!(ran.outcome.stop_reason, StopReason::MaxCost);
    assert_eq!(ran.outcome.final_text, "working on it 3");
    assert!(
        (ran.outcome.usage.cost - 0.3).abs() < 1e-9,
        "{}",
        ran.outcome.usage.cost
    );
    let error = ran.outcome.error.clone().expect("a budget error");
    assert_eq!(error.code, ErrorCode::SubagentBudgetExceeded);
    assert!(
        error
            .message
            .contains("$0.3000 spent of the $0.2500 allowed"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("Raise max_cost"),
        "{}",
        error.message
    );
}

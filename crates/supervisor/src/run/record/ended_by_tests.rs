use pretty_assertions::assert_eq;
use subagent_protocol::RunMode;
use subagent_protocol::message::OutcomeError;
use subagent_protocol::result::{LimitName, LimitReached};
use subagent_protocol::{Budget, ErrorCode, Limits, Outcome, StopReason, Usage};

use crate::run::record::assemble::{Assembly, ChildRun, assemble};
use crate::run::record::stop::StopCause;
use subagent_protocol::result::LimitReached as Reached;

/// The question `assemble` asks, from the same pieces.
fn limit_reached(a: &Assembly, run: &ChildRun) -> Option<Reached> {
    super::limit_reached(super::EndedBy {
        limits: &a.limits,
        budget: &a.budget,
        cause: run.cause.as_ref(),
        termination: run.exit.as_ref().map(|exit| &exit.termination),
        stop_reason: run.outcome.as_ref().map(|o| o.stop_reason),
    })
}
use crate::sanitize::Sanitizer;

fn assembly() -> Assembly {
    Assembly {
        run_id: "abcd1234".into(),
        agent: "general".into(),
        task: "t".into(),
        model: "m".into(),
        mode: RunMode::Single,
        limits: Limits::default(),
        budget: Budget {
            max_turns: 3,
            max_cost: Some(0.5),
        },
        session_file: None,
        full_output_file: std::env::temp_dir().join("ended-by-never-written.txt"),
        duration: std::time::Duration::from_millis(5),
        sanitizer: Sanitizer::new(Vec::new(), None),
    }
}

fn outcome(stop_reason: StopReason, error: Option<ErrorCode>) -> Outcome {
    Outcome {
        final_text: "partial answer".into(),
        structured_output_json: None,
        usage: Usage::default(),
        stop_reason,
        error: error.map(|code| OutcomeError {
            code,
            message: "budget exhausted".into(),
        }),
        model: "m".into(),
    }
}

#[test]
fn the_supervisors_timeouts_name_their_limit_and_value() {
    let a = assembly();
    let run = ChildRun {
        cause: Some(StopCause::WallTimeout),
        ..ChildRun::default()
    };
    assert_eq!(
        limit_reached(&a, &run),
        Some(LimitReached::count(
            LimitName::WallTimeoutMs,
            a.limits.wall_timeout_ms
        ))
    );
    let idle = ChildRun {
        cause: Some(StopCause::IdleTimeout),
        ..ChildRun::default()
    };
    assert_eq!(
        limit_reached(&a, &idle).map(|l| l.name),
        Some(LimitName::IdleTimeoutMs)
    );
    let cancelled = ChildRun {
        cause: Some(StopCause::Cancelled),
        ..ChildRun::default()
    };
    assert_eq!(limit_reached(&a, &cancelled), None, "a cancel is no limit");
}

#[test]
fn a_spent_budget_names_max_turns_or_max_cost() {
    let a = assembly();
    let turns = ChildRun {
        outcome: Some(outcome(
            StopReason::MaxTurns,
            Some(ErrorCode::SubagentBudgetExceeded),
        )),
        ..ChildRun::default()
    };
    assert_eq!(
        limit_reached(&a, &turns),
        Some(LimitReached::count(LimitName::MaxTurns, 3))
    );
    let cost = ChildRun {
        outcome: Some(outcome(
            StopReason::MaxCost,
            Some(ErrorCode::SubagentBudgetExceeded),
        )),
        ..ChildRun::default()
    };
    assert_eq!(
        serde_json::to_value(limit_reached(&a, &cost)).unwrap(),
        serde_json::json!({"name": "maxCost", "value": 0.5})
    );
}

#[test]
fn a_completed_answer_whose_last_turn_the_output_cap_cut_stops_with_max_tokens() {
    for (provider_reason, want) in [
        ("length", "max_tokens"),
        ("max_tokens", "max_tokens"),
        ("max_output_tokens", "max_tokens"),
        ("stop", "completed"),
        ("end_turn", "completed"),
    ] {
        let mut run = ChildRun {
            outcome: Some(outcome(StopReason::Completed, None)),
            ..ChildRun::default()
        };
        run.record.last_stop_reason = Some(provider_reason.into());
        let result = assemble(&assembly(), run);
        let single = &result.details.results[0];
        assert_eq!(
            single.stop_reason.as_deref(),
            Some(want),
            "{provider_reason}"
        );
        // Still a success: the cut is said, the exit code is unchanged.
        assert_eq!(result.details.error, None, "{provider_reason}");
        assert_eq!(single.exit_code, 0);
        assert_eq!(single.limit, None);
    }
}

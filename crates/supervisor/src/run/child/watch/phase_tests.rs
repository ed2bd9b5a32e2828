//! The watch's phases: what `Hello`, `Done`, a cancel, a timeout and a
//! protocol break do to a run, and what the escalation kills it for.

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_protocol::{ErrorCode, StopReason, Usage};

use super::*;
use crate::run::record::stop::ProtocolBreak;

const WINDOW: Duration = Duration::from_secs(5);

fn done(text: &str) -> Outcome {
    Outcome {
        final_text: text.into(),
        structured_output_json: None,
        usage: Usage::default(),
        stop_reason: StopReason::Completed,
        error: None,
        model: "m".into(),
    }
}

fn running() -> Phase {
    let mut phase = Phase::AwaitingHello;
    phase.greet();
    phase
}

fn violation() -> StopCause {
    StopCause::Protocol(ProtocolBreak::Violation, "bad".into())
}

#[test]
fn a_new_worker_awaits_hello_and_hears_a_cancel() {
    let phase = Phase::AwaitingHello;
    assert!(!phase.greeted());
    assert!(phase.working());
    assert!(phase.hears_cancel());
    assert_eq!(phase.escalate_at(), None);
    assert_eq!(phase.into_ending(), (None, None));
}

#[test]
fn hello_starts_the_run() {
    let phase = running();
    assert_eq!(phase, Phase::Running);
    assert!(phase.greeted() && phase.working());
}

#[test]
fn done_fixes_the_outcome_and_gives_the_worker_a_window_to_exit() {
    let now = Instant::now();
    let mut phase = running();
    phase.report(done("a"), now, WINDOW).unwrap();
    assert!(!phase.working());
    assert_eq!(phase.escalate_at(), Some(now + WINDOW));
    assert_eq!(phase.report(done("b"), now, WINDOW), Err(DoneTwice));
    assert_eq!(phase.outcome().map(|o| o.final_text.as_str()), Some("a"));
    assert_eq!(phase.escalate(), KillReason::LingeredAfterDone);
    assert_eq!(phase.escalate_at(), None);
    assert_eq!(phase.into_ending(), (Some(done("a")), None));
}

#[test]
fn a_cancel_after_done_is_heard_once_and_changes_nothing_else() {
    let now = Instant::now();
    let mut phase = running();
    phase.report(done("a"), now, WINDOW).unwrap();
    assert!(phase.hears_cancel());
    phase.hear_cancel_after_done();
    assert!(!phase.hears_cancel());
    assert_eq!(phase.escalate_at(), Some(now + WINDOW));
    assert_eq!(phase.cause(), None);
}

#[test]
fn a_timeout_cancels_first_and_escalates_for_its_own_reason() {
    for (cause, reason) in [
        (StopCause::WallTimeout, KillReason::Timeout),
        (StopCause::IdleTimeout, KillReason::IdleTimeout),
        (StopCause::Cancelled, KillReason::Cancelled),
    ] {
        let now = Instant::now();
        let mut phase = running();
        phase.stop(cause.clone(), now, WINDOW);
        assert!(!phase.working() && !phase.hears_cancel());
        assert_eq!(phase.escalate_at(), Some(now + WINDOW));
        assert_eq!(phase.escalate(), reason);
        assert_eq!(phase.into_ending(), (None, Some(cause)));
    }
}

#[test]
fn done_within_the_cancel_window_keeps_the_partial_output_and_the_deadline() {
    let now = Instant::now();
    let later = now + Duration::from_secs(1);
    let mut phase = running();
    phase.stop(StopCause::WallTimeout, now, WINDOW);
    phase.report(done("partial"), later, WINDOW).unwrap();
    assert_eq!(phase.escalate_at(), Some(now + WINDOW));
    assert_eq!(
        phase.into_ending(),
        (Some(done("partial")), Some(StopCause::WallTimeout))
    );
}

#[test]
fn done_after_the_escalation_fired_gets_a_window_of_its_own() {
    let now = Instant::now();
    let mut phase = running();
    phase.stop(StopCause::Cancelled, now, WINDOW);
    phase.escalate();
    phase.report(done("late"), now, WINDOW).unwrap();
    assert_eq!(phase.escalate_at(), Some(now + WINDOW));
}

#[test]
fn a_cancel_before_hello_still_lets_hello_in() {
    let now = Instant::now();
    let mut phase = Phase::AwaitingHello;
    phase.stop(StopCause::Cancelled, now, WINDOW);
    assert!(!phase.greeted());
    phase.greet();
    assert!(phase.greeted());
    assert_eq!(phase.cause(), Some(&StopCause::Cancelled));
}

#[test]
fn no_hello_is_a_protocol_break_with_no_window() {
    let now = Instant::now();
    let mut phase = Phase::AwaitingHello;
    let cause = StopCause::Protocol(ProtocolBreak::NoHello, "no hello".into());
    phase.stop(cause.clone(), now, WINDOW);
    assert_eq!(phase.escalate_at(), None);
    assert!(!phase.greeted());
    assert_eq!(phase.into_ending(), (None, Some(cause)));
}

#[test]
fn a_break_after_done_keeps_the_outcome_and_the_done_window() {
    let now = Instant::now();
    let mut phase = running();
    phase.report(done("a"), now, WINDOW).unwrap();
    phase.stop(violation(), now + WINDOW, WINDOW);
    assert_eq!(phase.escalate_at(), Some(now + WINDOW));
    assert_eq!(phase.report(done("b"), now, WINDOW), Err(DoneTwice));
    assert_eq!(phase.escalate(), KillReason::LingeredAfterDone);
    assert_eq!(phase.into_ending(), (Some(done("a")), Some(violation())));
}

#[test]
fn an_error_in_done_is_the_workers_to_report() {
    let mut outcome = done("");
    outcome.error = Some(subagent_protocol::message::OutcomeError {
        code: ErrorCode::SubagentFailed,
        message: "provider down".into(),
    });
    let mut phase = running();
    phase
        .report(outcome.clone(), Instant::now(), WINDOW)
        .unwrap();
    assert_eq!(phase.into_ending(), (Some(outcome), None));
}

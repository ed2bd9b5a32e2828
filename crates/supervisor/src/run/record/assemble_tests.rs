//! The ending table, pinned: every way a child can end -> the result's
//! error code, its exit code, its `stopReason`, and the lifecycle status
//! its session file ends with.

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_protocol::message::OutcomeError;
use subagent_protocol::session::{LifecycleEvent, LifecycleStatus, Stream};
use subagent_protocol::{ErrorCode, Limits, Outcome, StopReason, Usage};
use subagent_sandbox::{ChildExit, RawExit, Termination};

use super::*;
use crate::run::record::stop::ProtocolBreak;
use crate::run::record::stop::ending_of;

const SIGTERM: i32 = 15;
const SIGKILL: i32 = 9;
const SIGSEGV: i32 = 11;

fn assembly(dir: &Path) -> Assembly {
    Assembly {
        run_id: "abcd1234".into(),
        agent: "general".into(),
        task: "do it".into(),
        model: "asked-model".into(),
        mode: RunMode::Single,
        limits: Limits::default(),
        budget: subagent_protocol::Budget::default(),
        session_file: Some("session.jsonl".into()),
        full_output_file: dir.join("full.txt"),
        duration: Duration::from_millis(5),
        sanitizer: Sanitizer::new(Vec::new(), None),
    }
}

fn done(stop_reason: StopReason, error: Option<(ErrorCode, &str)>) -> Outcome {
    Outcome {
        final_text: "the answer".into(),
        structured_output_json: None,
        usage: Usage::default(),
        stop_reason,
        error: error.map(|(code, message)| OutcomeError {
            code,
            message: message.into(),
        }),
        model: "served-model".into(),
    }
}

fn ended(termination: Termination, raw: RawExit) -> ChildRun {
    ChildRun {
        exit: Some(ChildExit::of(termination, raw)),
        ..ChildRun::default()
    }
}

fn stopped(cause: StopCause, termination: Termination, raw: RawExit) -> ChildRun {
    ChildRun {
        cause: Some(cause),
        ..ended(termination, raw)
    }
}

/// One row of the table: what the result says about an ending.
#[derive(Debug, PartialEq)]
struct Row {
    code: Option<ErrorCode>,
    exit_code: i32,
    stop_reason: String,
    lifecycle: (LifecycleEvent, LifecycleStatus),
}

fn row(run: ChildRun) -> (Row, SubagentResult) {
    let dir = tempfile::tempdir().unwrap();
    let result = assemble(&assembly(dir.path()), run);
    let single = &result.details.results[0];
    let row = Row {
        code: result.details.error.as_ref().map(|e| e.code),
        exit_code: single.exit_code,
        stop_reason: single.stop_reason.clone().unwrap(),
        lifecycle: ending_of(&result),
    };
    (row, result)
}

fn expect(code: Option<ErrorCode>, exit_code: i32, stop_reason: &str) -> Row {
    let lifecycle = match code {
        None => (LifecycleEvent::Complete, LifecycleStatus::Completed),
        Some(ErrorCode::SubagentCancelled) => (LifecycleEvent::Aborted, LifecycleStatus::Aborted),
        Some(_) => (LifecycleEvent::Error, LifecycleStatus::Failed),
    };
    Row {
        code,
        exit_code,
        stop_reason: stop_reason.into(),
        lifecycle,
    }
}

fn message_of(result: &SubagentResult) -> String {
    result.details.error.as_ref().unwrap().message.clone()
}

#[test]
fn a_clean_done_is_a_success_with_the_workers_stop_reason() {
    let run = ChildRun {
        outcome: Some(done(StopReason::Completed, None)),
        ..ended(Termination::Exited { code: 0 }, RawExit::Exited(0))
    };
    let (row, result) = row(run);
    assert_eq!(row, expect(None, 0, "completed"));
    assert_eq!(
        result.details.results[0].output.as_deref(),
        Some("the answer")
    );
    assert_eq!(
        result.details.results[0].model.as_deref(),
        Some("served-model")
    );
}

#[test]
fn a_done_with_an_error_keeps_the_workers_code() {
    let run = ChildRun {
        outcome: Some(done(
            StopReason::MaxTurns,
            Some((ErrorCode::SubagentBudgetExceeded, "out of turns")),
        )),
        ..ended(Termination::Exited { code: 0 }, RawExit::Exited(0))
    };
    let (row, result) = row(run);
    assert_eq!(
        row,
        expect(Some(ErrorCode::SubagentBudgetExceeded), 1, "max_turns")
    );
    assert_eq!(message_of(&result), "out of turns");
}

#[test]
fn the_supervisors_causes_come_first_even_after_done() {
    let cases = [
        (
            StopCause::WallTimeout,
            Termination::Timeout,
            expect(Some(ErrorCode::SubagentTimeout), 128 + SIGTERM, "timeout"),
            "wall timeout",
        ),
        (
            StopCause::IdleTimeout,
            Termination::IdleTimeout,
            expect(
                Some(ErrorCode::SubagentTimeout),
                128 + SIGTERM,
                "idle_timeout",
            ),
            "idle timeout",
        ),
        (
            StopCause::Cancelled,
            Termination::Cancelled,
            expect(
                Some(ErrorCode::SubagentCancelled),
                128 + SIGTERM,
                "cancelled",
            ),
            "cancelled by the caller",
        ),
        (
            StopCause::Protocol(
                ProtocolBreak::Violation,
                "the worker sent Hello twice".into(),
            ),
            Termination::Killed {
                reason: "protocol violation".into(),
            },
            expect(
                Some(ErrorCode::SubagentFailed),
                128 + SIGTERM,
                "protocol_error",
            ),
            "the worker sent Hello twice",
        ),
        (
            StopCause::ProtocolFlood,
            Termination::Killed {
                reason: "protocol output limit".into(),
            },
            expect(
                Some(ErrorCode::SubagentOutputTruncated),
                128 + SIGTERM,
                "output_limit",
            ),
            "over the protocol socket",
        ),
    ];
    for (cause, termination, want, says) in cases {
        for outcome in [None, Some(done(StopReason::Completed, None))] {
            let run = ChildRun {
                outcome,
                ..stopped(
                    cause.clone(),
                    termination.clone(),
                    RawExit::Signaled(SIGTERM),
                )
            };
            let (row, result) = row(run);
            assert_eq!(row, want, "{cause:?}");
            assert!(message_of(&result).contains(says), "{cause:?}");
        }
    }
}

#[test]
fn a_worker_that_exits_by_itself_after_its_cancel_window_ends_with_its_own_status() {
    // A cancel the worker honoured by exiting 0 before the escalation.
    let run = stopped(
        StopCause::Cancelled,
        Termination::Exited { code: 0 },
        RawExit::Exited(0),
    );
    assert_eq!(
        row(run).0,
        expect(Some(ErrorCode::SubagentCancelled), 1, "cancelled")
    );
}

#[test]
fn what_the_sandbox_saw_comes_next_without_a_cause() {
    let cases = [
        (
            Termination::OutputLimit {
                stream: Stream::Stdout,
            },
            expect(
                Some(ErrorCode::SubagentOutputTruncated),
                128 + SIGKILL,
                "output_limit",
            ),
            "to stdout",
        ),
        (
            Termination::OutputLimit {
                stream: Stream::Stderr,
            },
            expect(
                Some(ErrorCode::SubagentOutputTruncated),
                128 + SIGKILL,
                "output_limit",
            ),
            "to stderr",
        ),
        (
            Termination::MemoryLimit,
            expect(
                Some(ErrorCode::SubagentFailed),
                128 + SIGKILL,
                "memory_limit",
            ),
            "memory limit",
        ),
        (
            Termination::PidsLimit,
            expect(Some(ErrorCode::SubagentFailed), 128 + SIGKILL, "pids_limit"),
            "process limit",
        ),
        (
            Termination::Timeout,
            expect(Some(ErrorCode::SubagentTimeout), 128 + SIGKILL, "timeout"),
            "timed out",
        ),
        (
            Termination::IdleTimeout,
            expect(
                Some(ErrorCode::SubagentTimeout),
                128 + SIGKILL,
                "idle_timeout",
            ),
            "timed out",
        ),
        (
            Termination::Cancelled,
            expect(
                Some(ErrorCode::SubagentCancelled),
                128 + SIGKILL,
                "cancelled",
            ),
            "cancelled",
        ),
    ];
    for (termination, want, says) in cases {
        let (row, result) = row(ended(termination.clone(), RawExit::Signaled(SIGKILL)));
        assert_eq!(row, want, "{termination:?}");
        assert!(message_of(&result).contains(says), "{termination:?}");
    }
}

#[test]
fn no_done_and_a_plain_exit_is_a_failure_naming_the_status() {
    let (got, result) = row(ended(Termination::Exited { code: 3 }, RawExit::Exited(3)));
    assert_eq!(got, expect(Some(ErrorCode::SubagentFailed), 3, "exited"));
    assert!(message_of(&result).contains("exited with status 3"));

    let (got, result) = row(ended(Termination::Exited { code: 0 }, RawExit::Exited(0)));
    assert_eq!(got, expect(Some(ErrorCode::SubagentFailed), 1, "exited"));
    assert!(message_of(&result).contains("before reporting a result"));
}

#[test]
fn no_done_and_a_signal_is_a_failure_naming_the_signal() {
    let (got, result) = row(ended(
        Termination::Signaled { signal: SIGSEGV },
        RawExit::Signaled(SIGSEGV),
    ));
    assert_eq!(
        got,
        expect(Some(ErrorCode::SubagentFailed), 128 + SIGSEGV, "signaled")
    );
    assert!(message_of(&result).contains("SIGSEGV"));
}

#[test]
fn leaked_descendants_after_a_done_do_not_fail_the_run() {
    let run = ChildRun {
        outcome: Some(done(StopReason::ReportBack, None)),
        ..ended(Termination::Leaked { pids: vec![42] }, RawExit::Exited(0))
    };
    assert_eq!(row(run).0, expect(None, 0, "report_back"));
}

#[test]
fn a_run_with_no_worker_is_not_started() {
    let (got, result) = row(ChildRun::setup_failed("no socket".into()));
    assert_eq!(
        got,
        expect(Some(ErrorCode::SubagentFailed), 1, "not_started")
    );
    assert_eq!(message_of(&result), "no socket");
    assert!(result.details.results[0].termination.is_none());
}

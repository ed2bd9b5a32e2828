use clap::Parser;
use pretty_assertions::assert_eq;
use subagent_protocol::ErrorCode;
use subagent_supervisor::batch::BatchStopCause;

use super::*;
use crate::error::CliError;

#[derive(Debug, Parser)]
struct Args {
    #[arg(long)]
    n: u32,
}

fn status(ended: Result<Ending, CliError>) -> i32 {
    exit_status(&ended)
}

fn error(text: &str) -> anyhow::Error {
    anyhow::anyhow!("{text}")
}

#[test]
fn ok_is_a_success_and_help() {
    assert_eq!(status(Ok(Ending::Success)), 0);
    assert_eq!(status(Ok(Ending::Run(None))), 0);
    let help = Args::try_parse_from(["x", "--help"]).unwrap_err();
    assert_eq!(status(Err(CliError::Usage(help))), OK);
}

#[test]
fn subagent_failed_is_a_failed_run_and_what_it_needed_not_starting() {
    for ended in [
        Ok(Ending::Run(Some(ErrorCode::SubagentFailed))),
        Ok(Ending::Run(Some(
            ErrorCode::SubagentStructuredOutputInvalid,
        ))),
        Ok(Ending::TasksFailed),
        Ok(Ending::ChangesLeft),
        Ok(Ending::WorkerMissing),
        Err(CliError::Runtime(error("no runtime"))),
    ] {
        assert_eq!(status(ended), 1);
    }
    assert_eq!(SUBAGENT_FAILED, 1);
}

#[test]
fn invalid_input_is_a_call_made_wrong() {
    let usage = Args::try_parse_from(["x", "--n", "many"]).unwrap_err();
    for code in [
        ErrorCode::InvalidInput,
        ErrorCode::UnknownAgent,
        ErrorCode::SubagentsDisabled,
        ErrorCode::SubagentDisabled,
        ErrorCode::SubagentDepthExceeded,
        ErrorCode::SubagentSpawnDenied,
    ] {
        assert_eq!(status(Ok(Ending::Run(Some(code)))), 2, "{code:?}");
    }
    assert_eq!(status(Err(CliError::Usage(usage))), 2);
    assert_eq!(status(Err(CliError::Input(error("bad flag")))), 2);
    assert_eq!(status(Ok(Ending::InputRefused)), INVALID_INPUT);
}

#[test]
fn timeout_budget_truncated_and_sandbox_are_their_run_errors() {
    let cases = [
        (ErrorCode::SubagentTimeout, 3, TIMEOUT),
        (ErrorCode::SubagentBudgetExceeded, 4, BUDGET_EXCEEDED),
        (ErrorCode::SubagentOutputTruncated, 5, OUTPUT_TRUNCATED),
        (
            ErrorCode::SubagentSandboxUnavailable,
            6,
            SANDBOX_UNAVAILABLE,
        ),
    ];
    for (code, number, constant) in cases {
        assert_eq!(status(Ok(Ending::Run(Some(code)))), number, "{code:?}");
        assert_eq!(number, constant);
        // A batch stopped by a task the machine failed exits as that run.
        let stopped = Ok(Ending::BatchStopped(BatchStopCause::TaskFault(code)));
        assert_eq!(status(stopped), number, "{code:?}");
    }
}

#[test]
fn doctor_missing_is_seven() {
    assert_eq!(status(Ok(Ending::DoctorMissing)), 7);
    assert_eq!(status(Err(CliError::Doctor(error("no python3")))), 7);
    assert_eq!(DOCTOR_MISSING, 7);
}

#[test]
fn replay_diverged_is_eight() {
    assert_eq!(status(Ok(Ending::ReplayDiverged)), 8);
    assert_eq!(REPLAY_DIVERGED, 8);
}

#[test]
fn record_lost_is_nine_for_every_record_a_caller_asked_for() {
    for ended in [
        Ok(Ending::Run(Some(ErrorCode::SubagentSessionLost))),
        Ok(Ending::BatchStopped(BatchStopCause::ResultsLost)),
        Ok(Ending::BatchStopped(BatchStopCause::TaskFault(
            ErrorCode::SubagentSessionLost,
        ))),
        Ok(Ending::SessionsDirUnwritable),
        Err(CliError::RecordLost(error("cannot write the result"))),
    ] {
        assert_eq!(status(ended), 9);
    }
    assert_eq!(RECORD_LOST, 9);
}

#[test]
fn session_unverified_is_ten() {
    assert_eq!(status(Ok(Ending::SessionUnverified)), 10);
    assert_eq!(SESSION_UNVERIFIED, 10);
}

#[test]
fn cancelled_is_130() {
    assert_eq!(status(Ok(Ending::Cancelled)), 130);
    assert_eq!(
        status(Ok(Ending::Run(Some(ErrorCode::SubagentCancelled)))),
        130
    );
    assert_eq!(CANCELLED, 130);
}

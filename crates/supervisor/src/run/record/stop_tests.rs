//! The supervisor's causes, row by row: how the worker is stopped, the
//! kill reason, the limit line, the error code and the `stopReason`.

use pretty_assertions::assert_eq;

use super::*;

fn cause(breach: ProtocolBreak) -> StopCause {
    StopCause::Protocol(breach, "what happened".into())
}

#[test]
fn every_cause_has_one_row() {
    let limits = Limits::default();
    let rows = [
        (
            StopCause::WallTimeout,
            StopHow::CancelFirst("wall timeout"),
            KillReason::Timeout,
            Some(LimitKind::WallTimeout),
            ErrorCode::SubagentTimeout,
            "timeout",
        ),
        (
            StopCause::IdleTimeout,
            StopHow::CancelFirst("idle timeout"),
            KillReason::IdleTimeout,
            Some(LimitKind::IdleTimeout),
            ErrorCode::SubagentTimeout,
            "idle_timeout",
        ),
        (
            StopCause::Cancelled,
            StopHow::CancelFirst("cancelled by the caller"),
            KillReason::Cancelled,
            Some(LimitKind::Cancel),
            ErrorCode::SubagentCancelled,
            "cancelled",
        ),
        (
            StopCause::ProtocolFlood,
            StopHow::KillNow,
            KillReason::ProtocolOutputLimit,
            Some(LimitKind::ProtocolBytes),
            ErrorCode::SubagentOutputTruncated,
            "output_limit",
        ),
        (
            cause(ProtocolBreak::SocketSetup),
            StopHow::KillNow,
            KillReason::SocketSetupFailed,
            None,
            ErrorCode::SubagentFailed,
            "protocol_error",
        ),
        (
            cause(ProtocolBreak::NoHello),
            StopHow::Terminate,
            KillReason::NoHello,
            None,
            ErrorCode::SubagentFailed,
            "protocol_error",
        ),
        (
            cause(ProtocolBreak::VersionMismatch),
            StopHow::Terminate,
            KillReason::ProtocolVersionMismatch,
            None,
            ErrorCode::SubagentFailed,
            "protocol_error",
        ),
        (
            cause(ProtocolBreak::Violation),
            StopHow::KillNow,
            KillReason::ProtocolViolation,
            None,
            ErrorCode::SubagentFailed,
            "protocol_error",
        ),
    ];
    for (cause, how, kill, limit, code, word) in rows {
        let got = (
            cause.how(),
            cause.kill_reason(),
            cause.limit_hit(&limits).map(|h| h.kind),
            cause.error(&limits).0,
            cause.stop_word(),
        );
        assert_eq!(got, (how, kill, limit, code, word), "{cause:?}");
    }
}

#[test]
fn a_protocol_break_keeps_its_own_message() {
    let (_, message) = cause(ProtocolBreak::Violation).error(&Limits::default());
    assert_eq!(message, "what happened");
}

#[test]
fn the_kill_reasons_keep_the_texts_they_were_recorded_with() {
    let texts = [
        (KillReason::SocketSetupFailed, "socket setup failed"),
        (KillReason::NoHello, "no hello"),
        (
            KillReason::ProtocolVersionMismatch,
            "protocol version mismatch",
        ),
        (KillReason::ProtocolViolation, "protocol violation"),
        (KillReason::ProtocolOutputLimit, "protocol output limit"),
        (
            KillReason::LingeredAfterDone,
            "worker did not exit after Done",
        ),
    ];
    for (reason, text) in texts {
        assert_eq!(reason.describe(), text);
    }
}

#[test]
fn limits_hit_by_the_tree_are_read_once() {
    let limits = Limits::default();
    let memory = termination_limit_hit(&Termination::MemoryLimit, &limits).unwrap();
    assert_eq!(
        (memory.kind, memory.value, memory.action),
        (LimitKind::Memory, limits.memory_bytes, LimitAction::OomKill)
    );
    let leaked = termination_limit_hit(&Termination::Leaked { pids: vec![7, 8] }, &limits).unwrap();
    assert_eq!((leaked.kind, leaked.value), (LimitKind::LeakedProcesses, 2));
    assert_eq!(
        termination_limit_hit(&Termination::Exited { code: 0 }, &limits),
        None
    );
    assert_eq!(
        termination_error(&Termination::Signaled { signal: 11 }, &limits),
        None
    );
}

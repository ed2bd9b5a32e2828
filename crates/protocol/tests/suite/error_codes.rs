//! `ErrorCode` serializes as the exact contract strings, in wire order.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::ErrorCode;

#[test]
fn error_codes_serialize_as_the_contract_strings() {
    // The first eight are the inherited contract and may never change.
    let contract = [
        (ErrorCode::InvalidInput, "INVALID_INPUT"),
        (ErrorCode::SubagentsDisabled, "SUBAGENTS_DISABLED"),
        (ErrorCode::UnknownAgent, "UNKNOWN_AGENT"),
        (ErrorCode::SubagentDisabled, "SUBAGENT_DISABLED"),
        (ErrorCode::SubagentDepthExceeded, "SUBAGENT_DEPTH_EXCEEDED"),
        (ErrorCode::SubagentTimeout, "SUBAGENT_TIMEOUT"),
        (ErrorCode::SubagentFailed, "SUBAGENT_FAILED"),
        (
            ErrorCode::SubagentOutputTruncated,
            "SUBAGENT_OUTPUT_TRUNCATED",
        ),
        (
            ErrorCode::SubagentBudgetExceeded,
            "SUBAGENT_BUDGET_EXCEEDED",
        ),
        (ErrorCode::SubagentCancelled, "SUBAGENT_CANCELLED"),
        (
            ErrorCode::SubagentStructuredOutputInvalid,
            "SUBAGENT_STRUCTURED_OUTPUT_INVALID",
        ),
        (ErrorCode::SubagentSpawnDenied, "SUBAGENT_SPAWN_DENIED"),
        (
            ErrorCode::SubagentSandboxUnavailable,
            "SUBAGENT_SANDBOX_UNAVAILABLE",
        ),
        (ErrorCode::SubagentSessionLost, "SUBAGENT_SESSION_LOST"),
    ];
    assert_eq!(
        contract.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        ErrorCode::ALL.to_vec(),
        "ALL lists every code in wire order"
    );
    for (code, expected) in contract {
        assert_eq!(serde_json::to_value(code).unwrap(), json!(expected));
        assert_eq!(code.as_str(), expected);
        assert_eq!(code.to_string(), expected);
        assert_eq!(
            serde_json::from_value::<ErrorCode>(json!(expected)).unwrap(),
            code
        );
    }
}

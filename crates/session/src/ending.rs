//! What a run's ending says, in one place: the reason a failed or aborted
//! ending line carries (error code, message, the limit that ended it), and
//! whether a model turn was cut by its output cap (`max_tokens`), for the
//! lines the supervisor writes and for `sessions ls/show/export` reading
//! them back.
//!
//! Pure functions of results and lines: nothing here reads or writes a
//! file, and nothing decides an outcome (that is `run::assemble`); this
//! only carries the decision to where the operator looks.

use subagent_protocol::result::{LimitName, LimitReached, SubagentResult};
use subagent_protocol::session::{AgentEvent, EndingError};

use super::display::{bytes, format_duration};

/// The result's `stopReason` for an answer the model's output cap cut.
pub const MAX_TOKENS_STOP: &str = "max_tokens";

/// True when a provider's stop reason, as the worker recorded it on the
/// assistant message, says the model's output cap cut the turn: Chat
/// Completions' `finish_reason: "length"`, Responses'
/// `incomplete_details.reason: "max_output_tokens"`, Anthropic's (and
/// Vertex's) `stop_reason: "max_tokens"`.
pub fn is_cut_by_max_tokens(provider_stop_reason: &str) -> bool {
    matches!(
        provider_stop_reason,
        "length" | "max_tokens" | "max_output_tokens"
    )
}

/// The reason a failed or aborted run's ending line carries: the result's
/// error code and message, and the limit that ended the first child that
/// hit one. `None` for a run without an error.
pub fn ending_error(result: &SubagentResult) -> Option<EndingError> {
    let error = result.details.error.as_ref()?;
    Some(EndingError {
        code: error.code.as_str().to_owned(),
        message: error.message.clone(),
        limit: result
            .details
            .results
            .iter()
            .find_map(|child| child.limit.clone()),
    })
}

/// The result's `stopReason` for an ending line (the first child's).
pub fn ending_stop_reason(result: &SubagentResult) -> Option<String> {
    result
        .details
        .results
        .first()
        .and_then(|child| child.stop_reason.clone())
}

/// A limit's value for people, in its unit: `4.0s`, `512.0 MiB`, `3`, `$0.50`.
pub fn limit_value_text(limit: &LimitReached) -> String {
    let whole = limit.value.as_u64();
    match (&limit.name, whole) {
        (LimitName::WallTimeoutMs | LimitName::IdleTimeoutMs, Some(ms)) => format_duration(ms),
        (
            LimitName::MemoryBytes
            | LimitName::StdoutBytes
            | LimitName::StderrBytes
            | LimitName::ProtocolBytes
            | LimitName::ReturnedTextBytes,
            Some(n),
        ) => bytes(n),
        (LimitName::MaxCost, _) => limit
            .value
            .as_f64()
            .map_or_else(|| limit.value.to_string(), |d| format!("${d:.2}")),
        _ => limit.value.to_string(),
    }
}

/// `maxTurns = 3`, `wallTimeoutMs = 4.0s`: the limit as the schemas name
/// it, so an operator can find it in the header and the flags.
pub fn limit_text(limit: &LimitReached) -> String {
    format!("{} = {}", limit.name.as_str(), limit_value_text(limit))
}

/// The short form `sessions ls` puts after a status: the error code of a
/// failed or aborted run, or the stop reason of a completed one that did
/// not end the usual way (`max_tokens`). Empty when there is nothing to add.
pub fn status_note(error: Option<&EndingError>, stop_reason: Option<&str>) -> String {
    match (error, stop_reason) {
        (Some(e), _) => e.code.clone(),
        (None, Some(MAX_TOKENS_STOP)) => MAX_TOKENS_STOP.to_owned(),
        _ => String::new(),
    }
}

/// What `sessions show` and the HTML page say of a completed run whose
/// answer was cut by the output cap.
pub const CUT_NOTE: &str = "the answer was cut by the model's output cap (max_tokens): \
    it is incomplete; raise --max-tokens or ask for a shorter answer";

/// The rows an ending adds below its status, for people: the error code
/// and message, the limit, and the cut note. Empty for a plain completion.
/// `error` and `stop_reason` are an ending line's (or a summary's).
pub fn reason_rows(
    error: Option<&EndingError>,
    stop_reason: Option<&str>,
) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    match error {
        Some(error) => {
            rows.push(("error", format!("{}: {}", error.code, error.message)));
            if let Some(limit) = &error.limit {
                rows.push(("limit", limit_text(limit)));
            }
        }
        None if stop_reason == Some(MAX_TOKENS_STOP) => rows.push(("note", CUT_NOTE.to_owned())),
        None => {}
    }
    rows
}

/// [`reason_rows`] of an ending line.
pub fn event_reason_rows(e: &AgentEvent) -> Vec<(&'static str, String)> {
    reason_rows(e.error.as_ref(), e.stop_reason.as_deref())
}

#[cfg(test)]
#[path = "ending_tests.rs"]
mod tests;

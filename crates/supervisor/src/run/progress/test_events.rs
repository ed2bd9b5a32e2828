//! Progress events as the unit tests of every display build them (the
//! tally, the jobs' streaming view, `call`'s SSE): one constructor each,
//! with fixed agent and model. Compiled for tests only.

use subagent_protocol::ErrorCode;

use crate::run::progress::events::ProgressEvent;

/// `run_id` started (agent `general`, model `m`).
pub(crate) fn started(run_id: &str) -> ProgressEvent {
    ProgressEvent::Started {
        run_id: run_id.into(),
        agent: "general".into(),
        model: "m".into(),
    }
}

/// `run_id` began model turn `turn`.
pub(crate) fn turn(run_id: &str, turn: u32) -> ProgressEvent {
    ProgressEvent::Turn {
        run_id: run_id.into(),
        turn,
    }
}

/// `run_id`'s usage so far; cached input is twice the input, so a sum that
/// drops or mixes it up shows.
pub(crate) fn usage(run_id: &str, input: u64, output: u64, cost: f64) -> ProgressEvent {
    ProgressEvent::Usage {
        run_id: run_id.into(),
        input_tokens: input,
        cached_input_tokens: input * 2,
        output_tokens: output,
        cost,
        cut_by_max_tokens: false,
    }
}

/// `run_id` ended, failed with `error` when given.
pub(crate) fn ended(run_id: &str, error: Option<ErrorCode>) -> ProgressEvent {
    ProgressEvent::Ended {
        run_id: run_id.into(),
        error,
    }
}

//! Live progress of one `subagent` tool call, for MCP
//! `notifications/progress`: the supervisor's one progress sink routed to
//! the call whose task is running, and each event as a short message
//! (turn, tool name, tokens).
//!
//! The supervisor calls the sink inline from the task that drives the run
//! (parallel children and nested subagents included), so a task-local
//! sender tells calls apart without the run layer knowing about MCP. The
//! sink only pushes the event's message onto the call's bounded queue
//! ([`super::progress_queue`]): it never blocks (the sink's contract), and
//! a client that does not read loses the oldest messages, not memory. It
//! sees names and counts only, never task text or output (of the model's
//! task list, the counts).
//! A run over the server's concurrency limit says `queued` until it has a
//! slot, then `running`.

use std::future::Future;

use super::progress_queue::ProgressSender;
use crate::run::{ProgressEvent, ProgressSink};

tokio::task_local! {
    /// Where the running call's progress goes.
    static CALL_PROGRESS: ProgressSender;
}

/// The sink for the server's supervisor: every event goes to the call
/// whose task emitted it; events outside a call are dropped.
pub(crate) fn routing_sink() -> ProgressSink {
    ProgressSink::new(|event: &ProgressEvent| {
        let _ = CALL_PROGRESS.try_with(|tx| tx.push(&message(event)));
    })
}

/// Runs `run` with its progress sent to `tx`; `tx` is dropped when `run`
/// ends, which ends the receiver's stream.
pub(crate) async fn scoped<F: Future>(tx: ProgressSender, run: F) -> F::Output {
    CALL_PROGRESS.scope(tx, run).await
}

/// The message a client shows for `event`.
pub(crate) fn message(event: &ProgressEvent) -> String {
    match event {
        ProgressEvent::Queued {
            run_id,
            agent,
            running,
            limit,
        } => format!(
            "{run_id}: queued {agent}: {running} of {limit} slots are taken; it starts when one frees"
        ),
        ProgressEvent::LeftQueue { run_id, admitted } => {
            if *admitted {
                format!("{run_id}: running: it has a slot")
            } else {
                format!("{run_id}: cancelled while queued; no worker was started")
            }
        }
        ProgressEvent::Started {
            run_id,
            agent,
            model,
        } => format!("{run_id}: started {agent} on {model}"),
        ProgressEvent::Turn { run_id, turn } => format!("{run_id}: turn {turn}"),
        ProgressEvent::ToolStarted { run_id, name } => format!("{run_id}: tool {name}"),
        ProgressEvent::ToolFinished {
            run_id,
            name,
            is_error,
        } => {
            let how = if *is_error { "failed" } else { "done" };
            format!("{run_id}: tool {name} {how}")
        }
        ProgressEvent::Usage {
            run_id,
            input_tokens,
            cached_input_tokens,
            output_tokens,
            cost,
            cut_by_max_tokens,
        } => {
            // Input as the result counts it; the cache's share on its own.
            let cached = match cached_input_tokens {
                0 => String::new(),
                n => format!(" (+{n} cached)"),
            };
            let cut = if *cut_by_max_tokens {
                "; the turn was cut by max_tokens"
            } else {
                ""
            };
            format!(
                "{run_id}: tokens {input_tokens} in{cached}, {output_tokens} out, ${cost:.4}{cut}"
            )
        }
        // Counts only: the item's text is the model's (the result carries
        // the list).
        ProgressEvent::Todos {
            run_id,
            done,
            total,
            ..
        } => format!("{run_id}: tasks {done}/{total} done"),
        ProgressEvent::Ended { run_id, error } => match error {
            None => format!("{run_id}: ended ok"),
            Some(code) => format!("{run_id}: ended {code}"),
        },
    }
}

#[cfg(test)]
#[path = "progress_tests.rs"]
mod tests;

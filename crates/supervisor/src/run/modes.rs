//! The pure pieces of the two ways one call runs several children: a
//! batch (mode `parallel`: every task at once, at most `concurrency`
//! running, results in task order) and a chain (mode `chain`: steps one
//! after another, each task may quote the previous step's output as
//! `{previous}`, stopping at the first failure). The methods that run them,
//! composed from [`Supervisor::run`](crate::run::Supervisor::run), are in
//! `supervisor.rs` with the rest of `impl Supervisor`.
//!
//! Here: placeholder substitution, the concurrency check, the summary
//! text and the combined result whose `results` hold one entry per child
//! that ran and whose `error` is the first failure's (so the exit status
//! of the call is that failure's): tested without processes. Nothing here
//! starts a process.

use subagent_protocol::RunMode;
use subagent_protocol::result::{ContentItem, Details, ErrorInfo, Mode, SubagentResult};
use subagent_protocol::text::prefix_chars;

use crate::request::new_run_id;
use crate::run::config::DEFAULT_MAX_PER_CALL;

/// What a chain step writes where the previous step's output should go.
pub const PREVIOUS_PLACEHOLDER: &str = "{previous}";

/// Characters of each answer shown in a batch summary: enough to recognise
/// the answer; the whole text is in `results[].output` and the session file.
const SUMMARY_HEAD_CHARS: usize = 200;

/// Lines of each answer shown in a batch summary (same reason).
const SUMMARY_HEAD_LINES: usize = 3;

/// The concurrency of a parallel call: the one the caller asked for, which
/// must be 1..=`max` ([`check_concurrency`]), else the default
/// ([`DEFAULT_MAX_PER_CALL`], 4) lowered to `max`: a caller that asked for
/// nothing is never refused for a default above the supervisor's limit.
pub fn concurrency_for(asked: Option<usize>, max: usize) -> Result<usize, String> {
    match asked {
        Some(n) => check_concurrency(n, max).map(|()| n),
        None => Ok(DEFAULT_MAX_PER_CALL.min(max).max(1)),
    }
}

/// `concurrency` must be 1..=`max`; the message says the maximum.
pub fn check_concurrency(concurrency: usize, max: usize) -> Result<(), String> {
    if concurrency == 0 || concurrency > max {
        return Err(format!(
            "concurrency {concurrency} is out of range: use 1 to {max} (the most subagents one supervisor runs at once)"
        ));
    }
    Ok(())
}

/// `task` with every [`PREVIOUS_PLACEHOLDER`] replaced by `previous`.
pub fn substitute_previous(task: &str, previous: &str) -> String {
    task.replace(PREVIOUS_PLACEHOLDER, previous)
}

/// A child's answer as the next step or the summary should see it: the
/// sanitized full output when recorded, else the returned text.
pub(super) fn output_text(result: &SubagentResult) -> String {
    if let Some(output) = result
        .details
        .results
        .first()
        .and_then(|r| r.output.clone())
    {
        return output;
    }
    content_text(result)
}

fn content_text(result: &SubagentResult) -> String {
    result
        .content
        .iter()
        .map(|ContentItem::Text { text }| text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first lines and characters of `text`, with `...` when cut.
fn head(text: &str) -> String {
    let text = text.trim();
    let mut kept: String = text
        .lines()
        .take(SUMMARY_HEAD_LINES)
        .collect::<Vec<_>>()
        .join("\n");
    let mut cut = kept.len() < text.len();
    let prefix = prefix_chars(&kept, SUMMARY_HEAD_CHARS);
    if prefix.len() < kept.len() {
        kept = prefix.to_owned();
        cut = true;
    }
    if cut {
        kept.push_str(" ...");
    }
    kept
}

/// The batch summary for the parent: one entry per task (index, status and
/// the head of its answer or error), then the totals.
pub fn batch_summary(tasks: &[String], children: &[SubagentResult]) -> String {
    let mut out = String::new();
    let mut failed = 0;
    for (i, child) in children.iter().enumerate() {
        let task = tasks.get(i).map_or("", String::as_str);
        let (status, body) = match &child.details.error {
            None => ("completed".to_owned(), head(&output_text(child))),
            Some(error) => {
                failed += 1;
                (format!("failed ({})", error.code), head(&error.message))
            }
        };
        out.push_str(&format!("[{}] {status}: {}\n{body}\n\n", i + 1, head(task)));
    }
    let total = children.len();
    out.push_str(&format!(
        "{total} tasks: {} completed, {failed} failed",
        total - failed
    ));
    out
}

/// The call's error: the first failing child's code (so the exit code is
/// that failure's), with a message naming which one and how many failed.
pub fn first_failure(children: &[SubagentResult]) -> Option<ErrorInfo> {
    let failures: Vec<(usize, &ErrorInfo)> = children
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.details.error.as_ref().map(|e| (i + 1, e)))
        .collect();
    let (index, first) = failures.first()?;
    Some(ErrorInfo {
        code: first.code,
        message: format!(
            "{} of {} tasks failed; the first (#{index}): {}",
            failures.len(),
            children.len(),
            first.message
        ),
    })
}

pub(super) fn combine_batch(tasks: &[String], children: Vec<SubagentResult>) -> SubagentResult {
    let text = batch_summary(tasks, &children);
    let error = first_failure(&children);
    SubagentResult {
        content: vec![ContentItem::Text { text }],
        details: Details {
            mode: Mode::Run(RunMode::Parallel),
            run_id: Some(new_run_id()),
            results: children
                .into_iter()
                .flat_map(|c| c.details.results)
                .collect(),
            error,
        },
    }
}

/// The chain's `content`: the last step's output, and when a step failed
/// before the end, which one and that the rest did not run.
pub fn chain_text(total: usize, ran: &[SubagentResult]) -> String {
    let Some(last) = ran.last() else {
        return String::new();
    };
    let text = content_text(last);
    match &last.details.error {
        None => text,
        Some(error) => {
            let step = ran.len();
            let skipped = total - step;
            let rest = match skipped {
                0 => "it was the last step".to_owned(),
                1 => "1 later step was not run".to_owned(),
                n => format!("{n} later steps were not run"),
            };
            format!(
                "{text}\n\nchain stopped at step {step} of {total} ({}): {rest}",
                error.code
            )
        }
    }
}

pub(super) fn combine_chain(total: usize, ran: Vec<SubagentResult>) -> SubagentResult {
    let text = chain_text(total, &ran);
    let error = ran.last().and_then(|last| {
        last.details.error.as_ref().map(|e| ErrorInfo {
            code: e.code,
            message: format!("step {} of {total} failed: {}", ran.len(), e.message),
        })
    });
    SubagentResult {
        content: vec![ContentItem::Text { text }],
        details: Details {
            mode: Mode::Run(RunMode::Chain),
            run_id: Some(new_run_id()),
            results: ran.into_iter().flat_map(|c| c.details.results).collect(),
            error,
        },
    }
}

#[cfg(test)]
#[path = "modes_tests.rs"]
mod tests;

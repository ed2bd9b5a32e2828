//! Continuing a recorded run: the session file a run id names, read back
//! ([`crate::session::history`]), turned into the request that continues
//! it. Every way in (`run --resume`, serve and MCP `resume`, batch re-runs)
//! goes through [`continue_request`], so they refuse the same things with
//! the same words.
//!
//! The recording decides what the caller did not: agent, model, tools,
//! workspace, limits, budgets, output schema and system prompt are the
//! recorded run's unless the caller set them. Nothing here grants a right
//! the recorded run did not have: the network and private addresses stay
//! as the caller's own settings say (off unless asked for), and tools come
//! from the recording, never from the agent's current list. Budgets count
//! the new run only.
//!
//! It must never unmask: the history holds what the session file holds,
//! with secrets masked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use subagent_protocol::session::SessionHeader;
use subagent_protocol::{Budget, HistoryMessage, ProviderKind, tool_names};
use subagent_report_back::REPORT_BACK_TOOL_NAME;

use crate::config::LimitSet;
use crate::run::{ResumeFrom, RunRequest};
use crate::session::history::{CONTINUE_NOTE, Continuation, HistoryError, read_continuation};
use crate::session::read::{ReadError, SessionStatus, find_session};

/// Why a run cannot be continued.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// No session file for the run id.
    #[error("cannot resume {target:?}: {source}; `subagent sessions ls` lists the runs")]
    Find {
        /// What the caller named.
        target: String,
        /// Why it was not found.
        source: ReadError,
    },
    /// The file cannot be read back into a conversation.
    #[error("cannot resume: {0}")]
    History(#[from] HistoryError),
    /// A finished run needs a follow-up to continue.
    #[error(
        "run {run_id} ended {status}: give a follow-up task to continue it; only an interrupted \
         run (no ending line, or aborted) continues without one"
    )]
    NeedsTask {
        /// The recorded run.
        run_id: String,
        /// How it ended.
        status: &'static str,
    },
    /// The recorded run spoke another API dialect.
    #[error(
        "run {run_id} talked to its model in the {recorded} dialect and this run would use \
         {now}: tool-call ids and message shapes differ between dialects, so a conversation is \
         not carried across them; choose a provider of the {recorded} dialect (--provider)"
    )]
    Dialect {
        /// The recorded run.
        run_id: String,
        /// Its provider kind, as recorded.
        recorded: String,
        /// This run's.
        now: ProviderKind,
    },
    /// The history calls a tool this run may not use.
    #[error(
        "the recorded conversation of run {run_id} calls {tool}, which this run may not use \
         ({why}); allow it (--tools) or start a new run"
    )]
    ToolNotAllowed {
        /// The recorded run.
        run_id: String,
        /// The tool.
        tool: String,
        /// Why not.
        why: &'static str,
    },
}

/// What the caller of a resume decided itself; the rest comes from the
/// recording.
#[derive(Debug, Clone, Default)]
pub struct ResumeAsk {
    /// A follow-up task; `None` continues an interrupted run as it stood.
    pub task: Option<String>,
    /// The caller chose the tools (`request.tools` is theirs).
    pub tools: bool,
    /// The caller chose the workspace.
    pub workspace: bool,
    /// The caller chose the output schema and mode.
    pub output_schema: bool,
    /// The limits the caller set; the recorded ones apply to the others.
    pub limits: LimitSet,
}

/// The session file `target` names: a path, or a run id (or a unique
/// prefix of one) under `sessions_dir`.
pub fn locate(sessions_dir: &Path, target: &str) -> Result<PathBuf, ResumeError> {
    find_session(sessions_dir, target).map_err(|source| ResumeError::Find {
        target: target.to_owned(),
        source,
    })
}

/// Reads the run `target` names, with the runs it continued.
pub fn load(sessions_dir: &Path, target: &str) -> Result<Continuation, ResumeError> {
    let file = locate(sessions_dir, target)?;
    Ok(read_continuation(&file)?)
}

/// Makes `request` the continuation of `recorded`: the recorded settings
/// where `ask` says the caller chose none, the history in front, the task
/// after it. Refuses what cannot be continued faithfully.
pub fn continue_request(
    recorded: Continuation,
    request: &mut RunRequest,
    ask: ResumeAsk,
) -> Result<(), ResumeError> {
    let header = &recorded.header;
    check_dialect(header, request.provider.kind)?;
    request.task = match ask.task {
        Some(task) => task,
        None if matches!(
            recorded.ending,
            SessionStatus::Interrupted | SessionStatus::Aborted
        ) =>
        {
            if recorded.ends_with_answer() {
                CONTINUE_NOTE.to_owned()
            } else {
                String::new()
            }
        }
        None => {
            return Err(ResumeError::NeedsTask {
                run_id: header.run_id.clone(),
                status: recorded.ending.as_str(),
            });
        }
    };
    if !ask.tools {
        // Files written before headers listed tools leave the agent's.
        request.tools.clone_from(&header.tools);
    }
    if !ask.workspace {
        request.workspace_dir = PathBuf::from(&header.cwd);
    }
    if !ask.output_schema {
        request.output_schema_json = header.output_schema.as_ref().map(|s| s.to_string());
        if let Some(mode) = header.output_mode {
            request.output_mode = mode;
        }
    }
    request.limits = header.limits.clone();
    request.budget = Budget {
        max_turns: header.max_turns.unwrap_or(request.budget.max_turns),
        max_cost: header.max_cost,
    };
    ask.limits.apply(
        &mut request.limits,
        &mut request.budget,
        &mut request.max_depth,
    );
    if request.system_prompt.is_none() && !recorded.system_prompt.is_empty() {
        request.system_prompt = Some(recorded.system_prompt.clone());
    }
    check_tools(&header.run_id, &recorded.called_tools, request)?;
    request.resume = Some(ResumeFrom {
        run_id: header.run_id.clone(),
        file: recorded.file,
        history: recorded.history,
        turns: recorded.turns,
    });
    Ok(())
}

/// Checks a continued request again after something else (a server's
/// ceilings) changed its tools or schema: every tool its history calls
/// must still be offered.
pub fn check_resumed(request: &RunRequest) -> Result<(), ResumeError> {
    let Some(resume) = &request.resume else {
        return Ok(());
    };
    let called: BTreeSet<String> = resume
        .history
        .iter()
        .filter_map(|m| match m {
            HistoryMessage::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .map(|c| c.name.clone())
        .collect();
    check_tools(&resume.run_id, &called, request)
}

/// The conversation families: ids and shapes are alike within one.
fn family(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenaiChat => "openai-chat",
        ProviderKind::OpenaiResponses => "openai-responses",
        ProviderKind::Anthropic | ProviderKind::VertexaiAnthropic => "anthropic",
    }
}

fn check_dialect(header: &SessionHeader, now: ProviderKind) -> Result<(), ResumeError> {
    let same = header
        .provider
        .parse::<ProviderKind>()
        .is_ok_and(|recorded| family(recorded) == family(now));
    if same {
        return Ok(());
    }
    Err(ResumeError::Dialect {
        run_id: header.run_id.clone(),
        recorded: header.provider.clone(),
        now,
    })
}

/// Every tool the history calls must be one this run offers: a model
/// shown calls of a tool it cannot call again is misled, and some
/// providers refuse such a conversation.
fn check_tools(
    run_id: &str,
    called_tools: &BTreeSet<String>,
    request: &RunRequest,
) -> Result<(), ResumeError> {
    let offered: Option<BTreeSet<&str>> = request
        .tools
        .as_ref()
        .map(|tools| tools.iter().map(String::as_str).collect());
    for tool in called_tools {
        let why = if tool == REPORT_BACK_TOOL_NAME {
            if request.output_schema_json.is_some() {
                continue;
            }
            "it comes with an output schema, and this run has none"
        } else if !tool_names::BUILTIN_TOOLS.contains(&tool.as_str())
            && tool != tool_names::SUBAGENT
        {
            "this version has no tool of that name"
        } else if offered
            .as_ref()
            .is_some_and(|set| !set.contains(tool.as_str()))
        {
            "it is not among this run's tools"
        } else {
            continue;
        };
        return Err(ResumeError::ToolNotAllowed {
            run_id: run_id.to_owned(),
            tool: tool.clone(),
            why,
        });
    }
    Ok(())
}

#[cfg(test)]
#[path = "resume_tests.rs"]
mod tests;

//! Continuing a recorded run: the session file a run id names, read back
//! ([`crate::session::history`]), turned into the request that continues
//! it. Every way in (`run --resume`, serve and MCP `resume`, batch re-runs)
//! goes through [`continue_request`], so they refuse the same things with
//! the same words.
//!
//! A recording is evidence, not authority ([`lower`]): tools, limits,
//! budgets, provider, model and workspace are the current invocation's
//! (its flags, config, agent, and a server's ceilings after this), and a
//! recorded value may only lower them: the recorded tools the invocation
//! also gives, the lower of each limit the caller did not name, the
//! recorded workspace only when it lies within the invocation's (else the
//! resume is refused). The agent's name, the output schema and the system
//! prompt come from the recording unless the caller gave them: a name in
//! the operator's own catalog, and what the conversation was held to. The
//! network and private addresses stay as the caller's own settings say.
//! Budgets count the new run only. The file itself is read only when its
//! chain holds ([`crate::session::verified`]), and a server's client
//! reaches only runs of its workspace, by id ([`locate`]).
//!
//! It must never unmask: the history holds what the session file holds,
//! with secrets masked.

mod locate;
pub(crate) mod lower;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use subagent_protocol::session::SessionHeader;
use subagent_protocol::{HistoryMessage, ProviderKind, tool_names};
use subagent_report_back::REPORT_BACK_TOOL_NAME;

use crate::config::LimitSet;
use crate::run::{ResumeFrom, RunRequest};
use crate::session::history::{CONTINUE_NOTE, Continuation, HistoryError, read_continuation};
use crate::session::read::{ReadError, SessionStatus};
pub use locate::{locate, locate_in_reach};
use lower::{OutsideWorkspace, lower_limits, lower_tools, recorded_workspace};

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
    /// A server's client named something else than a run id.
    #[error(
        "resume takes a run id (a result names it in `runId`), not {target:?}: a server \
         continues runs by id, never by path"
    )]
    NotAnId {
        /// What the client named (cut short).
        target: String,
    },
    /// No run of the server's workspace has that id.
    #[error(
        "cannot resume {target:?}: no run this server can continue has that id; it continues \
         runs whose workspace lies within its own ({}), by the id their result gave",
        workspace.display()
    )]
    NotInReach {
        /// What the client named.
        target: String,
        /// The server's workspace.
        workspace: PathBuf,
    },
    /// Several runs of the server's workspace match the prefix.
    #[error("run id prefix {target:?} matches {count} runs: give the whole run id")]
    AmbiguousInReach {
        /// What the client named.
        target: String,
        /// How many match.
        count: usize,
    },
    /// The recorded workspace is outside the current one.
    #[error(
        "run {run_id} worked in {}, which is outside this run's workspace {}: a recording does \
         not choose where a run works; continue it from a workspace that holds it \
         (--workspace, or `workspace` in a request) or start a new run",
        recorded.display(), current.display()
    )]
    Workspace {
        /// The recorded run.
        run_id: String,
        /// Its workspace, as recorded.
        recorded: PathBuf,
        /// This run's.
        current: PathBuf,
    },
    /// The recorded workspace cannot be resolved.
    #[error(
        "run {run_id}'s workspace cannot be used ({reason}): give one (--workspace, or \
         `workspace` in a request) or start a new run"
    )]
    WorkspaceGone {
        /// The recorded run.
        run_id: String,
        /// Why.
        reason: String,
    },
    /// The file cannot be read back into a conversation. Not a `source`:
    /// the message already holds the cause, and a chain printer would
    /// print it twice.
    #[error("cannot resume: {0}")]
    History(HistoryError),
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

impl From<HistoryError> for ResumeError {
    fn from(error: HistoryError) -> Self {
        Self::History(error)
    }
}

/// What the caller of a resume decided itself, and what the current
/// invocation gives; a recording only lowers it.
#[derive(Debug, Clone, Default)]
pub struct ResumeAsk {
    /// A follow-up task; `None` continues an interrupted run as it stood.
    pub task: Option<String>,
    /// The caller chose the tools (`request.tools` is theirs).
    pub tools: bool,
    /// The tools the current invocation gives when the caller chose none
    /// (its agent's list): recorded tools beyond them are dropped.
    pub current_tools: Vec<String>,
    /// The caller chose the workspace.
    pub workspace: bool,
    /// The caller chose the output schema and mode.
    pub output_schema: bool,
    /// The limits the caller set: the recording lowers only the others.
    pub limits: LimitSet,
}

/// Reads the run `target` names for the operator (an id, a unique prefix,
/// or a file), with the runs it continued.
pub fn load(sessions_dir: &Path, target: &str) -> Result<Continuation, ResumeError> {
    let file = locate(sessions_dir, target)?;
    Ok(read_continuation(&file)?)
}

/// Reads run `target` (an id or a unique prefix, never a path) for a
/// server whose workspace is `workspace`: only runs recorded within it.
pub fn load_in_reach(
    sessions_dir: &Path,
    target: &str,
    workspace: &Path,
) -> Result<Continuation, ResumeError> {
    let file = locate_in_reach(sessions_dir, target, workspace)?;
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
    if !ask.tools
        && let Some(tools) = &header.tools
    {
        // Files written before headers listed tools leave the agent's.
        request.tools = Some(lower_tools(tools, &ask.current_tools));
    }
    if !ask.workspace {
        request.workspace_dir = recorded_workspace(Path::new(&header.cwd), &request.workspace_dir)
            .map_err(|why| match why {
                OutsideWorkspace::Outside => ResumeError::Workspace {
                    run_id: header.run_id.clone(),
                    recorded: PathBuf::from(&header.cwd),
                    current: request.workspace_dir.clone(),
                },
                OutsideWorkspace::Unresolved(reason) => ResumeError::WorkspaceGone {
                    run_id: header.run_id.clone(),
                    reason,
                },
            })?;
    }
    if !ask.output_schema {
        request.output_schema_json = header.output_schema.as_ref().map(|s| s.to_string());
        if let Some(mode) = header.output_mode {
            request.output_mode = mode;
        }
    }
    lower_limits(
        &mut request.limits,
        &mut request.budget,
        header,
        &ask.limits,
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

//! A session file read back into the conversation it recorded, so a new
//! run can continue it (`run --resume`, `resume` in serve and MCP requests,
//! batch re-runs).
//!
//! In: the text of a session file this supervisor wrote, and those of the
//! runs it continued in turn (its header's `resumedFrom`), each read only
//! when its chain holds ([`super::verified`]): a file a tool rewrote, or
//! one written before files were chained, is not continued. Out: a
//! [`Continuation`]: the system prompt, the messages as the worker's
//! [`HistoryMessage`]s, how many complete model turns they hold, and how
//! the run ended. Nothing here starts a run or writes a file.
//!
//! What is kept and what is refused (docs/decisions.md has the why):
//! - only complete turns: a turn that was streaming when the run died left
//!   no assistant line and so is not in the history; a tool call without a
//!   result gets one that says it was not run ([`NOT_RUN_OUTPUT`]);
//! - a torn last line (no newline) that is the beginning of a line the
//!   writer writes is dropped: that is what a supervisor killed mid-write
//!   leaves. Anything else that does not parse, a line type this version
//!   does not know, a line out of place, or another format version is
//!   refused with the line number: the file was damaged, edited or written
//!   by another version, and a conversation guessed from it could mislead
//!   the model;
//! - texts are masked as the file holds them: secrets the run saw reach
//!   the continuation masked, never unmasked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use subagent_protocol::session::{
    MessageLine, Role, SESSION_FORMAT_VERSION, SessionEntry, SessionHeader, ToolCallLine,
    ToolResultLine,
};
use subagent_protocol::{HistoryMessage, HistoryToolCall};

use super::read::{ReadItem, SessionStatus, parse_session, terminal_status};
use super::verified::{VerifyError, read_verified};

/// The tool result given to a recorded call that has none: the run died
/// (or was cancelled) before the call returned. The model decides whether
/// to call it again; the call may have had effects before the run died.
pub const NOT_RUN_OUTPUT: &str = "This tool call was not completed: the run was interrupted \
     before its result arrived, so whatever it did (if anything) is unknown. Check its effects \
     or call it again if it is still needed.";

/// The user message an interrupted run is continued with when its history
/// ends with a complete answer of the model: every provider wants the
/// conversation to end with the user (or a tool result) before a turn.
pub const CONTINUE_NOTE: &str = "The run was interrupted here. Continue the task from where \
     you stopped.";

/// Runs continued in turn that one resume follows back at most; a longer
/// (or circular) chain of `resumedFrom` is refused.
pub const MAX_RESUME_CHAIN: usize = 32;

/// The start of every line the writer writes: a torn last line that is a
/// prefix of a line like this is what a crash mid-write leaves.
const LINE_START: &str = "{\"type\":\"";

/// A recorded conversation, ready to be continued.
#[derive(Debug, Clone, PartialEq)]
pub struct Continuation {
    /// The file that was read (the newest of the chain).
    pub file: PathBuf,
    /// Its header.
    pub header: SessionHeader,
    /// The system prompt of the conversation (empty for none).
    pub system_prompt: String,
    /// The messages, oldest first, over every run of the chain.
    pub history: Vec<HistoryMessage>,
    /// Complete model turns in `history`.
    pub turns: u32,
    /// How the newest run ended.
    pub ending: SessionStatus,
    /// Every tool the history calls.
    pub called_tools: BTreeSet<String>,
    /// What was dropped or filled in, one sentence each, for the log.
    pub notes: Vec<String>,
}

impl Continuation {
    /// True when the last message is a complete answer of the model (an
    /// assistant turn without tool calls): continuing needs a user message.
    pub fn ends_with_answer(&self) -> bool {
        matches!(
            self.history.last(),
            Some(HistoryMessage::Assistant { tool_calls, .. }) if tool_calls.is_empty()
        )
    }
}

/// Why a session file cannot be continued. Each says what does not match
/// and what to do.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The file could not be read as a session file, or its chain does not
    /// hold.
    #[error("{0}; so its conversation is not continued (start a new run instead)")]
    Unverified(VerifyError),
    /// No header line first.
    #[error("{} does not start with a session header line; is it a subagent session file?", path.display())]
    NoHeader {
        /// The file.
        path: PathBuf,
    },
    /// Written in another session format.
    #[error(
        "{} is in session format {found}, this version reads format {SESSION_FORMAT_VERSION} \
         only; continue it with the subagent version that wrote it",
        path.display()
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version it names.
        found: u32,
    },
    /// A line does not parse, or is out of place.
    #[error(
        "{} line {line_no}: {detail}; the file was damaged or edited, so its conversation \
         cannot be continued (start a new run instead)",
        path.display()
    )]
    Damaged {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line_no: usize,
        /// What is wrong.
        detail: String,
    },
    /// The chain of `resumedFrom` is too long or goes round.
    #[error(
        "{}: the runs it continues go back more than {MAX_RESUME_CHAIN} runs or round in a \
         circle (run {run_id} again); start a new run instead",
        path.display()
    )]
    Chain {
        /// The file where the chain was given up.
        path: PathBuf,
        /// The run id seen again or too far back.
        run_id: String,
    },
    /// A run the file continues cannot be read.
    #[error("{} continues run {run_id}, whose session file cannot be used: {source}", path.display())]
    Earlier {
        /// The file that names it.
        path: PathBuf,
        /// Its run id.
        run_id: String,
        /// Why.
        source: Box<HistoryError>,
    },
}

impl From<VerifyError> for HistoryError {
    /// The reason is in the text, said once: not a source as well.
    fn from(e: VerifyError) -> Self {
        HistoryError::Unverified(e)
    }
}

/// Reads the session file at `path`, and those of the runs it continues,
/// into one [`Continuation`].
pub fn read_continuation(path: &Path) -> Result<Continuation, HistoryError> {
    read_chain(path, &mut Vec::new())
}

fn read_chain(path: &Path, seen: &mut Vec<String>) -> Result<Continuation, HistoryError> {
    let file = read_verified(path)?;
    let own = file_history(path, &file.text())?;
    let Some(from) = own.header.resumed_from.clone() else {
        return Ok(own);
    };
    if seen.len() >= MAX_RESUME_CHAIN || seen.contains(&from.run_id) {
        return Err(HistoryError::Chain {
            path: path.to_owned(),
            run_id: from.run_id,
        });
    }
    seen.push(own.header.run_id.clone());
    let earlier =
        read_chain(Path::new(&from.file), seen).map_err(|source| HistoryError::Earlier {
            path: path.to_owned(),
            run_id: from.run_id.clone(),
            source: Box::new(source),
        })?;
    Ok(earlier.followed_by(own))
}

impl Continuation {
    /// This (earlier) conversation, then `later`'s own messages: the later
    /// run started from this one's history, then its own task.
    fn followed_by(self, later: Continuation) -> Continuation {
        let mut history = self.history;
        history.extend(later.history);
        let mut called_tools = self.called_tools;
        called_tools.extend(later.called_tools);
        let mut notes = self.notes;
        notes.extend(later.notes);
        Continuation {
            file: later.file,
            header: later.header,
            // The later run was given the recorded prompt; the first run's
            // is the conversation's.
            system_prompt: self.system_prompt,
            history,
            turns: self.turns + later.turns,
            ending: later.ending,
            called_tools,
            notes,
        }
    }
}

/// One file's own part of the conversation (pure: `text` is its content).
pub fn file_history(path: &Path, text: &str) -> Result<Continuation, HistoryError> {
    let damaged = |line_no: usize, detail: String| HistoryError::Damaged {
        path: path.to_owned(),
        line_no,
        detail,
    };
    let torn_text = text.rsplit('\n').next().unwrap_or_default();
    let mut builder: Option<Builder> = None;
    for item in parse_session(text) {
        let line = match item {
            ReadItem::Line(line) => line,
            ReadItem::Torn { line_no, bytes } => {
                let writer_prefix =
                    torn_text.starts_with(LINE_START) || LINE_START.starts_with(torn_text);
                if !writer_prefix {
                    return Err(damaged(
                        line_no,
                        format!("the last line ({bytes} bytes, no newline) is not a session line"),
                    ));
                }
                if let Some(b) = builder.as_mut() {
                    b.notes.push(format!(
                        "dropped the torn last line {line_no} ({bytes} bytes): the run was cut \
                         off while writing it"
                    ));
                }
                continue;
            }
            ReadItem::Invalid { line_no, error } => {
                return Err(damaged(
                    line_no,
                    format!("not a valid session line ({error})"),
                ));
            }
            ReadItem::Unknown { line_no, line_type } => {
                return Err(damaged(
                    line_no,
                    format!(
                        "line type {} is unknown to this version (written by a newer subagent?)",
                        line_type.as_deref().unwrap_or("(none)")
                    ),
                ));
            }
        };
        let Some(b) = builder.as_mut() else {
            let SessionEntry::Session(header) = line.entry else {
                return Err(HistoryError::NoHeader {
                    path: path.to_owned(),
                });
            };
            if header.version != SESSION_FORMAT_VERSION {
                return Err(HistoryError::Version {
                    path: path.to_owned(),
                    found: header.version,
                });
            }
            builder = Some(Builder::new(header));
            continue;
        };
        let line_no = b.line_no();
        b.take(line.entry)
            .map_err(|detail| damaged(line_no, detail))?;
        b.lines += 1;
    }
    let Some(b) = builder else {
        return Err(HistoryError::NoHeader {
            path: path.to_owned(),
        });
    };
    Ok(b.finish(path))
}

/// The conversation of one file as its lines arrive.
struct Builder {
    header: SessionHeader,
    system_prompt: Option<String>,
    history: Vec<HistoryMessage>,
    /// Calls of the last assistant turn still waiting for their result.
    pending: Vec<HistoryToolCall>,
    /// Turn number of the last assistant message.
    turn: Option<u32>,
    turns: u32,
    ending: Option<SessionStatus>,
    called_tools: BTreeSet<String>,
    notes: Vec<String>,
    /// Lines taken after the header (for error line numbers).
    lines: usize,
}

impl Builder {
    fn new(header: SessionHeader) -> Self {
        Self {
            header,
            system_prompt: None,
            history: Vec::new(),
            pending: Vec::new(),
            turn: None,
            turns: 0,
            ending: None,
            called_tools: BTreeSet::new(),
            notes: Vec::new(),
            lines: 0,
        }
    }

    /// The 1-based line number of the line being taken (blank lines aside).
    fn line_no(&self) -> usize {
        self.lines + 2
    }

    fn take(&mut self, entry: SessionEntry) -> Result<(), String> {
        match entry {
            SessionEntry::Session(_) => return Err("a second session header".to_owned()),
            SessionEntry::Message(message) => self.message(message),
            SessionEntry::ToolCall(call) => return self.tool_call(call),
            SessionEntry::ToolResult(result) => return self.tool_result(result),
            // Lifecycle lines of nested runs land in this file too; only
            // this run's own ending counts.
            SessionEntry::AgentEvent(event) if event.job_id == self.header.run_id => {
                if let Some(status) = terminal_status(&event) {
                    self.ending = Some(status);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn message(&mut self, message: MessageLine) {
        match message.role {
            Role::System => {
                if self.system_prompt.is_none() {
                    self.system_prompt = Some(message.text);
                }
            }
            Role::User => {
                self.close_turn();
                self.history
                    .push(HistoryMessage::User { text: message.text });
            }
            Role::Assistant => {
                self.close_turn();
                self.turn = Some(message.turn);
                self.turns += 1;
                self.history.push(HistoryMessage::Assistant {
                    text: message.text,
                    tool_calls: Vec::new(),
                });
            }
        }
    }

    fn tool_call(&mut self, call: ToolCallLine) -> Result<(), String> {
        let answered = self
            .history
            .last()
            .is_some_and(|m| matches!(m, HistoryMessage::ToolResult { .. }));
        let Some(HistoryMessage::Assistant { tool_calls, .. }) = self.history.last_mut() else {
            return Err(format!(
                "tool call {} does not follow an assistant message of its turn",
                call.call_id
            ));
        };
        if answered || self.turn != Some(call.turn) {
            return Err(format!(
                "tool call {} of turn {} does not follow the assistant message of that turn",
                call.call_id, call.turn
            ));
        }
        let recorded = HistoryToolCall {
            id: call.call_id,
            name: call.name,
            arguments_json: arguments_json(&call.args),
        };
        self.called_tools.insert(recorded.name.clone());
        tool_calls.push(recorded.clone());
        self.pending.push(recorded);
        Ok(())
    }

    fn tool_result(&mut self, result: ToolResultLine) -> Result<(), String> {
        let Some(index) = self.pending.iter().position(|c| c.id == result.call_id) else {
            return Err(format!(
                "a result for tool call {}, which no open call of the turn made",
                result.call_id
            ));
        };
        self.pending.remove(index);
        self.history.push(HistoryMessage::ToolResult {
            call_id: result.call_id,
            name: result.name,
            output: result.output,
            is_error: result.is_error,
        });
        Ok(())
    }

    /// Answers the calls of the last turn that have no result.
    fn close_turn(&mut self) {
        for call in std::mem::take(&mut self.pending) {
            self.notes.push(format!(
                "tool call {} ({}) has no result: answered as not run",
                call.id, call.name
            ));
            self.history.push(HistoryMessage::ToolResult {
                call_id: call.id,
                name: call.name,
                output: NOT_RUN_OUTPUT.to_owned(),
                is_error: true,
            });
        }
    }

    fn finish(mut self, path: &Path) -> Continuation {
        self.close_turn();
        Continuation {
            file: path.to_owned(),
            header: self.header,
            system_prompt: self.system_prompt.unwrap_or_default(),
            history: self.history,
            turns: self.turns,
            ending: self.ending.unwrap_or(SessionStatus::Interrupted),
            called_tools: self.called_tools,
            notes: self.notes,
        }
    }
}

/// The arguments as JSON text: invalid JSON the model wrote was recorded
/// as `{"_raw": "..."}` and goes back as it was written.
fn arguments_json(args: &serde_json::Value) -> String {
    if let Some(object) = args.as_object()
        && object.len() == 1
        && let Some(serde_json::Value::String(raw)) = object.get("_raw")
    {
        return raw.clone();
    }
    args.to_string()
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;

//! Live progress of running children, for a caller that shows it as it
//! happens (the CLI's status line): which run waits for a slot, which
//! agent started, which turn it is on, which tool runs, tokens and cost so
//! far, and how it ended.
//!
//! The supervisor calls the [`ProgressSink`] inline as a child's events
//! arrive, so a sink must return at once: it must never block, wait on I/O
//! or take a lock that something slow holds, or it would hold off the
//! child's timeouts. It sees no more than session files do: names, counts
//! and costs, never task text, tool arguments or output, but for one
//! thing: the model's task list (`todo_write`), as its counts and the text
//! of the item in progress, masked for secrets as the session file holds
//! it. That text is the model's: a display makes it safe to show.
//!
//! A caller that relays the child's answer as it streams (`subagent call
//! --sse`) asks for [`ContentEvent`]s too, through a separate
//! [`ContentSink`] with the same never-block rule: text and reasoning
//! deltas, tool calls and results, secrets masked as in the session file.

use std::fmt;
use std::sync::Arc;

use subagent_protocol::result::TodoItem;
use subagent_protocol::text::prefix_bytes;
use subagent_protocol::{ErrorCode, Usage, WorkerEvent};

/// Most bytes of a task-list item's text a [`ProgressEvent::Todos`]
/// carries: more than one status line shows, a bound on what sinks copy.
pub const MAX_ACTIVE_TODO_BYTES: usize = 256;

/// One step of a running child, as a status display needs it.
#[derive(Debug, Clone, PartialEq)]
pub enum ProgressEvent {
    /// A root run waits for one of the supervisor's `max_concurrent`
    /// slots: every one is taken. Nothing of it has started; it starts
    /// when a slot frees ([`Self::LeftQueue`]).
    Queued {
        /// The run id it will have (its session file's, unless that name
        /// is taken by then).
        run_id: String,
        /// The agent it runs.
        agent: String,
        /// Root runs holding a slot when it queued.
        running: usize,
        /// The supervisor's `max_concurrent`.
        limit: usize,
    },
    /// A queued run stopped waiting: it has its slot and starts now
    /// (`admitted`), or it was cancelled while it waited (its `Ended`
    /// follows; no worker ever started).
    LeftQueue {
        /// The id its `Queued` named.
        run_id: String,
        /// True when it got a slot.
        admitted: bool,
    },
    /// The worker was spawned.
    Started {
        /// The child's run id.
        run_id: String,
        /// The agent it runs.
        agent: String,
        /// The model it asks.
        model: String,
    },
    /// A model turn (one request) began.
    Turn {
        /// The child's run id.
        run_id: String,
        /// 1-based turn number.
        turn: u32,
    },
    /// The model called a tool; it runs now.
    ToolStarted {
        /// The child's run id.
        run_id: String,
        /// The tool's name.
        name: String,
    },
    /// A tool call finished.
    ToolFinished {
        /// The child's run id.
        run_id: String,
        /// The tool's name.
        name: String,
        /// True when the tool failed or was refused.
        is_error: bool,
    },
    /// Tokens and cost of the run so far (all turns summed), sent after
    /// each turn. Input is counted as everywhere else (the result's
    /// `usage.input`): prompt tokens billed at the full price, the
    /// provider's cache left out and counted on its own.
    Usage {
        /// The child's run id.
        run_id: String,
        /// Prompt tokens the cache did not handle (`usage.input`).
        input_tokens: u64,
        /// Prompt tokens read from or written to the provider's cache
        /// (`usage.cacheRead + usage.cacheWrite`).
        cached_input_tokens: u64,
        /// Completion tokens.
        output_tokens: u64,
        /// US dollars; 0 for unknown or local models.
        cost: f64,
        /// True when the model's output cap (`max_tokens`) cut the turn
        /// that just ended.
        cut_by_max_tokens: bool,
    },
    /// The model's task list changed: a `todo_write` call was accepted.
    Todos {
        /// The child's run id.
        run_id: String,
        /// Items completed.
        done: usize,
        /// Items in the list.
        total: usize,
        /// What the item in progress says it is doing (its `activeForm`,
        /// else its content; the model's text, at most
        /// [`MAX_ACTIVE_TODO_BYTES`]); `None` when none is in progress.
        active: Option<String>,
    },
    /// The child is over and its tree is gone.
    Ended {
        /// The child's run id.
        run_id: String,
        /// The error code of the result (`SUBAGENT_TIMEOUT`, ...); `None`
        /// when it succeeded.
        error: Option<ErrorCode>,
    },
}

impl ProgressEvent {
    /// The event a worker event becomes, if it is one a status display
    /// shows. Usage is not mapped here: the display wants the run's total,
    /// which the caller keeps (see [`Self::usage`]).
    pub fn of_worker_event(run_id: &str, event: &WorkerEvent) -> Option<Self> {
        let run_id = run_id.to_owned();
        match event {
            WorkerEvent::TurnStart { turn } => Some(Self::Turn {
                run_id,
                turn: *turn,
            }),
            WorkerEvent::ToolCall { name, .. } => Some(Self::ToolStarted {
                run_id,
                name: name.clone(),
            }),
            WorkerEvent::ToolResult { name, is_error, .. } => Some(Self::ToolFinished {
                run_id,
                name: name.clone(),
                is_error: *is_error,
            }),
            _ => None,
        }
    }

    /// The run's usage so far as an event; `last_stop_reason` is the
    /// provider's stop reason of the turn that just ended.
    pub fn usage(run_id: &str, total: &Usage, last_stop_reason: Option<&str>) -> Self {
        Self::Usage {
            run_id: run_id.to_owned(),
            input_tokens: total.input,
            cached_input_tokens: total.cache_read.saturating_add(total.cache_write),
            output_tokens: total.output,
            cost: total.cost,
            cut_by_max_tokens: last_stop_reason
                .is_some_and(crate::session::ending::is_cut_by_max_tokens),
        }
    }

    /// The task list `list` of run `run_id` as an event.
    pub fn todos(run_id: &str, list: &[TodoItem]) -> Self {
        let (done, total, active) = crate::run::record::todos::summary(list);
        Self::Todos {
            run_id: run_id.to_owned(),
            done,
            total,
            active: active.map(|a| prefix_bytes(a, MAX_ACTIVE_TODO_BYTES).to_owned()),
        }
    }

    /// The run this event belongs to.
    pub fn run_id(&self) -> &str {
        match self {
            Self::Queued { run_id, .. }
            | Self::LeftQueue { run_id, .. }
            | Self::Started { run_id, .. }
            | Self::Turn { run_id, .. }
            | Self::ToolStarted { run_id, .. }
            | Self::ToolFinished { run_id, .. }
            | Self::Usage { run_id, .. }
            | Self::Todos { run_id, .. }
            | Self::Ended { run_id, .. } => run_id,
        }
    }
}

/// Where progress goes: a cheap, non-blocking callback (see the module doc).
/// Cloning shares the callback.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(&ProgressEvent) + Send + Sync>);

impl ProgressSink {
    /// A sink calling `f` for every event.
    pub fn new(f: impl Fn(&ProgressEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Hands `event` to the callback.
    pub fn emit(&self, event: &ProgressEvent) {
        (self.0)(event);
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink(..)")
    }
}

/// What a running child says, as it streams (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub enum ContentEvent {
    /// A piece of the model's answer text.
    TextDelta {
        /// The child's run id.
        run_id: String,
        /// The text.
        text: String,
    },
    /// A piece of the model's reasoning (summary) text.
    ReasoningDelta {
        /// The child's run id.
        run_id: String,
        /// The text.
        text: String,
    },
    /// The model called a tool (arguments complete).
    ToolCall {
        /// The child's run id.
        run_id: String,
        /// The provider's call id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The arguments as JSON text (the model's, possibly invalid).
        arguments_json: String,
    },
    /// A tool call finished.
    ToolResult {
        /// The child's run id.
        run_id: String,
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// What the model is shown.
        output: String,
        /// True when the tool failed or was refused.
        is_error: bool,
    },
}

impl ContentEvent {
    /// The content a worker event carries, if any, its text passed through
    /// `mask` (the run's secret masking).
    pub fn of_worker_event(
        run_id: &str,
        event: &WorkerEvent,
        mask: impl Fn(&str) -> String,
    ) -> Option<Self> {
        let run_id = run_id.to_owned();
        match event {
            WorkerEvent::TextDelta { text } => Some(Self::TextDelta {
                run_id,
                text: mask(text),
            }),
            WorkerEvent::ReasoningDelta { text } => Some(Self::ReasoningDelta {
                run_id,
                text: mask(text),
            }),
            WorkerEvent::ToolCall {
                call_id,
                name,
                arguments_json,
                ..
            } => Some(Self::ToolCall {
                run_id,
                call_id: call_id.clone(),
                name: name.clone(),
                arguments_json: mask(arguments_json),
            }),
            WorkerEvent::ToolResult {
                call_id,
                name,
                output,
                is_error,
                ..
            } => Some(Self::ToolResult {
                run_id,
                call_id: call_id.clone(),
                name: name.clone(),
                output: mask(output),
                is_error: *is_error,
            }),
            _ => None,
        }
    }

    /// The run this event belongs to.
    pub fn run_id(&self) -> &str {
        match self {
            Self::TextDelta { run_id, .. }
            | Self::ReasoningDelta { run_id, .. }
            | Self::ToolCall { run_id, .. }
            | Self::ToolResult { run_id, .. } => run_id,
        }
    }
}

/// Where content goes: like [`ProgressSink`], a cheap, non-blocking
/// callback. Cloning shares the callback.
#[derive(Clone)]
pub struct ContentSink(Arc<dyn Fn(&ContentEvent) + Send + Sync>);

impl ContentSink {
    /// A sink calling `f` for every event.
    pub fn new(f: impl Fn(&ContentEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Hands `event` to the callback.
    pub fn emit(&self, event: &ContentEvent) {
        (self.0)(event);
    }
}

impl fmt::Debug for ContentSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContentSink(..)")
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;

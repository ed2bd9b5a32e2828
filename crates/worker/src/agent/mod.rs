//! The agent loop: model turn -> tool calls -> tool results -> next turn,
//! until the model stops, `report_back` succeeds, a budget runs out, the run
//! is cancelled or the provider fails.
//!
//! In: a [`subagent_protocol::TaskSpec`], a [`crate::provider::Provider`]
//! (injected, so tests can script it), the tools the worker can offer and a
//! cancellation token. Out: [`subagent_protocol::WorkerEvent`]s as the run
//! progresses and exactly one [`subagent_protocol::Outcome`].
//!
//! The loop never touches fd 3 (see [`crate::protocol_io`]) and never prints.

mod budget;
mod events;
mod history;
mod run;
mod structured;
mod subagent_tool;
mod tool_calls;
mod workspace;

pub use budget::{BudgetExhausted, BudgetTracker};
pub use events::EventSink;
pub use run::{TaskEnv, run_task, run_task_with_subagents};
pub use structured::MAX_INVALID_REPORT_BACK_CALLS;
pub use subagent_tool::SUBAGENT_TOOL_NAME;
pub use tool_calls::MAX_TOOL_CALLS_PER_TURN;
pub use workspace::WORKSPACE_IS_CWD_ENV;

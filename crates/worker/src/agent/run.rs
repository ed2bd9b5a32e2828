//! [`run_task`]: one subagent run from task to [`Outcome`].
//!
//! Everything that can go wrong ends in an `Outcome` with an error code and a
//! message that says what happened and what to do next; partial output (the
//! last assistant text) is always kept. Cancellation is checked by racing the
//! model request and every tool call against the token, so a cancel ends the
//! run within one scheduler tick of its arrival.

use std::path::{Path, PathBuf};

use subagent_protocol::message::{LogLevel, OutcomeError};
use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{ErrorCode, Outcome, StopReason, TaskSpec, Usage, WorkerEvent};
use subagent_tools::mcp::{self, McpServers};
use subagent_tools::{PythonLater, REPORT_BACK_TOOL_NAME, ToolContext, ToolRegistry, cap_output};
use tokio_util::sync::CancellationToken;

use super::budget::{BudgetExhausted, BudgetTracker};
use super::events::EventSink;
use super::structured::{OutputContract, StopVerdict};
use super::subagent_tool::{self, SUBAGENT_TOOL_NAME};
use super::tool_calls::{MAX_TOOL_CALLS_PER_TURN, available_list, over_the_turn_limit, run_call};
use crate::provider::{
    ChatMessage, ChatRequest, Provider, ProviderError, StreamDelta, ToolCallRequest,
    ToolDefinition, TurnResponse,
};
use crate::subagent_calls::SubagentCalls;

/// What a run needs besides its spec and its provider.
#[derive(Debug)]
pub struct TaskEnv {
    /// Every tool the worker can offer; the run takes the spec's subset.
    pub tools: ToolRegistry,
    /// Price of the model; `None` when unknown (cost is then counted as 0
    /// and a log line says so).
    pub price: Option<ModelPrice>,
    /// Where progress events go.
    pub events: EventSink,
    /// Cancels the run: the model request and any tool are dropped at once.
    pub cancel: CancellationToken,
    /// Where the Python interpreter arrives when the spec says it is
    /// still pending; `None` outside a supervised worker.
    pub python_later: Option<PythonLater>,
}

/// Runs `spec` to completion against `provider` and returns how it ended.
///
/// Fails with `INVALID_INPUT` before any model call when the output schema
/// is unusable or the tool subset names an unknown tool. `report_back` in
/// `spec.tools` is ignored: it is offered exactly when a schema is given in
/// report-back mode.
pub async fn run_task(spec: &TaskSpec, provider: Box<dyn Provider>, env: TaskEnv) -> Outcome {
    run_task_with_subagents(spec, provider, env, None).await
}

/// [`run_task`] with the `subagent` tool: offered when `spec.tools` names
/// it and `subagents` can reach the supervisor (without them the name is
/// dropped, as the depth limit would).
pub async fn run_task_with_subagents(
    spec: &TaskSpec,
    provider: Box<dyn Provider>,
    env: TaskEnv,
    subagents: Option<SubagentCalls>,
) -> Outcome {
    let contract = match OutputContract::for_spec(spec) {
        Ok(contract) => contract,
        Err(e) => return invalid_input(spec, format!("{e}; fix the schema and call again")),
    };
    let wanted: Vec<String> = spec
        .tools
        .iter()
        .filter(|name| *name != REPORT_BACK_TOOL_NAME && *name != SUBAGENT_TOOL_NAME)
        .cloned()
        .collect();
    let subagents = subagents.filter(|_| spec.tools.iter().any(|t| t == SUBAGENT_TOOL_NAME));
    let tools = match env.tools.subset(&wanted) {
        Ok(tools) => tools,
        Err(e) => {
            return invalid_input(
                spec,
                format!("the task's tool subset is not usable: {e}; remove or fix those names"),
            );
        }
    };
    let tool_ctx = tool_context(spec, env.python_later.clone());
    AgentLoop::new(spec, provider, tools, contract, env, tool_ctx, subagents)
        .run()
        .await
}

/// The context every tool call of the run gets.
fn tool_context(spec: &TaskSpec, python_later: Option<PythonLater>) -> ToolContext {
    ToolContext::from_limits(
        PathBuf::from(&spec.workspace_dir),
        &spec.limits,
        spec.allow_network,
        spec.require_sandbox,
    )
    .with_web(&spec.web)
    .with_python(spec.python.as_ref(), python_later)
    .with_protected(&spec.protected_paths)
    .with_workspace_pin(
        super::workspace::workspace_pin(Path::new(&spec.workspace_dir)),
        &spec.run_id,
    )
}

fn invalid_input(spec: &TaskSpec, message: String) -> Outcome {
    Outcome::failure(
        spec.provider.model.clone(),
        ErrorCode::InvalidInput,
        message,
    )
}

/// How a step of the loop ended when it did not simply continue.
enum Step {
    Continue,
    End(Outcome),
}

struct AgentLoop<'s> {
    provider: Box<dyn Provider>,
    request: ChatRequest,
    tools: ToolRegistry,
    /// Set when the `subagent` tool is offered.
    subagents: Option<SubagentCalls>,
    available: String,
    tool_ctx: ToolContext,
    contract: OutputContract,
    budget: BudgetTracker,
    usage: Usage,
    price: Option<ModelPrice>,
    cost_unknown_logged: bool,
    last_text: String,
    model: String,
    events: EventSink,
    cancel: CancellationToken,
    spec: &'s TaskSpec,
}

impl<'s> AgentLoop<'s> {
    fn new(
        spec: &'s TaskSpec,
        provider: Box<dyn Provider>,
        tools: ToolRegistry,
        contract: OutputContract,
        env: TaskEnv,
        tool_ctx: ToolContext,
        subagents: Option<SubagentCalls>,
    ) -> Self {
        let mut definitions: Vec<ToolDefinition> = tools
            .iter()
            .map(|tool| ToolDefinition {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: tool.parameters(),
            })
            .collect();
        if subagents.is_some() {
            definitions.push(subagent_tool::definition());
        }
        definitions.extend(contract.tool_definition());
        let names: Vec<String> = definitions.iter().map(|d| d.name.clone()).collect();
        let system_prompt = match contract.system_prompt_line() {
            Some(line) if spec.system_prompt.is_empty() => line.to_owned(),
            Some(line) => format!("{}\n\n{line}", spec.system_prompt),
            None => spec.system_prompt.clone(),
        };
        Self {
            provider,
            request: ChatRequest {
                system_prompt,
                messages: super::history::opening_messages(spec),
                tools: definitions,
                native_schema: contract.native_schema(),
            },
            tools,
            subagents,
            available: available_list(&names),
            tool_ctx,
            contract,
            budget: BudgetTracker::new(spec.budget),
            usage: Usage::default(),
            price: env.price,
            cost_unknown_logged: false,
            last_text: String::new(),
            model: spec.provider.model.clone(),
            events: env.events,
            cancel: env.cancel,
            spec,
        }
    }

    async fn run(mut self) -> Outcome {
        let Some(servers) = self.start_mcp_servers().await else {
            return self.cancelled_outcome();
        };
        let outcome = self.run_turns().await;
        for note in servers.stop().await {
            self.events.log(note.level, note.text);
        }
        outcome
    }

    /// Starts the run's MCP servers and offers their tools; `None` when
    /// the run was cancelled meanwhile (what had started is killed).
    async fn start_mcp_servers(&mut self) -> Option<McpServers> {
        if self.spec.mcp_servers.is_empty() {
            return Some(McpServers::default());
        }
        let start = tokio::select! {
            start = mcp::start_servers(&self.spec.mcp_servers, &self.tool_ctx) => start,
            () = self.cancel.cancelled() => return None,
        };
        for note in start.notes {
            self.events.log(note.level, note.text);
        }
        // Before report_back's definition, which the model should see last.
        let mut position =
            self.request.tools.len() - usize::from(self.contract.tool_definition().is_some());
        for tool in start.tools {
            let definition = ToolDefinition {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: tool.parameters(),
            };
            match self.tools.register(tool) {
                Ok(()) => {
                    self.request.tools.insert(position, definition);
                    position += 1;
                }
                Err(e) => self.events.log(
                    LogLevel::Warn,
                    format!("`{}` is not offered: {e}", definition.name),
                ),
            }
        }
        let names: Vec<String> = self.request.tools.iter().map(|d| d.name.clone()).collect();
        self.available = available_list(&names);
        Some(start.servers)
    }

    async fn run_turns(&mut self) -> Outcome {
        loop {
            if let Some(exhausted) = self.budget.exhausted() {
                return self.budget_outcome(exhausted);
            }
            let turn = self.budget.turns_used() + 1;
            let response = match self.model_turn(turn).await {
                Ok(response) => response,
                Err(outcome) => return *outcome,
            };
            let step = if response.tool_calls.is_empty() {
                self.on_stop(&response.text)
            } else {
                self.run_tool_calls(turn, response.tool_calls).await
            };
            if let Step::End(outcome) = step {
                return outcome;
            }
        }
    }

    /// Runs one model turn and records it (events, usage, history).
    async fn model_turn(&mut self, turn: u32) -> Result<TurnResponse, Box<Outcome>> {
        self.events.emit(WorkerEvent::TurnStart { turn });
        let mut streamed = String::new();
        let events = self.events.clone();
        let mut on_delta = |delta: StreamDelta| match delta {
            StreamDelta::Text(text) => {
                streamed.push_str(&text);
                events.emit(WorkerEvent::TextDelta { text });
            }
            StreamDelta::Reasoning(text) => events.emit(WorkerEvent::ReasoningDelta { text }),
        };
        let result = tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(ProviderError::Cancelled),
            result = self.provider.turn(&self.request, &mut on_delta) => result,
        };
        // After the turn, however it ended (a cancel drops it mid-wait): the
        // session file shows each failed attempt and the wait that followed.
        for retry in self.provider.take_retries() {
            self.events
                .log(LogLevel::Warn, format!("model turn {turn}: {retry}"));
        }
        let response = match result {
            Ok(response) => response,
            Err(e) => {
                if !streamed.is_empty() {
                    self.last_text = streamed;
                }
                return Err(Box::new(if self.cancel.is_cancelled() {
                    self.cancelled_outcome()
                } else if let ProviderError::TooLarge { .. } = e {
                    // The model's output passed a hard limit: what arrived
                    // is kept, like any truncated output.
                    self.error_outcome(
                        StopReason::Error,
                        ErrorCode::SubagentOutputTruncated,
                        format!(
                            "model turn {turn} stopped: {e}; the text up to there is kept. \
                             Ask for a shorter answer or set max_tokens"
                        ),
                    )
                } else {
                    self.failed_outcome(format!(
                        "model turn {turn} failed: {e}; check the provider settings and try again"
                    ))
                }));
            }
        };
        self.record_turn(turn, &response);
        Ok(response)
    }

    fn record_turn(&mut self, turn: u32, response: &TurnResponse) {
        if let Some(model) = &response.model {
            self.model.clone_from(model);
        }
        let mut usage = response.usage;
        usage.turns = 1;
        usage.cost = match &self.price {
            Some(price) => price.cost_of(&usage),
            None => {
                if !self.cost_unknown_logged {
                    self.cost_unknown_logged = true;
                    self.events.log(
                        LogLevel::Warn,
                        format!(
                            "cost unknown for model {}: counted as 0 (max_cost cannot stop it); \
                             give the model a price to count it",
                            self.spec.provider.model
                        ),
                    );
                }
                0.0
            }
        };
        self.budget.record_turn(usage.cost);
        self.usage.add(&usage);
        if !response.text.is_empty() {
            self.last_text.clone_from(&response.text);
        }
        self.events.emit(WorkerEvent::AssistantMessageEnd {
            turn,
            text: response.text.clone(),
            stop_reason: response.stop_reason.clone(),
            response_id: response.id.clone(),
        });
        self.events.emit(WorkerEvent::Usage { turn, usage });
        self.request.messages.push(ChatMessage::Assistant {
            text: response.text.clone(),
            tool_calls: response.tool_calls.clone(),
        });
    }

    /// The model ended its turn without tool calls.
    fn on_stop(&mut self, text: &str) -> Step {
        match self.contract.on_stop(text) {
            StopVerdict::Finished { structured } => Step::End(Outcome {
                final_text: self.last_text.clone(),
                structured_output_json: structured.map(|value| value.to_string()),
                usage: self.usage,
                stop_reason: StopReason::Completed,
                error: None,
                model: self.model.clone(),
            }),
            StopVerdict::Remind(text) => {
                // Recorded, so a resumed run sees the same conversation.
                self.events.emit(WorkerEvent::UserMessage {
                    turn: self.budget.turns_used(),
                    text: text.clone(),
                });
                self.request.messages.push(ChatMessage::User { text });
                Step::Continue
            }
            StopVerdict::Invalid(message) => Step::End(self.error_outcome(
                StopReason::Error,
                ErrorCode::SubagentStructuredOutputInvalid,
                message,
            )),
        }
    }

    /// Runs every call of the turn in order (a valid `report_back` ends the
    /// task only after the others have run and been recorded); calls past
    /// [`MAX_TOOL_CALLS_PER_TURN`] are answered with an error, not run.
    async fn run_tool_calls(&mut self, turn: u32, calls: Vec<ToolCallRequest>) -> Step {
        for call in &calls {
            self.events.emit(WorkerEvent::ToolCall {
                turn,
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments_json: call.arguments_json.clone(),
            });
        }
        if calls.len() > MAX_TOOL_CALLS_PER_TURN {
            self.events.log(
                LogLevel::Warn,
                format!(
                    "model turn {turn} made {} tool calls: the first {MAX_TOOL_CALLS_PER_TURN} \
                     run, the other {} are answered with an error",
                    calls.len(),
                    calls.len() - MAX_TOOL_CALLS_PER_TURN
                ),
            );
        }
        for (index, call) in calls.into_iter().enumerate() {
            let (output, is_error) = match self.contract.report_back() {
                _ if index >= MAX_TOOL_CALLS_PER_TURN => {
                    let answer = over_the_turn_limit(&self.tool_ctx, &call.name);
                    (answer.output, answer.is_error)
                }
                Some(state) if call.name == REPORT_BACK_TOOL_NAME => {
                    let answer = state.check(&call.arguments_json);
                    (answer.output, answer.is_error)
                }
                _ if call.name == SUBAGENT_TOOL_NAME && self.subagents.is_some() => {
                    match self.run_subagent(&call).await {
                        Some(answer) => answer,
                        None => return Step::End(self.cancelled_outcome()),
                    }
                }
                _ => match run_call(
                    &self.tools,
                    &self.available,
                    &self.tool_ctx,
                    &call.name,
                    &call.arguments_json,
                    &self.cancel,
                )
                .await
                {
                    Some(out) => (out.output, out.is_error),
                    None => return Step::End(self.cancelled_outcome()),
                },
            };
            for notice in self.tool_ctx.notices.take() {
                self.events.log(LogLevel::Warn, notice);
            }
            self.events.emit(WorkerEvent::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                output: output.clone(),
                is_error,
            });
            self.request.messages.push(ChatMessage::ToolResult {
                call_id: call.id,
                name: call.name,
                output,
                is_error,
            });
        }
        let Some(state) = self.contract.report_back() else {
            return Step::Continue;
        };
        if let Some(value) = state.accepted() {
            let json = value.to_string();
            return Step::End(Outcome {
                final_text: json.clone(),
                structured_output_json: Some(json),
                usage: self.usage,
                stop_reason: StopReason::ReportBack,
                error: None,
                model: self.model.clone(),
            });
        }
        if state.attempts_exhausted() {
            let message = state.exhausted_message();
            return Step::End(self.error_outcome(
                StopReason::Error,
                ErrorCode::SubagentStructuredOutputInvalid,
                message,
            ));
        }
        Step::Continue
    }

    /// One `subagent` call: the supervisor runs the grandchild; what it
    /// spent counts against this run's budget. `None` when cancelled.
    async fn run_subagent(&mut self, call: &ToolCallRequest) -> Option<(String, bool)> {
        let calls = self.subagents.as_ref()?;
        let answer = subagent_tool::run(
            calls,
            &call.id,
            &call.arguments_json,
            subagent_tool::reply_deadline(&self.spec.limits),
            &self.cancel,
        )
        .await?;
        self.budget
            .record_nested(answer.usage.turns, answer.usage.cost);
        let caps = self.tool_ctx.output_caps;
        let output = cap_output(&answer.output, caps.max_bytes, caps.max_lines).text;
        Some((output, answer.is_error))
    }

    fn budget_outcome(&self, exhausted: BudgetExhausted) -> Outcome {
        self.error_outcome(
            exhausted.stop_reason(),
            ErrorCode::SubagentBudgetExceeded,
            exhausted.message(),
        )
    }

    fn cancelled_outcome(&self) -> Outcome {
        self.error_outcome(
            StopReason::Cancelled,
            ErrorCode::SubagentCancelled,
            "the run was cancelled before it finished; the partial output is kept".to_owned(),
        )
    }

    fn failed_outcome(&self, message: String) -> Outcome {
        self.error_outcome(StopReason::Error, ErrorCode::SubagentFailed, message)
    }

    fn error_outcome(&self, stop_reason: StopReason, code: ErrorCode, message: String) -> Outcome {
        Outcome {
            final_text: self.last_text.clone(),
            structured_output_json: None,
            usage: self.usage,
            stop_reason,
            error: Some(OutcomeError { code, message }),
            model: self.model.clone(),
        }
    }
}

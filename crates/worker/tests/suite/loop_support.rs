//! Shared pieces of the agent-loop tests: a scripted `Provider` (the loop's
//! own seam; the HTTP providers are tested in `provider_*`), test tools, a
//! task spec builder and a runner that collects events and requests.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{
    Budget, FromWorker, Limits, Outcome, OutputMode, ProviderKind, ProviderSpec, TaskSpec, Usage,
    WorkerEvent,
};
use subagent_tools::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput, ToolRegistry};
use subagent_worker::agent::{EventSink, TaskEnv, run_task};
use subagent_worker::provider::{
    ChatMessage, ChatRequest, Provider, ProviderError, StreamDelta, ToolCallRequest, TurnFuture,
    TurnResponse,
};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// One scripted model turn.
pub enum Turn {
    /// Stream `text` as one delta, then answer with it and these calls.
    Reply {
        text: String,
        calls: Vec<ToolCallRequest>,
        usage: Usage,
    },
    /// Fail the turn.
    Fail(ProviderError),
    /// Stream `text`, say so on `entered`, then never finish; `dropped` is
    /// set when the turn's future is dropped.
    Block {
        text: String,
        entered: oneshot::Sender<()>,
        dropped: Arc<AtomicBool>,
    },
}

/// A text-only turn.
pub fn text(text: &str) -> Turn {
    Turn::Reply {
        text: text.to_owned(),
        calls: Vec::new(),
        usage: Usage::default(),
    }
}

/// A turn with `text` and tool calls given as `(name, arguments_json)`.
pub fn calls(text: &str, calls: &[(&str, &str)]) -> Turn {
    Turn::Reply {
        text: text.to_owned(),
        calls: calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| ToolCallRequest {
                id: format!("call_{i}_{name}"),
                name: (*name).to_owned(),
                arguments_json: (*args).to_owned(),
            })
            .collect(),
        usage: Usage::default(),
    }
}

/// A scripted provider that records every request it gets.
pub struct ScriptedProvider {
    turns: VecDeque<Turn>,
    requests: Arc<Mutex<Vec<ChatRequest>>>,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Provider for ScriptedProvider {
    fn turn<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> TurnFuture<'a> {
        self.requests.lock().unwrap().push(request.clone());
        let turn = self.turns.pop_front();
        Box::pin(async move {
            match turn {
                Some(Turn::Reply { text, calls, usage }) => {
                    if !text.is_empty() {
                        on_delta(StreamDelta::Text(text.clone()));
                    }
                    Ok(TurnResponse {
                        text,
                        stop_reason: if calls.is_empty() {
                            "stop"
                        } else {
                            "tool_calls"
                        }
                        .to_owned(),
                        tool_calls: calls,
                        usage,
                        model: None,
                        // Every scripted turn answers with this id: the loop
                        // must hand it on in `AssistantMessageEnd`.
                        id: Some("scripted-response".to_owned()),
                    })
                }
                Some(Turn::Fail(e)) => Err(e),
                Some(Turn::Block {
                    text,
                    entered,
                    dropped,
                }) => {
                    let _guard = SetOnDrop(dropped);
                    on_delta(StreamDelta::Text(text));
                    let _ = entered.send(());
                    std::future::pending().await
                }
                None => panic!("the loop asked for more turns than scripted"),
            }
        })
    }
}

/// Echoes its `text` argument.
pub struct Echo;

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "echoes text"
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}})
    }
    fn call<'a>(&'a self, arguments: serde_json::Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let text = arguments["text"].as_str().unwrap_or_default().to_owned();
            Ok(ToolOutput::text(text))
        })
    }
}

/// Always fails.
pub struct Fail;

impl Tool for Fail {
    fn name(&self) -> &str {
        "fail"
    }
    fn description(&self) -> &str {
        "always fails"
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }
    fn call<'a>(&'a self, _arguments: serde_json::Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::Failed("disk full".to_owned())) })
    }
}

/// Never finishes; sets `dropped` when its future is dropped.
pub struct Hang {
    pub entered: Mutex<Option<oneshot::Sender<()>>>,
    pub dropped: Arc<AtomicBool>,
}

impl Tool for Hang {
    fn name(&self) -> &str {
        "hang"
    }
    fn description(&self) -> &str {
        "never returns"
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }
    fn call<'a>(&'a self, _arguments: serde_json::Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let guard = SetOnDrop(Arc::clone(&self.dropped));
        let entered = self.entered.lock().unwrap().take();
        Box::pin(async move {
            let _guard = guard;
            if let Some(entered) = entered {
                let _ = entered.send(());
            }
            std::future::pending().await
        })
    }
}

/// The test tools every loop test can offer.
pub fn test_tools() -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Echo)).unwrap();
    tools.register(Arc::new(Fail)).unwrap();
    tools
}

/// A task with the test tools and no schema.
pub fn spec() -> TaskSpec {
    TaskSpec {
        run_id: "0123abcd".to_owned(),
        agent: "tester".to_owned(),
        task: "do the thing".to_owned(),
        system_prompt: "You are a test.".to_owned(),
        provider: ProviderSpec {
            kind: ProviderKind::OpenaiChat,
            base_url: "http://127.0.0.1:9/v1".to_owned(),
            model: "test-model".to_owned(),
            api_key: None,
            temperature: None,
            max_tokens: None,
            reasoning: false,
            price: None,
        },
        tools: vec!["echo".to_owned(), "fail".to_owned()],
        output_schema_json: None,
        output_mode: OutputMode::ReportBack,
        budget: Budget::default(),
        limits: Limits::default(),
        workspace_dir: ".".to_owned(),
        allow_network: false,
        require_sandbox: false,
        depth: 1,
        max_depth: 1,
        web: Default::default(),
        python: None,
        protected_paths: Vec::new(),
        history: Vec::new(),
        mcp_servers: Vec::new(),
    }
}

/// What one run produced.
pub struct Ran {
    pub outcome: Outcome,
    pub events: Vec<WorkerEvent>,
    pub requests: Vec<ChatRequest>,
}

impl Ran {
    /// The tool results the model was shown, as `(name, output, is_error)`.
    pub fn tool_results(&self) -> Vec<(String, String, bool)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                WorkerEvent::ToolResult {
                    name,
                    output,
                    is_error,
                    ..
                } => Some((name.clone(), output.clone(), *is_error)),
                _ => None,
            })
            .collect()
    }

    /// The last message of request `n` (0-based).
    pub fn last_message_of(&self, n: usize) -> &ChatMessage {
        self.requests[n].messages.last().unwrap()
    }
}

/// Runs `spec` against `turns` with the test tools.
pub async fn run(spec: &TaskSpec, turns: Vec<Turn>, price: Option<ModelPrice>) -> Ran {
    run_with(spec, turns, test_tools(), price, CancellationToken::new()).await
}

/// Runs `spec` with every knob given.
pub async fn run_with(
    spec: &TaskSpec,
    turns: Vec<Turn>,
    tools: ToolRegistry,
    price: Option<ModelPrice>,
    cancel: CancellationToken,
) -> Ran {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let provider = ScriptedProvider {
        turns: turns.into(),
        requests: Arc::clone(&requests),
    };
    let (events, mut rx) = EventSink::channel();
    let env = TaskEnv {
        tools,
        price,
        events,
        cancel,
        python_later: None,
    };
    let outcome = run_task(spec, Box::new(provider), env).await;
    let mut events = Vec::new();
    while let Some(frame) = rx.try_recv() {
        match frame {
            FromWorker::Event(event) => events.push(event),
            other => panic!("the loop sent a non-event frame: {other:?}"),
        }
    }
    let requests = requests.lock().unwrap().clone();
    Ran {
        outcome,
        events,
        requests,
    }
}

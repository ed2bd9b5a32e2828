//! Named, deterministic sample messages: one or more per variant of
//! [`ToWorker`], [`FromWorker`] and [`WorkerEvent`]. Round-trip and golden
//! tests share them, and [`variant_coverage`] fails when a variant has none.

use std::collections::BTreeSet;

use subagent_protocol::message::{LogLevel, OutcomeError};
use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{
    ApiKey, Budget, ErrorCode, FromWorker, Hello, HistoryMessage, HistoryToolCall, Limits,
    McpEnvVar, McpServerSpec, McpToolSelection, Outcome, OutputMode, ProviderKind, ProviderSpec,
    PythonInterpreter, SearchBackend, SearchKind, SpawnRequest, StopReason, SubagentReply,
    TaskSpec, ToWorker, Usage, WebSettings, WorkerEvent,
};

/// A task spec with every optional field set and every limit distinct from
/// its default, so a swapped or dropped field changes the bytes.
pub fn full_task_spec() -> TaskSpec {
    TaskSpec {
        run_id: "a1b2c3d4".into(),
        agent: "reviewer".into(),
        task: "Review the diff and list risky changes.".into(),
        system_prompt: "You are a careful reviewer. Answer in English.".into(),
        provider: ProviderSpec {
            kind: ProviderKind::OpenaiResponses,
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: "smollm2-135m-instruct".into(),
            api_key: Some(ApiKey::new("sk-test-0123456789")),
            temperature: Some(0.25),
            max_tokens: Some(512),
            reasoning: true,
            price: Some(ModelPrice {
                input: 1.25,
                output: 10.0,
                cache_read: 0.125,
                cache_write: 1.5,
            }),
        },
        tools: vec![
            "bash_read".into(),
            "bash_ripgrep".into(),
            "report_back".into(),
        ],
        output_schema_json: Some(
            r#"{"type":"object","required":["verdict"],"properties":{"verdict":{"type":"string"}}}"#
                .into(),
        ),
        output_mode: OutputMode::ReportBack,
        budget: Budget {
            max_turns: 12,
            max_cost: Some(0.5),
        },
        limits: Limits {
            wall_timeout_ms: 600_000,
            idle_timeout_ms: 120_000,
            kill_grace_ms: 2_000,
            stdout_bytes: 4 << 20,
            stderr_bytes: 512 << 10,
            memory_bytes: 1 << 30,
            pids: 128,
            file_size_bytes: 64 << 20,
            open_files: 512,
            cpu_seconds: Some(300),
            returned_text_bytes: 100 << 10,
            returned_text_lines: 4_000,
            tool_output_bytes: 40 << 10,
            tool_output_lines: 1_500,
            tool_timeout_ms: 60_000,
            tool_timeout_max_ms: 90_000,
            tool_memory_bytes: 512 << 20,
            tool_pids: 32,
            tool_disk_bytes: 256 << 20,
            protocol_bytes: 32 << 20,
        },
        workspace_dir: "workspace/repo".into(),
        allow_network: true,
        require_sandbox: true,
        depth: 1,
        max_depth: 2,
        web: WebSettings {
            search: Some(SearchBackend {
                kind: SearchKind::Brave,
                url: "http://127.0.0.1:8888".into(),
                api_key: Some(ApiKey::new("brave-test-key-0123")),
            }),
            allow_private_networks: true,
            allow_link_local_networks: false,
        },
        python: Some(PythonInterpreter::Found {
            executable: "/usr/bin/python3.11".into(),
            prefixes: vec!["/usr".into()],
        }),
        protected_paths: vec!["/tmp/ws/.config/subagent".into()],
        history: vec![
            HistoryMessage::User {
                text: "List the files.".into(),
            },
            HistoryMessage::Assistant {
                text: "Looking.".into(),
                tool_calls: vec![HistoryToolCall {
                    id: "call_1".into(),
                    name: "bash_find".into(),
                    arguments_json: r#"{"pattern":"*"}"#.into(),
                }],
            },
            HistoryMessage::ToolResult {
                call_id: "call_1".into(),
                name: "bash_find".into(),
                output: "a.txt".into(),
                is_error: false,
            },
        ],
        mcp_servers: vec![McpServerSpec {
            name: "time".into(),
            command: "/opt/mcp/bin/mcp-server-time".into(),
            args: vec!["--local-timezone".into(), "UTC".into()],
            env: vec![McpEnvVar {
                name: "TOKEN".into(),
                value: ApiKey::new("s3cret"),
            }],
            read_only: vec!["/opt/mcp".into()],
            startup_timeout_ms: 10_000,
            tool_timeout_ms: 60_000,
            tools: McpToolSelection {
                only: Some(vec!["get_current_time".into()]),
                disabled: vec!["convert_time".into()],
            },
        }],
    }
}

/// A task spec with every optional field empty.
pub fn minimal_task_spec() -> TaskSpec {
    TaskSpec {
        run_id: "0000ffff".into(),
        agent: "scout".into(),
        task: "ls".into(),
        system_prompt: String::new(),
        provider: ProviderSpec {
            kind: ProviderKind::Anthropic,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: None,
            temperature: None,
            max_tokens: None,
            reasoning: false,
            price: None,
        },
        tools: Vec::new(),
        output_schema_json: None,
        output_mode: OutputMode::Native,
        budget: Budget::default(),
        limits: Limits::default(),
        workspace_dir: String::new(),
        allow_network: false,
        require_sandbox: false,
        depth: 1,
        max_depth: 1,
        web: WebSettings::default(),
        python: None,
        protected_paths: Vec::new(),
        history: Vec::new(),
        mcp_servers: Vec::new(),
    }
}

/// A minimal task spec for Claude on Vertex AI (protocol 4).
pub fn vertex_task_spec() -> TaskSpec {
    let mut spec = minimal_task_spec();
    spec.provider = ProviderSpec::new(
        ProviderKind::VertexaiAnthropic,
        "https://europe-west1-aiplatform.googleapis.com/v1/projects/p-1/locations/europe-west1",
        "claude-sonnet-4@20250514",
    );
    spec.provider.api_key = Some(ApiKey::new("ya29.token"));
    spec
}

fn usage() -> Usage {
    Usage {
        input: 1_234,
        output: 567,
        cache_read: 89,
        cache_write: 10,
        cost: 0.0042,
        turns: 3,
    }
}

/// Supervisor -> worker samples, by fixture name.
pub fn to_worker() -> Vec<(&'static str, ToWorker)> {
    vec![
        (
            "to_worker_start_full",
            ToWorker::Start(Box::new(full_task_spec())),
        ),
        (
            "to_worker_start_minimal",
            ToWorker::Start(Box::new(minimal_task_spec())),
        ),
        (
            "to_worker_start_vertex",
            ToWorker::Start(Box::new(vertex_task_spec())),
        ),
        (
            "to_worker_cancel",
            ToWorker::Cancel {
                reason: "wall timeout".into(),
            },
        ),
        ("to_worker_ping", ToWorker::Ping),
        (
            "to_worker_subagent_result",
            ToWorker::SubagentResult(Box::new(SubagentReply {
                call_id: "call_07".into(),
                is_error: true,
                output: "SUBAGENT_SPAWN_DENIED: budget".into(),
                usage: usage(),
                error_code: Some(ErrorCode::SubagentSpawnDenied),
            })),
        ),
        (
            "to_worker_python",
            ToWorker::Python(PythonInterpreter::Found {
                executable: "/usr/bin/python3.11".into(),
                prefixes: vec!["/usr".into()],
            }),
        ),
    ]
}

/// Worker -> supervisor samples, by fixture name.
pub fn from_worker() -> Vec<(&'static str, FromWorker)> {
    let event = |e| FromWorker::Event(e);
    vec![
        (
            "from_worker_hello",
            FromWorker::Hello(Hello {
                protocol_version: 1,
                worker_version: "0.1.0".into(),
                pid: 4242,
            }),
        ),
        (
            "from_worker_event_turn_start",
            event(WorkerEvent::TurnStart { turn: 1 }),
        ),
        (
            "from_worker_event_text_delta",
            event(WorkerEvent::TextDelta {
                text: "Hel\u{e9}lo, \u{1f600}".into(),
            }),
        ),
        (
            "from_worker_event_reasoning_delta",
            event(WorkerEvent::ReasoningDelta {
                text: "Thinking about the diff.".into(),
            }),
        ),
        (
            "from_worker_event_tool_call",
            event(WorkerEvent::ToolCall {
                turn: 2,
                call_id: "call_01".into(),
                name: "bash_ripgrep".into(),
                arguments_json: r#"{"pattern":"unsafe","path":"src"}"#.into(),
            }),
        ),
        (
            "from_worker_event_tool_result",
            event(WorkerEvent::ToolResult {
                call_id: "call_01".into(),
                name: "bash_ripgrep".into(),
                output: "src/lib.rs:12: unsafe { .. }\n".into(),
                is_error: false,
            }),
        ),
        (
            "from_worker_event_tool_result_error",
            event(WorkerEvent::ToolResult {
                call_id: "call_02".into(),
                name: "python_execute".into(),
                output: "tool not allowed for this agent".into(),
                is_error: true,
            }),
        ),
        (
            "from_worker_event_assistant_message_end",
            event(WorkerEvent::AssistantMessageEnd {
                turn: 2,
                text: "Two risky changes.".into(),
                stop_reason: "end_turn".into(),
                response_id: Some("msg_01XFDUDYJgAACzvnptvVoYEL".into()),
            }),
        ),
        (
            "from_worker_event_usage",
            event(WorkerEvent::Usage {
                turn: 2,
                usage: Usage {
                    turns: 1,
                    ..usage()
                },
            }),
        ),
        (
            "from_worker_event_log_debug",
            event(WorkerEvent::Log {
                level: LogLevel::Debug,
                message: "request 1 sent".into(),
            }),
        ),
        (
            "from_worker_event_log_info",
            event(WorkerEvent::Log {
                level: LogLevel::Info,
                message: "turn 1 done".into(),
            }),
        ),
        (
            "from_worker_event_log_warn",
            event(WorkerEvent::Log {
                level: LogLevel::Warn,
                message: "429, retrying in 2 s".into(),
            }),
        ),
        (
            "from_worker_event_log_error",
            event(WorkerEvent::Log {
                level: LogLevel::Error,
                message: "provider closed the stream".into(),
            }),
        ),
        (
            "from_worker_event_user_message",
            event(WorkerEvent::UserMessage {
                turn: 2,
                text: "Call report_back now.".into(),
            }),
        ),
        ("from_worker_pong", FromWorker::Pong),
        (
            "from_worker_done_success",
            FromWorker::Done(Box::new(Outcome {
                final_text: "Two risky changes: ...".into(),
                structured_output_json: None,
                usage: usage(),
                stop_reason: StopReason::Completed,
                error: None,
                model: "smollm2-135m-instruct".into(),
            })),
        ),
        (
            "from_worker_done_structured",
            FromWorker::Done(Box::new(Outcome {
                final_text: r#"{"verdict":"ok"}"#.into(),
                structured_output_json: Some(r#"{"verdict":"ok"}"#.into()),
                usage: usage(),
                stop_reason: StopReason::ReportBack,
                error: None,
                model: "smollm2-135m-instruct".into(),
            })),
        ),
        (
            "from_worker_done_error",
            FromWorker::Done(Box::new(Outcome {
                final_text: "partial".into(),
                structured_output_json: None,
                usage: usage(),
                stop_reason: StopReason::MaxTurns,
                error: Some(OutcomeError {
                    code: ErrorCode::SubagentBudgetExceeded,
                    message: "turn budget of 12 used up; raise max_turns".into(),
                }),
                model: "smollm2-135m-instruct".into(),
            })),
        ),
        (
            "from_worker_spawn_subagent",
            FromWorker::SpawnSubagent(Box::new(SpawnRequest {
                call_id: "call_07".into(),
                agent: "explorer".into(),
                task: "Find the config parser.".into(),
                output_schema_json: Some(r#"{"type":"object"}"#.into()),
                max_turns: Some(5),
                max_cost: Some(0.25),
                tools: Some(vec!["bash_read".into()]),
                limits_json: Some(r#"{"memory":"128M"}"#.into()),
            })),
        ),
    ]
}

/// Variant index of a [`ToWorker`]. Exhaustive on purpose: a new variant
/// does not compile until it is given an index here and a sample above.
fn to_worker_variant(m: &ToWorker) -> usize {
    match m {
        ToWorker::Start(_) => 0,
        ToWorker::Cancel { .. } => 1,
        ToWorker::Ping => 2,
        ToWorker::SubagentResult(_) => 3,
        ToWorker::Python(_) => 4,
    }
}
const TO_WORKER_VARIANTS: usize = 5;

/// Variant index of a [`FromWorker`], counting each [`WorkerEvent`] and each
/// `Done` shape (success, structured, error) separately.
fn from_worker_variant(m: &FromWorker) -> usize {
    match m {
        FromWorker::Hello(_) => 0,
        FromWorker::Event(e) => match e {
            WorkerEvent::TurnStart { .. } => 1,
            WorkerEvent::TextDelta { .. } => 2,
            WorkerEvent::ReasoningDelta { .. } => 3,
            WorkerEvent::ToolCall { .. } => 4,
            WorkerEvent::ToolResult { .. } => 5,
            WorkerEvent::AssistantMessageEnd { .. } => 6,
            WorkerEvent::Usage { .. } => 7,
            WorkerEvent::Log { .. } => 8,
            WorkerEvent::UserMessage { .. } => 14,
        },
        FromWorker::Pong => 9,
        FromWorker::Done(o) => match (&o.error, &o.structured_output_json) {
            (None, None) => 10,
            (None, Some(_)) => 11,
            (Some(_), _) => 12,
        },
        FromWorker::SpawnSubagent(_) => 13,
    }
}
const FROM_WORKER_VARIANTS: usize = 15;

#[test]
fn variant_coverage() {
    let to: BTreeSet<usize> = to_worker()
        .iter()
        .map(|(_, m)| to_worker_variant(m))
        .collect();
    assert_eq!(to, (0..TO_WORKER_VARIANTS).collect());
    let from: BTreeSet<usize> = from_worker()
        .iter()
        .map(|(_, m)| from_worker_variant(m))
        .collect();
    assert_eq!(from, (0..FROM_WORKER_VARIANTS).collect());
}

#[test]
fn sample_names_are_unique() {
    let mut names: Vec<&str> = to_worker().iter().map(|(n, _)| *n).collect();
    names.extend(from_worker().iter().map(|(n, _)| *n));
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
}

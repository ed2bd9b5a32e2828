//! Property tests: arbitrary bytes never panic or hang the readers or the
//! codec, and arbitrary valid messages round-trip exactly.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use subagent_protocol::codec;
use subagent_protocol::frame::{AsyncFrameReader, encode_frame};
use subagent_protocol::message::{LogLevel, OutcomeError};
use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{
    ApiKey, Budget, ErrorCode, FrameReader, FromWorker, Hello, HistoryMessage, HistoryToolCall,
    Limits, MaxPayload, McpEnvVar, McpServerSpec, McpToolSelection, Outcome, OutputMode,
    ProviderKind, ProviderSpec, PythonInterpreter, SearchBackend, SearchKind, SpawnRequest,
    StopReason, SubagentReply, TaskSpec, ToWorker, Usage, WebSettings, WorkerEvent,
};

/// A small cap keeps arbitrary headers from allocating up to 16 MiB per case.
fn small_cap() -> MaxPayload {
    MaxPayload::new(64 * 1024).unwrap()
}

/// Reads frames until the stream ends or errors. Every successful frame
/// consumes at least five bytes, so the loop is bounded by the input length;
/// the assertion catches a reader that stops consuming.
fn drain_blocking<T: serde::de::DeserializeOwned>(bytes: &[u8]) {
    let mut reader = FrameReader::new(bytes, small_cap());
    let mut frames = 0;
    while let Ok(Some(_)) = reader.read::<T>() {
        frames += 1;
        assert!(frames <= bytes.len() / 5, "reader stopped consuming input");
    }
}

fn drain_async<T: serde::de::DeserializeOwned>(rt: &tokio::runtime::Runtime, bytes: &[u8]) {
    rt.block_on(async {
        let mut reader = AsyncFrameReader::new(bytes, small_cap());
        let mut frames = 0;
        while let Ok(Some(_)) = reader.read::<T>().await {
            frames += 1;
            assert!(frames <= bytes.len() / 5, "reader stopped consuming input");
        }
    });
}

/// Arbitrary bytes, biased towards starting with a plausible small header so
/// the payload decoder is exercised and not only the length check.
fn stream_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..512),
        (0u32..300, vec(any::<u8>(), 0..300)).prop_map(|(len, body)| {
            let mut bytes = len.to_le_bytes().to_vec();
            bytes.extend(body);
            bytes
        }),
    ]
}

fn text() -> impl Strategy<Value = String> {
    any::<String>()
}

/// Finite floats: NaN is never equal to itself, so it cannot round-trip by `==`.
fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        -1.0e9..1.0e9f64,
        any::<f64>().prop_filter("finite", |f| f.is_finite())
    ]
}

fn usage() -> impl Strategy<Value = Usage> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        finite(),
        any::<u32>(),
    )
        .prop_map(
            |(input, output, cache_read, cache_write, cost, turns)| Usage {
                input,
                output,
                cache_read,
                cache_write,
                cost,
                turns,
            },
        )
}

fn price() -> impl Strategy<Value = ModelPrice> {
    (finite(), finite(), finite(), finite()).prop_map(|(input, output, cache_read, cache_write)| {
        ModelPrice {
            input,
            output,
            cache_read,
            cache_write,
        }
    })
}

fn limits() -> impl Strategy<Value = Limits> {
    (vec(any::<u64>(), 19), option::of(any::<u64>())).prop_map(|(v, cpu_seconds)| Limits {
        wall_timeout_ms: v[0],
        idle_timeout_ms: v[1],
        kill_grace_ms: v[2],
        stdout_bytes: v[3],
        stderr_bytes: v[4],
        memory_bytes: v[5],
        pids: v[6],
        file_size_bytes: v[7],
        open_files: v[8],
        cpu_seconds,
        returned_text_bytes: v[9],
        returned_text_lines: v[10],
        tool_output_bytes: v[11],
        tool_output_lines: v[12],
        tool_timeout_ms: v[13],
        protocol_bytes: v[14],
        tool_timeout_max_ms: v[15],
        tool_memory_bytes: v[16],
        tool_pids: v[17],
        tool_disk_bytes: v[18],
    })
}

fn provider() -> impl Strategy<Value = ProviderSpec> {
    (
        prop::sample::select(ProviderKind::ALL.to_vec()),
        text(),
        text(),
        option::of(text().prop_map(ApiKey::new)),
        option::of(-2.0f32..2.0),
        option::of(any::<u32>()),
        any::<bool>(),
        option::of(price()),
    )
        .prop_map(
            |(kind, base_url, model, api_key, temperature, max_tokens, reasoning, price)| {
                ProviderSpec {
                    kind,
                    base_url,
                    model,
                    api_key,
                    temperature,
                    max_tokens,
                    reasoning,
                    price,
                }
            },
        )
}

fn task_spec() -> impl Strategy<Value = TaskSpec> {
    (
        (text(), text(), text(), text()),
        provider(),
        vec(text(), 0..4),
        option::of(text()),
        prop_oneof![Just(OutputMode::ReportBack), Just(OutputMode::Native)],
        (any::<u32>(), option::of(finite())),
        limits(),
        (text(), any::<u32>(), any::<u32>()),
        (any::<bool>(), any::<bool>()),
        web_settings(),
        (
            option::of(python_interpreter()),
            vec(text(), 0..3),
            vec(history_message(), 0..4),
            vec(mcp_server(), 0..3),
        ),
    )
        .prop_map(
            |(
                (run_id, agent, task, system_prompt),
                provider,
                tools,
                output_schema_json,
                output_mode,
                (max_turns, max_cost),
                limits,
                (workspace_dir, depth, max_depth),
                (allow_network, require_sandbox),
                web,
                (python, protected_paths, history, mcp_servers),
            )| TaskSpec {
                run_id,
                agent,
                task,
                system_prompt,
                provider,
                tools,
                output_schema_json,
                output_mode,
                budget: Budget {
                    max_turns,
                    max_cost,
                },
                limits,
                workspace_dir,
                allow_network,
                require_sandbox,
                depth,
                max_depth,
                web,
                python,
                protected_paths,
                history,
                mcp_servers,
            },
        )
}

fn history_message() -> impl Strategy<Value = HistoryMessage> {
    prop_oneof![
        text().prop_map(|text| HistoryMessage::User { text }),
        (text(), vec((text(), text(), text()), 0..3)).prop_map(|(text, calls)| {
            HistoryMessage::Assistant {
                text,
                tool_calls: calls
                    .into_iter()
                    .map(|(id, name, arguments_json)| HistoryToolCall {
                        id,
                        name,
                        arguments_json,
                    })
                    .collect(),
            }
        }),
        (text(), text(), text(), any::<bool>()).prop_map(|(call_id, name, output, is_error)| {
            HistoryMessage::ToolResult {
                call_id,
                name,
                output,
                is_error,
            }
        }),
    ]
}

fn mcp_server() -> impl Strategy<Value = McpServerSpec> {
    (
        (text(), text(), vec(text(), 0..3)),
        vec((text(), text()), 0..3),
        vec(text(), 0..2),
        (any::<u64>(), any::<u64>()),
        (option::of(vec(text(), 0..3)), vec(text(), 0..2)),
    )
        .prop_map(
            |(
                (name, command, args),
                env,
                read_only,
                (startup_timeout_ms, tool_timeout_ms),
                (only, disabled),
            )| McpServerSpec {
                name,
                command,
                args,
                env: env
                    .into_iter()
                    .map(|(name, value)| McpEnvVar {
                        name,
                        value: ApiKey::new(value),
                    })
                    .collect(),
                read_only,
                startup_timeout_ms,
                tool_timeout_ms,
                tools: McpToolSelection { only, disabled },
            },
        )
}

fn python_interpreter() -> impl Strategy<Value = PythonInterpreter> {
    prop_oneof![
        (text(), vec(text(), 0..3)).prop_map(|(executable, prefixes)| {
            PythonInterpreter::Found {
                executable,
                prefixes,
            }
        }),
        text().prop_map(|reason| PythonInterpreter::Missing { reason }),
        Just(PythonInterpreter::Pending),
    ]
}

fn to_worker() -> impl Strategy<Value = ToWorker> {
    prop_oneof![
        task_spec().prop_map(|spec| ToWorker::Start(Box::new(spec))),
        text().prop_map(|reason| ToWorker::Cancel { reason }),
        Just(ToWorker::Ping),
        (
            text(),
            any::<bool>(),
            text(),
            usage(),
            option::of(prop::sample::select(ErrorCode::ALL.to_vec())),
        )
            .prop_map(|(call_id, is_error, output, usage, error_code)| {
                ToWorker::SubagentResult(Box::new(SubagentReply {
                    call_id,
                    is_error,
                    output,
                    usage,
                    error_code,
                }))
            }),
        python_interpreter().prop_map(ToWorker::Python),
    ]
}

fn web_settings() -> impl Strategy<Value = WebSettings> {
    (
        option::of((
            prop::sample::select(vec![SearchKind::Searxng, SearchKind::Brave]),
            text(),
            option::of(text()),
        )),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(search, allow_private_networks, allow_link_local_networks)| WebSettings {
                search: search.map(|(kind, url, key)| SearchBackend {
                    kind,
                    url,
                    api_key: key.map(ApiKey::new),
                }),
                allow_private_networks,
                allow_link_local_networks,
            },
        )
}

fn log_level() -> impl Strategy<Value = LogLevel> {
    prop::sample::select(vec![
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warn,
        LogLevel::Error,
    ])
}

fn worker_event() -> impl Strategy<Value = WorkerEvent> {
    prop_oneof![
        any::<u32>().prop_map(|turn| WorkerEvent::TurnStart { turn }),
        text().prop_map(|text| WorkerEvent::TextDelta { text }),
        text().prop_map(|text| WorkerEvent::ReasoningDelta { text }),
        (any::<u32>(), text(), text(), text()).prop_map(|(turn, call_id, name, arguments_json)| {
            WorkerEvent::ToolCall {
                turn,
                call_id,
                name,
                arguments_json,
            }
        }),
        (text(), text(), text(), any::<bool>()).prop_map(|(call_id, name, output, is_error)| {
            WorkerEvent::ToolResult {
                call_id,
                name,
                output,
                is_error,
            }
        }),
        (any::<u32>(), text(), text(), proptest::option::of(text())).prop_map(
            |(turn, text, stop_reason, response_id)| WorkerEvent::AssistantMessageEnd {
                turn,
                text,
                stop_reason,
                response_id,
            }
        ),
        (any::<u32>(), usage()).prop_map(|(turn, usage)| WorkerEvent::Usage { turn, usage }),
        (log_level(), text()).prop_map(|(level, message)| WorkerEvent::Log { level, message }),
    ]
}

fn outcome() -> impl Strategy<Value = Outcome> {
    (
        text(),
        option::of(text()),
        usage(),
        prop::sample::select(vec![
            StopReason::Completed,
            StopReason::ReportBack,
            StopReason::MaxTurns,
            StopReason::MaxCost,
            StopReason::Cancelled,
            StopReason::Error,
        ]),
        option::of(
            (prop::sample::select(ErrorCode::ALL.to_vec()), text())
                .prop_map(|(code, message)| OutcomeError { code, message }),
        ),
        text(),
    )
        .prop_map(
            |(final_text, structured_output_json, usage, stop_reason, error, model)| Outcome {
                final_text,
                structured_output_json,
                usage,
                stop_reason,
                error,
                model,
            },
        )
}

fn from_worker() -> impl Strategy<Value = FromWorker> {
    prop_oneof![
        (any::<u32>(), text(), any::<u32>()).prop_map(|(protocol_version, worker_version, pid)| {
            FromWorker::Hello(Hello {
                protocol_version,
                worker_version,
                pid,
            })
        }),
        worker_event().prop_map(FromWorker::Event),
        Just(FromWorker::Pong),
        outcome().prop_map(|o| FromWorker::Done(Box::new(o))),
        (
            (text(), text(), text()),
            option::of(text()),
            option::of(any::<u32>()),
            option::of(finite()),
            (
                option::of(prop::collection::vec(text(), 0..4)),
                option::of(text())
            ),
        )
            .prop_map(
                |(
                    (call_id, agent, task),
                    output_schema_json,
                    max_turns,
                    max_cost,
                    (tools, limits_json),
                )| {
                    FromWorker::SpawnSubagent(Box::new(SpawnRequest {
                        call_id,
                        agent,
                        task,
                        output_schema_json,
                        max_turns,
                        max_cost,
                        tools,
                        limits_json,
                    }))
                }
            ),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_blocking_reader(bytes in stream_bytes()) {
        drain_blocking::<ToWorker>(&bytes);
        drain_blocking::<FromWorker>(&bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_async_reader(bytes in stream_bytes()) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        drain_async::<ToWorker>(&rt, &bytes);
        drain_async::<FromWorker>(&rt, &bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_codec(bytes in vec(any::<u8>(), 0..512)) {
        let _ = codec::decode::<ToWorker>(&bytes);
        let _ = codec::decode::<FromWorker>(&bytes);
    }

    #[test]
    fn arbitrary_to_worker_messages_round_trip(message in to_worker()) {
        let frame = encode_frame(&message, MaxPayload::default()).unwrap();
        let mut reader = FrameReader::new(frame.as_slice(), MaxPayload::default());
        prop_assert_eq!(reader.read::<ToWorker>().unwrap(), Some(message.clone()));
        prop_assert!(reader.read::<ToWorker>().unwrap().is_none());
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let async_read = rt.block_on(
            AsyncFrameReader::new(frame.as_slice(), MaxPayload::default()).read::<ToWorker>(),
        );
        prop_assert_eq!(async_read.unwrap(), Some(message));
    }

    #[test]
    fn arbitrary_from_worker_messages_round_trip(message in from_worker()) {
        let frame = encode_frame(&message, MaxPayload::default()).unwrap();
        let mut reader = FrameReader::new(frame.as_slice(), MaxPayload::default());
        prop_assert_eq!(reader.read::<FromWorker>().unwrap(), Some(message.clone()));
        prop_assert!(reader.read::<FromWorker>().unwrap().is_none());
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let async_read = rt.block_on(
            AsyncFrameReader::new(frame.as_slice(), MaxPayload::default()).read::<FromWorker>(),
        );
        prop_assert_eq!(async_read.unwrap(), Some(message));
    }

    #[test]
    fn a_valid_frame_cut_anywhere_is_an_error_not_a_panic(message in from_worker(), cut in any::<prop::sample::Index>()) {
        let frame = encode_frame(&message, MaxPayload::default()).unwrap();
        let cut = cut.index(frame.len()); // 0..len: always short of the whole frame
        let result = FrameReader::new(&frame[..cut], MaxPayload::default()).read::<FromWorker>();
        if cut == 0 {
            prop_assert!(matches!(result, Ok(None)));
        } else {
            prop_assert!(result.is_err_and(|e| e.is_disconnect()));
        }
    }
}

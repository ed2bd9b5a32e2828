//! Session lines of every type, and every lifecycle event, validate against
//! `session-line.schema.json` and parse back; lines missing what the schema
//! requires are rejected, and timestamps match its pattern.

use std::time::{Duration, UNIX_EPOCH};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_protocol::limits::Limits;
use subagent_protocol::message::LogLevel;
use subagent_protocol::result::{LimitName, LimitReached};
use subagent_protocol::session::{
    AgentEvent, EndingError, LifecycleEvent, LifecycleStatus, LimitAction, LimitKind, LimitLine,
    LogLine, LogSource, MessageLine, NotApplied, OutputLine, ResumedFrom, Role, RunMode,
    SandboxStatus, SessionEntry, SessionHeader, SessionLine, Stream, ToolCallLine, ToolResultLine,
    UsageLine,
};
use subagent_protocol::time::{now_rfc3339_ms, rfc3339_ms};
use subagent_protocol::usage::Usage;

use super::schemas::{assert_valid, errors, load_schema, validator};

fn usage() -> Usage {
    Usage {
        input: 1_000,
        output: 200,
        cache_read: 50,
        cache_write: 0,
        cost: 0.0031,
        turns: 2,
    }
}

fn header() -> SessionHeader {
    SessionHeader {
        version: subagent_protocol::session::SESSION_FORMAT_VERSION,
        run_id: "a1b2c3d4".into(),
        agent: "reviewer".into(),
        task: "Review the diff.".into(),
        model: "smollm2-135m-instruct".into(),
        provider: "openai-chat".into(),
        cwd: "workspace".into(),
        depth: 1,
        limits: Limits::default(),
        sandbox: SandboxStatus {
            applied: vec!["process_group".into(), "rlimit_nofile".into()],
            not_applied: vec![NotApplied {
                protection: "cgroup_memory".into(),
                reason: "no writable cgroup v2 delegation".into(),
            }],
        },
        tool_sandbox: None,
        parent_session: Some("parent.jsonl".into()),
        tools: Some(vec!["bash_read".into(), "bash_find".into()]),
        output_schema: Some(json!({"type": "object"})),
        output_mode: Some(subagent_protocol::OutputMode::ReportBack),
        max_turns: Some(10),
        max_cost: Some(0.5),
        python: Some("/usr/bin/python3.11".into()),
        resumed_from: Some(ResumedFrom {
            run_id: "0f0f0f0f".into(),
            file: "sessions/2026/11/22/0f0f0f0f-reviewer.jsonl".into(),
            turns: 3,
        }),
        batch_task: None,
    }
}

fn agent_event(event_type: LifecycleEvent) -> AgentEvent {
    let ending = event_type != LifecycleEvent::Start;
    AgentEvent {
        event_type,
        job_id: "a1b2c3d4".into(),
        requested_by: "assistant".into(),
        agent_name: "reviewer".into(),
        mode: RunMode::Single,
        pid: Some(4242),
        started_at: "2026-11-22T12:00:00.000Z".into(),
        completed_at: ending.then(|| "2026-11-22T12:00:01.234Z".into()),
        duration_ms: ending.then_some(1_234),
        model: "smollm2-135m-instruct".into(),
        usage: ending.then(usage),
        status: match event_type {
            LifecycleEvent::Start => None,
            LifecycleEvent::Complete => Some(LifecycleStatus::Completed),
            LifecycleEvent::Error => Some(LifecycleStatus::Failed),
            LifecycleEvent::Aborted => Some(LifecycleStatus::Aborted),
        },
        summary: ending.then(|| "Two risky changes.".into()),
        session_file: Some("sessions/2026/11/22/a1b2c3d4-reviewer.jsonl".into()),
        error: match event_type {
            LifecycleEvent::Error => Some(EndingError {
                code: "SUBAGENT_BUDGET_EXCEEDED".into(),
                message: "the turn budget of 10 ran out; partial output is kept".into(),
                limit: Some(LimitReached::count(LimitName::MaxTurns, 10)),
            }),
            LifecycleEvent::Aborted => Some(EndingError {
                code: "SUBAGENT_CANCELLED".into(),
                message: "subagent cancelled by the caller".into(),
                limit: None,
            }),
            LifecycleEvent::Start | LifecycleEvent::Complete => None,
        },
        stop_reason: ending.then(|| "max_turns".into()),
    }
}

/// One line of every type, with every lifecycle event.
fn every_line() -> Vec<(&'static str, SessionEntry)> {
    vec![
        ("session", SessionEntry::Session(header())),
        (
            "agent_event",
            SessionEntry::AgentEvent(agent_event(LifecycleEvent::Start)),
        ),
        (
            "agent_event",
            SessionEntry::AgentEvent(agent_event(LifecycleEvent::Complete)),
        ),
        (
            "agent_event",
            SessionEntry::AgentEvent(agent_event(LifecycleEvent::Error)),
        ),
        (
            "agent_event",
            SessionEntry::AgentEvent(agent_event(LifecycleEvent::Aborted)),
        ),
        (
            "message",
            SessionEntry::Message(MessageLine {
                role: Role::Assistant,
                turn: 1,
                text: "Two risky changes.".into(),
                stop_reason: Some("stop".into()),
                response_id: Some("chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG".into()),
            }),
        ),
        (
            "tool_call",
            SessionEntry::ToolCall(ToolCallLine {
                turn: 1,
                call_id: "call_01".into(),
                name: "bash_read".into(),
                args: json!({"path": "src/lib.rs"}),
            }),
        ),
        (
            "tool_result",
            SessionEntry::ToolResult(ToolResultLine {
                call_id: "call_01".into(),
                name: "bash_read".into(),
                output: "//! docs".into(),
                is_error: false,
            }),
        ),
        (
            "usage",
            SessionEntry::Usage(UsageLine {
                turn: 1,
                usage: usage(),
            }),
        ),
        (
            "output",
            SessionEntry::Output(OutputLine {
                stream: Stream::Stderr,
                excerpt: "warning: ...".into(),
                bytes_seen: 10_000,
                bytes_kept: 4_096,
                truncated: true,
            }),
        ),
        (
            "limit",
            SessionEntry::Limit(LimitLine {
                limit: LimitKind::WallTimeout,
                value: 900_000,
                action: LimitAction::Cancel,
                detail: Some("no Done within the wall timeout".into()),
            }),
        ),
        (
            "log",
            SessionEntry::Log(LogLine {
                level: LogLevel::Warn,
                source: LogSource::Worker,
                message: "429, retrying".into(),
            }),
        ),
    ]
}

fn line_value(entry: SessionEntry) -> (SessionLine, Value) {
    let line = SessionLine::now(entry);
    let text = serde_json::to_string(&line).expect("serialize line");
    assert!(!text.contains('\n'), "one line: {text}");
    let back: SessionLine = serde_json::from_str(&text).expect("a reader parses what was written");
    assert_eq!(back, line);
    (line, serde_json::from_str(&text).expect("valid JSON"))
}

#[test]
fn every_session_line_type_validates() {
    let v = validator("session-line.schema.json");
    for (type_name, entry) in every_line() {
        let (_, value) = line_value(entry);
        assert_eq!(value["type"], type_name);
        assert_valid(&v, &value, type_name);
    }
}

#[test]
fn lifecycle_lines_carry_the_fields_the_schema_requires() {
    let v = validator("session-line.schema.json");
    for event in [
        LifecycleEvent::Start,
        LifecycleEvent::Complete,
        LifecycleEvent::Error,
        LifecycleEvent::Aborted,
    ] {
        let (line, value) = line_value(SessionEntry::AgentEvent(agent_event(event)));
        assert!(line.is_lifecycle());
        for field in [
            "eventType",
            "jobId",
            "requestedBy",
            "agentName",
            "mode",
            "startedAt",
            "model",
        ] {
            assert!(value.get(field).is_some(), "{event:?} lacks {field}");
        }
        if event == LifecycleEvent::Start {
            assert!(value.get("durationMs").is_none(), "absent, not null");
        } else {
            for field in ["completedAt", "durationMs", "usage", "status"] {
                assert!(value.get(field).is_some(), "{event:?} lacks {field}");
            }
        }
        assert_valid(&v, &value, &format!("{event:?}"));
    }
    let (_, value) = line_value(SessionEntry::AgentEvent(agent_event(
        LifecycleEvent::Aborted,
    )));
    assert_eq!(value["eventType"], "subagent:aborted");
    assert_eq!(value["status"], "aborted");
}

#[test]
fn a_line_without_timestamp_is_rejected() {
    let v = validator("session-line.schema.json");
    let (_, mut value) = line_value(every_line().remove(5).1);
    value.as_object_mut().unwrap().remove("timestamp");
    let found = errors(&v, &value);
    assert!(found.iter().any(|e| e.contains("timestamp")), "{found:?}");
}

#[test]
fn an_ending_lifecycle_line_without_duration_is_rejected() {
    let v = validator("session-line.schema.json");
    let (_, mut value) = line_value(SessionEntry::AgentEvent(agent_event(
        LifecycleEvent::Complete,
    )));
    value.as_object_mut().unwrap().remove("durationMs");
    let found = errors(&v, &value);
    assert!(found.iter().any(|e| e.contains("durationMs")), "{found:?}");
}

#[test]
fn a_session_header_without_run_id_is_rejected() {
    let v = validator("session-line.schema.json");
    let (_, mut value) = line_value(SessionEntry::Session(header()));
    value.as_object_mut().unwrap().remove("runId");
    assert!(!errors(&v, &value).is_empty());
}

#[test]
fn timestamps_match_the_schema_pattern() {
    let pattern =
        load_schema("session-line.schema.json")["properties"]["timestamp"]["pattern"].clone();
    assert!(pattern.is_string(), "schema has a timestamp pattern");
    let v = jsonschema::validator_for(&json!({"type": "string", "pattern": pattern})).unwrap();

    assert_eq!(rfc3339_ms(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    let t = UNIX_EPOCH + Duration::from_millis(1_795_608_000_123);
    assert_eq!(rfc3339_ms(t), "2026-11-25T12:00:00.123Z");
    let now = now_rfc3339_ms();
    for stamp in [rfc3339_ms(UNIX_EPOCH), rfc3339_ms(t), now.clone()] {
        assert_valid(&v, &json!(stamp), &stamp);
    }
    assert_eq!(
        now.len(),
        "1970-01-01T00:00:00.000Z".len(),
        "ms precision: {now}"
    );
    // The pattern itself is live.
    assert!(!v.is_valid(&json!("2026-11-22 12:00:00Z")));
    assert!(!v.is_valid(&json!("2026-11-22T12:00:00.000+01:00")));
}

#[test]
fn limit_kinds_and_actions_are_written_as_the_names_readers_know() {
    let kinds = [
        (LimitKind::WallTimeout, "wall_timeout"),
        (LimitKind::IdleTimeout, "idle_timeout"),
        (LimitKind::Cancel, "cancel"),
        (LimitKind::KillGrace, "kill_grace"),
        (LimitKind::ProtocolBytes, "protocol_bytes"),
        (LimitKind::Stdout, "stdout"),
        (LimitKind::Stderr, "stderr"),
        (LimitKind::Memory, "memory"),
        (LimitKind::Pids, "pids"),
        (LimitKind::LeakedProcesses, "leaked_processes"),
    ];
    for (kind, name) in kinds {
        assert_eq!(serde_json::to_value(&kind).unwrap(), json!(name));
        assert_eq!(
            serde_json::from_value::<LimitKind>(json!(name)).unwrap(),
            kind
        );
    }
    let actions = [
        (LimitAction::Cancel, "cancel"),
        (LimitAction::Sigterm, "sigterm"),
        (LimitAction::Sigkill, "sigkill"),
        (LimitAction::OomKill, "oom_kill"),
        (LimitAction::RefusedFork, "refused_fork"),
    ];
    for (action, name) in actions {
        assert_eq!(serde_json::to_value(&action).unwrap(), json!(name));
        assert_eq!(
            serde_json::from_value::<LimitAction>(json!(name)).unwrap(),
            action
        );
    }
    let log = LogLine {
        level: LogLevel::Error,
        source: LogSource::Supervisor,
        message: "m".into(),
    };
    assert_eq!(
        serde_json::to_value(&log).unwrap(),
        json!({"level": "error", "source": "supervisor", "message": "m"})
    );
}

#[test]
fn a_limit_line_from_a_newer_writer_is_read_and_written_back_unchanged() {
    let text = r#"{"type":"limit","timestamp":"2026-11-22T12:00:00.000Z","limit":"gpu_seconds","value":5,"action":"throttle"}"#;
    let line: SessionLine = serde_json::from_str(text).unwrap();
    let SessionEntry::Limit(limit) = &line.entry else {
        panic!("a limit line: {line:?}")
    };
    assert_eq!(limit.limit, LimitKind::Unknown("gpu_seconds".into()));
    assert_eq!(limit.action, LimitAction::Unknown("throttle".into()));
    let back: Value = serde_json::to_value(&line).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
}

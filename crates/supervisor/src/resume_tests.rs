use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use subagent_protocol::session::SandboxStatus;
use subagent_protocol::{HistoryMessage, HistoryToolCall, Limits, OutputMode, ProviderSpec};

use super::*;
use crate::config::{LimitKey, LimitValue};

/// The recorded run's workspace: one that exists, as a workspace must to
/// be resolved.
fn recorded_ws() -> PathBuf {
    std::fs::canonicalize(std::env::temp_dir()).unwrap()
}

fn header() -> SessionHeader {
    SessionHeader {
        version: subagent_protocol::session::SESSION_FORMAT_VERSION,
        run_id: "r1".into(),
        agent: "general".into(),
        task: "count the files".into(),
        model: "m".into(),
        provider: "openai-chat".into(),
        cwd: recorded_ws().display().to_string(),
        depth: 1,
        limits: Limits {
            wall_timeout_ms: 42_000,
            ..Limits::default()
        },
        sandbox: SandboxStatus::default(),
        tool_sandbox: None,
        parent_session: None,
        tools: Some(vec!["bash_find".into()]),
        output_schema: None,
        output_mode: None,
        max_turns: Some(7),
        max_cost: Some(0.5),
        python: None,
        resumed_from: None,
        batch_task: None,
    }
}

fn recorded(ending: SessionStatus, history: Vec<HistoryMessage>) -> Continuation {
    let called_tools: BTreeSet<String> = history
        .iter()
        .flat_map(|m| match m {
            HistoryMessage::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|c| c.name.clone()).collect()
            }
            _ => Vec::new(),
        })
        .collect();
    Continuation {
        file: PathBuf::from("/s/r1-general.jsonl"),
        header: header(),
        system_prompt: "You are terse.".into(),
        history,
        turns: 1,
        ending,
        called_tools,
        notes: Vec::new(),
    }
}

fn called(tool: &str) -> Vec<HistoryMessage> {
    vec![
        HistoryMessage::User { text: "t".into() },
        HistoryMessage::Assistant {
            text: String::new(),
            tool_calls: vec![HistoryToolCall {
                id: "c1".into(),
                name: tool.into(),
                arguments_json: "{}".into(),
            }],
        },
        HistoryMessage::ToolResult {
            call_id: "c1".into(),
            name: tool.into(),
            output: "x".into(),
            is_error: false,
        },
    ]
}

fn answered() -> Vec<HistoryMessage> {
    vec![
        HistoryMessage::User { text: "t".into() },
        HistoryMessage::Assistant {
            text: "done".into(),
            tool_calls: vec![],
        },
    ]
}

/// The current invocation: defaults, working in `/` (which holds the
/// recorded workspace).
fn request(kind: ProviderKind) -> RunRequest {
    let mut req = RunRequest::new(
        "general",
        "",
        ProviderSpec::new(kind, "http://127.0.0.1:9/v1", "m"),
    );
    req.workspace_dir = PathBuf::from("/");
    req
}

/// What the agent of the current invocation gives: every built-in tool.
fn all_tools() -> Vec<String> {
    tool_names::BUILTIN_TOOLS
        .iter()
        .map(|t| (*t).to_owned())
        .collect()
}

fn follow_up(task: &str) -> ResumeAsk {
    ResumeAsk {
        task: Some(task.into()),
        current_tools: all_tools(),
        ..ResumeAsk::default()
    }
}

#[test]
fn a_follow_up_takes_the_recorded_settings_and_history() {
    let mut req = request(ProviderKind::OpenaiChat);
    continue_request(
        recorded(SessionStatus::Completed, called("bash_find")),
        &mut req,
        follow_up("and the tests?"),
    )
    .unwrap();
    assert_eq!(req.task, "and the tests?");
    assert_eq!(req.tools, Some(vec!["bash_find".to_owned()]));
    assert_eq!(req.workspace_dir, recorded_ws());
    assert_eq!(req.limits.wall_timeout_ms, 42_000);
    assert_eq!(req.budget.max_turns, 7);
    assert_eq!(req.budget.max_cost, Some(0.5));
    assert_eq!(req.system_prompt.as_deref(), Some("You are terse."));
    assert!(!req.allow_network);
    let resume = req.resume.unwrap();
    assert_eq!(resume.run_id, "r1");
    assert_eq!(resume.turns, 1);
    assert_eq!(resume.history, called("bash_find"));
}

#[test]
fn flags_the_caller_gave_win_over_the_recording() {
    let mut req = request(ProviderKind::OpenaiChat);
    req.workspace_dir = PathBuf::from("/mine");
    req.tools = Some(vec!["bash_find".into(), "bash_read".into()]);
    // The caller's flag is in the prepared request already.
    req.budget.max_turns = 50;
    let mut limits = LimitSet::default();
    limits.set(LimitKey::MaxTurns, LimitValue::Count(50));
    let ask = ResumeAsk {
        tools: true,
        workspace: true,
        limits,
        ..follow_up("more")
    };
    continue_request(
        recorded(SessionStatus::Completed, answered()),
        &mut req,
        ask,
    )
    .unwrap();
    assert_eq!(req.workspace_dir, PathBuf::from("/mine"));
    assert_eq!(
        req.tools,
        Some(vec!["bash_find".to_owned(), "bash_read".to_owned()])
    );
    // Above the recorded 7: the caller named it.
    assert_eq!(req.budget.max_turns, 50);
    // The limits the caller did not set are lowered to the recorded ones.
    assert_eq!(req.limits.wall_timeout_ms, 42_000);
}

#[test]
fn an_interrupted_run_continues_without_a_task() {
    let mut req = request(ProviderKind::OpenaiChat);
    let ask = ResumeAsk {
        current_tools: all_tools(),
        ..ResumeAsk::default()
    };
    continue_request(
        recorded(SessionStatus::Interrupted, called("bash_find")),
        &mut req,
        ask.clone(),
    )
    .unwrap();
    assert_eq!(req.task, "");
    // One that stopped right after an answer gets a note to go on.
    let mut req = request(ProviderKind::OpenaiChat);
    continue_request(recorded(SessionStatus::Aborted, answered()), &mut req, ask).unwrap();
    assert_eq!(req.task, CONTINUE_NOTE);
}

#[test]
fn a_finished_run_needs_a_follow_up() {
    for status in [SessionStatus::Completed, SessionStatus::Failed] {
        let mut req = request(ProviderKind::OpenaiChat);
        let err = continue_request(recorded(status, answered()), &mut req, ResumeAsk::default())
            .unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.contains(&format!("ended {}", status.as_str()))
                && shown.contains("follow-up task"),
            "{shown}"
        );
        assert_eq!(req.resume, None);
    }
}

#[test]
fn another_dialect_is_refused_and_the_same_family_is_not() {
    let mut req = request(ProviderKind::Anthropic);
    let err = continue_request(
        recorded(SessionStatus::Completed, answered()),
        &mut req,
        follow_up("x"),
    )
    .unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.contains("openai-chat dialect") && shown.contains("anthropic"),
        "{shown}"
    );
    // Claude on Vertex speaks the Messages API like anthropic.
    let mut anthropic = recorded(SessionStatus::Completed, answered());
    anthropic.header.provider = "anthropic".into();
    let mut req = request(ProviderKind::VertexaiAnthropic);
    continue_request(anthropic, &mut req, follow_up("x")).unwrap();
}

#[test]
fn a_tool_the_history_calls_must_still_be_allowed() {
    // The caller narrowed the tools below what the history used.
    let mut req = request(ProviderKind::OpenaiChat);
    req.tools = Some(vec!["bash_read".into()]);
    let ask = ResumeAsk {
        tools: true,
        ..follow_up("x")
    };
    let err = continue_request(
        recorded(SessionStatus::Completed, called("bash_find")),
        &mut req,
        ask,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("calls bash_find, which this run may not use"),
        "{err}"
    );
    // A tool this version does not have.
    let mut req = request(ProviderKind::OpenaiChat);
    let err = continue_request(
        recorded(SessionStatus::Completed, called("teleport")),
        &mut req,
        follow_up("x"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("no tool of that name"), "{err}");
    // report_back needs the schema it came with.
    let mut with_schema = recorded(SessionStatus::Completed, called("report_back"));
    with_schema.header.output_schema = Some(serde_json::json!({"type": "object"}));
    with_schema.header.output_mode = Some(OutputMode::Native);
    let mut req = request(ProviderKind::OpenaiChat);
    continue_request(with_schema, &mut req, follow_up("x")).unwrap();
    assert_eq!(req.output_mode, OutputMode::Native);
    assert!(req.output_schema_json.is_some());
}

#[test]
fn a_recording_only_lowers_what_the_invocation_gives() {
    // A header a tool rewrote: every limit huge, no cost cap, every tool,
    // and 100,000 turns.
    let mut forged = recorded(SessionStatus::Completed, answered());
    forged.header.limits = Limits {
        wall_timeout_ms: 10_000_000_000,
        memory_bytes: 64 << 30,
        tool_timeout_max_ms: 10_000_000_000,
        protocol_bytes: u64::MAX,
        ..Limits::default()
    };
    forged.header.max_turns = Some(100_000);
    forged.header.max_cost = None;
    forged.header.tools = Some(all_tools());
    let mut req = request(ProviderKind::OpenaiChat);
    req.limits.wall_timeout_ms = 60_000;
    req.limits.memory_bytes = 512 << 20;
    req.budget.max_turns = 10;
    req.budget.max_cost = Some(1.0);
    let before = req.limits.clone();
    let ask = ResumeAsk {
        current_tools: vec!["bash_read".into(), "bash_find".into()],
        ..follow_up("more")
    };
    continue_request(forged, &mut req, ask).unwrap();
    assert_eq!(req.limits, before);
    assert_eq!((req.budget.max_turns, req.budget.max_cost), (10, Some(1.0)));
    assert_eq!(
        req.tools,
        Some(vec!["bash_find".to_owned(), "bash_read".to_owned()])
    );

    // And lower values do lower it; a limit the caller named stays its own.
    let mut lower = recorded(SessionStatus::Completed, answered());
    lower.header.limits.memory_bytes = 256 << 20;
    lower.header.limits.wall_timeout_ms = 1_000;
    let mut req = request(ProviderKind::OpenaiChat);
    req.limits.memory_bytes = 512 << 20;
    req.limits.wall_timeout_ms = 60_000;
    let mut named = LimitSet::default();
    named.set(LimitKey::Timeout, LimitValue::Ms(60_000));
    let ask = ResumeAsk {
        limits: named,
        ..follow_up("more")
    };
    continue_request(lower, &mut req, ask).unwrap();
    assert_eq!(req.limits.memory_bytes, 256 << 20);
    assert_eq!(req.limits.wall_timeout_ms, 60_000);
}

#[test]
fn a_recorded_workspace_outside_the_invocations_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let (mine, other) = (base.path().join("mine"), base.path().join("other"));
    let inner = mine.join("sub");
    for d in [&inner, &other] {
        std::fs::create_dir_all(d).unwrap();
    }
    let run = |cwd: &Path| {
        let mut r = recorded(SessionStatus::Completed, answered());
        r.header.cwd = cwd.display().to_string();
        let mut req = request(ProviderKind::OpenaiChat);
        req.workspace_dir = mine.clone();
        continue_request(r, &mut req, follow_up("x")).map(|()| req.workspace_dir)
    };
    // Within: the recording narrows it.
    assert_eq!(run(&inner).unwrap(), std::fs::canonicalize(&inner).unwrap());
    // Outside, through `..` or a link: refused.
    let err = run(&mine.join("../other")).unwrap_err();
    assert!(matches!(err, ResumeError::Workspace { .. }), "{err}");
    assert!(
        err.to_string().contains("outside this run's workspace"),
        "{err}"
    );
    let link = mine.join("escape");
    std::os::unix::fs::symlink(&other, &link).unwrap();
    assert!(matches!(
        run(&link).unwrap_err(),
        ResumeError::Workspace { .. }
    ));
    // Gone.
    assert!(matches!(
        run(&mine.join("nope")).unwrap_err(),
        ResumeError::WorkspaceGone { .. }
    ));
}

#[test]
fn a_history_error_is_printed_once_in_a_chain() {
    let error = ResumeError::from(HistoryError::NoHeader {
        path: "/x/run.jsonl".into(),
    });
    let mut chain = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(next) = cause {
        chain.push_str(&format!(": {next}"));
        cause = next.source();
    }
    assert_eq!(
        chain
            .matches("does not start with a session header")
            .count(),
        1,
        "{chain}"
    );
}

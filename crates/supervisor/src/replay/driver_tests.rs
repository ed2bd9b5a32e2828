use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::session::{SandboxStatus, SessionHeader};
use subagent_protocol::{Limits, OutputMode, ProviderKind, ProviderSpec};

use super::*;

fn recording(tools: Option<Vec<String>>) -> Recording {
    Recording {
        header: SessionHeader {
            version: 1,
            run_id: "r".into(),
            agent: "explorer".into(),
            task: "find the config".into(),
            model: "claude-x".into(),
            provider: "anthropic".into(),
            cwd: std::env::temp_dir().display().to_string(),
            depth: 1,
            limits: Limits {
                wall_timeout_ms: 12_345,
                ..Limits::default()
            },
            sandbox: SandboxStatus::default(),
            tool_sandbox: None,
            parent_session: None,
            tools,
            output_schema: Some(json!({"type": "object"})),
            output_mode: Some(OutputMode::Native),
            max_turns: Some(4),
            max_cost: Some(0.25),
            python: None,
            resumed_from: None,
            batch_task: None,
        },
        turns: vec![],
        status: None,
        summary: None,
        skipped: vec!["line 9: torn (12 bytes, no newline)".into()],
    }
}

/// An invocation that gives every built-in tool and the default limits,
/// working in `workspace`.
fn invocation(workspace: &str, given: bool) -> ReplayInvocation {
    let mut current = RunRequest::new(
        "explorer",
        "",
        ProviderSpec::new(ProviderKind::OpenaiChat, "http://x", "m"),
    );
    current.workspace_dir = PathBuf::from(workspace);
    ReplayInvocation {
        current,
        current_tools: subagent_protocol::tool_names::BUILTIN_TOOLS
            .iter()
            .map(|t| (*t).to_owned())
            .collect(),
        workspace_given: given,
    }
}

#[test]
fn the_request_is_the_recorded_one_over_openai_chat() {
    let rec = recording(Some(vec!["bash_find".into()]));
    let req = replay_request(
        &rec,
        "http://127.0.0.1:1/v1".into(),
        &invocation("/", false),
    )
    .unwrap();
    assert_eq!(req.provider.kind, ProviderKind::OpenaiChat);
    assert_eq!(req.provider.base_url, "http://127.0.0.1:1/v1");
    assert_eq!(req.provider.model, "claude-x");
    assert!(req.provider.api_key.is_none());
    assert_eq!(
        (req.agent.as_str(), req.task.as_str()),
        ("explorer", "find the config")
    );
    assert_eq!(req.tools, Some(vec!["bash_find".to_owned()]));
    assert_eq!(
        req.output_schema_json.as_deref(),
        Some(r#"{"type":"object"}"#)
    );
    assert_eq!(req.output_mode, OutputMode::Native);
    assert_eq!((req.budget.max_turns, req.budget.max_cost), (4, Some(0.25)));
    assert_eq!(req.limits.wall_timeout_ms, 12_345);
    assert_eq!(
        req.workspace_dir,
        std::fs::canonicalize(std::env::temp_dir()).unwrap()
    );
}

#[test]
fn a_recording_lowers_the_invocation_and_never_moves_the_workspace_out() {
    let mut rec = recording(Some(vec!["bash_find".into(), "scrape_webpage".into()]));
    rec.header.limits.wall_timeout_ms = 10_000_000_000;
    rec.header.max_turns = Some(100_000);
    let mut inv = invocation("/", false);
    inv.current_tools = vec!["bash_find".into()];
    let req = replay_request(&rec, String::new(), &inv).unwrap();
    assert_eq!(req.tools, Some(vec!["bash_find".to_owned()]));
    assert_eq!(
        req.limits.wall_timeout_ms,
        Limits::default().wall_timeout_ms
    );
    assert_eq!(req.budget.max_turns, inv.current.budget.max_turns);
    // A workspace the invocation does not hold is refused.
    let ws = tempfile::tempdir().unwrap();
    let err = replay_request(
        &rec,
        String::new(),
        &invocation(&ws.path().display().to_string(), false),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("outside this replay's workspace"),
        "{err}"
    );
}

#[test]
fn the_workspace_flag_overrides_the_recorded_cwd() {
    let rec = recording(Some(vec![]));
    let req = replay_request(&rec, String::new(), &invocation("elsewhere", true)).unwrap();
    assert_eq!(req.workspace_dir, PathBuf::from("elsewhere"));
    assert_eq!(req.tools, Some(vec![]), "an empty list stays: no tools");
}

#[test]
fn an_old_recording_without_tools_gets_the_agents_tools_and_a_warning() {
    let rec = recording(None);
    assert_eq!(
        replay_request(&rec, String::new(), &invocation("/", false))
            .unwrap()
            .tools,
        None
    );
    let warnings = replay_warnings(&rec);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("torn"), "{warnings:?}");
    assert!(
        warnings[1].contains("does not list its tools"),
        "{warnings:?}"
    );
    assert!(
        replay_warnings(&recording(Some(vec![])))
            .iter()
            .all(|w| !w.contains("tools"))
    );
}

//! End to end against a real LLM server: the real supervisor runs the real
//! worker against llama.cpp's llama-server serving SmolLM2-135M, on each of
//! the three API dialects. Asserts protocol facts, not the model's wisdom.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use subagent_protocol::{OutputMode, ProviderKind};
use subagent_supervisor::{Supervisor, SupervisorConfig, WorkerCommand};
use tokio_util::sync::CancellationToken;

use super::llama::LlamaServer;
use super::support::*;

fn worker_binary() -> PathBuf {
    binary("subagent-worker")
}

/// A run against the real model, or `None` when it is not installed (and
/// not under CI: see [`LlamaServer::start_or_skip`]).
async fn run_real(kind: ProviderKind, schema: Option<&str>) -> Option<(Outcome, Fixture)> {
    run_real_at(kind, schema, LlamaServer::base_url).await
}

/// [`run_real`] with the base URL the provider is given taken from the
/// server by `base_url`.
async fn run_real_at(
    kind: ProviderKind,
    schema: Option<&str>,
    base_url: impl Fn(&LlamaServer) -> String,
) -> Option<(Outcome, Fixture)> {
    let server = LlamaServer::start_or_skip(&format!("{kind:?}"))?;
    let f = Fixture::new("real-worker");
    let config = SupervisorConfig::new(
        WorkerCommand {
            program: worker_binary(),
            args: vec![],
        },
        f.sessions_dir(),
    );
    let mut r = f.request();
    r.task = "Say hello in five words.".into();
    r.provider.kind = kind;
    r.provider.base_url = base_url(&server);
    r.provider.model = "smollm2".into();
    r.provider.api_key = None;
    r.provider.temperature = Some(0.0);
    r.provider.max_tokens = Some(48);
    r.budget.max_turns = 3;
    r.limits.wall_timeout_ms = 120_000;
    if let Some(schema) = schema {
        r.output_schema_json = Some(schema.into());
        r.output_mode = OutputMode::Native;
    }
    let o = f
        .run_with(Supervisor::new(config), r, CancellationToken::new())
        .await;
    drop(server);
    Some((o, f))
}

fn assert_real_run(o: &Outcome) {
    let s = o.single();
    assert!(
        s["usage"]["input"].as_u64().unwrap() > 0,
        "input tokens counted: {:#}",
        s
    );
    assert!(
        s["usage"]["output"].as_u64().unwrap() > 0,
        "output tokens counted: {:#}",
        s
    );
    assert!(s["usage"]["turns"].as_u64().unwrap() >= 1);
    assert_eq!(s["usage"]["cost"], 0.0, "a local model costs nothing");
    // The session file records the turn: the task, the assistant message, usage, lifecycle.
    let messages = o.lines_of("message");
    assert!(
        messages.iter().any(|m| m["role"] == "user"),
        "user message recorded"
    );
    assert!(
        messages.iter().any(|m| m["role"] == "assistant"),
        "assistant message recorded"
    );
    assert!(!o.lines_of("usage").is_empty(), "usage line recorded");
    assert_eq!(o.lines.last().unwrap()["eventType"], "subagent:complete");
    // The real worker carries no marker; check its pid instead.
    let pid = o.lines.last().unwrap()["pid"]
        .as_u64()
        .expect("worker pid recorded");
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "worker {pid} survived"
    );
}

#[tokio::test]
async fn a_real_subagent_runs_on_chat_completions() {
    let Some((o, _f)) = run_real(ProviderKind::OpenaiChat, None).await else {
        return;
    };
    assert_eq!(o.code(), None, "{:#}", o.json);
    assert!(!o.text().trim().is_empty(), "streamed text arrived");
    assert_real_run(&o);
}

#[tokio::test]
async fn a_real_subagent_runs_on_responses() {
    let Some((o, _f)) = run_real(ProviderKind::OpenaiResponses, None).await else {
        return;
    };
    assert_eq!(o.code(), None, "{:#}", o.json);
    assert!(!o.text().trim().is_empty());
    assert_real_run(&o);
}

#[tokio::test]
async fn a_real_subagent_runs_on_messages() {
    let Some((o, _f)) = run_real(ProviderKind::Anthropic, None).await else {
        return;
    };
    assert_eq!(o.code(), None, "{:#}", o.json);
    assert!(!o.text().trim().is_empty());
    assert_real_run(&o);
}

#[tokio::test]
async fn a_messages_base_url_without_v1_is_accepted() {
    // As the Anthropic SDKs and Claude Code set ANTHROPIC_BASE_URL: the host
    // alone, the worker adding `/v1/messages`.
    let without_v1 = |server: &LlamaServer| {
        let url = server.base_url();
        url.strip_suffix("/v1")
            .expect("base_url ends in /v1")
            .to_owned()
    };
    let Some((o, _f)) = run_real_at(ProviderKind::Anthropic, None, without_v1).await else {
        return;
    };
    assert_eq!(o.code(), None, "{:#}", o.json);
    assert!(!o.text().trim().is_empty());
    assert_real_run(&o);
}

#[tokio::test]
async fn native_structured_output_on_chat_completions_validates() {
    let schema = r#"{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"],"additionalProperties":false}"#;
    let Some((o, _f)) = run_real(ProviderKind::OpenaiChat, Some(schema)).await else {
        return;
    };
    assert_eq!(o.code(), None, "{:#}", o.json);
    let value = &o.single()["structuredOutput"];
    let validator = jsonschema::validator_for(&serde_json::from_str(schema).unwrap()).unwrap();
    assert!(
        validator.is_valid(value),
        "structured output {value} does not validate"
    );
    assert_real_run(&o);
}

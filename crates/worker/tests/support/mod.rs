//! Shared test support: the scripted loopback server, recorded provider
//! streams, and shortcuts to build a provider and run one turn.

pub mod binaries;
pub mod loopback;

use std::time::Duration;

use subagent_protocol::{ApiKey, ProviderKind, ProviderSpec};
use subagent_worker::provider::{
    ChatMessage, ChatRequest, Provider, ProviderConfig, ProviderError, RetryPolicy, StreamDelta,
    TurnResponse, provider_for,
};

/// An API key shaped like a real one, to prove it never leaks.
pub const TEST_KEY: &str = "sk-proj-TESTKEY0123456789abcdefSECRET";

/// A recorded stream from `tests/fixtures/`.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read fixture {}: {e}", path.display()))
}

/// A spec for `kind` at `base_url`, with [`TEST_KEY`].
pub fn spec(kind: ProviderKind, base_url: &str, model: &str) -> ProviderSpec {
    ProviderSpec {
        kind,
        base_url: base_url.to_owned(),
        model: model.to_owned(),
        api_key: Some(ApiKey::new(TEST_KEY)),
        temperature: None,
        max_tokens: None,
        reasoning: false,
        price: None,
    }
}

/// Settings that keep the suite fast: millisecond backoff, a short idle
/// limit.
pub fn fast_config() -> ProviderConfig {
    ProviderConfig {
        idle_timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
            ..RetryPolicy::default()
        },
        ..ProviderConfig::default()
    }
}

/// A request holding just the task.
pub fn ask(task: &str) -> ChatRequest {
    ChatRequest {
        system_prompt: String::new(),
        messages: vec![ChatMessage::User {
            text: task.to_owned(),
        }],
        tools: Vec::new(),
        native_schema: None,
    }
}

/// Runs one turn, collecting the deltas.
pub async fn run_turn(
    provider: &mut dyn Provider,
    request: &ChatRequest,
) -> (Result<TurnResponse, ProviderError>, Vec<StreamDelta>) {
    let mut deltas = Vec::new();
    let result = provider
        .turn(request, &mut |delta| deltas.push(delta))
        .await;
    (result, deltas)
}

/// A provider of `spec` with `config`.
pub fn provider(spec: &ProviderSpec, config: ProviderConfig) -> Box<dyn Provider> {
    provider_for(spec, config).expect("provider builds")
}

/// The text deltas joined.
pub fn streamed_text(deltas: &[StreamDelta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Text(t) => Some(t.as_str()),
            StreamDelta::Reasoning(_) => None,
        })
        .collect()
}

//! `vertexai-anthropic` on the wire: the `:streamRawPredict` path built from
//! project, region and model, the bearer token, and the Messages body without
//! `model` and with Vertex's `anthropic_version`; the Anthropic stream answer
//! is read as for `anthropic`.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::ProviderKind;

use crate::support::loopback::{Loopback, Reply};
use crate::support::{
    TEST_KEY, ask, fast_config, fixture, provider, run_turn, spec, streamed_text,
};

#[tokio::test]
async fn request_goes_to_stream_raw_predict_with_bearer_token_and_vertex_body() {
    let server = Loopback::start(vec![Reply::Stream(fixture("anthropic_tool_use.sse"))]).await;
    let base = format!("{}/projects/proj-7/locations/us-east5", server.base_url());
    let mut spec = spec(
        ProviderKind::VertexaiAnthropic,
        &base,
        "claude-sonnet-4@20250514",
    );
    spec.temperature = Some(0.8);
    spec.max_tokens = Some(8192);
    let mut request = ask("Find Rust files");
    request.system_prompt = "You find files.".into();
    let mut provider = provider(&spec, fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &request).await;
    let response = result.unwrap();
    assert_eq!(
        streamed_text(&deltas),
        "Okay, let me look for the Rust files."
    );
    assert_eq!(response.tool_calls[0].name, "bash_find");

    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(
        sent.path,
        "/v1/projects/proj-7/locations/us-east5/publishers/anthropic/models/\
         claude-sonnet-4@20250514:streamRawPredict"
    );
    let bearer = format!("Bearer {TEST_KEY}");
    assert_eq!(sent.header("authorization"), Some(bearer.as_str()));
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(sent.header("anthropic-version"), None);
    assert_eq!(
        sent.json(),
        json!({
            "anthropic_version": "vertex-2023-10-16",
            "max_tokens": 8192,
            "system": "You find files.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Find Rust files"}]}],
            "stream": true,
            "temperature": 0.8,
        })
    );
}

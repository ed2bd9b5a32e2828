use pretty_assertions::assert_eq;
use subagent_protocol::ProviderKind::{
    self, Anthropic, OpenaiChat, OpenaiResponses, VertexaiAnthropic,
};

use super::api_base_url;

const VERTEX: &str =
    "https://us-east5-aiplatform.googleapis.com/v1/projects/p-1/locations/us-east5";

#[test]
fn base_urls_and_full_endpoints_name_the_same_base() {
    let vertex_stream =
        format!("{VERTEX}/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict");
    let vertex_raw =
        format!("{VERTEX}/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict");
    let vertex_slash = format!("{VERTEX}/");
    let table: Vec<(ProviderKind, &str, &str)> = vec![
        // Base URLs, with and without a trailing slash.
        (
            OpenaiChat,
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1:8080/v1",
        ),
        (
            OpenaiChat,
            "http://127.0.0.1:8080/v1/",
            "http://127.0.0.1:8080/v1",
        ),
        (
            OpenaiResponses,
            "https://api.openai.com/v1//",
            "https://api.openai.com/v1",
        ),
        (
            Anthropic,
            "https://api.anthropic.com",
            "https://api.anthropic.com",
        ),
        (
            Anthropic,
            "https://api.anthropic.com/v1/",
            "https://api.anthropic.com/v1",
        ),
        (VertexaiAnthropic, VERTEX, VERTEX),
        (VertexaiAnthropic, &vertex_slash, VERTEX),
        // Full endpoints, with and without a trailing slash.
        (
            OpenaiChat,
            "http://127.0.0.1:8080/v1/chat/completions",
            "http://127.0.0.1:8080/v1",
        ),
        (
            OpenaiChat,
            "http://127.0.0.1:8080/v1/chat/completions/",
            "http://127.0.0.1:8080/v1",
        ),
        (
            OpenaiChat,
            "http://h/proxy/openai/chat/completions",
            "http://h/proxy/openai",
        ),
        (
            OpenaiResponses,
            "https://api.openai.com/v1/responses",
            "https://api.openai.com/v1",
        ),
        (
            OpenaiResponses,
            "https://api.openai.com/v1/responses/",
            "https://api.openai.com/v1",
        ),
        (
            Anthropic,
            "https://api.anthropic.com/v1/messages",
            "https://api.anthropic.com/v1",
        ),
        (
            Anthropic,
            "https://api.anthropic.com/v1/messages/",
            "https://api.anthropic.com/v1",
        ),
        (VertexaiAnthropic, &vertex_stream, VERTEX),
        (VertexaiAnthropic, &vertex_raw, VERTEX),
        // Another kind's endpoint is not stripped: the server says 404 in its words.
        (OpenaiChat, "http://h/v1/messages", "http://h/v1/messages"),
        (
            Anthropic,
            "http://h/v1/chat/completions",
            "http://h/v1/chat/completions",
        ),
        (
            OpenaiResponses,
            "http://h/v1/chat/completions",
            "http://h/v1/chat/completions",
        ),
        (
            VertexaiAnthropic,
            "http://h/v1/messages",
            "http://h/v1/messages",
        ),
        // Not an endpoint: a model segment with a slash, no method, no model.
        (
            VertexaiAnthropic,
            "http://h/publishers/anthropic/models/a/b:rawPredict",
            "http://h/publishers/anthropic/models/a/b:rawPredict",
        ),
        (
            VertexaiAnthropic,
            "http://h/publishers/anthropic/models/claude",
            "http://h/publishers/anthropic/models/claude",
        ),
        (
            VertexaiAnthropic,
            "http://h/publishers/anthropic/models/:rawPredict",
            "http://h/publishers/anthropic/models/:rawPredict",
        ),
        // Only the whole last segments: `/v1/mychat/completions` is not the endpoint.
        (
            OpenaiChat,
            "http://h/v1/mychat/completions",
            "http://h/v1/mychat/completions",
        ),
        (
            Anthropic,
            "http://h/v1/old-messages",
            "http://h/v1/old-messages",
        ),
        // Nothing left but a scheme and host part: kept as written.
        (OpenaiChat, "/chat/completions", "/chat/completions"),
        (Anthropic, "http:///messages", "http:///messages"),
        // A query or fragment: as given, the server decides.
        (
            OpenaiChat,
            "http://h/v1/chat/completions?api-version=1",
            "http://h/v1/chat/completions?api-version=1",
        ),
        (
            Anthropic,
            "http://h/v1/messages#x",
            "http://h/v1/messages#x",
        ),
    ];
    for (kind, given, base) in table {
        assert_eq!(api_base_url(kind, given), base, "{kind:?} {given}");
    }
}

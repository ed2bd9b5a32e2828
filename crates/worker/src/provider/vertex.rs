//! `vertexai-anthropic`: Claude on Google Vertex AI.
//!
//! Vertex serves the Anthropic Messages API with three differences, and only
//! those live here; the body, the stream and the conversation are the
//! [`super::anthropic`] client's:
//! - the URL names the model:
//!   `{base_url}/publishers/anthropic/models/{model}:streamRawPredict`, where
//!   the base URL is the location URL
//!   `https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}`
//!   (overridable, e.g. for a proxy or a test server);
//! - the body has no `model` and carries
//!   `anthropic_version: "vertex-2023-10-16"`;
//! - the key is an OAuth access token sent as `Authorization: Bearer`.
//!
//! It must not mint or refresh tokens: the token comes from the variable the
//! caller named, like any other key.

use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Value, json};

use super::ProviderError;
use super::http::HttpClient;
use super::stream_turn::endpoint;

/// The `anthropic_version` Vertex AI expects in the body.
pub const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// The location URL of `project` in `region` on the public Vertex AI endpoint.
pub fn location_url(project: &str, region: &str) -> String {
    format!("https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}")
}

/// The streaming endpoint of `model` under the location URL `base_url`.
pub(crate) fn stream_url(base_url: &str, model: &str) -> Result<String, ProviderError> {
    if model.is_empty() || model.contains('/') {
        return Err(ProviderError::Invalid(format!(
            "Vertex AI model id {model:?} must be a single path segment, \
             e.g. claude-sonnet-4@20250514"
        )));
    }
    endpoint(
        base_url,
        &format!("publishers/anthropic/models/{model}:streamRawPredict"),
    )
}

/// The bearer-token header, when a token was given.
pub(crate) fn headers(http: &HttpClient) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    if let Some(value) = http.secret_header("Bearer ")? {
        headers.insert(AUTHORIZATION, value);
    }
    Ok(headers)
}

/// A Messages body made into a Vertex one: `model` out (it is in the URL),
/// `anthropic_version` in.
pub(crate) fn into_vertex_body(mut body: Value) -> Value {
    if let Some(object) = body.as_object_mut() {
        object.remove("model");
        object.insert("anthropic_version".into(), json!(VERTEX_ANTHROPIC_VERSION));
    }
    body
}

#[cfg(test)]
#[path = "vertex_tests.rs"]
mod tests;

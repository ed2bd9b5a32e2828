//! A provider's base URL from what a caller wrote: the base URL itself or
//! the full endpoint the caller's own client posts to.
//!
//! Parents of `subagent call` (the seed's call_subagent tool among them)
//! pass the URL their own client posts to, such as
//! `http://127.0.0.1:8080/v1/chat/completions`, while the worker appends
//! the endpoint's path itself. [`api_base_url`] strips the endpoint the
//! kind posts to, so both spellings name the same server and compare
//! equal (ceilings, pinned flags). It is the one place this is done: every
//! run's URL passes through it in [`super::resolve_run`], whatever set it
//! (`url` of `subagent call`, `--base-url`, config, environment).
//!
//! Pure: no I/O. It must not guess: only the exact endpoint of the URL's
//! own kind is stripped (and trailing slashes), and a URL with a query or
//! fragment is returned exactly as given, so anything else reaches the
//! server as written and fails there with the server's words.

use subagent_protocol::ProviderKind;

/// Vertex AI's per-model path under the location URL.
const VERTEX_MODELS: &str = "/publishers/anthropic/models/";

/// Vertex AI's two Anthropic methods; the worker always streams.
const VERTEX_METHODS: [&str; 2] = [":streamRawPredict", ":rawPredict"];

/// The base URL of `url` for `kind`: without trailing slashes, and without
/// the endpoint the kind posts to when `url` names it (`/chat/completions`,
/// `/responses`, `/messages`, Vertex AI's
/// `/publishers/anthropic/models/{model}:streamRawPredict` or `:rawPredict`,
/// whose model the request's `model` replaces).
pub fn api_base_url(kind: ProviderKind, url: &str) -> String {
    if url.contains(['?', '#']) {
        return url.to_owned();
    }
    let trimmed = url.trim_end_matches('/');
    let base = match kind {
        ProviderKind::OpenaiChat => trimmed.strip_suffix("/chat/completions"),
        ProviderKind::OpenaiResponses => trimmed.strip_suffix("/responses"),
        ProviderKind::Anthropic => trimmed.strip_suffix("/messages"),
        ProviderKind::VertexaiAnthropic => vertex_location(trimmed),
    };
    // A URL that is nothing but the endpoint's path is not a base URL.
    match base {
        Some(base) if base.contains("://") && !base.ends_with(':') && !base.ends_with('/') => {
            base.to_owned()
        }
        _ => trimmed.to_owned(),
    }
}

/// The location URL of a Vertex AI model endpoint, if `url` is one.
fn vertex_location(url: &str) -> Option<&str> {
    let (location, model_and_method) = url.rsplit_once(VERTEX_MODELS)?;
    let model = VERTEX_METHODS
        .iter()
        .find_map(|method| model_and_method.strip_suffix(method))?;
    (!model.is_empty() && !model.contains('/')).then_some(location)
}

#[cfg(test)]
#[path = "endpoint_tests.rs"]
mod tests;

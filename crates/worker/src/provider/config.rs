//! How a provider is built: the worker-side settings that are not part of
//! the task's [`ProviderSpec`] (idle limit, retry policy, cancel token,
//! reasoning details) and [`provider_for`], the one constructor.
//!
//! Nothing here talks to the network; a bad spec (unparseable base URL,
//! zero idle limit) fails here, before the first turn.

use std::time::Duration;

use subagent_protocol::{ProviderKind, ProviderSpec};
use tokio_util::sync::CancellationToken;

use super::anthropic::Anthropic;
use super::http::HttpClient;
use super::openai_chat::OpenAiChat;
use super::openai_responses::{OpenAiResponses, ResponsesContinuation};
use super::retry::RetryPolicy;
use super::{Provider, ProviderError};

/// Longest silence between two chunks of a stream (or before the answer's
/// headers) by default, in seconds. Below the supervisor's default idle
/// limit (180 s) so that a stalled provider is reported by the worker as a
/// readable provider error rather than killed from outside.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Anthropic extended-thinking budget by default, in tokens: a quarter of
/// the default `max_tokens` (4096), leaving the rest for the answer.
pub const DEFAULT_THINKING_BUDGET_TOKENS: u32 = 1024;

/// Worker-side provider settings.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Longest wait for the answer's headers and between two chunks of its
    /// stream. Exceeding it ends the turn with [`ProviderError::Idle`],
    /// never retried.
    pub idle_timeout: Duration,
    /// When failed requests are retried.
    pub retry: RetryPolicy,
    /// Cancels the turn in flight and any retry wait
    /// ([`ProviderError::Cancelled`], never retried). Dropping the turn's
    /// future cancels too; the token also reaches a backoff sleep.
    pub cancel: Option<CancellationToken>,
    /// Anthropic thinking budget in tokens when `ProviderSpec::reasoning`
    /// is on (clamped to the API's minimum and below `max_tokens`).
    /// OpenAI dialects ask for `effort: high` instead.
    pub thinking_budget_tokens: u32,
    /// Conversation carrying of the `openai-responses` provider.
    pub responses_continuation: ResponsesContinuation,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        Self {
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            retry: RetryPolicy::default(),
            cancel: None,
            thinking_budget_tokens: DEFAULT_THINKING_BUDGET_TOKENS,
            responses_continuation: ResponsesContinuation::default(),
        }
    }
}

/// The provider for `spec`'s dialect.
///
/// Fails with [`ProviderError::Invalid`] when the base URL is not an
/// http(s) URL, the idle timeout is zero, or the HTTP client cannot be
/// built.
pub fn provider_for(
    spec: &ProviderSpec,
    config: ProviderConfig,
) -> Result<Box<dyn Provider>, ProviderError> {
    let http = HttpClient::new(config.idle_timeout, config.cancel, spec.api_key.clone())?;
    let spec = spec.clone();
    Ok(match spec.kind {
        ProviderKind::OpenaiChat => Box::new(OpenAiChat::new(spec, http, config.retry)?),
        ProviderKind::OpenaiResponses => Box::new(OpenAiResponses::new(
            spec,
            http,
            config.retry,
            config.responses_continuation,
        )?),
        ProviderKind::Anthropic | ProviderKind::VertexaiAnthropic => Box::new(Anthropic::new(
            spec,
            http,
            config.retry,
            config.thinking_budget_tokens,
        )?),
    })
}

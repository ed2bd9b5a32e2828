//! LLM providers: one streaming client per API dialect behind the
//! [`Provider`] trait, so the agent loop never sees a wire format.
//!
//! A provider turns a [`ChatRequest`] (the whole conversation so far) into one
//! streamed model turn. It reports deltas through a callback as they arrive
//! and returns the assembled [`TurnResponse`]. Providers that continue a
//! conversation server-side (the Responses API's `previous_response_id`) keep
//! that state themselves and send only what is new.
//!
//! Providers must never log or return the API key, and never retry after a
//! timeout or a cancel.

mod anthropic;
mod config;
#[cfg(test)]
mod decoder_test_support;
mod http;
mod openai_chat;
mod openai_responses;
pub mod pricing;
pub mod retry;
pub mod sse;
mod stream_turn;
pub mod vertex;

pub use config::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_THINKING_BUDGET_TOKENS, ProviderConfig, provider_for,
};
pub use openai_responses::ResponsesContinuation;
pub use pricing::{PriceLookup, price_for, price_for_spec};
pub use retry::{RetryNotice, RetryPolicy};
pub use stream_turn::MAX_TURN_STREAM_BYTES;

use subagent_protocol::Usage;

/// One message of the conversation, provider-neutral.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    /// The task, or a reminder from the loop.
    User {
        /// The text.
        text: String,
    },
    /// A previous model turn.
    Assistant {
        /// Its text (may be empty).
        text: String,
        /// Tool calls it made.
        tool_calls: Vec<ToolCallRequest>,
    },
    /// The result of one tool call.
    ToolResult {
        /// Id of the call answered.
        call_id: String,
        /// Tool name.
        name: String,
        /// Output shown to the model.
        output: String,
        /// True when the tool failed.
        is_error: bool,
    },
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// Name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments (an object schema).
    pub parameters: serde_json::Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// Provider's call id (synthesized when the provider gives none).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as the model wrote them (JSON text, possibly invalid).
    pub arguments_json: String,
}

/// Native structured output: the provider enforces the schema itself.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeSchema {
    /// Schema name (OpenAI requires one).
    pub name: String,
    /// The JSON Schema.
    pub schema: serde_json::Value,
}

/// Everything one model turn needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// System prompt; empty for none.
    pub system_prompt: String,
    /// The whole conversation so far, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Tools on offer (empty: no tools field is sent).
    pub tools: Vec<ToolDefinition>,
    /// Native schema enforcement, when asked for.
    pub native_schema: Option<NativeSchema>,
}

/// A delta reported while a turn streams.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    /// Assistant text.
    Text(String),
    /// Reasoning summary text.
    Reasoning(String),
}

/// One completed model turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnResponse {
    /// The assistant text of the turn.
    pub text: String,
    /// Tool calls, arguments complete.
    pub tool_calls: Vec<ToolCallRequest>,
    /// The provider's stop reason as it named it (`stop`, `tool_calls`,
    /// `end_turn`, `completed`, ...).
    pub stop_reason: String,
    /// Token counts of this turn (`cost` and `turns` are filled by the loop).
    pub usage: Usage,
    /// The model that answered, as the provider reported it.
    pub model: Option<String>,
    /// The provider's id of this response (a chunk's `id`, a message's
    /// `id`, a response's `id`), when it sent one fit to record
    /// (`subagent_protocol::text::response_id`).
    pub id: Option<String>,
}

// The rule for a provider's response id is the protocol's: the
// supervisor applies it again to what a worker sends.
pub use subagent_protocol::text::{RESPONSE_ID_MAX_BYTES, response_id};

/// A failed turn.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The provider answered with an error status.
    #[error("provider returned HTTP {status}{}: {message}", kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default())]
    Status {
        /// HTTP status.
        status: u16,
        /// Provider error type, e.g. `rate_limit_error`.
        kind: Option<String>,
        /// Provider error message (never contains the API key).
        message: String,
    },
    /// The connection failed or broke.
    #[error("could not reach the provider at {url}: {message}")]
    Connect {
        /// The URL (no query string).
        url: String,
        /// What failed.
        message: String,
    },
    /// The stream ended early or carried something unparseable.
    #[error("malformed stream from the provider: {0}")]
    Stream(String),
    /// An error event inside an otherwise good stream.
    #[error("provider reported an error mid-stream{}: {message}", kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default())]
    InStream {
        /// Provider error type.
        kind: Option<String>,
        /// Provider error message.
        message: String,
    },
    /// The answer of one turn grew past [`MAX_TURN_STREAM_BYTES`]; the
    /// stream was stopped there (never retried: the model would likely do
    /// it again).
    #[error("the model's answer passed the limit of {limit_bytes} bytes for one turn")]
    TooLarge {
        /// The limit, in bytes of streamed event data.
        limit_bytes: usize,
    },
    /// No byte arrived for the idle limit.
    #[error("no data from the provider for {secs} s")]
    Idle {
        /// The idle limit in seconds.
        secs: u64,
    },
    /// The request was cancelled.
    #[error("request cancelled")]
    Cancelled,
    /// The request could not be built (bad URL, bad schema).
    #[error("invalid provider request: {0}")]
    Invalid(String),
}

/// A streaming chat client for one API dialect.
pub trait Provider: Send {
    /// Runs one model turn. `on_delta` is called for each text or reasoning
    /// delta as it arrives. Retries (429, 5xx, connection errors) happen
    /// inside; cancellation is by dropping the future.
    fn turn<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> TurnFuture<'a>;

    /// The retries made by the turns since the last call, oldest first
    /// (each a failed attempt and the wait before the next). Retries happen
    /// inside [`Provider::turn`]; the loop collects them after every turn,
    /// however it ended, so the session file shows them. A provider that
    /// never retries keeps the default.
    fn take_retries(&mut self) -> Vec<RetryNotice> {
        Vec::new()
    }
}

/// The future of one model turn (boxed: the trait is used as `dyn Provider`).
pub type TurnFuture<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<TurnResponse, ProviderError>> + Send + 'a>,
>;

//! `TaskSpec`: everything a worker needs to run one subagent, sent in the
//! `Start` frame. Wire type: no skipped or flattened fields; JSON Schemas
//! travel as JSON strings.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use crate::api_key::{ApiKey, MASKED_API_KEY};
use crate::history::HistoryMessage;
use crate::limits::Limits;
use crate::mcp_server::McpServerSpec;
use crate::usage::ModelPrice;

/// One subagent run, as handed from supervisor to worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    /// The run's id (32 hex digits, a UUIDv7; 8 in files of older versions), also in the session file name.
    pub run_id: String,
    /// Agent definition name.
    pub agent: String,
    /// The task text given to the model as the first user message.
    pub task: String,
    /// System prompt; empty for none.
    pub system_prompt: String,
    /// Which model to talk to and how.
    pub provider: ProviderSpec,
    /// Names of the tools the child may call (its subset).
    pub tools: Vec<String>,
    /// JSON Schema (as JSON text) the final output must satisfy, if any.
    pub output_schema_json: Option<String>,
    /// How structured output is obtained when a schema is given.
    pub output_mode: OutputMode,
    /// Turn and cost budget.
    pub budget: Budget,
    /// Limits in force (tool caps are enforced by the worker itself).
    pub limits: Limits,
    /// Directory tools are confined to.
    pub workspace_dir: String,
    /// Tool processes may use the network (no network namespace, no socket
    /// filter). Off by default: a tool process sees only a down loopback.
    pub allow_network: bool,
    /// Refuse a tool call whose sandbox cannot apply every protection,
    /// instead of running it with the missing ones reported.
    pub require_sandbox: bool,
    /// Depth of this child (the top-level parent's children are depth 1).
    pub depth: u32,
    /// Deepest level allowed to exist; a child at this depth gets no subagent tool.
    pub max_depth: u32,
    /// Settings of the web tools (protocol 3).
    pub web: WebSettings,
    /// The Python interpreter tool processes run, resolved once by the
    /// supervisor outside any workspace; `None` when the child has no
    /// process tool (protocol 5). [`PythonInterpreter::Pending`] when the
    /// supervisor was still resolving it: it follows in
    /// [`crate::ToWorker::Python`] (protocol 7).
    pub python: Option<PythonInterpreter>,
    /// Paths inside the workspace that tool processes get read-only
    /// although the workspace is writable: what the operator put there and
    /// the supervisor reads back (a sessions dir, a batch's results file).
    /// A workspace holding the user's own config, state or cache dir is
    /// refused before a run starts. `.subagent`, `.claude` and `.git` of
    /// the workspace are protected without being named here (protocol 5).
    pub protected_paths: Vec<String>,
    /// The recorded conversation this run continues, oldest first; empty
    /// for a fresh run. The worker sends it before `task`, and `task` is
    /// left out when empty (an interrupted run continued as it stood)
    /// (protocol 6).
    pub history: Vec<HistoryMessage>,
    /// The MCP servers this run uses, with the tools of each it offers
    /// (`mcp__SERVER__TOOL`); empty for none (protocol 9). Their names are
    /// not in `tools`.
    pub mcp_servers: Vec<McpServerSpec>,
}

/// The Python interpreter of `python_execute`, as the supervisor found it.
/// Resolved once per supervisor with `/` as the working directory, so a
/// `.python-version` or `pyvenv.cfg` a tool writes in a workspace never
/// chooses the interpreter of a later run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PythonInterpreter {
    /// The real executable (not a launcher) and the prefixes it reads.
    Found {
        /// `sys.executable`.
        executable: String,
        /// `sys.prefix`, `sys.base_prefix` and the exec prefixes, deduplicated.
        prefixes: Vec<String>,
    },
    /// No usable interpreter, and what the operator can do about it.
    Missing {
        /// Said to the model when it calls `python_execute`.
        reason: String,
    },
    /// Still being resolved when the task was sent: the answer follows in
    /// [`crate::ToWorker::Python`], and `python_execute` waits for it. So
    /// the first runs of a supervisor do not wait for the question (through
    /// a launcher such as pyenv's shim, 0.1 to 0.4 s) before their first
    /// model turn (protocol 7).
    Pending,
}

/// Settings of `search_web` and `scrape_webpage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WebSettings {
    /// Where `search_web` searches; `None`: it answers with an error naming
    /// the setting to add.
    pub search: Option<SearchBackend>,
    /// Let `scrape_webpage` and tool processes with the network on reach
    /// loopback, private and other special addresses (never link-local
    /// ones). Off by default (SSRF defence).
    pub allow_private_networks: bool,
    /// Let them reach link-local addresses, the cloud metadata services
    /// (`169.254.169.254`, `fd00:ec2::254`) among them. Off by default, and
    /// not implied by `allow_private_networks`.
    pub allow_link_local_networks: bool,
}

/// A search API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchBackend {
    /// Which API.
    pub kind: SearchKind,
    /// Its base URL (a SearXNG instance; Brave's API endpoint).
    pub url: String,
    /// Its key, when it needs one (Brave), sent like the model's key.
    pub api_key: Option<ApiKey>,
}

/// The search APIs `search_web` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    /// A SearXNG instance's JSON API (`/search?format=json`).
    Searxng,
    /// The Brave Search API (`/res/v1/web/search`).
    Brave,
}

/// The model endpoint and its settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSpec {
    /// API dialect.
    pub kind: ProviderKind,
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// Model id as the provider names it.
    pub model: String,
    /// The API key value. Travels here rather than in the worker's
    /// environment so tool processes cannot read it from `environ`.
    pub api_key: Option<ApiKey>,
    /// Sampling temperature; provider default when `None`.
    pub temperature: Option<f32>,
    /// Cap on output tokens per turn.
    pub max_tokens: Option<u32>,
    /// Ask for reasoning / thinking where the API supports it.
    pub reasoning: bool,
    /// Price override for this model; the built-in table otherwise.
    pub price: Option<ModelPrice>,
}

impl ProviderSpec {
    /// `model` at `base_url` in dialect `kind`, with no key and every
    /// setting at the provider's default.
    pub fn new(kind: ProviderKind, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            kind,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            temperature: None,
            max_tokens: None,
            reasoning: false,
            price: None,
        }
    }
}

/// The API dialects the worker speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    /// OpenAI Chat Completions (also llama-server, Ollama, vLLM).
    OpenaiChat,
    /// OpenAI Responses API.
    OpenaiResponses,
    /// Anthropic Messages API.
    Anthropic,
    /// Claude on Google Vertex AI (protocol 4): the Anthropic Messages body
    /// without `model`, with `anthropic_version: vertex-2023-10-16`, posted to
    /// `{base_url}/publishers/anthropic/models/{model}:streamRawPredict`
    /// where `base_url` is the location URL
    /// `https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}`;
    /// the key is an OAuth bearer token.
    VertexaiAnthropic,
}

impl ProviderKind {
    /// Every kind.
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::OpenaiChat,
        ProviderKind::OpenaiResponses,
        ProviderKind::Anthropic,
        ProviderKind::VertexaiAnthropic,
    ];

    /// The name used on the command line and in config.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenaiChat => "openai-chat",
            ProviderKind::OpenaiResponses => "openai-responses",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::VertexaiAnthropic => "vertexai-anthropic",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown provider name.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "unknown provider {0:?}: expected openai-chat, openai-responses, anthropic or vertexai-anthropic"
)]
pub struct UnknownProvider(pub String);

impl FromStr for ProviderKind {
    type Err = UnknownProvider;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProviderKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

/// How structured output is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputMode {
    /// The child gets a `report_back` tool whose parameters are the schema.
    ReportBack,
    /// The provider's own schema enforcement; the final text is validated.
    Native,
}

/// Turn and cost budget of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Model turns allowed (default 50).
    pub max_turns: u32,
    /// Dollars allowed; `None` is unlimited.
    pub max_cost: Option<f64>,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_turns: 50,
            max_cost: None,
        }
    }
}

impl Budget {
    /// The budget a child may use: the smaller of what it asks for and what
    /// its parent has left.
    pub fn capped_by(self, parent_remaining: Budget) -> Budget {
        Budget {
            max_turns: self.max_turns.min(parent_remaining.max_turns),
            max_cost: match (self.max_cost, parent_remaining.max_cost) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

//! One `config.toml`: parsed and checked, every error naming the file, the
//! line and the key.
//!
//! ```toml
//! default_provider = "local"        # a [providers.NAME] below, or a kind
//! default_agent = "general"
//! max_concurrent = 16               # children running at once, all commands
//! isolation = "overlay"             # overlay (a run's writes land when it completes) or none
//! apply = "on-success"              # on-success or never (kept for `subagent apply`)
//!
//! [subagents]
//! enabled = true                    # false: every run is SUBAGENTS_DISABLED
//!
//! [providers.local]
//! kind = "openai-chat"              # openai-chat, openai-responses, anthropic, vertexai-anthropic
//! base_url = "http://127.0.0.1:8080/v1"
//! model = "smollm2"
//! api_key_env = "LOCAL_API_KEY"     # the variable's name, never the key
//! price = { input = 0.15, output = 0.60 }   # dollars per million tokens
//!
//! [limits]                          # the `subagent run` flags' names
//! timeout = "15m"
//! memory = "1G"
//! max_turns = 30
//!
//! [search]                          # the search_web tool's API
//! backend = "searxng"               # searxng, brave
//! url = "http://127.0.0.1:8888"     # brave: default https://api.search.brave.com
//! api_key_env = "BRAVE_API_KEY"     # brave only; the variable's name
//!
//! [web]
//! allow_private_networks = false    # true: web and network tools may reach LAN/loopback
//! allow_link_local_networks = false # true: ... and link-local, cloud metadata among them
//!
//! [serve]                           # user config only: what callers may raise
//! allow_raise = ["timeout"]         # limit names, tools, network, model, ...
//! allowed_models = ["gpt-4o-mini"]  # models a caller may pick besides the server's
//!
//! [mcp_servers.time]                # an MCP server runs may select (`mcp__time`)
//! command = "uvx"                   # Codex's keys: args, env, env_vars, timeouts, ...
//! args = ["mcp-server-time"]
//!
//! [telemetry]                       # user config only: OpenTelemetry traces (OTEL_* win)
//! endpoint = "http://127.0.0.1:4318" # OTLP/HTTP base URL; /v1/traces is appended
//! protocol = "http/protobuf"        # or http/json
//! include_content = false           # true: tasks, answers, tool text (masked)
//!
//! [call]                            # user config only: what `subagent call` payloads may name
//! allowed_api_key_env = ["LOCAL_API_KEY"]  # key variables besides the kind's own
//! ```
//!
//! Unknown keys are errors (a typo would otherwise be silently ignored),
//! and so is an API key written into the file: keys stay in the
//! environment. This module never reads the disk: the caller passes the text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{ProviderKind, SearchKind};

use super::key_variable::check_key_variable;
use super::limits::{LimitKey, LimitSet, RawLimit};
use super::raise::{Raise, RaiseSettings};

/// Subagents running at once in one supervisor, by default
/// (`max_concurrent`).
pub const DEFAULT_MAX_CONCURRENT: usize = 16;

/// The highest `max_concurrent` accepted: far past what one machine's
/// usual limits hold (BENCHMARKS.md: 5,000 live measured here, what 10,000
/// and 50,000 need), low enough that a typo of a few digits is refused.
/// What actually fits is checked against the open-files limit when a
/// `batch` starts (`serve` and `run --parallel` do not check yet).
pub const MAX_CONCURRENT_CEILING: usize = 100_000;

/// Why a config file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file exists but cannot be read.
    #[error("read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The name holds a link, a FIFO, or a file over
    /// [`super::CONFIG_FILE_CAP`]: it is not read.
    #[error("config file {0}")]
    Untrusted(subagent_session::untrusted_file::UntrustedFileError),
    /// Not TOML, or a key that is unknown or of the wrong type.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Line, 1-based.
        line: usize,
        /// What is wrong and what is accepted.
        message: String,
    },
}

/// A named provider: `[providers.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderEntry {
    /// The API dialect.
    pub kind: ProviderKind,
    /// Base URL; `None` uses the kind's variable or public endpoint.
    pub base_url: Option<String>,
    /// Default model for this provider.
    pub model: Option<String>,
    /// Name of the variable holding the key.
    pub api_key_env: Option<String>,
    /// Price override, dollars per million tokens.
    pub price: Option<ModelPrice>,
}

/// The search API: `[search]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchEntry {
    /// Which API.
    pub kind: SearchKind,
    /// Its base URL.
    pub url: String,
    /// Name of the variable holding its key (Brave).
    pub api_key_env: Option<String>,
}

/// Brave's API endpoint, used when `[search]` names brave without a `url`.
pub const BRAVE_DEFAULT_URL: &str = "https://api.search.brave.com";

/// The variable read for Brave's key when `[search]` names none.
pub const BRAVE_DEFAULT_KEY_VAR: &str = "BRAVE_API_KEY";

/// One parsed config file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigFile {
    /// Provider used when neither the flag nor the agent names one.
    pub default_provider: Option<String>,
    /// Agent used when `--agent` is not given.
    pub default_agent: Option<String>,
    /// `[subagents] enabled`.
    pub subagents_enabled: Option<bool>,
    /// Children one supervisor runs at once (1 to `MAX_CONCURRENT_CEILING`).
    pub max_concurrent: Option<usize>,
    /// `isolation`: how runs' tools see the workspace.
    pub isolation: Option<crate::WorkspaceIsolation>,
    /// `apply`: when a layered run's changes are applied.
    pub apply: Option<crate::ApplyMode>,
    /// `[providers.NAME]`.
    pub providers: BTreeMap<String, ProviderEntry>,
    /// `[limits]`.
    pub limits: LimitSet,
    /// `[search]`.
    pub search: Option<SearchEntry>,
    /// `[web] allow_private_networks`.
    pub web_allow_private_networks: Option<bool>,
    /// `[web] allow_link_local_networks`.
    pub web_allow_link_local_networks: Option<bool>,
    /// `[serve]`: what callers may raise; read from the user's file only.
    pub serve: RaiseSettings,
    /// `[call] allowed_api_key_env`: key variables a `subagent call`
    /// payload's `api_key_name` may name besides its provider kind's own;
    /// read from the user's file only.
    pub call_key_variables: Vec<String>,
    /// `[mcp_servers.NAME]`: MCP servers a run may select (Codex's shape,
    /// `crate::mcp`).
    pub mcp_servers: Vec<crate::mcp::McpServerEntry>,
    /// What reading the file ignored (Codex-only MCP keys), one line each.
    pub warnings: Vec<String>,
    /// `[telemetry]`: read from the user's file only.
    pub telemetry: crate::TelemetrySection,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    default_provider: Option<String>,
    default_agent: Option<String>,
    max_concurrent: Option<i64>,
    isolation: Option<String>,
    apply: Option<String>,
    subagents: Option<RawSubagents>,
    #[serde(default)]
    providers: BTreeMap<String, RawProvider>,
    #[serde(default)]
    limits: BTreeMap<String, toml::Value>,
    search: Option<RawSearch>,
    web: Option<RawWeb>,
    serve: Option<RawServe>,
    call: Option<RawCall>,
    mcp_servers: Option<toml::Table>,
    telemetry: Option<RawTelemetry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTelemetry {
    enabled: Option<bool>,
    endpoint: Option<String>,
    protocol: Option<String>,
    service_name: Option<String>,
    include_content: Option<bool>,
    queue_spans: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCall {
    #[serde(default)]
    allowed_api_key_env: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServe {
    #[serde(default)]
    allow_raise: Vec<String>,
    #[serde(default)]
    allowed_models: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSearch {
    backend: String,
    url: Option<String>,
    api_key_env: Option<String>,
    /// Present only to refuse it with a message that says what to do.
    api_key: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWeb {
    allow_private_networks: Option<bool>,
    allow_link_local_networks: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSubagents {
    enabled: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProvider {
    kind: String,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    /// Present only to refuse it with a message that says what to do.
    api_key: Option<toml::Value>,
    price: Option<RawPrice>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrice {
    input: f64,
    output: f64,
    #[serde(default)]
    cache_read: f64,
    #[serde(default)]
    cache_write: f64,
}

/// Parses `text`, the contents of `path`.
pub fn parse_config(path: &Path, text: &str) -> Result<ConfigFile, ConfigFileError> {
    let invalid = |line: usize, message: String| ConfigFileError::Invalid {
        path: path.to_owned(),
        line,
        message,
    };
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |span| line_at(text, span.start));
        invalid(line, e.message().trim().to_owned())
    })?;
    let mut providers = BTreeMap::new();
    for (name, entry) in raw.providers {
        let header = line_of(text, &format!("[providers.{name}]"));
        if entry.api_key.is_some() {
            return Err(invalid(
                line_of_key_after(text, "api_key", header),
                format!(
                    "providers.{name}.api_key: keys do not belong in config files; export the key \
                     in an environment variable and name it with `api_key_env = \"VAR\"`"
                ),
            ));
        }
        let kind = entry.kind.parse::<ProviderKind>().map_err(|_| {
            invalid(
                line_of_key_after(text, "kind", header),
                format!(
                    "providers.{name}.kind: `{}` is not a provider kind; use openai-chat, \
                     openai-responses, anthropic or vertexai-anthropic",
                    entry.kind
                ),
            )
        })?;
        if let Some(var) = &entry.api_key_env
            && let Err(problem) = check_key_variable(var)
        {
            return Err(invalid(
                line_of_key_after(text, "api_key_env", header),
                problem.message(&format!("providers.{name}.api_key_env"), "OPENAI_API_KEY"),
            ));
        }
        let price = match entry.price {
            None => None,
            Some(p) => {
                let all = [p.input, p.output, p.cache_read, p.cache_write];
                if all.iter().any(|x| !x.is_finite() || *x < 0.0) {
                    return Err(invalid(
                        line_of_key_after(text, "price", header),
                        format!(
                            "providers.{name}.price: prices are dollars per million tokens, 0 or more"
                        ),
                    ));
                }
                Some(ModelPrice {
                    input: p.input,
                    output: p.output,
                    cache_read: p.cache_read,
                    cache_write: p.cache_write,
                })
            }
        };
        providers.insert(
            name,
            ProviderEntry {
                kind,
                base_url: entry.base_url.filter(|u| !u.trim().is_empty()),
                model: entry.model.filter(|m| !m.trim().is_empty()),
                api_key_env: entry.api_key_env,
                price,
            },
        );
    }
    let mut limits = LimitSet::default();
    let limits_header = line_of(text, "[limits]");
    for (name, value) in raw.limits {
        let line = line_of_key_after(text, &name, limits_header);
        let Some(key) = LimitKey::from_config_key(&name) else {
            return Err(invalid(
                line,
                format!(
                    "limits.{name}: unknown limit; the limits are {}",
                    LimitKey::ALL.map(LimitKey::config_key).join(", ")
                ),
            ));
        };
        let raw = match &value {
            toml::Value::String(s) => RawLimit::Text(s),
            toml::Value::Integer(n) => RawLimit::Integer(*n),
            toml::Value::Float(x) => RawLimit::Float(*x),
            _ => {
                return Err(invalid(
                    line,
                    format!("limits.{name}: expected a number or a string such as \"15m\""),
                ));
            }
        };
        let parsed = key
            .parse(raw)
            .map_err(|message| invalid(line, format!("limits.{name}: {message}")))?;
        limits.set(key, parsed);
    }
    let search = match raw.search {
        None => None,
        Some(search) => Some(parse_search(search, text).map_err(|(line, m)| invalid(line, m))?),
    };
    let max_concurrent = match raw.max_concurrent {
        None => None,
        Some(n) => match usize::try_from(n) {
            Ok(n) if (1..=MAX_CONCURRENT_CEILING).contains(&n) => Some(n),
            _ => {
                return Err(invalid(
                    line_of_key_after(text, "max_concurrent", 1),
                    format!(
                        "max_concurrent: `{n}` is not a number of children; use 1 to {}",
                        MAX_CONCURRENT_CEILING
                    ),
                ));
            }
        },
    };
    let isolation = match &raw.isolation {
        None => None,
        Some(value) => Some(
            value
                .parse()
                .map_err(|m| invalid(line_of_key_after(text, "isolation", 1), m))?,
        ),
    };
    let apply = match &raw.apply {
        None => None,
        Some(value) => Some(
            value
                .parse()
                .map_err(|m| invalid(line_of_key_after(text, "apply", 1), m))?,
        ),
    };
    let serve = match raw.serve {
        None => RaiseSettings::default(),
        Some(serve) => {
            let line = line_of(text, "[serve]");
            let allow_raise = serve
                .allow_raise
                .iter()
                .map(String::as_str)
                .map(Raise::parse)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|m| invalid(line, format!("serve.allow_raise: {m}")))?;
            RaiseSettings::default()
                .with(allow_raise)
                .with_models(serve.allowed_models)
        }
    };
    let call_key_variables = match raw.call {
        None => Vec::new(),
        Some(call) => {
            let line = line_of(text, "[call]");
            for var in &call.allowed_api_key_env {
                check_key_variable(var).map_err(|problem| {
                    invalid(
                        line,
                        problem.message("call.allowed_api_key_env", "LOCAL_API_KEY"),
                    )
                })?;
            }
            call.allowed_api_key_env
        }
    };
    let (mcp_servers, warnings) = match &raw.mcp_servers {
        None => (Vec::new(), Vec::new()),
        Some(table) => crate::mcp::parse_toml_servers(path, table).map_err(|e| {
            let header = line_of(text, &format!("[mcp_servers.{}]", e.server));
            let line = e
                .key
                .as_deref()
                .map_or(header, |key| line_of_key_after(text, key, header));
            invalid(line, e.message)
        })?,
    };
    Ok(ConfigFile {
        default_provider: raw.default_provider,
        default_agent: raw.default_agent,
        subagents_enabled: raw.subagents.and_then(|s| s.enabled),
        max_concurrent,
        isolation,
        apply,
        providers,
        limits,
        search,
        web_allow_private_networks: raw.web.as_ref().and_then(|w| w.allow_private_networks),
        web_allow_link_local_networks: raw.web.as_ref().and_then(|w| w.allow_link_local_networks),
        serve,
        call_key_variables,
        mcp_servers,
        warnings,
        telemetry: raw
            .telemetry
            .map(|t| crate::TelemetrySection {
                enabled: t.enabled,
                endpoint: t.endpoint,
                protocol: t.protocol,
                service_name: t.service_name,
                include_content: t.include_content,
                queue_spans: t.queue_spans,
            })
            .unwrap_or_default(),
    })
}

/// `[search]` checked: a known backend, a URL where one is needed, a
/// variable name (never a key).
fn parse_search(raw: RawSearch, text: &str) -> Result<SearchEntry, (usize, String)> {
    let header = line_of(text, "[search]");
    let at = |key: &str| line_of_key_after(text, key, header);
    if raw.api_key.is_some() {
        return Err((
            at("api_key"),
            "search.api_key: keys do not belong in config files; export the key in an \
             environment variable and name it with `api_key_env = \"VAR\"`"
                .to_owned(),
        ));
    }
    let kind = match raw.backend.as_str() {
        "searxng" => SearchKind::Searxng,
        "brave" => SearchKind::Brave,
        other => {
            return Err((
                at("backend"),
                format!("search.backend: `{other}` is not a search backend; use searxng or brave"),
            ));
        }
    };
    let url = match (raw.url.filter(|u| !u.trim().is_empty()), kind) {
        (Some(url), _) => url,
        (None, SearchKind::Brave) => BRAVE_DEFAULT_URL.to_owned(),
        (None, SearchKind::Searxng) => {
            return Err((
                header,
                "search.url: a searxng backend needs the instance's URL, e.g. \
                 `url = \"http://127.0.0.1:8888\"`"
                    .to_owned(),
            ));
        }
    };
    if let Some(var) = &raw.api_key_env
        && let Err(problem) = check_key_variable(var)
    {
        return Err((
            at("api_key_env"),
            problem.message("search.api_key_env", "BRAVE_API_KEY"),
        ));
    }
    Ok(SearchEntry {
        kind,
        url,
        api_key_env: raw.api_key_env,
    })
}

/// The 1-based line holding byte `offset`.
fn line_at(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |head| head.matches('\n').count() + 1)
}

/// The 1-based line whose trimmed text starts with `start`; 1 when none.
fn line_of(text: &str, start: &str) -> usize {
    text.lines()
        .position(|line| line.trim_start().starts_with(start))
        .map_or(1, |i| i + 1)
}

/// The first line at or after `from` (1-based) that sets `key`; `from`
/// when none does (the key came from an inline table, say).
fn line_of_key_after(text: &str, key: &str, from: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, line)| {
            line.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(from, |(i, _)| i + 1)
}

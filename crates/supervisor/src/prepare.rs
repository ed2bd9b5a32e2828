//! Preparing runs: what a way in fixes for its runs ([`PrepareSettings`]:
//! the flags of `run`, `batch`, `serve`, `call`, or a library caller's
//! choice), one set of [`RunOverrides`], the config files and the agent
//! files of the workspace, turned into a request template and a supervisor
//! config ([`Prepared`]).
//!
//! It reads files (the project's, the user's, an output schema) as
//! untrusted input (`crate::untrusted_file`), blocking: async callers call
//! it from `spawn_blocking`. It never starts a run, never reads a request
//! off a wire and never writes to the terminal: warnings go to the
//! caller's sink as [`PrepareWarning`]s, which the CLI prints and a server
//! may log.

use std::path::{Path, PathBuf};

use subagent_protocol::{OutputMode, ProviderSpec};
use subagent_sandbox::SandboxPolicy;

use crate::agents::{
    AgentCatalog, AgentDefinition, AgentOutputSchema, DiscoverError, WarningDetail,
    default_user_agents_dir, discover_catalog,
};
use crate::config::{
    CONFIG_FILE_CAP, ConfigFileError, ConfiguredProvider, ProjectConfig, Raise, RaiseSettings,
    ResolveError, RunOverrides, TrustError, default_trust_file_path, default_user_config_path,
    load_config, read_project, resolve_run,
};
use crate::request::{Ceilings, Owner};
use crate::session::default_sessions_dir;
use crate::untrusted_file::read_capped_string;
use crate::{RunRequest, SupervisorConfig, WorkerCommand};

/// What a way in fixes for every run it starts, besides the
/// [`RunOverrides`] (which one request may patch). `None` means the
/// default: the sessions dir of the environment, the worker next to this
/// executable, the current directory, the agent's tools.
#[derive(Debug, Clone)]
pub struct PrepareSettings {
    /// Where session files go.
    pub sessions_dir: Option<PathBuf>,
    /// The worker binary.
    pub worker: Option<PathBuf>,
    /// The directory the subagent works in; its project files count once trusted.
    pub workspace: Option<PathBuf>,
    /// A JSON Schema file the final output must satisfy (over the agent file's).
    pub output_schema: Option<PathBuf>,
    /// How structured output is obtained.
    pub output_mode: OutputMode,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Output tokens per turn.
    pub max_tokens: Option<u32>,
    /// Ask for reasoning where the API supports it.
    pub reasoning: bool,
    /// Tools the subagent may call (`None`: its agent's own list). Names are
    /// checked by the supervisor's admission, so every way in gets the same
    /// refusal.
    pub tools: Option<Vec<String>>,
    /// Network for tool processes.
    pub allow_network: bool,
    /// Refuse to run with less than every protection.
    pub require_sandbox: bool,
    /// What callers may raise, over the user config's `[serve] allow_raise`.
    pub allow_raise: Vec<Raise>,
    /// `--isolation`, over the agent file's and the config's `isolation`.
    pub isolation: Option<crate::layer::WorkspaceIsolation>,
    /// `--apply`, over the config's `apply`.
    pub apply: Option<crate::layer::ApplyMode>,
}

/// A request template (its task empty) and the supervisor config for it.
#[derive(Debug)]
pub struct Prepared {
    /// Every setting of a run but its task (and mode).
    pub request: RunRequest,
    /// How the supervisor runs children.
    pub config: SupervisorConfig,
    /// What callers may raise: the user config's `[serve]` and `allow_raise`.
    pub raise: RaiseSettings,
    /// The `[providers.NAME]` entry the run's provider is, when it is one.
    pub configured_provider: Option<ConfiguredProvider>,
    /// The user config's `[call] allowed_api_key_env`.
    pub call_key_variables: Vec<String>,
}

/// Something about the workspace a caller should hear that does not stop a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareWarning {
    /// Project files left out (untrusted, or changed since trusted): the
    /// same for every run of a workspace, so callers that prepare many runs
    /// say it once.
    ProjectIgnored(String),
    /// The agent files' warnings, grouped (a count of tools dropped and
    /// aliases ignored, one line per file skipped as unreadable): the same
    /// for every run of a workspace, so callers that prepare many runs say
    /// each line once.
    Agent(String),
    /// What a config file's reading ignored (an MCP server's Codex-only
    /// key, an HTTP server skipped): the same for every run.
    Config(String),
}

/// Why a run could not be prepared; each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// Neither a sessions dir nor a home to put one in.
    #[error("no sessions dir: set SUBAGENT_HOME, XDG_STATE_HOME or HOME, or pass --sessions-dir")]
    NoSessionsDir,
    /// No worker binary given and none found.
    #[error("cannot locate subagent-worker; pass --worker or set SUBAGENT_WORKER")]
    NoWorker,
    /// No workspace given and the current directory unreadable.
    #[error("cannot read the current directory")]
    CurrentDir(#[source] std::io::Error),
    /// The project's files (or the trust record) could not be read.
    #[error("cannot read the project's configuration")]
    Project(#[source] TrustError),
    /// An agent file could not be read or parsed.
    #[error(transparent)]
    Agents(#[from] DiscoverError),
    /// A config file could not be read or parsed.
    #[error(transparent)]
    Config(#[from] ConfigFileError),
    /// The settings do not resolve (unknown provider, no model, ...).
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// A trusted project's `.mcp.json` cannot be used (the message names
    /// the file and the server).
    #[error("{0}")]
    McpJson(String),
    /// The output schema file given by the caller cannot be read.
    #[error("--output-schema {}: cannot read the file", path.display())]
    OutputSchema {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The output schema file an agent file names cannot be read.
    #[error(
        "agent {agent} ({origin}): outputSchema {}: cannot read the file; fix the path (it is relative to the agent file) or pass --output-schema",
        path.display()
    )]
    AgentOutputSchema {
        /// The agent's name.
        agent: String,
        /// Where the agent is defined.
        origin: String,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

pub use crate::env_lookup::env_value;

/// The project files of `workspace` with their verdict (against the
/// operator's trust record); a warning when some are left out.
pub fn workspace_project(
    workspace: &Path,
    warn: &dyn Fn(PrepareWarning),
) -> Result<ProjectConfig, PrepareError> {
    let project = read_project(workspace, default_trust_file_path().as_deref())
        .map_err(PrepareError::Project)?;
    if let Some(warning) = project.warning() {
        warn(PrepareWarning::ProjectIgnored(warning));
    }
    for warning in project.skipped_config_warnings() {
        warn(PrepareWarning::ProjectIgnored(warning));
    }
    Ok(project)
}

/// The catalog a run in `project`'s workspace sees (its agent files only
/// when trusted), then the user's agents, then the built-ins; each agent
/// file's warnings go to `warn`.
pub fn workspace_catalog(
    project: &ProjectConfig,
    warn: &dyn Fn(PrepareWarning),
) -> Result<AgentCatalog, PrepareError> {
    let catalog = discover_catalog(project, default_user_agents_dir().as_deref())?;
    // Grouped: one line counts every file's warnings; a run prints its own
    // agent's in full, `agents ls --warnings` all of them.
    for line in catalog.warning_lines(WarningDetail::Grouped { full_for: None }) {
        warn(PrepareWarning::Agent(line));
    }
    Ok(catalog)
}

/// The request template and supervisor config for `overrides` (the way
/// in's own, or patched by one request), with the config files and agent
/// files of the workspace.
pub fn prepare(
    settings: &PrepareSettings,
    overrides: &RunOverrides,
    warn: &dyn Fn(PrepareWarning),
) -> Result<Prepared, PrepareError> {
    let sessions_dir = settings
        .sessions_dir
        .clone()
        .or_else(default_sessions_dir)
        .ok_or(PrepareError::NoSessionsDir)?;
    let worker = match &settings.worker {
        Some(program) => WorkerCommand {
            program: program.clone(),
            args: Vec::new(),
        },
        None => WorkerCommand::default_for_current_exe().ok_or(PrepareError::NoWorker)?,
    };
    let workspace_dir = match &settings.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(PrepareError::CurrentDir)?,
    };
    // The project's files count once the operator trusted them; its
    // agent files and the user's come before the built-ins.
    let project = workspace_project(&workspace_dir, warn)?;
    let catalog = workspace_catalog(&project, warn)?;
    let files = load_config(&project, default_user_config_path().as_deref())?;
    let resolved = resolve_run(overrides, &files, &catalog, &env_value)?;
    let output_schema_json = output_schema_text(
        settings.output_schema.as_deref(),
        catalog.get(&resolved.agent),
    )?;
    let provider = ProviderSpec {
        temperature: settings.temperature,
        max_tokens: settings.max_tokens,
        reasoning: settings.reasoning,
        ..resolved.provider
    };
    let mut request = RunRequest::new(resolved.agent.clone(), String::new(), provider);
    request.output_schema_json = output_schema_json;
    request.output_mode = settings.output_mode;
    request.budget = resolved.budget;
    request.limits = resolved.limits;
    request.max_depth = resolved.max_depth;
    request.workspace_dir = workspace_dir;
    request.tools = settings.tools.clone();
    request.allow_network = settings.allow_network;
    request.web = resolved.web;
    // The flag, then the agent's file, then the project's config over the
    // user's.
    request.isolation = settings
        .isolation
        .or_else(|| catalog.get(&resolved.agent).and_then(|a| a.isolation))
        .or_else(|| files.layers().rev().find_map(|l| l.file.isolation))
        .unwrap_or_default();
    request.apply = settings
        .apply
        .or_else(|| files.layers().rev().find_map(|l| l.file.apply))
        .unwrap_or_default();

    let mut config = SupervisorConfig::new(worker, sessions_dir);
    config.mcp_servers = mcp_registry(&files, &project, overrides, warn)?;
    config.catalog = catalog;
    config.subagents_disabled = resolved.subagents_disabled;
    if let Some(n) = resolved.max_concurrent {
        config.max_concurrent = n;
    }
    if settings.require_sandbox {
        config.sandbox_policy = SandboxPolicy::RequireAll;
    }
    // Only the operator's own file may let callers go above the
    // ceilings, never a project's (which a run may have written).
    // Telemetry settings, like the raise ones, come from the operator's
    // own file only: a project's could send traces anywhere.
    crate::telemetry::init(
        &files
            .user
            .as_ref()
            .map(|layer| layer.file.telemetry.clone())
            .unwrap_or_default(),
    );
    let (raise, call_key_variables) = files
        .user
        .map(|layer| (layer.file.serve, layer.file.call_key_variables))
        .unwrap_or_default();
    let raise = raise.with(settings.allow_raise.iter().copied());
    Ok(Prepared {
        request,
        config,
        raise,
        configured_provider: resolved.configured_provider,
        call_key_variables,
    })
}

/// The MCP servers of the config files (the user's, then a trusted
/// project's), with every provider key variable the files and flags name
/// marked as one no server may be given.
fn mcp_registry(
    files: &crate::config::LoadedConfig,
    project: &ProjectConfig,
    overrides: &RunOverrides,
    warn: &dyn Fn(PrepareWarning),
) -> Result<crate::mcp::McpRegistry, PrepareError> {
    let mut registry = crate::mcp::McpRegistry::default();
    for kind in [
        subagent_protocol::ProviderKind::OpenaiChat,
        subagent_protocol::ProviderKind::Anthropic,
        subagent_protocol::ProviderKind::VertexaiAnthropic,
    ] {
        registry.protect_variable(crate::config::kind_defaults(kind).api_key_var);
    }
    if let Some(var) = &overrides.api_key_env {
        registry.protect_variable(var);
    }
    for layer in files.layers() {
        for warning in &layer.file.warnings {
            warn(PrepareWarning::Config(warning.clone()));
        }
        for var in layer
            .file
            .providers
            .values()
            .filter_map(|p| p.api_key_env.as_deref())
            .chain(layer.file.call_key_variables.iter().map(String::as_str))
        {
            registry.protect_variable(var);
        }
    }
    // Lowest first: the user's file, a trusted project's `.mcp.json`
    // (Claude Code's), the project's own config.toml.
    if let Some(user) = &files.user {
        registry.add_layer(user.file.mcp_servers.iter().cloned());
    }
    add_mcp_json(&mut registry, project, warn)?;
    if let Some(own) = &files.project {
        registry.add_layer(own.file.mcp_servers.iter().cloned());
    }
    Ok(registry)
}

/// The MCP servers a run in `project`'s workspace would know, for
/// `subagent doctor`: the config files' and a trusted `.mcp.json`'s.
pub fn configured_mcp_servers(
    files: &crate::config::LoadedConfig,
    project: &ProjectConfig,
) -> Result<crate::mcp::McpRegistry, PrepareError> {
    mcp_registry(files, project, &RunOverrides::default(), &|_| {})
}

/// The servers of the project's `.mcp.json`, when the project is trusted.
fn add_mcp_json(
    registry: &mut crate::mcp::McpRegistry,
    project: &ProjectConfig,
    warn: &dyn Fn(PrepareWarning),
) -> Result<(), PrepareError> {
    let Some(file) = project.trusted_mcp_json() else {
        return Ok(());
    };
    let (entries, warnings) =
        crate::mcp::parse_mcp_json(&file.path, &file.text).map_err(PrepareError::McpJson)?;
    for warning in warnings {
        warn(PrepareWarning::Config(warning));
    }
    registry.add_layer(entries);
    Ok(())
}

/// The output schema's text: the caller's file, else the agent file's.
fn output_schema_text(
    file: Option<&Path>,
    agent: Option<&AgentDefinition>,
) -> Result<Option<String>, PrepareError> {
    if let Some(path) = file {
        return std::fs::read_to_string(path).map(Some).map_err(|source| {
            PrepareError::OutputSchema {
                path: path.to_owned(),
                source,
            }
        });
    }
    match agent.and_then(|a| a.output_schema.as_ref().map(|s| (a, s))) {
        None => Ok(None),
        Some((_, AgentOutputSchema::Inline(json))) => Ok(Some(json.clone())),
        // Beside the agent file, where a tool may have put a FIFO or a
        // huge file: read as the agent file was.
        Some((agent, AgentOutputSchema::File(path))) => read_capped_string(path, CONFIG_FILE_CAP)
            .map_err(std::io::Error::from)
            .and_then(|text| {
                text.map(Some)
                    .ok_or_else(|| std::io::ErrorKind::NotFound.into())
            })
            .map_err(|source| PrepareError::AgentOutputSchema {
                agent: agent.name.clone(),
                origin: agent.source.to_string(),
                path: path.clone(),
                source,
            }),
    }
}

/// The tool list of `agent` in the catalog of `config` (none when unknown:
/// admission refuses an unknown agent).
pub fn agent_tools(config: &SupervisorConfig, agent: &str) -> Vec<String> {
    config
        .catalog
        .get(agent)
        .map(|a| a.tools.clone())
        .unwrap_or_default()
}

impl Prepared {
    /// The ceilings this run sets for what arrives through `owner`: its
    /// limits, switches, provider and workspace, and its tools (its own,
    /// else its agent's).
    pub fn ceilings(&self, owner: Owner) -> Ceilings {
        let tools = self
            .request
            .tools
            .clone()
            .unwrap_or_else(|| agent_tools(&self.config, &self.request.agent));
        Ceilings::new(self.request.clone(), tools, self.raise.clone(), owner)
    }
}

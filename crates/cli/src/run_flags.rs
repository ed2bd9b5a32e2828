//! The flags every way of starting runs shares (`run`, and later `serve`
//! and `batch`): agent, provider, model, limits, tools, workspace, sessions
//! dir, worker; and handing them, as [`PrepareSettings`] and
//! [`RunOverrides`], to the library's `prepare`.
//!
//! One struct flattened into each subcommand, so a flag means the same
//! everywhere; what a single request may override goes through
//! [`RunFlags::prepare`] with a patched [`RunOverrides`] (the servers' patch
//! and ceilings are in `run_patch.rs`).

use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;
use subagent_protocol::{Budget, Limits, OutputMode};
use subagent_supervisor::config::{
    DEFAULT_MAX_DEPTH, LimitKey, LimitSet, LimitValue, Raise, RawLimit, RunOverrides,
};
use subagent_supervisor::layer::{ApplyMode, WorkspaceIsolation};
use subagent_supervisor::prepare::{PrepareSettings, prepare};
pub(super) use subagent_supervisor::prepare::{Prepared, env_value};

use super::trust::print_warning;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum OutputModeArg {
    /// The model calls a `report_back` tool whose parameters are the schema.
    ReportBack,
    /// The provider enforces the schema itself (json_schema response formats).
    Native,
}

/// The long help of `--tools`: every built-in tool and what it does. The
/// CLI test checks that it names each of `tool_names::BUILTIN_TOOLS`.
const TOOLS_HELP: &str = "Tools the subagent may call, comma-separated, e.g. \
    `--tools bash_find,bash_read`. Default: the agent's own list (implementer: all of them; \
    general: the file tools, python_execute and bash; explorer, reviewer: the four read-only \
    file tools; researcher: those and the web tools). `--tools ''` or \
    `--tools none` runs without tools. An unknown name fails before anything starts \
    (exit 2). An MCP server's tools are named as Claude Code names them: \
    `mcp__NAME` (all of a configured server's tools) or `mcp__NAME__TOOL` (one); \
    servers are configured in `[mcp_servers.NAME]` of config.toml or a trusted \
    project's .mcp.json.

Built-in tools (paths are relative to --workspace and confined to it):
  bash_find       list files whose path matches a glob (.gitignore'd and hidden
                  files skipped)
  bash_ripgrep    regex search over file contents, one `path:line:text` per hit
  bash_read       a file or a line range with line numbers, or a directory listing
  list_dir        a directory's entries with kind and size (Claude Code: LS)
  write_file      create or overwrite a file, atomically (Claude Code: Write)
  edit_file       replace exact text in a file: unique, or replace_all (Claude Code: Edit)
  multi_edit      several edit_file replacements in one file, all or none (MultiEdit)
  python_execute  run Python code in a sandboxed tool process (workspace writable,
                  private tmp, no network unless --allow-network, time, memory and
                  process caps)
  bash            run a /bin/bash -c command in the same sandbox (Claude Code: Bash)
  todo_write      the model's task list, kept in the session file (TodoWrite)
  search_web      web search through the configured API ([search] in config.toml:
                  a SearXNG instance or Brave)
  scrape_webpage  one web page as Markdown or text; loopback, private, link-local
                  and metadata addresses refused unless --allow-private-networks
  subagent        delegate a task to another agent, which this supervisor runs
                  with its own session file; offered only below --max-depth (so
                  with --max-depth 2 or more), and its turns and cost come out
                  of this run's budget

Tool output shown to the model is capped (head and tail kept, with a marker). \
report_back is not chosen here: it is added by --output-schema.";

/// The shared flags.
#[derive(Debug, clap::Args)]
pub(super) struct RunFlags {
    /// Agent name: from `.subagent/agents/*.md` (or `.claude/agents`) up from the
    /// workspace, then the user's agents dir, then the built-ins (general,
    /// explorer, researcher, reviewer, implementer); `subagent agents ls` lists them.
    /// Default: `default_agent` of config.toml, else general.
    #[arg(long, value_name = "NAME")]
    pub(super) agent: Option<String>,
    /// The provider: a `[providers.NAME]` of config.toml, or an API dialect
    /// (openai-chat, openai-responses, anthropic, vertexai-anthropic). Default: the agent file's
    /// `provider`, else config's `default_provider`, else openai-chat.
    #[arg(long, value_name = "NAME|KIND")]
    pub(super) provider: Option<String>,
    /// Base URL of the API. Default: the configured provider's `base_url`,
    /// else $OPENAI_BASE_URL (openai-chat, openai-responses) or
    /// $ANTHROPIC_BASE_URL (anthropic) when set, else the public endpoint.
    /// An anthropic URL may leave out `/v1`. vertexai-anthropic takes the
    /// location URL (https://REGION-aiplatform.googleapis.com/v1/projects/PROJECT/locations/REGION),
    /// else $ANTHROPIC_VERTEX_BASE_URL, else one built from $CLOUD_ML_REGION
    /// and $ANTHROPIC_VERTEX_PROJECT_ID.
    #[arg(long, value_name = "URL")]
    pub(super) base_url: Option<String>,
    /// Model id as the provider names it. Default: the agent file's `model`,
    /// else the configured provider's `model`; one of them must say.
    #[arg(long, value_name = "ID")]
    pub(super) model: Option<String>,
    /// Name of the environment variable holding the API key. Default: the
    /// configured provider's `api_key_env`, else OPENAI_API_KEY (openai-chat,
    /// openai-responses), ANTHROPIC_API_KEY (anthropic) or
    /// GOOGLE_OAUTH_ACCESS_TOKEN (vertexai-anthropic, a bearer token) when set, else no
    /// key. The key itself never appears on the command line, in results or
    /// in session files.
    #[arg(long, value_name = "VAR")]
    pub(super) api_key_env: Option<String>,
    /// JSON Schema file the final output must satisfy (structured output).
    #[arg(long, value_name = "FILE")]
    pub(super) output_schema: Option<PathBuf>,
    /// How structured output is obtained.
    #[arg(long, value_enum, default_value = "report-back")]
    pub(super) output_mode: OutputModeArg,
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::MaxTurns),
        help = limit_help(LimitKey::MaxTurns, "Model turns allowed. Like every limit below, a flag overrides the agent file, which overrides config.toml's `[limits]`."))]
    pub(super) max_turns: Option<LimitValue>,
    #[arg(long, value_name = "USD", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::MaxCost),
        help = limit_help(LimitKey::MaxCost, "Dollars allowed."))]
    pub(super) max_cost: Option<LimitValue>,
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::MaxDepth),
        help = limit_help(LimitKey::MaxDepth, "Deepest nesting of subagents: 1 lets this run's subagent work alone, 2 lets it start subagents of its own."))]
    pub(super) max_depth: Option<LimitValue>,
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::Timeout),
        help = limit_help(LimitKey::Timeout, "Wall-clock limit of the whole run: 90s, 15m, 1h; a plain number is seconds."))]
    pub(super) timeout: Option<LimitValue>,
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::IdleTimeout),
        help = limit_help(LimitKey::IdleTimeout, "Time without model or tool progress before the run is stopped."))]
    pub(super) idle_timeout: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::Memory),
        help = limit_help(LimitKey::Memory, "Memory of the worker including swap, a cgroup cap: K, M or G, 1024-based."))]
    pub(super) memory: Option<LimitValue>,
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::Pids),
        help = limit_help(LimitKey::Pids, "Processes and threads of the worker, a cgroup cap."))]
    pub(super) pids: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::StdoutLimit),
        help = limit_help(LimitKey::StdoutLimit, "Worker stdout kept before the run is killed."))]
    pub(super) stdout_limit: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::StderrLimit),
        help = limit_help(LimitKey::StderrLimit, "Worker stderr kept before the run is killed."))]
    pub(super) stderr_limit: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::ReturnLimit),
        help = limit_help(LimitKey::ReturnLimit, "Bytes of text returned to the caller before it is truncated."))]
    pub(super) return_limit: Option<LimitValue>,
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::ToolTimeout),
        help = limit_help(LimitKey::ToolTimeout, "Wall-clock limit of one tool call that names none."))]
    pub(super) tool_timeout: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::ToolMemory),
        help = limit_help(LimitKey::ToolMemory, "Memory of one tool process tree including swap."))]
    pub(super) tool_memory: Option<LimitValue>,
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = limit_parser(LimitKey::ToolPids),
        help = limit_help(LimitKey::ToolPids, "Processes and threads of one tool process tree."))]
    pub(super) tool_pids: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", value_parser = limit_parser(LimitKey::ToolDisk),
        help = limit_help(LimitKey::ToolDisk, "How much the run's python_execute calls may grow the workspace (allocated blocks, against the workspace at the first call); a call that passes it is stopped."))]
    pub(super) tool_disk: Option<LimitValue>,
    /// Sampling temperature.
    #[arg(long, allow_negative_numbers = true)]
    pub(super) temperature: Option<f32>,
    /// Output tokens per turn.
    #[arg(long, allow_negative_numbers = true)]
    pub(super) max_tokens: Option<u32>,
    /// Ask for reasoning / thinking where the API supports it.
    #[arg(long)]
    pub(super) reasoning: bool,
    /// Where session files go (default: $SUBAGENT_HOME/sessions, else
    /// $XDG_STATE_HOME/subagent/sessions, else ~/.local/state/subagent/sessions).
    #[arg(long, value_name = "DIR")]
    pub(super) sessions_dir: Option<PathBuf>,
    /// Directory the subagent works in (default: the current directory).
    /// Its tools are confined to it: paths are relative to it, and `..`,
    /// absolute paths and symlinks leading out of it are refused.
    #[arg(long, value_name = "DIR")]
    pub(super) workspace: Option<PathBuf>,
    /// Tools the subagent may call, comma-separated (default: the agent's
    /// own list; '' or `none` for no tools; `mcp__NAME` for an MCP server's).
    #[arg(
        long,
        value_name = "LIST",
        long_help = TOOLS_HELP,
    )]
    pub(super) tools: Option<String>,
    /// Let tool processes (python_execute) use the network. Off by default:
    /// they run without network access.
    #[arg(long)]
    pub(super) allow_network: bool,
    /// Refuse to run when any protection of the worker (e.g. cgroup caps)
    /// cannot be applied, and refuse each tool call whose tool sandbox cannot
    /// apply every layer, instead of running with less protection.
    #[arg(long)]
    pub(super) require_sandbox: bool,
    /// Let scrape_webpage, and tool processes with --allow-network, reach
    /// loopback, private and other special addresses (refused by default:
    /// SSRF defence); link-local ones stay refused. Same as `[web]
    /// allow_private_networks = true` in config.toml.
    #[arg(long)]
    pub(super) allow_private_networks: bool,
    /// Let scrape_webpage, and tool processes with --allow-network, reach
    /// link-local addresses, the cloud metadata services among them
    /// (169.254.169.254, fd00:ec2::254: a tool could read the machine's
    /// cloud credentials). Refused by default, and not opened by
    /// --allow-private-networks. Same as `[web] allow_link_local_networks
    /// = true` in config.toml.
    #[arg(long)]
    pub(super) allow_link_local_networks: bool,
    /// Worker binary (default: subagent-worker next to this binary, or $SUBAGENT_WORKER).
    #[arg(long, value_name = "FILE")]
    pub(super) worker: Option<PathBuf>,
    /// Let callers (serve requests, MCP calls, `call` payloads, the tasks of
    /// `batch --ceilings-from-flags`) raise NAME above this command's own
    /// setting, which is otherwise their ceiling: a limit's name
    /// (`timeout`, `memory`, ...) or tools, network, private_networks,
    /// link_local_networks, provider, model, max_tokens, reasoning. Repeatable; adds to `[serve]
    /// allow_raise` of the user config.
    #[arg(long, value_name = "NAME", value_parser = Raise::parse)]
    pub(super) allow_raise: Vec<Raise>,
    /// How tools that can write (python_execute) see the workspace: overlay
    /// (the default: through a copy-on-write layer capped by --tool-disk,
    /// whose changes are applied when the run completes) or none (in
    /// place, as they happen; the disk cap is then a best-effort walk).
    #[arg(long, value_name = "MODE", value_parser = |s: &str| s.parse::<WorkspaceIsolation>())]
    pub(super) isolation: Option<WorkspaceIsolation>,
    /// When an overlay run's changes are applied: on-success (the default:
    /// file by file when it completes, conflicts left alone and reported)
    /// or never (kept for `subagent diff RUN` and `subagent apply RUN`).
    #[arg(long, value_name = "WHEN", value_parser = |s: &str| s.parse::<ApplyMode>())]
    pub(super) apply: Option<ApplyMode>,
}

/// A clap parser for one limit flag: the same reader as config files and
/// agent files, so `--memory 2G` and `memory = "2G"` mean the same.
fn limit_parser(key: LimitKey) -> impl Fn(&str) -> Result<LimitValue, String> + Clone {
    move |value| key.parse(RawLimit::Text(value))
}

/// A limit flag's help: `text` and the default the run gets when neither
/// the flag, the agent file nor config sets it, read from the library's
/// defaults so the help cannot drift from them.
fn limit_help(key: LimitKey, text: &str) -> String {
    let default = key
        .value_in(&Limits::default(), &Budget::default(), DEFAULT_MAX_DEPTH)
        .map_or_else(|| "unlimited".to_owned(), |v| v.to_string());
    format!("{text} [default: {default}]")
}

impl RunFlags {
    /// The limit flags that were given.
    fn limit_flags(&self) -> LimitSet {
        let mut set = LimitSet::default();
        for (key, value) in [
            (LimitKey::MaxTurns, self.max_turns),
            (LimitKey::MaxCost, self.max_cost),
            (LimitKey::MaxDepth, self.max_depth),
            (LimitKey::Timeout, self.timeout),
            (LimitKey::IdleTimeout, self.idle_timeout),
            (LimitKey::Memory, self.memory),
            (LimitKey::Pids, self.pids),
            (LimitKey::StdoutLimit, self.stdout_limit),
            (LimitKey::StderrLimit, self.stderr_limit),
            (LimitKey::ReturnLimit, self.return_limit),
            (LimitKey::ToolTimeout, self.tool_timeout),
            (LimitKey::ToolMemory, self.tool_memory),
            (LimitKey::ToolPids, self.tool_pids),
            (LimitKey::ToolDisk, self.tool_disk),
        ] {
            if let Some(value) = value {
                set.set(key, value);
            }
        }
        set
    }
}

impl RunFlags {
    /// The settings these flags override, for [`RunFlags::prepare`]; a
    /// caller patches them with what one request asks for.
    pub(super) fn overrides(&self) -> RunOverrides {
        RunOverrides {
            agent: self.agent.clone(),
            provider: self.provider.clone(),
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
            // The flag's own: the default origin.
            api_key_env_origin: None,
            limits: self.limit_flags(),
            allow_private_networks: self.allow_private_networks,
            allow_link_local_networks: self.allow_link_local_networks,
        }
    }

    /// What these flags fix for every run, besides the overrides.
    pub(super) fn settings(&self) -> PrepareSettings {
        PrepareSettings {
            sessions_dir: self.sessions_dir.clone(),
            worker: self.worker.clone(),
            workspace: self.workspace.clone(),
            output_schema: self.output_schema.clone(),
            output_mode: match self.output_mode {
                OutputModeArg::ReportBack => OutputMode::ReportBack,
                OutputModeArg::Native => OutputMode::Native,
            },
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            reasoning: self.reasoning,
            tools: self.tools.as_deref().map(parse_tool_list),
            allow_network: self.allow_network,
            require_sandbox: self.require_sandbox,
            allow_raise: self.allow_raise.clone(),
            isolation: self.isolation,
            apply: self.apply,
        }
    }

    /// The request template and supervisor config for `overrides` (these
    /// flags' own, or patched), with the config files and agent files of
    /// the workspace ([`subagent_supervisor::prepare::prepare`]); warnings
    /// on stderr.
    pub(super) fn prepare(&self, overrides: &RunOverrides) -> Result<Prepared> {
        Ok(prepare(&self.settings(), overrides, &print_warning)?)
    }
}

/// `--tools` as names: split at commas, blanks around names ignored; an
/// empty value or `none` is the empty subset.
fn parse_tool_list(value: &str) -> Vec<String> {
    let value = value.trim();
    if value.is_empty() || value.eq_ignore_ascii_case("none") {
        return Vec::new();
    }
    value
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

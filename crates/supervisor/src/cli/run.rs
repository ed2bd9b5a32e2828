//! `subagent run`: the flags of one run, turned into a `RunRequest` and a
//! `SupervisorConfig`, run on a small runtime, and the result printed.

// `--parallel` and `--chain`: which tasks a call has and how they run.
#[path = "run_modes.rs"]
mod modes;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::{Budget, Limits, OutputMode, ProviderSpec};
use subagent_sandbox::SandboxPolicy;
use subagent_supervisor::agents::{AgentDefinition, AgentOutputSchema};
use subagent_supervisor::config::{
    DEFAULT_MAX_DEPTH, LimitKey, LimitSet, LimitValue, RawLimit, RunOverrides,
    default_user_config_path, load_config, resolve_run,
};
use subagent_supervisor::exit_codes;
use subagent_supervisor::session::default_sessions_dir;
use subagent_supervisor::{RunRequest, Supervisor, SupervisorConfig, WorkerCommand};
use tokio_util::sync::CancellationToken;

use crate::console;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutputModeArg {
    /// The model calls a `report_back` tool whose parameters are the schema.
    ReportBack,
    /// The provider enforces the schema itself (json_schema response formats).
    Native,
}

/// The long help of `--tools`: every built-in tool and what it does. The
/// CLI test checks that it names each of `tool_names::BUILTIN_TOOLS`.
const TOOLS_HELP: &str = "Tools the subagent may call, comma-separated, e.g. \
    `--tools bash_find,bash_read`. Default: the agent's own list (implementer: all of them; \
    general: the file tools and python_execute; explorer, reviewer: the three read-only file \
    tools; researcher: those and the web tools). `--tools ''` or \
    `--tools none` runs without tools. An unknown name fails before anything starts \
    (exit 2).

Built-in tools (paths are relative to --workspace and confined to it):
  bash_find       list files whose path matches a glob (.gitignore'd and hidden
                  files skipped)
  bash_ripgrep    regex search over file contents, one `path:line:text` per hit
  bash_read       a file or a line range with line numbers, or a directory listing
  python_execute  run Python code in a sandboxed tool process (workspace writable,
                  private tmp, no network unless --allow-network, time, memory and
                  process caps)
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

#[derive(Debug, clap::Args)]
pub(super) struct RunArgs {
    /// The task for the subagent. Repeat it with --parallel or --chain.
    #[arg(long, value_name = "TEXT", required_unless_present = "tasks")]
    task: Vec<String>,
    /// File of tasks, one per non-empty line (added after any --task).
    #[arg(long, value_name = "FILE")]
    tasks: Option<PathBuf>,
    /// Run every task at once, each its own subagent with its own session
    /// file; the result lists them in task order.
    #[arg(long, conflicts_with = "chain")]
    parallel: bool,
    /// Run the tasks one after another; `{previous}` in a task is replaced
    /// by the previous step's output. Stops at the first failing step.
    #[arg(long)]
    chain: bool,
    /// With --parallel: subagents running at a time (default 4, at most
    /// the supervisor's limit of 16); the others wait.
    #[arg(long, value_name = "N")]
    concurrency: Option<usize>,
    /// Agent name: from `.subagent/agents/*.md` (or `.claude/agents`) up from the
    /// workspace, then the user's agents dir, then the built-ins (general,
    /// explorer, researcher, reviewer, implementer); `subagent agents ls` lists them.
    /// Default: `default_agent` of config.toml, else general.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// The provider: a `[providers.NAME]` of config.toml, or an API dialect
    /// (openai-chat, openai-responses, anthropic). Default: the agent file's
    /// `provider`, else config's `default_provider`, else openai-chat.
    #[arg(long, value_name = "NAME|KIND")]
    provider: Option<String>,
    /// Base URL of the API. Default: the configured provider's `base_url`,
    /// else $OPENAI_BASE_URL (openai-chat, openai-responses) or
    /// $ANTHROPIC_BASE_URL (anthropic) when set, else the public endpoint.
    /// An anthropic URL may leave out `/v1`.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Model id as the provider names it. Default: the agent file's `model`,
    /// else the configured provider's `model`; one of them must say.
    #[arg(long, value_name = "ID")]
    model: Option<String>,
    /// Name of the environment variable holding the API key. Default: the
    /// configured provider's `api_key_env`, else OPENAI_API_KEY (openai-chat,
    /// openai-responses) or ANTHROPIC_API_KEY (anthropic) when set, else no
    /// key. The key itself never appears on the command line, in results or
    /// in session files.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// JSON Schema file the final output must satisfy (structured output).
    #[arg(long, value_name = "FILE")]
    output_schema: Option<PathBuf>,
    /// How structured output is obtained.
    #[arg(long, value_enum, default_value = "report-back")]
    output_mode: OutputModeArg,
    #[arg(long, value_name = "N", value_parser = limit_parser(LimitKey::MaxTurns),
        help = limit_help(LimitKey::MaxTurns, "Model turns allowed. Like every limit below, a flag overrides the agent file, which overrides config.toml's `[limits]`."))]
    max_turns: Option<LimitValue>,
    #[arg(long, value_name = "USD", value_parser = limit_parser(LimitKey::MaxCost),
        help = limit_help(LimitKey::MaxCost, "Dollars allowed."))]
    max_cost: Option<LimitValue>,
    #[arg(long, value_name = "N", value_parser = limit_parser(LimitKey::MaxDepth),
        help = limit_help(LimitKey::MaxDepth, "Deepest nesting of subagents: 1 lets this run's subagent work alone, 2 lets it start subagents of its own."))]
    max_depth: Option<LimitValue>,
    #[arg(long, value_name = "DURATION", value_parser = limit_parser(LimitKey::Timeout),
        help = limit_help(LimitKey::Timeout, "Wall-clock limit of the whole run: 90s, 15m, 1h; a plain number is seconds."))]
    timeout: Option<LimitValue>,
    #[arg(long, value_name = "DURATION", value_parser = limit_parser(LimitKey::IdleTimeout),
        help = limit_help(LimitKey::IdleTimeout, "Time without model or tool progress before the run is stopped."))]
    idle_timeout: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", value_parser = limit_parser(LimitKey::Memory),
        help = limit_help(LimitKey::Memory, "Memory of the worker including swap, a cgroup cap: K, M or G, 1024-based."))]
    memory: Option<LimitValue>,
    #[arg(long, value_name = "N", value_parser = limit_parser(LimitKey::Pids),
        help = limit_help(LimitKey::Pids, "Processes and threads of the worker, a cgroup cap."))]
    pids: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", value_parser = limit_parser(LimitKey::StdoutLimit),
        help = limit_help(LimitKey::StdoutLimit, "Worker stdout kept before the run is killed."))]
    stdout_limit: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", value_parser = limit_parser(LimitKey::StderrLimit),
        help = limit_help(LimitKey::StderrLimit, "Worker stderr kept before the run is killed."))]
    stderr_limit: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", value_parser = limit_parser(LimitKey::ReturnLimit),
        help = limit_help(LimitKey::ReturnLimit, "Bytes of text returned to the caller before it is truncated."))]
    return_limit: Option<LimitValue>,
    #[arg(long, value_name = "DURATION", value_parser = limit_parser(LimitKey::ToolTimeout),
        help = limit_help(LimitKey::ToolTimeout, "Wall-clock limit of one tool call that names none."))]
    tool_timeout: Option<LimitValue>,
    #[arg(long, value_name = "SIZE", value_parser = limit_parser(LimitKey::ToolMemory),
        help = limit_help(LimitKey::ToolMemory, "Memory of one tool process tree including swap."))]
    tool_memory: Option<LimitValue>,
    #[arg(long, value_name = "N", value_parser = limit_parser(LimitKey::ToolPids),
        help = limit_help(LimitKey::ToolPids, "Processes and threads of one tool process tree."))]
    tool_pids: Option<LimitValue>,
    /// Sampling temperature.
    #[arg(long)]
    temperature: Option<f32>,
    /// Output tokens per turn.
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Ask for reasoning / thinking where the API supports it.
    #[arg(long)]
    reasoning: bool,
    /// Where session files go (default: $SUBAGENT_HOME/sessions, else
    /// $XDG_STATE_HOME/subagent/sessions, else ~/.local/state/subagent/sessions).
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    /// The caller's session file: lifecycle lines are appended to it too.
    #[arg(long, value_name = "FILE")]
    parent_session: Option<PathBuf>,
    /// Directory the subagent works in (default: the current directory).
    /// Its tools are confined to it: paths are relative to it, and `..`,
    /// absolute paths and symlinks leading out of it are refused.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Tools the subagent may call, comma-separated (default: the agent's
    /// own list; '' or `none` for no tools).
    #[arg(
        long,
        value_name = "LIST",
        long_help = TOOLS_HELP,
    )]
    tools: Option<String>,
    /// Let tool processes (python_execute) use the network. Off by default:
    /// they run without network access.
    #[arg(long)]
    allow_network: bool,
    /// Refuse to run when any protection of the worker (e.g. cgroup caps)
    /// cannot be applied, and refuse each tool call whose tool sandbox cannot
    /// apply every layer, instead of running with less protection.
    #[arg(long)]
    require_sandbox: bool,
    /// Let scrape_webpage fetch loopback, private, link-local and cloud metadata
    /// addresses (refused by default: SSRF defence). Same as `[web]
    /// allow_private_networks = true` in config.toml.
    #[arg(long)]
    allow_private_networks: bool,
    /// Worker binary (default: subagent-worker next to this binary, or $SUBAGENT_WORKER).
    #[arg(long, value_name = "FILE")]
    worker: Option<PathBuf>,
    /// Print the whole result object as JSON instead of the text.
    #[arg(long)]
    json: bool,
    /// No status line and no `session file:` lines on stderr; the answer
    /// (or --json's object) and any error are printed as usual.
    #[arg(long, short = 'q')]
    quiet: bool,
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

impl RunArgs {
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
        ] {
            if let Some(value) = value {
                set.set(key, value);
            }
        }
        set
    }
}

/// A variable's value, or `None` when it is unset, empty or not UTF-8 (an
/// exported-but-empty variable means "not configured" to the SDKs too).
pub(super) fn env_value(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// The output schema's text: `--output-schema`, else the agent file's.
fn output_schema_text(
    flag: Option<&Path>,
    agent: Option<&AgentDefinition>,
) -> Result<Option<String>> {
    if let Some(path) = flag {
        return std::fs::read_to_string(path)
            .map(Some)
            .with_context(|| format!("--output-schema {}: cannot read the file", path.display()));
    }
    match agent.and_then(|a| a.output_schema.as_ref().map(|s| (a, s))) {
        None => Ok(None),
        Some((_, AgentOutputSchema::Inline(json))) => Ok(Some(json.clone())),
        Some((agent, AgentOutputSchema::File(path))) => std::fs::read_to_string(path)
            .map(Some)
            .with_context(|| {
                format!(
                    "agent {} ({}): outputSchema {}: cannot read the file; fix the path (it is relative to the agent file) or pass --output-schema",
                    agent.name,
                    agent.source,
                    path.display()
                )
            }),
    }
}

pub(super) fn run(args: RunArgs) -> Result<i32> {
    let plan = modes::plan(&modes::ModeFlags {
        tasks: &args.task,
        tasks_file: args.tasks.as_deref(),
        parallel: args.parallel,
        chain: args.chain,
        concurrency: args.concurrency,
        max_concurrent: subagent_supervisor::run::DEFAULT_MAX_CONCURRENT,
    })?;
    let sessions_dir = match args.sessions_dir.clone().or_else(default_sessions_dir) {
        Some(dir) => dir,
        None => bail!("no sessions dir: set SUBAGENT_HOME or HOME, or pass --sessions-dir"),
    };
    let worker = match &args.worker {
        Some(program) => WorkerCommand {
            program: program.clone(),
            args: Vec::new(),
        },
        None => WorkerCommand::default_for_current_exe()
            .context("cannot locate subagent-worker; pass --worker or set SUBAGENT_WORKER")?,
    };
    let workspace_dir = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    // Agent files near the workspace and the user's come before the built-ins.
    let catalog = super::agents::load_catalog(&workspace_dir)?;
    let config = load_config(&workspace_dir, default_user_config_path().as_deref())?;
    let overrides = RunOverrides {
        agent: args.agent.clone(),
        provider: args.provider.clone(),
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        api_key_env: args.api_key_env.clone(),
        limits: args.limit_flags(),
        allow_private_networks: args.allow_private_networks,
    };
    let resolved = resolve_run(&overrides, &config, &catalog, &env_value)?;
    let output_schema_json =
        output_schema_text(args.output_schema.as_deref(), catalog.get(&resolved.agent))?;
    let provider = ProviderSpec {
        temperature: args.temperature,
        max_tokens: args.max_tokens,
        reasoning: args.reasoning,
        ..resolved.provider
    };
    // The task is filled in per child by `modes::execute`.
    let mut request = RunRequest::new(resolved.agent.clone(), String::new(), provider);
    request.output_schema_json = output_schema_json;
    request.output_mode = match args.output_mode {
        OutputModeArg::ReportBack => OutputMode::ReportBack,
        OutputModeArg::Native => OutputMode::Native,
    };
    request.budget = resolved.budget;
    request.limits = resolved.limits;
    request.max_depth = resolved.max_depth;
    request.workspace_dir = workspace_dir;
    request.parent_session = args.parent_session.clone();
    // Names are checked by the supervisor's admission, not here, so library
    // callers and the CLI get the same refusal.
    request.tools = args.tools.as_deref().map(parse_tool_list);
    request.allow_network = args.allow_network;
    request.web = resolved.web;

    let mut config = SupervisorConfig::new(worker, sessions_dir);
    config.catalog = catalog;
    config.subagents_disabled = resolved.subagents_disabled;
    if args.require_sandbox {
        config.sandbox_policy = SandboxPolicy::RequireAll;
    }
    if let Err(e) = subagent_sandbox::become_subreaper() {
        console::err(&format!(
            "warning: cannot become a child subreaper ({e}); orphaned grandchildren may be missed"
        ));
    }
    let status = super::status::StatusLine::start(args.quiet);
    config.progress = status.sink();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async move {
        let supervisor = Supervisor::new(config);
        let cancel = CancellationToken::new();
        let on_signal = cancel.clone();
        tokio::spawn(async move {
            if wait_for_interrupt().await {
                on_signal.cancel();
            }
        });
        modes::execute(&supervisor, plan, request, cancel).await
    });
    status.finish();
    print_result(&result, args.json, args.quiet)?;
    Ok(exit_codes::for_error(
        result.details.error.as_ref().map(|e| e.code),
    ))
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

/// Resolves on SIGINT or SIGTERM; false if signals cannot be watched.
pub(super) async fn wait_for_interrupt() -> bool {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return false;
    };
    tokio::select! {
        _ = int.recv() => true,
        _ = term.recv() => true,
    }
}

fn print_result(result: &SubagentResult, json: bool, quiet: bool) -> Result<()> {
    if json {
        console::out(&serde_json::to_string_pretty(result)?)?;
        return Ok(());
    }
    for item in &result.content {
        let subagent_protocol::result::ContentItem::Text { text } = item;
        console::out(text)?;
    }
    if let Some(error) = &result.details.error {
        console::err(&format!("{}: {}", error.code, error.message));
    }
    // Every child's file: a parallel call or a chain leaves one per task.
    for file in result
        .details
        .results
        .iter()
        .filter_map(|r| r.session_file.as_ref())
        .filter(|_| !quiet)
    {
        console::err(&format!("session file: {file}"));
    }
    Ok(())
}

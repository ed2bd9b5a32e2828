//! `subagent run`: the flags of one run, turned into a `RunRequest` and a
//! `SupervisorConfig`, run on a small runtime, and the result printed.

// `--parallel` and `--chain`: which tasks a call has and how they run.
#[path = "run_modes.rs"]
mod modes;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::{ApiKey, Budget, Limits, OutputMode, ProviderKind, ProviderSpec};
use subagent_sandbox::SandboxPolicy;
use subagent_supervisor::exit_codes;
use subagent_supervisor::session::default_sessions_dir;
use subagent_supervisor::units::{self, ByteSize, Timespan};
use subagent_supervisor::{RunRequest, Supervisor, SupervisorConfig, WorkerCommand};
use tokio_util::sync::CancellationToken;

use crate::console;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ProviderArg {
    OpenaiChat,
    OpenaiResponses,
    Anthropic,
}

impl From<ProviderArg> for ProviderKind {
    fn from(p: ProviderArg) -> Self {
        match p {
            ProviderArg::OpenaiChat => ProviderKind::OpenaiChat,
            ProviderArg::OpenaiResponses => ProviderKind::OpenaiResponses,
            ProviderArg::Anthropic => ProviderKind::Anthropic,
        }
    }
}

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
    `--tools bash_find,bash_read`. Default: the agent's own list (general, implementer: \
    all four; explorer, researcher, reviewer: the three read-only file tools). `--tools ''` or \
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
    #[arg(long, default_value = "general")]
    agent: String,
    /// API dialect of the model endpoint.
    #[arg(long, value_enum, default_value = "openai-chat")]
    provider: ProviderArg,
    /// Base URL of the API. Default: $OPENAI_BASE_URL (openai-chat,
    /// openai-responses) or $ANTHROPIC_BASE_URL (anthropic) when set, else
    /// the provider's public endpoint. An anthropic URL may leave out `/v1`.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Model id as the provider names it.
    #[arg(long)]
    model: String,
    /// Name of the environment variable holding the API key. Default:
    /// OPENAI_API_KEY (openai-chat, openai-responses) or ANTHROPIC_API_KEY
    /// (anthropic) when set, else no key. The key itself never appears on
    /// the command line, in results or in session files.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// JSON Schema file the final output must satisfy (structured output).
    #[arg(long, value_name = "FILE")]
    output_schema: Option<PathBuf>,
    /// How structured output is obtained.
    #[arg(long, value_enum, default_value = "report-back")]
    output_mode: OutputModeArg,
    /// Model turns allowed.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..),
        default_value_t = Budget::default().max_turns)]
    max_turns: u32,
    /// Dollars allowed (default unlimited).
    #[arg(long, value_name = "USD", value_parser = parse_cost)]
    max_cost: Option<f64>,
    /// Deepest nesting of subagents: 1 lets this run's subagent work alone,
    /// 2 lets it start subagents of its own.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..),
        default_value_t = default_max_depth())]
    max_depth: u32,
    /// Wall-clock limit of the whole run (90s, 15m, 1h; a plain number is seconds).
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration,
        default_value_t = Timespan { ms: Limits::default().wall_timeout_ms })]
    timeout: Timespan,
    /// Time without model or tool progress before the run is stopped (a
    /// plain number is seconds).
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration,
        default_value_t = Timespan { ms: Limits::default().idle_timeout_ms })]
    idle_timeout: Timespan,
    /// Memory of the worker including swap, a cgroup cap (K, M or G; 1024-based).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size,
        default_value_t = ByteSize(Limits::default().memory_bytes))]
    memory: ByteSize,
    /// Processes and threads of the worker (cgroup cap).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..),
        default_value_t = Limits::default().pids)]
    pids: u64,
    /// Worker stdout kept before the run is killed.
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size,
        default_value_t = ByteSize(Limits::default().stdout_bytes))]
    stdout_limit: ByteSize,
    /// Worker stderr kept before the run is killed.
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size,
        default_value_t = ByteSize(Limits::default().stderr_bytes))]
    stderr_limit: ByteSize,
    /// Bytes of text returned to the caller before it is truncated.
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size,
        default_value_t = ByteSize(Limits::default().returned_text_bytes))]
    return_limit: ByteSize,
    /// Wall-clock limit of one tool call that names none.
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration,
        default_value_t = Timespan { ms: Limits::default().tool_timeout_ms })]
    tool_timeout: Timespan,
    /// Memory of one tool process tree including swap.
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size,
        default_value_t = ByteSize(Limits::default().tool_memory_bytes))]
    tool_memory: ByteSize,
    /// Processes and threads of one tool process tree.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..),
        default_value_t = Limits::default().tool_pids)]
    tool_pids: u64,
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
    /// Worker binary (default: subagent-worker next to this binary, or $SUBAGENT_WORKER).
    #[arg(long, value_name = "FILE")]
    worker: Option<PathBuf>,
    /// Print the whole result object as JSON instead of the text.
    #[arg(long)]
    json: bool,
}

/// Where a provider's key and endpoint come from when no flag names them:
/// the variables the provider's own SDKs read, so a shell set up for them
/// needs no configuration here.
struct ProviderEnv {
    api_key_var: &'static str,
    base_url_var: &'static str,
    public_base_url: &'static str,
}

fn provider_env(kind: ProviderKind) -> ProviderEnv {
    match kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => ProviderEnv {
            api_key_var: "OPENAI_API_KEY",
            base_url_var: "OPENAI_BASE_URL",
            public_base_url: "https://api.openai.com/v1",
        },
        ProviderKind::Anthropic => ProviderEnv {
            api_key_var: "ANTHROPIC_API_KEY",
            base_url_var: "ANTHROPIC_BASE_URL",
            public_base_url: "https://api.anthropic.com/v1",
        },
    }
}

/// A variable's value, or `None` when it is unset, empty or not UTF-8 (an
/// exported-but-empty variable means "not configured" to the SDKs too).
fn env_value(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// The API key: from `--api-key-env` (which must be set), else from the
/// provider's usual variable when set, else none.
fn api_key(flag: Option<&str>, env: &ProviderEnv) -> Result<Option<ApiKey>> {
    match flag {
        Some(var) => {
            let value = std::env::var(var).with_context(|| {
                format!("--api-key-env {var}: the environment variable {var} is not set; export it or name another variable")
            })?;
            Ok(Some(ApiKey::new(value)))
        }
        None => Ok(env_value(env.api_key_var).map(ApiKey::new)),
    }
}

/// `--max-depth`'s default: the library's own, so the CLI cannot drift from it.
fn default_max_depth() -> u32 {
    RunRequest::new("", "", ProviderSpec::new(ProviderKind::OpenaiChat, "", "")).max_depth
}

/// `--max-cost`: dollars, a finite number not below zero.
fn parse_cost(value: &str) -> Result<f64, String> {
    match value.trim().parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err(format!(
            "`{value}` is not an amount of dollars; use a number such as 0.50 or 2"
        )),
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
    let kind = ProviderKind::from(args.provider);
    let env = provider_env(kind);
    let api_key = api_key(args.api_key_env.as_deref(), &env)?;
    let output_schema_json = match &args.output_schema {
        Some(path) => Some(std::fs::read_to_string(path).with_context(|| {
            format!("--output-schema {}: cannot read the file", path.display())
        })?),
        None => None,
    };
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
    let limits = Limits {
        wall_timeout_ms: args.timeout.ms,
        idle_timeout_ms: args.idle_timeout.ms,
        memory_bytes: args.memory.0,
        pids: args.pids,
        stdout_bytes: args.stdout_limit.0,
        stderr_bytes: args.stderr_limit.0,
        returned_text_bytes: args.return_limit.0,
        tool_timeout_ms: args.tool_timeout.ms,
        tool_memory_bytes: args.tool_memory.0,
        tool_pids: args.tool_pids,
        ..Limits::default()
    };
    let provider = ProviderSpec {
        kind,
        base_url: args
            .base_url
            .clone()
            .or_else(|| env_value(env.base_url_var))
            .unwrap_or_else(|| env.public_base_url.to_owned()),
        model: args.model.clone(),
        api_key,
        temperature: args.temperature,
        max_tokens: args.max_tokens,
        reasoning: args.reasoning,
        price: None,
    };
    // The task is filled in per child by `modes::execute`.
    let mut request = RunRequest::new(args.agent.clone(), String::new(), provider);
    request.output_schema_json = output_schema_json;
    request.output_mode = match args.output_mode {
        OutputModeArg::ReportBack => OutputMode::ReportBack,
        OutputModeArg::Native => OutputMode::Native,
    };
    request.budget = Budget {
        max_turns: args.max_turns,
        max_cost: args.max_cost,
    };
    request.limits = limits;
    request.max_depth = args.max_depth;
    request.workspace_dir = workspace_dir;
    request.parent_session = args.parent_session.clone();
    // Names are checked by the supervisor's admission, not here, so library
    // callers and the CLI get the same refusal.
    request.tools = args.tools.as_deref().map(parse_tool_list);
    request.allow_network = args.allow_network;

    let mut config = SupervisorConfig::new(worker, sessions_dir);
    // Agent files near the workspace and the user's come before the built-ins.
    config.catalog = super::agents::load_catalog(&request.workspace_dir)?;
    if args.require_sandbox {
        config.sandbox_policy = SandboxPolicy::RequireAll;
    }
    if let Err(e) = subagent_sandbox::become_subreaper() {
        console::err(&format!(
            "warning: cannot become a child subreaper ({e}); orphaned grandchildren may be missed"
        ));
    }
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
    print_result(&result, args.json)?;
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
async fn wait_for_interrupt() -> bool {
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

fn print_result(result: &SubagentResult, json: bool) -> Result<()> {
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
    {
        console::err(&format!("session file: {file}"));
    }
    Ok(())
}

//! `subagent run`: which tasks and how (single, `--parallel`, `--chain`),
//! the shared flags ([`RunFlags`]) turned into a request template and a
//! supervisor config, run on a small runtime, and the result printed.

// `--parallel` and `--chain`: which tasks a call has and how they run.
mod modes;

use std::path::PathBuf;

use crate::error::{RESULT_NOT_WRITTEN, RecordLost};
use crate::exit::Ending;
use anyhow::{Context, Result};
use subagent_protocol::result::SubagentResult;
use subagent_supervisor::Supervisor;
use tokio_util::sync::CancellationToken;

use super::run_flags::{Prepared, RunFlags};
use crate::console;

#[derive(Debug, clap::Args)]
pub(super) struct RunArgs {
    /// The task for the subagent. Repeat it with --parallel or --chain.
    /// With --resume: the follow-up.
    #[arg(long, value_name = "TEXT", required_unless_present_any = ["tasks", "resume"])]
    task: Vec<String>,
    /// Continue a recorded run (a run id, a unique prefix of one, or a
    /// session file): its conversation, then --task as the follow-up. Without
    /// --task, an interrupted run (no ending line, or aborted) continues
    /// from its last complete turn. The file must verify (`sessions
    /// verify`). Model, provider, tools, limits and workspace are this
    /// invocation's; the recorded ones may only lower them, and a recorded
    /// workspace outside this one (--workspace, else the current dir) is
    /// refused. Agent and output schema are the recorded run's unless a
    /// flag says otherwise.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["tasks", "parallel", "chain"])]
    resume: Option<String>,
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
    /// With --parallel: subagents running at a time (default 4, lowered to
    /// the supervisor's max_concurrent, 16 unless config.toml says
    /// otherwise); the others wait. A value above max_concurrent is refused.
    #[arg(long, value_name = "N")]
    concurrency: Option<usize>,
    #[command(flatten)]
    pub(super) flags: RunFlags,
    /// The caller's session file: lifecycle lines are appended to it too.
    #[arg(long, value_name = "FILE")]
    parent_session: Option<PathBuf>,
    /// Print the whole result object as JSON instead of the text.
    #[arg(long)]
    json: bool,
    /// No status line and no `session file:` lines on stderr; the answer
    /// (or --json's object) and any error are printed as usual.
    #[arg(long, short = 'q')]
    quiet: bool,
}

pub(super) fn run(args: RunArgs) -> Result<Ending> {
    let resume = match args.resume.clone() {
        Some(target) => Some(recorded_run(&args, &target)?),
        None => None,
    };
    let mut overrides = args.flags.overrides();
    if let Some((recorded, _)) = &resume {
        // A name in the operator's own catalog; the model is this
        // invocation's, never the recording's.
        overrides.agent.get_or_insert(recorded.header.agent.clone());
    }
    let Prepared {
        mut request,
        mut config,
        ..
    } = args.flags.prepare(&overrides)?;
    if let Some((recorded, mut ask)) = resume {
        ask.current_tools = request
            .tools
            .clone()
            .unwrap_or_else(|| subagent_supervisor::prepare::agent_tools(&config, &request.agent));
        subagent_supervisor::resume::continue_request(recorded, &mut request, ask)?;
    }
    super::agents::print_agent_warnings(&config.catalog, &request.agent);
    let plan = match &request.resume {
        Some(_) => modes::TaskPlan::single(request.task.clone()),
        None => modes::plan(&modes::ModeFlags {
            tasks: &args.task,
            tasks_file: args.tasks.as_deref(),
            parallel: args.parallel,
            chain: args.chain,
            concurrency: args.concurrency,
            max_concurrent: config.max_concurrent,
        })?,
    };
    request.parent_session = args.parent_session.clone();
    let status = super::status::StatusLine::start(args.quiet);
    config.progress = status.sink();
    config.content = status.content_sink();
    let runtime = super::runtime::supervisor_runtime()?;
    let result = runtime.block_on(async move {
        let supervisor = Supervisor::new(config);
        let cancel = CancellationToken::new();
        super::runtime::cancel_on_interrupt(&cancel);
        modes::execute(&supervisor, plan, request, cancel).await
    });
    status.finish();
    print_result(&result, args.json, args.quiet).context(RecordLost(RESULT_NOT_WRITTEN))?;
    Ok(Ending::Run(result.details.error.as_ref().map(|e| e.code)))
}

/// The run `--resume` names, read back (only when its chain holds), and
/// what the flags decide of its continuation. The workspace, with its
/// project's config and agents, is this invocation's: --workspace, else the
/// current dir.
fn recorded_run(
    args: &RunArgs,
    target: &str,
) -> Result<(
    subagent_supervisor::session::history::Continuation,
    subagent_supervisor::resume::ResumeAsk,
)> {
    let sessions_dir = args
        .flags
        .sessions_dir
        .clone()
        .or_else(subagent_supervisor::session::default_sessions_dir)
        .context(
            "no sessions dir: set SUBAGENT_HOME, XDG_STATE_HOME or HOME, or pass --sessions-dir",
        )?;
    let recorded = subagent_supervisor::resume::load(&sessions_dir, target)?;
    let ask = subagent_supervisor::resume::ResumeAsk {
        task: args.task.first().cloned(),
        tools: args.flags.tools.is_some(),
        // Set once the invocation's agent is known.
        current_tools: Vec::new(),
        workspace: args.flags.workspace.is_some(),
        output_schema: args.flags.output_schema.is_some(),
        limits: args.flags.overrides().limits,
    };
    if args.task.len() > 1 {
        anyhow::bail!("--resume takes one follow-up --task");
    }
    Ok((recorded, ask))
}

fn print_result(result: &SubagentResult, json: bool, quiet: bool) -> Result<()> {
    if json {
        console::out(&serde_json::to_string_pretty(result)?)?;
        return Ok(());
    }
    for item in &result.content {
        let subagent_protocol::result::ContentItem::Text { text } = item;
        console::out_text(text)?;
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

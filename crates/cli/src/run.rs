//! `subagent run`: which tasks and how (single, `--parallel`, `--chain`),
//! the shared flags ([`RunFlags`]) turned into a request template and a
//! supervisor config, run on a small runtime, and the result printed.

// `--parallel` and `--chain`: which tasks a call has and how they run.
mod modes;

use std::path::PathBuf;

use anyhow::Result;
use subagent_protocol::result::SubagentResult;
use subagent_supervisor::Supervisor;
use subagent_supervisor::exit_codes;
use tokio_util::sync::CancellationToken;

use super::run_flags::{Prepared, RunFlags};
use crate::console;

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

pub(super) fn run(args: RunArgs) -> Result<i32> {
    let Prepared {
        mut request,
        mut config,
        ..
    } = args.flags.prepare(&args.flags.overrides())?;
    super::agents::print_agent_warnings(&config.catalog, &request.agent);
    let plan = modes::plan(&modes::ModeFlags {
        tasks: &args.task,
        tasks_file: args.tasks.as_deref(),
        parallel: args.parallel,
        chain: args.chain,
        concurrency: args.concurrency,
        max_concurrent: config.max_concurrent,
    })?;
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
    print_result(&result, args.json, args.quiet)?;
    Ok(exit_codes::for_error(
        result.details.error.as_ref().map(|e| e.code),
    ))
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

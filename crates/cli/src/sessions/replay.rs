//! `subagent sessions replay`: flags in, one replay run, the report out.
//! The replay itself (provider, run, comparison) lives in
//! `subagent_supervisor::replay`.

use std::path::{Path, PathBuf};

use crate::exit::Ending;
use anyhow::{Context, Result};
use subagent_protocol::OutputMode;
use subagent_supervisor::Supervisor;
use subagent_supervisor::config::RunOverrides;
use subagent_supervisor::prepare::{PrepareSettings, agent_tools, prepare};
use subagent_supervisor::replay::{
    ReplayInvocation, ReplayReport, read_recording, replay, replay_warnings,
};
use subagent_supervisor::session::read::find_session;
use tokio_util::sync::CancellationToken;

use crate::console;

/// The long help's examples and exit status.
pub(super) const AFTER_HELP: &str = "EXAMPLES:\n  \
    # a run failed in CI: make it again offline, with the model's recorded turns\n  \
    subagent sessions replay 3f9c2a\n\n  \
    # the workspace moved: replay against a checkout somewhere else\n  \
    subagent sessions replay 3f9c2a --workspace ./project\n\n  \
    # machine-readable report\n  \
    subagent sessions replay ./3f9c2a1b-general.jsonl --json\n\n\
    No model is called: a loopback server on 127.0.0.1 answers each model request \
    with the next recorded assistant turn (text, tool calls, usage, stop reason), \
    speaking openai-chat whatever provider the run used. The tools really run again, \
    with the recorded agent, task and output schema; tools, limits and budgets are this \
    invocation's (config and agent), the recorded ones only lowering them, and the \
    replay works in the recorded workspace only when it lies within --workspace (else \
    the current dir). The file must verify (`subagent sessions verify`). The \
    replay writes its own session file. The first difference in tool calls, tool \
    results, turn count or outcome is printed, recorded beside replayed.\n\n\
    OUTPUT:\n  replay matches: 3 turns, 2 tool calls, completed\n  \
    replay diverged at turn 2 (tool_result)\n    recorded: bash_read (ok): ...\n    \
    replayed: bash_read (ok): ...\n\n\
    EXIT STATUS:\n  0 the replay matches, 8 it diverged, 2 the file cannot be replayed,\n  130 interrupted";

#[derive(Debug, clap::Args)]
pub(super) struct ReplayArgs {
    /// A run id (or unique prefix) under the sessions dir, or a session file.
    #[arg(value_name = "RUN_ID|FILE")]
    run: String,
    /// Directory the replay works in (default: the recorded run's, when it
    /// lies within the current dir; else refused).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Worker binary (default: subagent-worker next to this binary, or $SUBAGENT_WORKER).
    #[arg(long, value_name = "FILE")]
    worker: Option<PathBuf>,
    /// Print the report as JSON: {matches, turns, toolCalls, divergence?, sessionFile}.
    #[arg(long)]
    json: bool,
}

/// Replays one run; the replay's session file goes to `sessions_dir` too.
pub(super) fn run(sessions_dir: &Path, args: ReplayArgs) -> Result<Ending> {
    let path = find_session(sessions_dir, &args.run)?;
    let recording = read_recording(&path)?;
    for warning in replay_warnings(&recording) {
        console::err(&format!("warning: {warning}"));
    }
    // What this invocation gives: the config and agent of the workspace
    // it names, else of the current dir, which the recording only lowers.
    let workspace_given = args.workspace.is_some();
    let workspace = match args.workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current dir")?,
    };
    let settings = PrepareSettings {
        sessions_dir: Some(sessions_dir.to_owned()),
        worker: args.worker,
        workspace: Some(workspace),
        output_schema: None,
        output_mode: OutputMode::ReportBack,
        temperature: None,
        max_tokens: None,
        reasoning: false,
        tools: None,
        allow_network: false,
        require_sandbox: false,
        allow_raise: Vec::new(),
        isolation: None,
        apply: None,
    };
    // The model only names the recording to the replay provider.
    let overrides = RunOverrides {
        agent: Some(recording.header.agent.clone()),
        model: Some(recording.header.model.clone()),
        ..RunOverrides::default()
    };
    let prepared = prepare(&settings, &overrides, &crate::trust::print_warning)
        .context("cannot prepare the replay's run")?;
    let invocation = ReplayInvocation {
        current_tools: agent_tools(&prepared.config, &prepared.request.agent),
        current: prepared.request,
        workspace_given,
    };
    let config = prepared.config;
    let runtime = crate::runtime::supervisor_runtime()?;
    let cancel = CancellationToken::new();
    let report = runtime.block_on(async {
        let supervisor = Supervisor::new(config);
        crate::runtime::cancel_on_interrupt(&cancel);
        replay(&supervisor, &recording, &invocation, cancel.clone()).await
    })?;
    print_report(&report, args.json)?;
    // An interrupted replay differs from its recording for that reason
    // alone; the caller learns it was interrupted, as from `run`.
    if cancel.is_cancelled() {
        return Ok(Ending::Cancelled);
    }
    Ok(if report.matches {
        Ending::Success
    } else {
        Ending::ReplayDiverged
    })
}

fn print_report(report: &ReplayReport, json: bool) -> Result<()> {
    if json {
        console::out(&serde_json::to_string_pretty(report)?)?;
        return Ok(());
    }
    match &report.divergence {
        None => console::out(&format!(
            "replay matches: {} turns, {} tool calls, {}",
            report.turns, report.tool_calls, report.status
        ))?,
        Some(d) => {
            console::out(&format!(
                "replay diverged at turn {} ({})\n  recorded: {}\n  replayed: {}",
                d.turn,
                d.kind.as_str(),
                one_line(&d.recorded),
                one_line(&d.replayed)
            ))?;
        }
    }
    console::err(&format!("session file: {}", report.session_file));
    Ok(())
}

/// An excerpt on one line: tool output is often several, and the two sides
/// read best one under the other. `--json` keeps them as they are.
fn one_line(text: &str) -> String {
    text.replace('\n', "\\n").replace('\t', "\\t")
}

//! `subagent call [--sse]`: the call_subagent contract. Reads one request
//! as JSON on stdin, runs it through the supervisor like `run` (sandboxed,
//! limited, with a session file; the shared [`RunFlags`] are the defaults
//! the JSON overrides) and writes the answer on stdout: with `--sse`, the
//! child's stream as SSE frames; without, the final text or JSON once and
//! [`DONE_MARKER`]. Any failure is written as `Error: <message>` where the
//! caller reads (an `output_text` frame with `--sse`, a line otherwise),
//! because the seed's tool hands that string to its model.
//!
//! The mapping lives in the library (`subagent_supervisor::call`); this
//! module only reads, runs and writes. Frames go through a channel to one
//! writer thread, so the supervisor's inline sinks never wait on stdout.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use subagent_protocol::ErrorCode;
use subagent_protocol::result::{ContentItem, SubagentResult};
use subagent_supervisor::Supervisor;
use subagent_supervisor::call::{CallInput, DONE_MARKER, SseRelay};
use subagent_supervisor::config::LimitSet;
use subagent_supervisor::prepare::prepare;
use subagent_supervisor::run::{Asked, ContentSink, Owner, ProgressSink};
use tokio_util::sync::CancellationToken;

use super::run_flags::{Prepared, RunFlags};
use super::run_patch::agent_tools;
use crate::console;
use crate::error::{RESULT_NOT_WRITTEN, RecordLost};
use crate::exit::Ending;

#[derive(Debug, clap::Args)]
pub(super) struct CallArgs {
    /// Write the child's stream as Server-Sent Events (output_text,
    /// reasoning_content, tool_call, tool_result, output_structured,
    /// block_end, response_end) instead of the final answer and the DONE marker.
    #[arg(long)]
    sse: bool,
    /// Exit 0 after a failure too, once its `Error: <message>` is written:
    /// for a parent that discards stdout on a non-zero exit (the seed's
    /// call_subagent runner), so the reason reaches its model.
    #[arg(long)]
    exit_zero: bool,
    #[command(flatten)]
    flags: RunFlags,
}

/// Runs one call; it ends as the run did (or as a request that cannot
/// run), or as a success with `--exit-zero`.
pub(super) fn run(args: CallArgs) -> Result<Ending> {
    let (sse, exit_zero) = (args.sse, args.exit_zero);
    // Every failure is written as `Error: <message>` where the caller
    // reads (and on stderr), so `--exit-zero` hides no reason.
    match call(args) {
        Ok(_) if exit_zero => Ok(Ending::Success),
        Ok(ending) => Ok(ending),
        Err(e) => {
            let message = format!("{e:#}");
            if sse {
                write_frames(SseRelay::default().finish(None, Some(&message)));
            } else {
                let _ = console::out(&format!("Error: {message}"));
            }
            if exit_zero {
                console::err(&message);
                Ok(Ending::Success)
            } else {
                Err(e)
            }
        }
    }
}

fn call(args: CallArgs) -> Result<Ending> {
    let stdin = std::io::read_to_string(std::io::stdin()).context("cannot read stdin")?;
    let input = CallInput::parse(&stdin)?;
    let flags = args.flags.overrides();
    let refused = |e: &dyn std::fmt::Display| anyhow::anyhow!("{}: {e}", ErrorCode::InvalidInput);
    let keys_checked = |prepared: &Prepared| {
        input
            .check_operator_keys(
                &flags,
                prepared.configured_provider.as_ref(),
                prepared.request.provider.kind,
                &prepared.call_key_variables,
            )
            .map_err(|e| refused(&e))
    };
    if input
        .api_key_name
        .as_ref()
        .is_some_and(|v| !v.trim().is_empty())
    {
        // Judged before the named variable is looked up: a name that is
        // refused must not learn whether it is set.
        let mut without_key = input.overrides(flags.clone());
        without_key.api_key_env.clone_from(&flags.api_key_env);
        without_key.api_key_env_origin = None;
        keys_checked(&prepare(&args.flags.settings(), &without_key, &|_| {})?)?;
    }
    let prepared = args.flags.prepare(&input.overrides(flags.clone()))?;
    input
        .check_pinned(&flags, &prepared.raise, prepared.request.provider.kind)
        .map_err(|e| refused(&e))?;
    keys_checked(&prepared)?;
    // The flags' run (with the provider the payload may choose) is the
    // ceiling of the payload's tool_subset, think and max_tokens.
    let ceilings = prepared.ceilings(Owner::Call);
    let agent_tools = agent_tools(&prepared.config, &prepared.request.agent);
    super::agents::print_agent_warnings(&prepared.config.catalog, &prepared.request.agent);
    let Prepared {
        mut request,
        mut config,
        ..
    } = prepared;
    input.apply(&mut request);
    ceilings
        .admit(
            &mut request,
            &Asked {
                limits: &LimitSet::default(),
                tools: input.tool_subset.is_some() || args.flags.tools.is_some(),
                agent_tools: &agent_tools,
            },
        )
        .map_err(|e| refused(&e))?;

    let relay = Arc::new(Mutex::new(SseRelay::default()));
    let (frames, writer) = if args.sse {
        let (tx, rx) = mpsc::channel::<String>();
        let writer = std::thread::spawn(move || {
            for frame in rx {
                let _ = console::out(&frame);
            }
        });
        (Some(tx), Some(writer))
    } else {
        (None, None)
    };
    if let Some(tx) = &frames {
        let (progress_relay, progress_tx) = (Arc::clone(&relay), tx.clone());
        config.progress = Some(ProgressSink::new(move |event| {
            if let Ok(mut relay) = progress_relay.lock() {
                for frame in relay.on_progress(event) {
                    let _ = progress_tx.send(frame);
                }
            }
        }));
        let (content_relay, content_tx) = (Arc::clone(&relay), tx.clone());
        config.content = Some(ContentSink::new(move |event| {
            if let Ok(mut relay) = content_relay.lock()
                && let Some(frame) = relay.on_content(event)
            {
                let _ = content_tx.send(frame);
            }
        }));
    }

    let runtime = super::runtime::supervisor_runtime()?;
    let result = runtime.block_on(async move {
        let supervisor = Supervisor::new(config);
        let cancel = CancellationToken::new();
        super::runtime::cancel_on_interrupt(&cancel);
        supervisor.run(request, cancel).await
    });
    // The runtime is gone, so no sink is called any more.
    drop(runtime);

    let error = result
        .details
        .error
        .as_ref()
        .map(|e| format!("{}: {}", e.code, e.message));
    let structured = structured_json(&result);
    if let Some(tx) = frames {
        let closing = match relay.lock() {
            Ok(mut relay) => relay.finish(structured.as_deref(), error.as_deref()),
            Err(_) => SseRelay::default().finish(structured.as_deref(), error.as_deref()),
        };
        for frame in closing {
            let _ = tx.send(frame);
        }
    }
    // Dropping the last senders (the sinks went with the config) ends the writer.
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if !args.sse {
        print_plain(&result, structured.as_deref(), error.as_deref())
            .context(RecordLost(RESULT_NOT_WRITTEN))?;
    }
    if let Some(message) = &error {
        console::err(message);
    }
    if let Some(file) = result
        .details
        .results
        .first()
        .and_then(|r| r.session_file.as_ref())
    {
        console::err(&format!("session file: {file}"));
    }
    Ok(Ending::Run(result.details.error.as_ref().map(|e| e.code)))
}

/// The structured answer as compact JSON, when the run produced one.
fn structured_json(result: &SubagentResult) -> Option<String> {
    result
        .details
        .results
        .first()
        .and_then(|r| r.structured_output.as_ref())
        .map(|value| value.to_string())
}

/// The plain output: the answer (JSON when structured), a blank line, the
/// DONE marker; or `Error: <message>` alone.
fn print_plain(
    result: &SubagentResult,
    structured: Option<&str>,
    error: Option<&str>,
) -> Result<()> {
    if let Some(message) = error {
        console::out_text(&format!("Error: {message}"))?;
        return Ok(());
    }
    let answer = match structured {
        Some(json) => json.to_owned(),
        None => result
            .content
            .iter()
            .map(|item| match item {
                ContentItem::Text { text } => text.as_str(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    };
    console::out_text(&answer)?;
    console::out("")?;
    console::out(DONE_MARKER)?;
    Ok(())
}

fn write_frames(frames: Vec<String>) {
    for frame in frames {
        let _ = console::out(&frame);
    }
}

//! `subagent doctor`: runs the probes of `subagent_supervisor::doctor` and
//! prints one line per probe, or one JSON object with `--json`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use subagent_protocol::ProviderKind;
use subagent_supervisor::WorkerCommand;
use subagent_supervisor::doctor::{self, Probe, Report};
use subagent_supervisor::exit_codes;
use subagent_supervisor::session::default_sessions_dir;

use crate::console;

#[derive(Debug, clap::Args)]
pub(super) struct DoctorArgs {
    /// Print one JSON object `{"ok": bool, "probes": [{"name", "ok", "detail", "fix"?}]}`.
    #[arg(long)]
    json: bool,
    /// Sessions directory to check (default: $SUBAGENT_HOME/sessions or
    /// ~/.local/state/subagent/sessions).
    #[arg(long)]
    sessions_dir: Option<PathBuf>,
    /// Worker binary to check (default: subagent-worker next to this binary,
    /// or $SUBAGENT_WORKER).
    #[arg(long)]
    worker: Option<PathBuf>,
    /// Model endpoint to check for reachability (`GET <base-url>/models`);
    /// not checked when absent.
    #[arg(long)]
    base_url: Option<String>,
    /// API dialect of the endpoint (openai-chat, openai-responses, anthropic).
    #[arg(long, default_value = "openai-chat", requires = "base_url")]
    provider: ProviderKind,
    /// Model id that the endpoint's model list must contain.
    #[arg(long, requires = "base_url")]
    model: Option<String>,
}

/// Runs every probe, prints them, and returns 0 when all are ok, else
/// `DOCTOR_MISSING`.
pub(super) fn run(args: DoctorArgs) -> Result<i32> {
    let mut probes: Vec<Probe> = doctor::isolation_probes(subagent_sandbox::isolation_support());
    probes.push(doctor::cgroup_probe(&subagent_sandbox::cgroup_support()));
    probes.push(doctor::python_probe_from(&doctor::run_python(
        doctor::PYTHON_TIMEOUT,
    )));
    let sessions_dir = args.sessions_dir.or_else(default_sessions_dir);
    probes.push(doctor::sessions_dir_probe(sessions_dir.as_deref()));
    let worker = args
        .worker
        .or_else(|| WorkerCommand::default_for_current_exe().map(|w| w.program));
    probes.push(doctor::worker_probe(worker.as_deref()));
    if let Some(base_url) = &args.base_url {
        probes.extend(doctor::endpoint_probes(
            base_url,
            args.provider.as_str(),
            args.model.as_deref(),
        ));
    }
    let report = Report::new(probes);
    if args.json {
        let json = serde_json::to_string(&report).context("cannot serialize the report")?;
        console::out(&json).context("cannot write to stdout")?;
    } else {
        for probe in &report.probes {
            console::out(&probe.line()).context("cannot write to stdout")?;
        }
    }
    Ok(if report.ok {
        exit_codes::OK
    } else {
        exit_codes::DOCTOR_MISSING
    })
}

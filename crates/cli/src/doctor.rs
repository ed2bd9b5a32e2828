//! `subagent doctor`: runs the probes of `subagent_supervisor::doctor` and
//! prints one line per probe, or one JSON object with `--json`.

use std::path::PathBuf;

use std::path::Path;

use crate::exit::Ending;
use anyhow::{Context, Result};
use subagent_protocol::ProviderKind;
use subagent_supervisor::WorkerCommand;
use subagent_supervisor::agents::{default_user_agents_dir, discover_catalog};
use subagent_supervisor::config::{
    default_trust_file_path, default_user_config_path, kind_defaults, load_config, read_project,
};
use subagent_supervisor::doctor::{self, Probe, Report};
use subagent_supervisor::session::default_sessions_dir;

use crate::console;

#[derive(Debug, clap::Args)]
pub(super) struct DoctorArgs {
    /// Print one JSON object `{"ok": bool, "probes": [{"name", "ok", "detail", "fix"?}]}`.
    #[arg(long)]
    json: bool,
    /// Sessions directory to check (default: $SUBAGENT_HOME/sessions, else
    /// $XDG_STATE_HOME/subagent/sessions, else
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
    /// API dialect of the endpoint (openai-chat, openai-responses, anthropic,
    /// vertexai-anthropic).
    #[arg(long, default_value = "openai-chat", requires = "base_url")]
    provider: ProviderKind,
    /// Model id to look for in the endpoint's model list. An
    /// OpenAI-compatible server that does not list it is a warning (it may
    /// serve it anyway, as llama-server does).
    #[arg(long, requires = "base_url")]
    model: Option<String>,
    /// Settle a model the list does not name with a 1-token request to it
    /// (no API key is sent).
    #[arg(long, requires = "model")]
    probe_model: bool,
    /// Directory whose config files and agent files to check (default: the
    /// current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

/// Runs every probe, prints them, and returns 0 when all are ok, else
/// `DOCTOR_MISSING`.
pub(super) fn run(args: DoctorArgs) -> Result<Ending> {
    let mut probes: Vec<Probe> = doctor::isolation_probes(subagent_sandbox::isolation_support());
    probes.push(doctor::network_stack_probe(
        &subagent_sandbox::net::network_stack(),
    ));
    probes.push(doctor::cgroup_probe(&subagent_sandbox::cgroup_support()));
    probes.push(doctor::open_files_probe(
        &subagent_sandbox::open_files_limit(),
    ));
    probes.push(doctor::python_probe_from(&doctor::run_python(
        doctor::PYTHON_TIMEOUT,
    )));
    let sessions_dir = args.sessions_dir.or_else(default_sessions_dir);
    probes.push(doctor::sessions_dir_probe(sessions_dir.as_deref()));
    let worker = args
        .worker
        .or_else(|| WorkerCommand::default_for_current_exe().map(|w| w.program));
    probes.push(doctor::worker_probe(worker.as_deref()));
    let workspace = match args.workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let layer = crate::runtime::supervisor_runtime()?.block_on(doctor::layer_support(&workspace));
    probes.push(doctor::workspace_layer_probe(&workspace, &layer));
    probes.extend(config_probes(&workspace));
    if let Some(base_url) = &args.base_url {
        probes.extend(doctor::endpoint_probes_asking(
            base_url,
            args.provider.as_str(),
            args.model.as_deref(),
            args.probe_model,
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
        Ending::Success
    } else {
        Ending::DoctorMissing
    })
}

/// The config files and agent files a run in `workspace` would read, and
/// every configured provider: reachable, and serving its model when it
/// names one. A provider nobody configured is not probed (pass --base-url).
fn config_probes(workspace: &Path) -> Vec<Probe> {
    let mut probes = Vec::new();
    let project = match read_project(workspace, default_trust_file_path().as_deref()) {
        Ok(project) => project,
        Err(e) => {
            probes.push(Probe::missing(
                "project",
                e.to_string(),
                "make the workspace's .subagent and .claude readable",
            ));
            return probes;
        }
    };
    if let Some(warning) = project.warning() {
        let detail = warning.strip_prefix("warning: ").unwrap_or(&warning);
        probes.push(Probe::ok("project", detail.to_owned()));
    }
    let config = match load_config(&project, default_user_config_path().as_deref()) {
        Ok(config) => {
            let files: Vec<String> = config
                .layers()
                .map(|l| l.path.display().to_string())
                .collect();
            probes.push(Probe::ok(
                "config",
                if files.is_empty() {
                    "no config file; flags and OPENAI_*/ANTHROPIC_* variables are used".to_owned()
                } else {
                    files.join(", ")
                },
            ));
            Some(config)
        }
        Err(e) => {
            probes.push(Probe::missing(
                "config",
                e.to_string(),
                "fix the file at the line named (`subagent config --help` shows the format)",
            ));
            None
        }
    };
    match discover_catalog(&project, default_user_agents_dir().as_deref()) {
        Ok(catalog) => {
            // A skipped file leaves every other agent usable: reported, not
            // a failure of the machine.
            let skipped = match catalog.unreadable().len() {
                0 => String::new(),
                n => format!(
                    "; {n} agent file{} skipped as unreadable (`{}` names {})",
                    if n == 1 { "" } else { "s" },
                    subagent_supervisor::agents::LIST_WARNINGS_COMMAND,
                    if n == 1 { "it" } else { "them" }
                ),
            };
            probes.push(Probe::ok(
                "agents",
                format!(
                    "{} agents ({}){skipped}",
                    catalog.agents().len(),
                    catalog.names().join(", ")
                ),
            ));
        }
        Err(e) => probes.push(Probe::missing(
            "agents",
            e.to_string(),
            "fix the agent file at the line named (`subagent agents --help` shows the format)",
        )),
    }
    let Some(config) = config else {
        return probes;
    };
    match subagent_supervisor::prepare::configured_mcp_servers(&config, &project) {
        Ok(servers) => probes.extend(doctor::mcp_server_probes(
            &servers,
            &super::run_flags::env_value,
        )),
        Err(e) => probes.push(Probe::missing(
            "mcp servers",
            e.to_string(),
            "fix the project's .mcp.json at the server named",
        )),
    }
    // Each name once, as a run would see it: the project's entry wins.
    let mut seen = Vec::new();
    for layer in config.layers().rev() {
        for (name, entry) in &layer.file.providers {
            if seen.contains(name) {
                continue;
            }
            seen.push(name.clone());
            let defaults = kind_defaults(entry.kind);
            let base_url = entry
                .base_url
                .clone()
                .or_else(|| super::run_flags::env_value(defaults.base_url_var))
                .unwrap_or_else(|| defaults.public_base_url.to_owned());
            let fix = format!(
                "start the server, or correct base_url/model of [providers.{name}] in {}",
                layer.path.display()
            );
            for mut probe in
                doctor::endpoint_probes(&base_url, entry.kind.as_str(), entry.model.as_deref())
            {
                probe.name = format!("provider {name}");
                probe.detail = subagent_redact::mask_patterns(&probe.detail).into_owned();
                if !probe.ok {
                    probe.fix = Some(fix.clone());
                }
                probes.push(probe);
            }
        }
    }
    probes
}

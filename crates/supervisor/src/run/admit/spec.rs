//! The specs a run is started from, as pure functions of the request and
//! the settings: the worker's task ([`TaskSpec`]), whether it fits one
//! frame, the sandbox the worker process gets, and the tool sandbox its
//! tool processes will get (for the session header).
//!
//! Starts nothing and writes nothing.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use subagent_protocol::frame::encode_frame;
use subagent_protocol::session::SandboxStatus;
use subagent_protocol::{FrameError, MaxPayload, McpServerSpec, TaskSpec, ToWorker, tool_names};
use subagent_sandbox::{Isolation, SandboxPolicy, SandboxSpec};

use crate::agents::AgentDefinition;
use crate::request::RunRequest;
use crate::run::config::{CAPTURE_KEEP, SupervisorConfig, tools_for_depth};

/// How the worker process is started and capped: the configured worker
/// command in the request's workspace (entered by `workspace`, the
/// admitted directory's descriptor, when given), its protocol socket as fd
/// 3, the request's limits.
pub(in crate::run) fn sandbox_spec(
    config: &SupervisorConfig,
    request: &RunRequest,
    protocol_fd: OwnedFd,
    workspace: Option<OwnedFd>,
) -> SandboxSpec {
    let limits = &request.limits;
    let mut env = subagent_sandbox::allowlisted_env(subagent_sandbox::DEFAULT_ENV_ALLOWLIST);
    // The worker starts the tools' network stack: the same choice as the
    // check above made.
    if let Some(choice) = std::env::var_os(subagent_sandbox::net::STACK_VARIABLE) {
        env.push((subagent_sandbox::net::STACK_VARIABLE.into(), choice));
    }
    env.push(("SUBAGENT_PROTOCOL_FD".into(), "3".into()));
    if workspace.is_some() {
        // The worker's working directory is the admitted workspace: its
        // tools hold on to it rather than to the path.
        env.push(("SUBAGENT_WORKSPACE_IS_CWD".into(), "1".into()));
    }
    SandboxSpec {
        program: config.worker.program.clone(),
        args: config.worker.args.clone(),
        cwd: request.workspace_dir.clone(),
        cwd_fd: workspace,
        env,
        protocol_fd: Some(protocol_fd),
        limits: subagent_sandbox::ResourceLimits::from_limits(limits),
        policy: config.sandbox_policy,
        capture: subagent_sandbox::CaptureLimits {
            stdout_hard_bytes: limits.stdout_bytes,
            stderr_hard_bytes: limits.stderr_bytes,
            keep_head_bytes: CAPTURE_KEEP,
            keep_tail_bytes: CAPTURE_KEEP,
        },
        grace: Duration::from_millis(limits.kill_grace_ms),
        // The worker talks to the model over the network and holds the API
        // key; the tool sandbox is for the processes it starts for tools.
        isolation: None,
        // Only the worker holds its pipes (every process it starts, a
        // tool's or the page renderer, gets pipes of its own), and its socket
        // closes with it: no pidfd needs holding while it runs, one fd of
        // each live worker's in the supervisor.
        exit_notice: subagent_sandbox::ExitNotice::AfterHangUp,
        after_exit: None,
        layer: None,
        conversation: false,
    }
}

/// Refuses a task whose `Start` frame would not fit the protocol's frame
/// cap, before anything is created: the worker could never receive it.
pub(in crate::run) fn check_spec_fits(spec: &TaskSpec) -> Result<(), String> {
    let max = MaxPayload::default().bytes();
    match encode_frame(
        &ToWorker::Start(Box::new(spec.clone())),
        MaxPayload::default(),
    ) {
        Ok(_) => Ok(()),
        Err(FrameError::TooLarge { announced, .. }) => Err(format!(
            "the task is too large to send to a worker: {announced} bytes encoded, the limit is {max} \
             bytes; shorten the task, the system prompt or the output schema, or put large input \
             in a file in the workspace and name it in the task"
        )),
        Err(e) => Err(format!("the task cannot be encoded for the worker: {e}")),
    }
}

/// With the network on, process tools reach it only through a private
/// network namespace (`subagent_sandbox::net`), which needs a user-mode
/// stack (slirp4netns or pasta): without one the run is refused before it
/// starts, never given the host's network.
pub(in crate::run) fn check_network_stack(spec: &TaskSpec) -> Result<(), String> {
    if !spec.allow_network || !has_process_tool(spec) {
        return Ok(());
    }
    match subagent_sandbox::net::current_stack() {
        Ok(_) => Ok(()),
        Err(no_stack) => Err(format!(
            "--allow-network with {}: {no_stack}",
            tool_names::PROCESS_TOOLS.join(" or ")
        )),
    }
}

/// The layers tool processes of this child will get, for the session
/// header: the isolation layers and the memory and pids caps (each cgroup
/// cap that cannot be had listed as not applied, and the rlimit memory
/// fallback); `None` when it has no process tool.
pub(in crate::run) fn tool_sandbox_status(spec: &TaskSpec) -> Option<SandboxStatus> {
    if !has_process_tool(spec) {
        return None;
    }
    let mut isolation = Isolation::strict(vec![PathBuf::from(&spec.workspace_dir)]);
    isolation.network = spec.allow_network;
    let mut status = subagent_sandbox::isolation_status(&isolation);
    let caps = subagent_sandbox::resource_status(&subagent_sandbox::ResourceLimits {
        memory_bytes: Some(spec.limits.tool_memory_bytes),
        pids: Some(spec.limits.tool_pids),
        ..Default::default()
    });
    status.applied.extend(caps.applied);
    status.not_applied.extend(caps.not_applied);
    Some(status)
}

/// Whether the run has a tool that runs in the tool sandbox
/// ([`tool_names::PROCESS_TOOLS`]) or an MCP server, which runs there too.
fn has_process_tool(spec: &TaskSpec) -> bool {
    !spec.mcp_servers.is_empty()
        || spec
            .tools
            .iter()
            .any(|t| tool_names::PROCESS_TOOLS.contains(&t.as_str()))
}

/// The MCP servers the run selected by its tool names (`mcp__NAME`,
/// `mcp__NAME__TOOL`: the caller's, else its agent's), resolved from the
/// supervisor's configured ones. A server the caller named that is not
/// configured, a program in the workspace, or a provider key given to a
/// server is the refusal's text; a server only the agent's file names
/// and nobody configured is left out (`agents ls --warnings` names it).
pub(in crate::run) fn mcp_servers(
    config: &SupervisorConfig,
    request: &RunRequest,
    agent: &AgentDefinition,
) -> Result<Vec<McpServerSpec>, String> {
    let (tools, strict) = match &request.tools {
        Some(tools) => (tools.as_slice(), true),
        None => (agent.tools.as_slice(), false),
    };
    if !tools.iter().any(|t| crate::mcp::is_mcp_name(t)) {
        return Ok(Vec::new());
    }
    let run = crate::mcp::RunSide {
        workspace: &request.workspace_dir,
        provider_key: request.provider.api_key.as_ref().map(|k| k.expose()),
        protected_vars: config.mcp_servers.protected_variables(),
        env: &crate::env_lookup::env_value,
    };
    crate::mcp::servers_for_run(tools, strict, &config.mcp_servers, &agent.mcp_servers, &run)
}

/// What the worker is told to do: the request over its agent's defaults.
pub(in crate::run) fn task_spec(
    request: &RunRequest,
    agent: &AgentDefinition,
    run_id: &str,
    policy: SandboxPolicy,
) -> TaskSpec {
    let child_depth = request.caller_depth.saturating_add(1);
    let tools = request.tools.clone().unwrap_or_else(|| agent.tools.clone());
    let tools = tools_for_depth(tools, child_depth, request.max_depth);
    // MCP names select servers (`mcp_servers`), they are no built-in tool.
    let tools: Vec<String> = tools
        .into_iter()
        .filter(|t| !crate::mcp::is_mcp_name(t))
        .collect();
    TaskSpec {
        run_id: run_id.to_owned(),
        agent: request.agent.clone(),
        task: request.task.clone(),
        // A built-in's prompt names exactly the tools this run has.
        system_prompt: request
            .system_prompt
            .clone()
            .unwrap_or_else(|| agent.system_prompt_for(&tools)),
        provider: request.provider.clone(),
        tools,
        output_schema_json: request.output_schema_json.clone(),
        output_mode: request.output_mode,
        budget: request.effective_budget(),
        limits: request.limits.clone(),
        workspace_dir: request.workspace_dir.display().to_string(),
        allow_network: request.allow_network,
        require_sandbox: policy == SandboxPolicy::RequireAll,
        depth: child_depth,
        max_depth: request.max_depth,
        web: request.web.clone(),
        python: None,
        // The operator's files in the workspace, filled in from admission.
        protected_paths: Vec::new(),
        history: request
            .resume
            .as_ref()
            .map(|r| r.history.clone())
            .unwrap_or_default(),
        // Resolved from the configuration by `mcp_servers`, which can refuse.
        mcp_servers: Vec::new(),
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;

//! The `subagent-worker` program: the process the supervisor spawns for
//! one subagent. Its binaries (`crates/cli`'s, and the test suite's copy)
//! are one line calling [`main`].
//!
//! Wiring only: open the protocol socket (fd 3), serve the protocol,
//! build the provider and the tools from the `TaskSpec`, run the agent loop.
//! It takes no arguments and never prints to stdout; stderr gets one line
//! when the worker cannot even start talking to its supervisor.

use std::process::ExitCode;

use crate::agent::{EventSink, TaskEnv, run_task_with_subagents};
use crate::exit_code;
use crate::protocol_io::{self, FromSupervisor, ServeError};
use crate::provider::{ProviderConfig, price_for_spec, provider_for};
use subagent_protocol::{ErrorCode, Outcome, TaskSpec};
use subagent_tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

/// The whole program: its exit status.
pub fn main() -> ExitCode {
    if let Err(e) = crate::harden::forbid_memory_reads() {
        // Not fatal: the run is still sandboxed; the supervisor records stderr.
        eprintln!("subagent-worker: warning: cannot mark the process non-dumpable: {e}");
    }
    // Before the runtime starts a thread: capability sets are per thread.
    if let Err(e) = crate::harden::drop_privileges() {
        // Not fatal: its tool processes drop every capability themselves.
        eprintln!("subagent-worker: warning: {e}");
    }
    let fd = match protocol_io::protocol_fd_from_env() {
        Ok(fd) => fd,
        Err(e) => return fail(exit_code::NO_PROTOCOL_SOCKET, &e),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return fail(
                exit_code::RUNTIME_FAILED,
                &format!("starting the runtime: {e}"),
            );
        }
    };
    let code = runtime.block_on(async {
        let stream = match protocol_io::open_protocol_socket(fd) {
            Ok(stream) => stream,
            Err(e) => return fail(exit_code::NO_PROTOCOL_SOCKET, &e.to_string()),
        };
        match protocol_io::serve(stream, run).await {
            Ok(()) => ExitCode::from(exit_code::SUCCESS),
            // The supervisor is gone: nobody will read a result, and a
            // lingering worker is a leak. Exit now, without waiting for the
            // run's futures or the runtime to wind down.
            Err(e @ ServeError::SupervisorGone(_)) => {
                eprintln!("subagent-worker: {e}");
                std::process::exit(i32::from(exit_code::SUPERVISOR_GONE))
            }
        }
    });
    // The cgroup the sandbox made ahead for a next tool process, and any
    // chore still queued; the supervisor would remove the cgroups with
    // ours, but no need to leave them.
    subagent_sandbox::finish_chores();
    code
}

async fn run(
    spec: Box<TaskSpec>,
    events: EventSink,
    from_supervisor: FromSupervisor,
    cancel: CancellationToken,
) -> Outcome {
    let config = ProviderConfig {
        cancel: Some(cancel.clone()),
        ..ProviderConfig::default()
    };
    let provider = match provider_for(&spec.provider, config) {
        Ok(provider) => provider,
        Err(e) => return provider_setup_failed(&spec, &e.to_string()),
    };
    let lookup = price_for_spec(&spec.provider);
    let env = TaskEnv {
        tools: ToolRegistry::builtin(),
        price: lookup.known.then_some(lookup.price),
        events,
        cancel,
        python_later: Some(from_supervisor.python),
    };
    run_task_with_subagents(&spec, provider, env, Some(from_supervisor.subagents)).await
}

fn provider_setup_failed(spec: &TaskSpec, error: &str) -> Outcome {
    Outcome::failure(
        spec.provider.model.clone(),
        ErrorCode::InvalidInput,
        format!("{error}; fix the provider settings of the agent"),
    )
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("subagent-worker: {message}");
    ExitCode::from(code)
}

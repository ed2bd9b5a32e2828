//! One MCP server of a run: its process in the tool sandbox (the run's
//! view of the filesystem, its limits and network rules, stdio as the
//! conversation), the MCP client session over it, the watch on its exit,
//! and its stop.
//!
//! The client reads at most [`MAX_MESSAGE_BYTES`] per message (a longer line
//! is dropped, so a flood costs the server its call, not our memory); the
//! server's stderr is captured head and tail like a tool's. Nothing here
//! decides which tools are offered ([`super::tool`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::Tool as ListedTool;
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{Peer, RoleClient, ServiceExt};
use subagent_protocol::McpServerSpec;
use subagent_protocol::message::LogLevel;
use subagent_sandbox::{
    AfterExit, CaptureLimits, ChildExit, KillHandle, KillReason, Stream, Termination,
};
use tokio::net::unix::pipe;
use tokio::sync::watch;

use super::McpNote;
use crate::git_call;
use crate::process::{self, ProcessCall};
use crate::tool::ToolContext;

/// Most tools one server may offer; the rest are left out, with a note.
pub const MAX_TOOLS_PER_SERVER: usize = 100;

/// Largest input schema of one tool, bytes of JSON; a larger one leaves
/// its tool out, with a note.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// Largest message read from a server, bytes (one JSON-RPC line).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// stderr a server may write over its life before it is stopped, bytes: a
/// server logs for a whole run, so more than a tool call's.
const STDERR_HARD_BYTES: u64 = 16 * 1024 * 1024;

/// Head and tail of stderr kept, bytes each.
const STDERR_KEEP_BYTES: usize = 16 * 1024;

/// The end of a server's stderr said in a note, bytes.
const STDERR_SAID_BYTES: usize = 2 * 1024;

/// How long a server has to exit by itself once its input ends.
const END_OF_INPUT_GRACE: Duration = Duration::from_secs(1);

/// How long a stop waits for the tree after SIGTERM (then SIGKILL, which
/// the sandbox makes sure of).
const STOP_WAIT: Duration = Duration::from_secs(10);

/// How a server's process ended, for notes and tool errors.
#[derive(Debug, Clone)]
pub(crate) struct Ended {
    /// "exit code 1", "killed by signal 9", "stopped: ...".
    pub(crate) how: String,
    /// The end of its stderr, masked; empty when it wrote none.
    pub(crate) stderr: String,
}

/// A started server with its client session.
pub(crate) struct RunningServer {
    pub(crate) name: String,
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) listed: Vec<ListedTool>,
    pub(crate) tool_timeout: Duration,
    pub(crate) started_in: Duration,
    pub(crate) pid: u32,
    secrets: Vec<String>,
    session: Mutex<Option<RunningService<RoleClient, ()>>>,
    killer: KillOnDrop,
    ended: watch::Receiver<Option<Ended>>,
    /// The server's HOME and TMPDIR, removed with it.
    _tmp: tempfile::TempDir,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("name", &self.name)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// Kills the server's tree when dropped: a start abandoned half-way (the
/// run cancelled), or a run that ended without stopping it. A tree already
/// gone is not touched.
struct KillOnDrop(KillHandle);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.kill_now(KillReason::Cancelled);
    }
}

impl RunningServer {
    /// How it ended, once its tree is gone.
    pub(crate) fn ended(&self) -> Option<Ended> {
        self.ended.borrow().clone()
    }

    /// How it ended, waiting up to `within` for its tree to be gone: a
    /// closed connection is seen before the exit is reaped.
    pub(crate) async fn ended_within(&self, within: Duration) -> Option<Ended> {
        let mut ended = self.ended.clone();
        let _ = tokio::time::timeout(within, ended.wait_for(Option::is_some)).await;
        self.ended()
    }

    /// `text` with the server's configured secrets masked.
    pub(crate) fn mask(&self, text: &str) -> String {
        mask_all(text, &self.secrets)
    }
}

fn mask_all(text: &str, secrets: &[String]) -> String {
    secrets.iter().fold(text.to_owned(), |text, secret| {
        subagent_redact::mask_literal(&text, secret).into_owned()
    })
}

/// Starts the server of `spec` and lists its tools, within its startup
/// timeout; on failure says why in one line, with its stderr.
pub(crate) async fn start(
    spec: &McpServerSpec,
    ctx: &ToolContext,
) -> Result<RunningServer, String> {
    let begun = Instant::now();
    let secrets: Vec<String> = spec
        .env
        .iter()
        .map(|var| var.value.expose().to_owned())
        .filter(|value| !value.is_empty())
        .collect();
    let failed = |why: String| {
        format!(
            "the MCP server `{}` did not start: {why}; its tools are not offered this run \
             (check it with `subagent doctor`, and its [mcp_servers.{}] settings)",
            spec.name, spec.name
        )
    };
    let launched = launch(spec, ctx).await.map_err(&failed)?;
    let Launched {
        reader,
        writer,
        killer,
        ended,
        pid,
        tmp,
    } = launched;
    let killer = KillOnDrop(killer);
    let transport =
        AsyncRwTransport::new_client(reader, writer).with_max_line_length(MAX_MESSAGE_BYTES);
    let startup = Duration::from_millis(spec.startup_timeout_ms);
    let handshake = async {
        let session = ().serve(transport).await.map_err(|e| e.to_string())?;
        let listed = session
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        Ok::<_, String>((session, listed))
    };
    let (session, listed) = match tokio::time::timeout(startup, handshake).await {
        Ok(Ok(ready)) => ready,
        Ok(Err(why)) => {
            let ended = stop_process(&killer.0, ended).await;
            return Err(failed(with_stderr(
                format!("{why} ({})", ended.how),
                &ended,
                &secrets,
            )));
        }
        Err(_) => {
            let ended = stop_process(&killer.0, ended).await;
            return Err(failed(with_stderr(
                format!(
                    "it did not answer the MCP handshake and list its tools within {} ms \
                     (startup_timeout_sec raises it)",
                    spec.startup_timeout_ms
                ),
                &ended,
                &secrets,
            )));
        }
    };
    Ok(RunningServer {
        name: spec.name.clone(),
        peer: session.peer().clone(),
        listed,
        tool_timeout: Duration::from_millis(spec.tool_timeout_ms),
        started_in: begun.elapsed(),
        pid,
        secrets,
        session: Mutex::new(Some(session)),
        killer,
        ended,
        _tmp: tmp,
    })
}

/// Ends the server's input, waits for it to exit (SIGTERM, then SIGKILL,
/// when it does not), and says how it ended.
pub(crate) async fn stop(server: Arc<RunningServer>) -> McpNote {
    let session = server
        .session
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(session) = session {
        // Closes our ends of its stdin and stdout.
        let _ = session.cancel().await;
    }
    let ended = stop_process(&server.killer.0, server.ended.clone()).await;
    let level = if ended.how.starts_with("exit code 0") || ended.how.contains("SIGTERM") {
        LogLevel::Info
    } else {
        LogLevel::Warn
    };
    McpNote {
        level,
        text: with_stderr(
            format!("the MCP server `{}` stopped: {}", server.name, ended.how),
            &ended,
            &server.secrets,
        ),
    }
}

/// `line`, then the end of the server's stderr when it wrote any.
pub(crate) fn with_stderr(line: String, ended: &Ended, secrets: &[String]) -> String {
    if ended.stderr.is_empty() {
        line
    } else {
        format!(
            "{line}; its stderr ends: {}",
            mask_all(&ended.stderr, secrets)
        )
    }
}

async fn stop_process(killer: &KillHandle, mut ended: watch::Receiver<Option<Ended>>) -> Ended {
    let gone = |e: &Option<Ended>| e.is_some();
    if tokio::time::timeout(END_OF_INPUT_GRACE, ended.wait_for(gone))
        .await
        .is_err()
    {
        killer.terminate(KillReason::Cancelled);
        if tokio::time::timeout(STOP_WAIT, ended.wait_for(gone))
            .await
            .is_err()
        {
            killer.kill_now(KillReason::Cancelled);
            let _ = ended.wait_for(gone).await;
        }
    }
    let last = ended.borrow().clone();
    last.unwrap_or_else(|| Ended {
        how: "its exit could not be watched".into(),
        stderr: String::new(),
    })
}

/// A started server process and our ends of its stdio.
struct Launched {
    reader: pipe::Receiver,
    writer: pipe::Sender,
    killer: KillHandle,
    ended: watch::Receiver<Option<Ended>>,
    pid: u32,
    tmp: tempfile::TempDir,
}

async fn launch(spec: &McpServerSpec, ctx: &ToolContext) -> Result<Launched, String> {
    let workspace = ctx
        .workspace_dir
        .canonicalize()
        .map_err(|e| format!("the workspace is not usable ({e})"))?;
    let root = process::workspace_root(&workspace, ctx).map_err(|e| e.to_string())?;
    let git = git_call::before_call(Arc::clone(&root))
        .await
        .map_err(|e| e.to_string())?;
    let tmp = tempfile::Builder::new()
        .prefix("subagent-mcp-")
        .tempdir()
        .map_err(|e| format!("cannot create its private tmp dir: {e}"))?;
    let network = process::network_for(ctx).await.map_err(|e| e.to_string())?;
    let call = ProcessCall {
        program: PathBuf::from(&spec.command),
        args: spec.args.iter().map(OsString::from).collect(),
        read_only: spec.read_only.iter().map(PathBuf::from).collect(),
        timeout: Duration::from_millis(spec.tool_timeout_ms),
        more_time: String::new(),
    };
    let mut sandbox = process::tool_spec(&call, &workspace, tmp.path(), ctx);
    sandbox.env.extend(spec.env.iter().map(|var| {
        (
            OsString::from(&var.name),
            OsString::from(var.value.expose()),
        )
    }));
    if let Some(isolation) = sandbox.isolation.as_mut() {
        isolation.private_network = network;
    }
    sandbox.capture = CaptureLimits {
        stdout_hard_bytes: STDERR_HARD_BYTES,
        stderr_hard_bytes: STDERR_HARD_BYTES,
        keep_head_bytes: STDERR_KEEP_BYTES,
        keep_tail_bytes: STDERR_KEEP_BYTES,
    };
    sandbox.conversation = true;
    sandbox.cwd_fd = Some(
        root.try_clone()
            .map_err(|e| format!("cannot hold the workspace open: {e}"))?,
    );
    let (notices, tag) = (ctx.notices.clone(), format!("mcp-{}", spec.name));
    sandbox.after_exit = Some(AfterExit::new(move || {
        // The workspace's own .git is bound read-only, so only what the
        // server made elsewhere in the workspace can need setting aside.
        notices.extend(git.after_call(&tag, true).notices);
    }));
    let mut child = subagent_sandbox::spawn(sandbox)
        .await
        .map_err(|e| format!("its process could not be started: {e}"))?;
    let pid = child.pid();
    let killer = child.killer();
    let Some(talk) = child.take_conversation() else {
        return Err("its stdio could not be set up".into());
    };
    let reader = pipe::Receiver::from_owned_fd(talk.from_child)
        .map_err(|e| format!("its stdout could not be read: {e}"))?;
    let writer = pipe::Sender::from_owned_fd(talk.to_child)
        .map_err(|e| format!("its stdin could not be written: {e}"))?;
    let (tell, ended) = watch::channel(None);
    tokio::spawn(async move {
        let exit = child.wait().await;
        tell.send_replace(Some(ended_as(&exit)));
    });
    Ok(Launched {
        reader,
        writer,
        killer,
        ended,
        pid,
        tmp,
    })
}

fn ended_as(exit: &ChildExit) -> Ended {
    let how = match &exit.termination {
        Termination::Exited { code } => format!("exit code {code}"),
        Termination::Signaled { signal } if *signal == libc::SIGTERM => {
            "ended by SIGTERM".to_owned()
        }
        Termination::Signaled { signal } => format!("killed by signal {signal}"),
        Termination::Cancelled => "stopped at the run's end (SIGTERM)".to_owned(),
        Termination::OutputLimit { stream } => format!(
            "stopped: its {} passed {} MiB",
            match stream {
                Stream::Stdout => "stdout",
                Stream::Stderr => "stderr",
            },
            STDERR_HARD_BYTES / (1024 * 1024)
        ),
        Termination::MemoryLimit => "stopped: the tool memory limit was reached".to_owned(),
        Termination::PidsLimit => "stopped: the tool process limit was reached".to_owned(),
        Termination::Leaked { pids } => format!(
            "exit code 0, and {} background process(es) were stopped",
            pids.len()
        ),
        Termination::Killed { reason } => format!("stopped: {reason}"),
        other => format!("stopped ({other:?})"),
    };
    let stderr = exit.stderr.lossy_text();
    let stderr = stderr.trim_end();
    let start = stderr.len().saturating_sub(STDERR_SAID_BYTES);
    let start = (start..stderr.len())
        .find(|i| stderr.is_char_boundary(*i))
        .unwrap_or(stderr.len());
    Ended {
        how,
        stderr: stderr[start..].to_owned(),
    }
}

//! Starting a child under its spec ([`spawn`]): plan the protections and
//! start the leader on the spawner thread ([`crate::launch`]), set up the
//! watch on its exit ([`crate::exit_watch`]), start the capture tasks, and
//! return the [`SandboxedChild`] that owns it all.
//!
//! Nothing here blocks the caller's runtime: file-system and cgroupfs work
//! runs on those threads, a cgroup dropped on an error path is removed on
//! the chores thread. Every error path after the fork leaves the tree to
//! the drop guard ([`Running`]), so nothing started here can outlive a
//! failed spawn.

use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use subagent_protocol::session::{SandboxStatus, Stream};
use tokio::net::unix::pipe;
use tokio::runtime::Handle;
use tokio::sync::watch;

use crate::capture::StreamCapture;
use crate::cgroup::ChildCgroup;
use crate::error::SpawnError;
use crate::exit::ChildExit;
use crate::exit_watch::{ExitHint, ExitWatch, HangUpOnDrop};
use crate::kill::KillHandle;
use crate::launch::{self, Launched};
use crate::layer::RunLayer;
use crate::leaks::{self, TreeScope};
use crate::reaper::Tree;
use crate::running::{CaptureTask, Running};
use crate::spec::SandboxSpec;

/// Starts `spec.program` under the spec's limits.
///
/// Needs a tokio runtime with IO and time enabled. With
/// [`SandboxPolicy::RequireAll`], starts nothing when a requested cap cannot
/// be enforced; otherwise the missing protections are listed in
/// [`SandboxedChild::status`].
pub async fn spawn(spec: SandboxSpec) -> Result<SandboxedChild, SpawnError> {
    let runtime = Handle::try_current().map_err(|_| SpawnError::NoRuntime)?;
    let (grace, capture_limits, notice) = (spec.grace, spec.capture, spec.exit_notice);
    let talks = spec.conversation;
    let Launched {
        status,
        cgroup,
        pid,
        stdin,
        stdout,
        stderr,
        started,
        placeholders,
        after_exit,
        layer,
    } = launch::launch(spec).await?;
    let stdout_inode = stdout.as_ref().and_then(inode).unwrap_or(0);
    let stderr_inode = stderr.as_ref().and_then(inode).unwrap_or(0);
    // process_group(0) made the leader's pid its group id.
    let pgid = i32::try_from(pid).unwrap_or(0);
    let scope = TreeScope {
        leader: pid,
        pgid,
        // Read by the cleanup, off the caller's path.
        leader_start: 0,
        pipe_inodes: vec![stdout_inode, stderr_inode],
    };
    leaks::register(&scope);
    let killer = KillHandle::new(
        pgid,
        cgroup.as_ref().map(ChildCgroup::members),
        grace,
        runtime.clone(),
    );
    let exit = ExitWatch::new(pid, notice);
    let hint = exit.hint();
    let (stop, stop_rx) = watch::channel(false);
    let mut guard = Running {
        started,
        exit: Some(exit),
        tree: Some(Tree {
            scope,
            cgroup,
            killer: killer.clone(),
            placeholders,
            after_exit,
        }),
        stdout: None,
        stderr: None,
        stop,
        killer: killer.clone(),
        finished: false,
    };
    // On error the guard's Drop kills the tree and has it cleaned up.
    let capture = |fd: Option<OwnedFd>, stream, hard_bytes, inode| {
        let fd = fd.ok_or_else(|| std::io::Error::other("the pipe was not created"))?;
        let receiver = pipe::Receiver::from_owned_fd(fd)?;
        let eof = Arc::new(AtomicBool::new(false));
        let task = StreamCapture {
            stream,
            hard_bytes,
            keep_head: capture_limits.keep_head_bytes,
            keep_tail: capture_limits.keep_tail_bytes,
            killer: killer.clone(),
            eof: Arc::clone(&eof),
            _hang_up: HangUpOnDrop(hint.clone()),
        };
        Ok::<_, std::io::Error>(CaptureTask {
            handle: runtime.spawn(task.run(receiver, stop_rx.clone())),
            result: None,
            eof,
            inode,
        })
    };
    let conversation = if talks {
        let (Some(to_child), Some(from_child)) = (stdin, stdout) else {
            return Err(setup_error(
                "the conversation pipes",
                std::io::Error::other("the pipe was not created"),
            ));
        };
        Some(Conversation {
            to_child,
            from_child,
        })
    } else {
        guard.stdout = Some(
            capture(
                stdout,
                Stream::Stdout,
                capture_limits.stdout_hard_bytes,
                stdout_inode,
            )
            .map_err(|e| setup_error("the stdout pipe", e))?,
        );
        None
    };
    guard.stderr = Some(
        capture(
            stderr,
            Stream::Stderr,
            capture_limits.stderr_hard_bytes,
            stderr_inode,
        )
        .map_err(|e| setup_error("the stderr pipe", e))?,
    );
    Ok(SandboxedChild {
        pid,
        status,
        killer,
        hint,
        layer,
        conversation,
        run: guard,
    })
}

/// Our ends of a child's stdin and stdout ([`crate::SandboxSpec::conversation`]).
/// Closing `to_child` is the child's end of input; `from_child` reads what
/// it writes, unbounded: the reader caps what it keeps.
#[derive(Debug)]
pub struct Conversation {
    /// The write end of the child's stdin.
    pub to_child: OwnedFd,
    /// The read end of the child's stdout.
    pub from_child: OwnedFd,
}

/// A running sandboxed child. Dropping it kills and reaps the whole tree.
#[derive(Debug)]
pub struct SandboxedChild {
    pid: u32,
    status: SandboxStatus,
    killer: KillHandle,
    hint: ExitHint,
    layer: Option<RunLayer>,
    conversation: Option<Conversation>,
    run: Running,
}

impl SandboxedChild {
    /// The leader's pid (also its process-group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Which protections are in force and which are not (with why).
    pub fn status(&self) -> &SandboxStatus {
        &self.status
    }

    /// A handle to terminate or kill the tree from anywhere.
    pub fn killer(&self) -> KillHandle {
        self.killer.clone()
    }

    /// Tells the wait that the leader has probably exited, for a child
    /// whose exit is noticed [`crate::ExitNotice::AfterHangUp`]; no effect
    /// otherwise.
    pub fn exit_hint(&self) -> ExitHint {
        self.hint.clone()
    }

    /// The workspace layer the child entered ([`crate::SandboxSpec::layer`]),
    /// once: its descriptors keep the layer alive after the child is gone.
    pub fn take_layer(&mut self) -> Option<RunLayer> {
        self.layer.take()
    }

    /// Our ends of the child's stdin and stdout, once, when the spec asked
    /// for a conversation.
    pub fn take_conversation(&mut self) -> Option<Conversation> {
        self.conversation.take()
    }

    /// Resolves once the leader has exited, the tree is dead and reaped, and
    /// the pipes are drained or closed. Descendants still alive (or holding
    /// the pipes) [`crate::PIPE_DRAIN_WINDOW`] after the leader exited are killed and
    /// reported. Never times out by itself: deadlines are the caller's, via
    /// [`Self::killer`].
    pub async fn wait(self) -> ChildExit {
        let SandboxedChild { mut run, .. } = self;
        run.wait().await
    }
}

fn inode(fd: &OwnedFd) -> Option<u64> {
    let file = std::fs::File::from(fd.try_clone().ok()?);
    file.metadata().ok().map(|m| m.ino())
}

fn setup_error(what: &'static str, source: std::io::Error) -> SpawnError {
    SpawnError::Setup { what, source }
}

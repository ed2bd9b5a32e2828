//! Spawn to the worker's `Hello`: the real `subagent-worker` started the way
//! the supervisor starts it (its default limits, cgroup included), timed
//! from the spawn call to the first protocol frame read on our end of the
//! socket. Beside it, a bare fork/exec+wait of a statically linked no-op
//! compiled here with the system C compiler: the least any child costs.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use subagent_protocol::frame::{FrameReader, MaxPayload};
use subagent_protocol::{FromWorker, Limits};
use subagent_sandbox::{ResourceLimits, SandboxSpec};

use crate::context::BenchContext;
use crate::report::{Row, Target};
use crate::timing::{ms, time_n};

/// The static no-op, built into `dir`.
fn static_noop(dir: &Path) -> Result<std::path::PathBuf> {
    let source = dir.join("noop.c");
    std::fs::write(&source, "int main(void) { return 0; }\n")?;
    let binary = dir.join("noop");
    let status = Command::new("cc")
        .args(["-O2", "-static", "-o"])
        .arg(&binary)
        .arg(&source)
        .status()
        .context("run cc (the static no-op baseline needs a C compiler and static libc: apt-get install gcc libc6-dev)")?;
    if !status.success() {
        bail!("cc -static failed: install gcc and libc6-dev");
    }
    Ok(binary)
}

pub fn run(cx: &BenchContext, rt: &tokio::runtime::Runtime) -> Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    let noop = static_noop(dir.path())?;
    let bare = Row::timed(
        "spawn.bare_static_noop",
        "baseline: fork/exec+wait of a static no-op (std::process)",
        "ms",
        &time_n(cx.iterations, 10, || {
            let status = Command::new(&noop).stdin(Stdio::null()).status()?;
            if !status.success() {
                bail!("the no-op failed");
            }
            Ok(())
        })?,
    );
    let worker = cx.binary("subagent-worker")?;
    let mut samples = Vec::with_capacity(cx.iterations);
    for i in 0..cx.iterations + 10 {
        let took = rt.block_on(spawn_to_hello(&worker))?;
        if i >= 10 {
            samples.push(took);
        }
    }
    let hello = Row::timed(
        "spawn.hello",
        "spawn of subagent-worker (default limits, cgroup) to its Hello frame",
        "ms",
        &samples,
    )
    .against_row(&bare)
    .target(Target::AtMost(1.5));
    Ok(vec![bare, hello])
}

/// One spawn, timed to the decoded `Hello`; then our end is closed, the
/// worker sees its supervisor gone and exits, and its end is waited for
/// untimed.
async fn spawn_to_hello(worker: &Path) -> Result<f64> {
    let (ours, theirs) = UnixStream::pair()?;
    let mut spec = SandboxSpec::new(worker, "/");
    spec.env = subagent_sandbox::allowlisted_env(subagent_sandbox::DEFAULT_ENV_ALLOWLIST);
    spec.env.push(("SUBAGENT_PROTOCOL_FD".into(), "3".into()));
    spec.protocol_fd = Some(OwnedFd::from(theirs));
    spec.limits = ResourceLimits::from_limits(&Limits::default());
    let started = Instant::now();
    let child = subagent_sandbox::spawn(spec).await?;
    let read = tokio::task::spawn_blocking(move || {
        let mut reader = FrameReader::new(&ours, MaxPayload::default());
        let first = reader.read::<FromWorker>();
        let took = ms(started.elapsed());
        drop(ours);
        first.map(|frame| (frame, took))
    })
    .await?;
    let exit = child.wait().await;
    match read {
        Ok((Some(FromWorker::Hello(_)), took)) => Ok(took),
        other => bail!(
            "expected the worker's Hello, got {other:?} (the worker ended {:?})",
            exit.termination
        ),
    }
}

//! The `kill` group: kill precision. A tree whose every process ignores
//! SIGTERM is terminated with a short grace; the figure is how long after
//! the grace ended the whole tree was dead and reaped (`wait` returned: it
//! returns only then) and every pid of it gone from `/proc`.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use subagent_protocol::Limits;
use subagent_sandbox::{KillReason, ResourceLimits, SandboxSpec};

use crate::context::BenchContext;
use crate::report::{Row, Target};
use crate::timing::ms;

/// The grace given; short, so the iterations are quick.
const GRACE: Duration = Duration::from_millis(100);

/// Leader and two children, all ignoring SIGTERM (an ignored signal stays
/// ignored across exec); their pids go to `$1`, then `$2` is created.
const SCRIPT: &str = r#"trap "" TERM
sleep 1000 & echo $! >> "$1"
sleep 1000 & echo $! >> "$1"
echo $$ >> "$1"
: > "$2"
wait"#;

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let iterations = cx.iterations.clamp(10, 50);
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations + 3 {
        let pids_file = dir.path().join(format!("pids-{i}"));
        let ready = dir.path().join(format!("ready-{i}"));
        let mut spec = SandboxSpec::new("/bin/sh", dir.path());
        spec.args = vec![
            "-c".into(),
            SCRIPT.into(),
            "sh".into(),
            pids_file.clone().into(),
            ready.clone().into(),
        ];
        spec.env = subagent_sandbox::allowlisted_env(subagent_sandbox::DEFAULT_ENV_ALLOWLIST);
        spec.limits = ResourceLimits::from_limits(&Limits::default());
        spec.grace = GRACE;
        let after_grace = rt.block_on(async {
            let child = subagent_sandbox::spawn(spec).await?;
            // Set-up, not measured: the tree is complete once `ready` exists.
            let deadline = Instant::now() + Duration::from_secs(10);
            while !ready.exists() {
                if Instant::now() > deadline {
                    bail!("the tree did not start within 10 s");
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let pids: Vec<u32> = std::fs::read_to_string(&pids_file)?
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<_, _>>()
                .context("read the tree's pids")?;
            let asked = Instant::now();
            child.killer().terminate(KillReason::Cancelled);
            let exit = child.wait().await;
            let dead = Instant::now();
            if let Some(alive) = pids
                .iter()
                .find(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
            {
                bail!(
                    "pid {alive} of the tree outlived wait ({:?})",
                    exit.termination
                );
            }
            if pids.len() != 3 {
                bail!("expected 3 pids, read {pids:?}");
            }
            Ok(ms(dead.duration_since(asked)) - ms(GRACE))
        })?;
        if i >= 3 {
            samples.push(after_grace);
        }
    }
    Ok(vec![
        Row::timed(
            "kill.after_grace",
            "whole tree (3 processes ignoring SIGTERM, cgroup) dead and reaped after the grace ends",
            "ms",
            &samples,
        )
        .against("the configured grace", ms(GRACE))
        .target(Target::AtMost(50.0)),
    ])
}

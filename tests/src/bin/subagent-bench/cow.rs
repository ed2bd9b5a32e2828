//! The `cow` group: what a copy-on-write workspace costs (`--isolation
//! overlay`): a child's start with its layer against the same start
//! without, a child entering a running layer's view against a plain one
//! (an upper bound for a tool call inside it: a tool the worker forks
//! inherits the view and joins nothing), and applying 1,000 changed files.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};
use subagent_sandbox::{RunLayer, SandboxSpec, WorkspaceLayer};

use crate::context::BenchContext;
use crate::report::{Row, Target};
use crate::timing::ms;

const MIB: u64 = 1024 * 1024;

fn spec(
    program: &str,
    args: &[&str],
    ws: &Path,
    layer: Option<WorkspaceLayer>,
) -> Result<SandboxSpec> {
    let mut spec = SandboxSpec::new(program, ws);
    spec.args = args.iter().map(Into::into).collect();
    spec.env = subagent_sandbox::allowlisted_env(subagent_sandbox::DEFAULT_ENV_ALLOWLIST);
    spec.cwd_fd = Some(OwnedFd::from(std::fs::File::open(ws)?));
    spec.layer = layer;
    Ok(spec)
}

fn new_layer() -> WorkspaceLayer {
    WorkspaceLayer::New {
        bytes: 256 * MIB,
        inodes: 65_536,
        within: None,
    }
}

/// Spawns and waits for `spec`; its layer, when it had one, and how long.
async fn spawn_wait(spec: SandboxSpec) -> Result<(Option<RunLayer>, f64)> {
    let started = Instant::now();
    let mut child = subagent_sandbox::spawn(spec).await?;
    let layer = child.take_layer();
    let exit = child.wait().await;
    let took = ms(started.elapsed());
    if !exit.termination.is_success() {
        bail!("sandboxed child failed: {:?}", exit.termination);
    }
    Ok((layer, took))
}

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    if let Err(why) = &subagent_sandbox::isolation_support().namespaces {
        bail!("no user namespaces here: {why}");
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let n = cx.iterations;
    let ws = tempfile::tempdir()?;
    std::fs::write(ws.path().join("a.txt"), "a\n")?;
    let (mut plain, mut layered, mut entered, mut plain_again) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // Interleaved, one of each per round, so both see the same machine.
    for round in 0..n + 10 {
        let (_, plain_took) = rt.block_on(spawn_wait(spec("/bin/true", &[], ws.path(), None)?))?;
        let (layer, layer_took) = rt.block_on(spawn_wait(spec(
            "/bin/true",
            &[],
            ws.path(),
            Some(new_layer()),
        )?))?;
        let Some(layer) = layer else {
            bail!("the layered child came back without its layer");
        };
        let (_, again_took) = rt.block_on(spawn_wait(spec("/bin/true", &[], ws.path(), None)?))?;
        let join = WorkspaceLayer::Enter(layer.join()?);
        let (_, enter_took) =
            rt.block_on(spawn_wait(spec("/bin/true", &[], ws.path(), Some(join))?))?;
        if round >= 10 {
            plain.push(plain_took);
            layered.push(layer_took);
            plain_again.push(again_took);
            entered.push(enter_took);
        }
    }
    let base = Row::timed(
        "cow.start_plain",
        "baseline: sandbox spawn+wait /bin/true in a workspace, no layer",
        "ms",
        &plain,
    );
    let start = Row::timed(
        "cow.start_overlay",
        "sandbox spawn+wait /bin/true under a new layer (user+mount ns, capped tmpfs, overlay, descriptors back)",
        "ms",
        &layered,
    )
    .against_row(&base)
    .target(Target::OverBaselineAtMost(5.0));
    let again = Row::timed(
        "cow.enter_plain",
        "baseline: the same spawn, no layer (interleaved with the next row)",
        "ms",
        &plain_again,
    );
    let enter = Row::timed(
        "cow.enter_view",
        "sandbox spawn+wait /bin/true entering a running layer's view (setns user+mnt, own mount ns): a tool call's upper bound",
        "ms",
        &entered,
    )
    .against_row(&again)
    .target(Target::OverBaselineAtMost(1.0));

    let mut rows = vec![base, start, again, enter];
    // On memory (our cost) and on the disk temp dirs are on (the disk's).
    let shm = Path::new("/dev/shm");
    let places = [
        (shm.is_dir().then_some(shm), "memory (/dev/shm)", "shm"),
        (None, "the temp dir's disk", "disk"),
    ];
    for (parent, place, key) in places {
        let (plain, applied) = apply_samples(&rt, n.min(20), parent)?;
        let plain = Row::timed(
            &format!("cow.create_1000_{key}"),
            &format!("baseline: create, write and rename 1,000 new files with std::fs, on {place}"),
            "ms",
            &plain,
        );
        let mut apply = Row::timed(
            &format!("cow.apply_1000_{key}"),
            &format!(
                "collect, judge and apply a layer's 1,000 new files (temp file + rename each), on {place}"
            ),
            "ms",
            &applied,
        )
        .against_row(&plain);
        if key == "shm" {
            apply = apply.target(Target::AtMost(200.0));
        }
        rows.push(plain);
        rows.push(apply);
    }
    Ok(rows)
}

/// Plain std::fs creation of 1,000 files and the settlement of a layer of
/// 1,000 new files, each into a fresh directory under `parent` (the temp
/// dir when `None`), interleaved.
fn apply_samples(
    rt: &tokio::runtime::Runtime,
    rounds: usize,
    parent: Option<&Path>,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let fresh = || match parent {
        Some(p) => tempfile::tempdir_in(p),
        None => tempfile::tempdir(),
    };
    let sessions = tempfile::tempdir()?;
    let (mut plain_ms, mut apply_ms) = (Vec::new(), Vec::new());
    for round in 0..rounds + 2 {
        let plain = fresh()?;
        let began = Instant::now();
        for i in 0..1000 {
            let temp = plain.path().join(format!(".t{i}"));
            std::fs::write(&temp, format!("file {i}\n"))?;
            std::fs::rename(&temp, plain.path().join(format!("f{i}.txt")))?;
        }
        let plain_took = ms(began.elapsed());
        let target = fresh()?;
        let script = "i=0; while [ $i -lt 1000 ]; do echo \"file $i\" > f$i.txt; i=$((i+1)); done";
        let started = subagent_supervisor::layer::change_clock_now();
        let (layer, _) = rt.block_on(spawn_wait(spec(
            "/bin/sh",
            &["-c", script],
            target.path(),
            Some(new_layer()),
        )?))?;
        let Some(layer) = layer else {
            bail!("the layered child came back without its layer");
        };
        let root = std::fs::File::open(target.path())?;
        let began = Instant::now();
        let changes = subagent_supervisor::layer::settle_completed(
            &layer,
            root.as_fd(),
            target.path(),
            sessions.path(),
            &format!("bench{round}"),
            started,
        );
        let took = ms(began.elapsed());
        if changes.applied.len() != 1000 {
            bail!(
                "applied {} of 1000 files: {changes:?}",
                changes.applied.len()
            );
        }
        if round >= 2 {
            plain_ms.push(plain_took);
            apply_ms.push(took);
        }
    }
    Ok((plain_ms, apply_ms))
}

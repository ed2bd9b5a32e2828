//! The `pi` group: a subagent as pi's subagent extensions make one (a `pi`
//! process in print mode, `@mariozechner/pi-coding-agent` from npm) beside
//! ours (a sandboxed `subagent-worker` under an already running
//! supervisor), one turn each against the same llama-server, with the same
//! system prompt, no tools, temperature 0 and the same token cap. Also the
//! whole `subagent run` process beside the same pi process, for a user
//! starting either from a shell.
//!
//! Peak RSS is each process's `VmHWM`, polled while it runs (for ours, the
//! CLI's plus its worker's).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use subagent_protocol::{ProviderKind, ProviderSpec};
use subagent_supervisor::{RunRequest, Supervisor, SupervisorConfig, WorkerCommand};
use tokio_util::sync::CancellationToken;

use crate::context::BenchContext;
use crate::llama::{MAX_TOKENS, TASK, cli_run, curl, timed};
use crate::llama_server::LlamaServer;
use crate::loopback::Loopback;
use crate::report::{Row, Stats, Target};
use crate::timing::{ms, sample_n};
use crate::worker_rss::children_running;

const SYSTEM_PROMPT: &str = "You are a helpful assistant. Answer briefly.";

/// Polls the peak RSS of the processes `pids()` names until `done`.
struct PeakPoller {
    done: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<()>,
}

impl PeakPoller {
    /// A poller when `watch`, else none.
    fn start_if(watch: bool, pids: impl Fn() -> Vec<u32> + Send + 'static) -> Option<Self> {
        watch.then(|| Self::start(pids))
    }

    fn start(pids: impl Fn() -> Vec<u32> + Send + 'static) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let thread = {
            let (done, peak) = (Arc::clone(&done), Arc::clone(&peak));
            std::thread::spawn(move || {
                while !done.load(Ordering::SeqCst) {
                    let sum: u64 = pids()
                        .into_iter()
                        .filter_map(subagent_sandbox::peak_rss_since_exec)
                        .sum();
                    peak.fetch_max(sum, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_micros(500));
                }
            })
        };
        Self { done, peak, thread }
    }

    /// MiB.
    fn stop(self) -> f64 {
        self.done.store(true, Ordering::SeqCst);
        let _ = self.thread.join();
        self.peak.load(Ordering::SeqCst) as f64 / (1024.0 * 1024.0)
    }
}

/// Wall and peak-RSS samples of one kind of child. Rounds alternate: the
/// wall time is taken with no poller running (on 2 cores shared with the
/// model's two threads, polling /proc every 500 µs slowed the very turn it
/// timed), the peak RSS in the next round, with the poller.
#[derive(Default)]
struct Samples {
    wall: Vec<f64>,
    rss: Vec<f64>,
}

impl Samples {
    /// Rounds for `n` samples of each, after one warm-up round of each.
    fn rounds(n: usize) -> usize {
        2 * (n + 1)
    }

    /// Whether `round` watches memory (else it times).
    fn watching(round: usize) -> bool {
        round % 2 == 1
    }

    fn add(&mut self, round: usize, wall: f64, rss: Option<f64>) {
        if round < 2 {
            return;
        }
        match rss {
            Some(rss) => self.rss.push(rss),
            None => self.wall.push(wall),
        }
    }
}

/// One pi process in print mode: (wall ms, peak RSS MiB when `watch`).
fn pi_once(
    cx: &BenchContext,
    server: &LlamaServer,
    home: &Path,
    watch: bool,
) -> Result<(f64, Option<f64>)> {
    let script = cx.external("SUBAGENT_BENCH_PI")?;
    let agent_dir = home.join("agent");
    std::fs::create_dir_all(&agent_dir)?;
    let models = serde_json::json!({"providers": {"local": {
        "baseUrl": server.base_url(),
        "api": "openai-completions",
        "apiKey": "none",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "smollm2", "maxTokens": MAX_TOKENS.parse::<u32>()?}],
    }}});
    std::fs::write(agent_dir.join("models.json"), models.to_string())?;
    let started = Instant::now();
    let mut child = Command::new("node")
        .arg(script)
        .args(["-p", "--provider", "local", "--model", "smollm2"])
        .args(["--system-prompt", SYSTEM_PROMPT])
        .args([
            "--no-session",
            "--no-tools",
            "--no-extensions",
            "--no-skills",
        ])
        .args(["--no-context-files", "--no-prompt-templates", "--offline"])
        .arg(TASK)
        .current_dir(home)
        .env("HOME", home)
        .env("PI_CODING_AGENT_DIR", &agent_dir)
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id();
    let poller = PeakPoller::start_if(watch, move || vec![pid]);
    let status = child.wait()?;
    let wall = ms(started.elapsed());
    let peak = poller.map(PeakPoller::stop);
    if !status.success() {
        bail!("pi failed ({status}); check that it can reach the llama-server");
    }
    Ok((wall, peak))
}

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let server = LlamaServer::start(cx)?;
    let dir = tempfile::tempdir()?;
    let n = cx.iterations.clamp(3, 10);

    let mut pi = Samples::default();
    for round in 0..Samples::rounds(n) {
        let (wall, rss) = pi_once(cx, &server, dir.path(), Samples::watching(round))?;
        pi.add(round, wall, rss);
    }

    // Ours, per child: a supervisor already running, one worker per task.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let worker = WorkerCommand {
        program: cx.binary("subagent-worker")?,
        args: Vec::new(),
    };
    let supervisor = Supervisor::new(SupervisorConfig::new(worker, dir.path().join("sessions")));
    let provider = ProviderSpec {
        kind: ProviderKind::OpenaiChat,
        base_url: server.base_url(),
        model: "smollm2".into(),
        api_key: None,
        temperature: Some(0.0),
        max_tokens: Some(MAX_TOKENS.parse()?),
        reasoning: false,
        price: None,
    };
    let mut request = RunRequest::new("general", TASK, provider);
    request.workspace_dir = dir.path().to_owned();
    request.system_prompt = Some(SYSTEM_PROMPT.into());
    request.tools = Some(Vec::new());
    request.budget.max_turns = 1;
    // The model turn alone: our child's very request, recorded once through
    // a loopback server, sent to the same llama-server by curl. No child,
    // ours or pi's, can finish faster than this.
    let turn = model_turn_alone(cx, &rt, &supervisor, &request, &server, dir.path(), n)?;
    let mut child = Samples::default();
    for round in 0..Samples::rounds(n) {
        let poller = PeakPoller::start_if(Samples::watching(round), || {
            children_running("subagent-worker")
        });
        let started = Instant::now();
        let result = rt.block_on(supervisor.run(request.clone(), CancellationToken::new()));
        let wall = ms(started.elapsed());
        let rss = poller.map(PeakPoller::stop);
        if let Some(e) = &result.details.error {
            bail!("our one-turn child failed: {}: {}", e.code, e.message);
        }
        child.add(round, wall, rss);
    }

    // Ours, whole process from a shell.
    let mut cli = Samples::default();
    for round in 0..Samples::rounds(n) {
        let mut command = cli_run(cx, &server.base_url(), dir.path())?;
        let started = Instant::now();
        let mut process = command.spawn()?;
        let pid = process.id();
        let poller = PeakPoller::start_if(Samples::watching(round), move || {
            let mut pids = vec![pid];
            pids.extend(children_of(pid));
            pids
        });
        let status = process.wait()?;
        let wall = ms(started.elapsed());
        let rss = poller.map(PeakPoller::stop);
        if !status.success() {
            bail!("subagent run failed: {status}");
        }
        cli.add(round, wall, rss);
    }
    let (pi_wall, pi_rss) = (pi.wall, pi.rss);
    let (child_wall, child_rss) = (child.wall, child.rss);
    let (cli_wall, cli_rss) = (cli.wall, cli.rss);

    let pi_wall_m = Stats::of(&pi_wall).median;
    let pi_rss_m = Stats::of(&pi_rss).median;
    let name_pi = "a pi child, print mode (node)";
    let turn_m = Stats::of(&turn).median;
    let child_m = Stats::of(&child_wall).median;
    Ok(vec![
        Row::timed("pi.pi_wall", "baseline: a pi child, print mode, one turn (wall)", "ms", &pi_wall),
        Row::timed(
            "pi.turn_alone",
            "the model turn alone: our child's request sent by curl (whole process); ratio = turn/pi, the best any child could reach",
            "ms",
            &turn,
        )
        .against(name_pi, pi_wall_m),
        Row::timed("pi.pi_rss", "baseline: a pi child, print mode, peak RSS", "MiB", &pi_rss),
        Row::timed(
            "pi.child_wall",
            "our child, one turn (sandboxed worker under a running supervisor), wall; ratio = ours/pi",
            "ms",
            &child_wall,
        )
        .against(name_pi, pi_wall_m)
        .target(Target::RatioAtMost(1.0 / 20.0))
        .note(format!(
            "{:.1}x faster than a pi child, {:+.1} ms over the turn alone; the turn bounds the ratio: a child that cost nothing would be {:.1}x faster (pi.turn_alone)",
            pi_wall_m / child_m,
            child_m - turn_m,
            pi_wall_m / turn_m,
        )),
        Row::timed(
            "pi.child_rss",
            "our child's worker, peak RSS; ratio = ours/pi",
            "MiB",
            &child_rss,
        )
        .against(name_pi, pi_rss_m)
        .target(Target::RatioAtMost(1.0 / 15.0))
        .note(format!("{:.1}x lighter than a pi child", pi_rss_m / Stats::of(&child_rss).median)),
        Row::timed(
            "pi.cli_wall",
            "subagent run from a shell (whole process), wall; ratio = ours/pi",
            "ms",
            &cli_wall,
        )
        .against(name_pi, pi_wall_m),
        Row::timed(
            "pi.cli_rss",
            "subagent run from a shell, peak RSS of the CLI plus its worker; ratio = ours/pi",
            "MiB",
            &cli_rss,
        )
        .against(name_pi, pi_rss_m),
    ])
}

/// `n` timings of curl sending the request our child sends for `request`
/// (recorded once through a loopback server) to `server`.
fn model_turn_alone(
    cx: &BenchContext,
    rt: &tokio::runtime::Runtime,
    supervisor: &Supervisor,
    request: &RunRequest,
    server: &LlamaServer,
    dir: &Path,
    n: usize,
) -> Result<Vec<f64>> {
    let loopback = Loopback::start()?;
    let mut recording = request.clone();
    recording.provider.base_url = loopback.base_url();
    let result = rt.block_on(supervisor.run(recording, CancellationToken::new()));
    if let Some(e) = &result.details.error {
        bail!(
            "recording our child's request failed: {}: {}",
            e.code,
            e.message
        );
    }
    let path = dir.join("child-request.json");
    loopback.save_first_body(&path)?;
    sample_n(n, 1, || timed(&mut curl(cx, server, &path)?))
}

/// Children of `pid` (any of its threads).
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

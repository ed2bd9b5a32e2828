//! `subagent-bench`: the measurements behind BENCHMARKS.md, each beside the
//! baseline it is compared with. Run through `cargo xtask bench` (release
//! build). Prints a Markdown table.
//!
//! Wall-clock figures on a shared 2-core machine are noisy: every figure is
//! a distribution over many iterations (min / median / p95), after warm-up.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use subagent_protocol::frame::{FrameReader, MaxPayload, encode_frame};
use subagent_protocol::message::LogLevel;
use subagent_protocol::session::{LogLine, LogSource, SessionEntry, SessionLine};
use subagent_protocol::{
    ApiKey, FromWorker, Limits, ProviderKind, ProviderSpec, Usage, WorkerEvent,
};
use subagent_sandbox::{Isolation, ResourceLimits, SandboxSpec};
use subagent_supervisor::session::SessionWriter;
use subagent_supervisor::{RunRequest, Supervisor, SupervisorConfig, WorkerCommand};
use tokio_util::sync::CancellationToken;

struct Stats {
    name: &'static str,
    unit: &'static str,
    samples: Vec<f64>,
    baseline: &'static str,
}

impl Stats {
    fn row(&self) -> String {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        let pick = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {} | {} |",
            self.name,
            s.len(),
            pick(0.0),
            pick(0.5),
            pick(0.95),
            self.unit,
            self.baseline
        )
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn time_n(n: usize, warmup: usize, mut f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    for _ in 0..warmup {
        f()?;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f()?;
        out.push(ms(t.elapsed()));
    }
    Ok(out)
}

async fn time_n_async<F, Fut>(n: usize, warmup: usize, mut f: F) -> Result<Vec<f64>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    for _ in 0..warmup {
        f().await?;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f().await?;
        out.push(ms(t.elapsed()));
    }
    Ok(out)
}

fn fixture() -> Result<PathBuf> {
    let path = std::env::current_exe()?.with_file_name("fixture-worker");
    if !path.exists() {
        bail!(
            "{} missing: build with `cargo build --release -p subagent-tests --bins`",
            path.display()
        );
    }
    Ok(path)
}

/// Debian's interpreter: its prefix (/usr) is among the sandbox's system
/// paths, so no probe is needed.
const PYTHON: &str = "/usr/bin/python3";

fn sandbox_spec(limits: ResourceLimits) -> SandboxSpec {
    let mut spec = SandboxSpec::new("/bin/true", "/");
    spec.env = subagent_sandbox::allowlisted_env(subagent_sandbox::DEFAULT_ENV_ALLOWLIST);
    spec.limits = limits;
    spec
}

fn main() -> Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(200);
    subagent_sandbox::become_subreaper().context("become subreaper")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut rows = Vec::new();

    rows.push(Stats {
        name: "fork/exec /bin/true (std::process)",
        unit: "ms",
        baseline: "baseline",
        samples: time_n(n, 10, || {
            let status = Command::new("/bin/true").stdin(Stdio::null()).status()?;
            if !status.success() {
                bail!("/bin/true failed");
            }
            Ok(())
        })?,
    });

    let no_cgroup = ResourceLimits {
        memory_bytes: None,
        pids: None,
        ..ResourceLimits::from_limits(&Limits::default())
    };
    rows.push(Stats {
        name: "sandbox spawn+wait /bin/true, rlimits only",
        unit: "ms",
        baseline: "vs fork/exec /bin/true",
        samples: rt.block_on(time_n_async(n, 10, || async {
            let child = subagent_sandbox::spawn(sandbox_spec(no_cgroup)).await?;
            let exit = child.wait().await;
            if !exit.termination.is_success() {
                bail!("sandboxed /bin/true failed: {:?}", exit.termination);
            }
            Ok(())
        }))?,
    });

    if subagent_sandbox::cgroup_support().is_ok() {
        let full = ResourceLimits::from_limits(&Limits::default());
        rows.push(Stats {
            name: "sandbox spawn+wait /bin/true, rlimits + cgroup memory/pids",
            unit: "ms",
            baseline: "vs fork/exec /bin/true",
            samples: rt.block_on(time_n_async(n, 10, || async {
                let child = subagent_sandbox::spawn(sandbox_spec(full)).await?;
                let exit = child.wait().await;
                if !exit.termination.is_success() {
                    bail!("sandboxed /bin/true failed: {:?}", exit.termination);
                }
                Ok(())
            }))?,
        });
    }

    if subagent_sandbox::isolation_support().namespaces.is_ok() {
        let scratch = tempfile::tempdir()?;
        let strict = Isolation::strict(vec![scratch.path().to_owned()]);
        let mut with_network = strict.clone();
        with_network.network = true;
        let tool_limits = ResourceLimits {
            memory_bytes: Some(1 << 30),
            pids: Some(64),
            ..no_cgroup
        };
        for (name, isolation, limits) in [
            (
                "tool sandbox spawn+wait /bin/true: namespaces incl. network, Landlock, seccomp, no caps",
                strict.clone(),
                no_cgroup,
            ),
            (
                "  same, network on (no network namespace)",
                with_network,
                no_cgroup,
            ),
            (
                "  same as python_execute: network off, cgroup memory/pids",
                strict.clone(),
                tool_limits,
            ),
        ] {
            rows.push(Stats {
                name,
                unit: "ms",
                baseline: "vs fork/exec /bin/true; bwrap --unshare-all /bin/true: ~12 ms (DESIGN)",
                samples: rt.block_on(time_n_async(n, 10, || {
                    let mut spec = sandbox_spec(limits);
                    spec.isolation = Some(isolation.clone());
                    async move {
                        let child = subagent_sandbox::spawn(spec).await?;
                        let exit = child.wait().await;
                        if !exit.termination.is_success() {
                            bail!("isolated /bin/true failed: {:?}", exit.termination);
                        }
                        Ok(())
                    }
                }))?,
            });
        }
        let python_n = n.min(50);
        rows.push(Stats {
            name: "python3 -c pass, bare (std::process)",
            unit: "ms",
            baseline: "baseline",
            samples: time_n(python_n, 3, || {
                let status = Command::new(PYTHON)
                    .args(["-c", "pass"])
                    .stdin(Stdio::null())
                    .status()?;
                if !status.success() {
                    bail!("python3 failed");
                }
                Ok(())
            })?,
        });
        rows.push(Stats {
            name: "python3 -c pass in the tool sandbox (as python_execute)",
            unit: "ms",
            baseline: "vs bare python3 above",
            samples: rt.block_on(time_n_async(python_n, 3, || {
                let mut spec = sandbox_spec(tool_limits);
                spec.program = PYTHON.into();
                spec.args = vec!["-c".into(), "pass".into()];
                spec.isolation = Some(strict.clone());
                async move {
                    let child = subagent_sandbox::spawn(spec).await?;
                    let exit = child.wait().await;
                    if !exit.termination.is_success() {
                        bail!("isolated python3 failed: {:?}", exit.termination);
                    }
                    Ok(())
                }
            }))?,
        });
    }

    let dir = tempfile::tempdir()?;
    let worker = WorkerCommand {
        program: fixture()?,
        args: vec!["success".into(), "bench".into()],
    };
    let supervisor = Supervisor::new(SupervisorConfig::new(worker, dir.path().join("sessions")));
    let provider = ProviderSpec {
        kind: ProviderKind::OpenaiChat,
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "bench".into(),
        api_key: Some(ApiKey::new("sk-bench-abcdefghijklmnopqrstuvwxyz")),
        temperature: None,
        max_tokens: None,
        reasoning: false,
        price: None,
    };
    let request = RunRequest::new("general", "bench task", provider);
    rows.push(Stats {
        name: "supervisor run: spawn, handshake, 6 events, Done, session file (2 fsyncs), result",
        unit: "ms",
        baseline: "vs fork/exec /bin/true",
        samples: rt.block_on(time_n_async(n, 10, || async {
            let result = supervisor
                .run(request.clone(), CancellationToken::new())
                .await;
            if let Some(e) = &result.details.error {
                bail!("run failed: {}: {}", e.code, e.message);
            }
            Ok(())
        }))?,
    });

    // Codec: one typical event frame, encode + decode, per 10k frames.
    let event = FromWorker::Event(WorkerEvent::Usage {
        turn: 3,
        usage: Usage {
            input: 1234,
            output: 567,
            turns: 1,
            ..Usage::default()
        },
    });
    let text = FromWorker::Event(WorkerEvent::TextDelta {
        text: "The quick brown fox jumps over the lazy dog. ".repeat(4),
    });
    for (name, msg) in [
        ("frame encode+decode, usage event, 10k frames", event),
        ("frame encode+decode, 180-byte text delta, 10k frames", text),
    ] {
        let samples = time_n(50, 5, || {
            let mut buf = Vec::new();
            for _ in 0..10_000 {
                buf.extend_from_slice(&encode_frame(&msg, MaxPayload::default())?);
            }
            let mut reader = FrameReader::new(buf.as_slice(), MaxPayload::default());
            let mut count = 0;
            while let Some(m) = reader.read::<FromWorker>()? {
                std::hint::black_box(m);
                count += 1;
            }
            if count != 10_000 {
                bail!("decoded {count} frames");
            }
            Ok(())
        })?;
        let json_baseline = time_n(50, 5, || {
            let mut buf = Vec::new();
            for _ in 0..10_000 {
                serde_json::to_writer(&mut buf, &format!("{msg:?}"))?;
                buf.push(b'\n');
            }
            std::hint::black_box(buf);
            Ok(())
        })?;
        rows.push(Stats {
            name,
            unit: "ms",
            baseline: "bincode frames",
            samples,
        });
        rows.push(Stats {
            name: "  baseline: serde_json encode of the Debug string, 10k",
            unit: "ms",
            baseline: "baseline (encode only)",
            samples: json_baseline,
        });
    }

    // Session writer: lines per batch of 1,000 (flush per line, no fsync).
    let sdir = tempfile::tempdir()?;
    let mut k = 0;
    rows.push(Stats {
        name: "session writer: 1,000 log lines, flushed per line",
        unit: "ms",
        baseline: "vs raw write_all below",
        samples: rt.block_on(time_n_async(30, 3, || {
            k += 1;
            let path = sdir.path().join(format!("w{k}.jsonl"));
            async move {
                let w = SessionWriter::create(&path)?;
                for i in 0..1000 {
                    w.append(SessionLine::now(SessionEntry::Log(LogLine {
                        level: LogLevel::Info,
                        source: LogSource::Supervisor,
                        message: format!("line {i}"),
                    })))
                    .await?;
                }
                w.close().await?;
                Ok(())
            }
        }))?,
    });
    let mut j = 0;
    rows.push(Stats {
        name: "  baseline: 1,000 pre-serialized lines, write_all+flush each",
        unit: "ms",
        baseline: "baseline",
        samples: time_n(30, 3, || {
            j += 1;
            let mut f = std::fs::File::create(sdir.path().join(format!("r{j}.jsonl")))?;
            for i in 0..1000 {
                f.write_all(format!("{{\"type\":\"log\",\"message\":\"line {i}\"}}\n").as_bytes())?;
                f.flush()?;
            }
            Ok(())
        })?,
    });

    println!("| measurement | n | min | median | p95 | unit | compared with |");
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        println!("{}", r.row());
    }
    Ok(())
}

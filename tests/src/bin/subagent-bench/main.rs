//! `subagent-bench`: the measurements behind BENCHMARKS.md, each beside the
//! baseline it is compared with and the target it must meet. Run through
//! `cargo xtask bench` (release build; it also installs what the external
//! comparisons need and passes their paths in the environment).
//!
//! Usage: `subagent-bench [--iterations N] [--json PATH] [--only GROUP,..]`.
//! Groups: spawn, micro, live, cow, frames, kill, llama, scale, pi. Exit status 0 when every
//! row with a target met it, 1 when one missed, 2 when a row could not run.
//!
//! Wall-clock figures on a shared 2-core machine are noisy: every timed
//! figure is a distribution over many iterations (min / median / p95),
//! after warm-up, and the median is the one judged.

mod acting;
mod bwrap;
mod context;
mod cow;
mod frames;
mod hello;
mod kill;
mod live;
mod llama;
mod llama_batch;
mod llama_server;
mod loopback;
mod mcp;
mod micro;
mod network;
mod pi;
mod report;
mod scale;
mod spawn;
mod telemetry;
mod timing;
mod worker_private;
mod worker_rss;

use anyhow::{Context as _, Result, bail};

use context::BenchContext;
use report::Row;

/// The groups, in the order they run: cheap and precise first.
const GROUPS: &[&str] = &[
    "spawn",
    "micro",
    "live",
    "telemetry",
    "tools",
    "mcp",
    "cow",
    "frames",
    "kill",
    "llama",
    "scale",
    "pi",
];

struct Args {
    iterations: usize,
    json: Option<std::path::PathBuf>,
    only: Vec<String>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        iterations: 200,
        json: None,
        only: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .with_context(|| format!("{flag} needs a value; see the usage in --help"))
        };
        match arg.as_str() {
            "--iterations" => args.iterations = value("--iterations")?.parse()?,
            "--json" => args.json = Some(value("--json")?.into()),
            "--only" => {
                args.only = value("--only")?
                    .split(',')
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .map(str::to_owned)
                    .collect();
                if let Some(unknown) = args.only.iter().find(|g| !GROUPS.contains(&g.as_str())) {
                    bail!(
                        "unknown group {unknown:?}; the groups are {}",
                        GROUPS.join(", ")
                    );
                }
            }
            "-h" | "--help" => {
                println!(
                    "usage: subagent-bench [--iterations N] [--json PATH] [--only GROUP,..]\ngroups: {}",
                    GROUPS.join(", ")
                );
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}; try --help"),
        }
    }
    Ok(args)
}

fn main() -> Result<()> {
    let args = parse_args()?;
    subagent_sandbox::become_subreaper().context("become subreaper")?;
    // The scale group's loopback model holds a socket per live worker.
    subagent_sandbox::raise_open_files_limit().context("raise the open-files limit")?;
    let cx = BenchContext::from_env(args.iterations)?;
    let mut rows: Vec<Row> = Vec::new();
    let mut broken: Vec<String> = Vec::new();
    for group in GROUPS {
        if !args.only.is_empty() && !args.only.iter().any(|g| g == group) {
            continue;
        }
        eprintln!("bench: {group}");
        let result = match *group {
            "spawn" => spawn::run(&cx),
            "micro" => micro::run(&cx),
            "live" => live::run(&cx),
            "tools" => acting::run(&cx),
            "mcp" => mcp::run(&cx),
            "cow" => cow::run(&cx),
            "frames" => frames::run(&cx),
            "kill" => kill::run(&cx),
            // One slot, then four (the saturation row): two servers in turn.
            "llama" => llama::run(&cx).and_then(|mut rows| {
                rows.extend(llama_batch::run(&cx)?);
                Ok(rows)
            }),
            "pi" => pi::run(&cx),
            "scale" => scale::run(&cx),
            "telemetry" => telemetry::run(&cx),
            _ => Ok(Vec::new()),
        };
        match result {
            Ok(mut group_rows) => rows.append(&mut group_rows),
            Err(e) => {
                eprintln!("bench: group {group} could not run: {e:#}");
                broken.push(format!("{group}: {e:#}"));
            }
        }
    }
    report::print_table(&rows);
    if let Some(path) = &args.json {
        let mut doc = report::json_report(&cx.machine, &rows);
        doc["broken"] = serde_json::json!(broken);
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)
            .with_context(|| format!("write {}", path.display()))?;
        eprintln!("bench: wrote {}", path.display());
    }
    if !broken.is_empty() {
        eprintln!("bench: {} group(s) could not run:", broken.len());
        for b in &broken {
            eprintln!("  {b}");
        }
        std::process::exit(2);
    }
    if rows.iter().any(|r| r.verdict() == Some(false)) {
        std::process::exit(1);
    }
    Ok(())
}

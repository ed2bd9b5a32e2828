//! `cargo xtask bench`: builds the release binaries, makes sure every tool
//! a comparison needs is there (the local model, curl, a C compiler, pi
//! from npm, installed into the cache like the model), and runs
//! `subagent-bench`, which prints each figure beside its baseline and
//! target. The method and a recorded run are in BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::cache::Entry;
use crate::{cmd, deps, local_model, paths};

/// pi, the harness whose subagent extensions the `pi` group compares with.
const PI_PACKAGE: &str = "@mariozechner/pi-coding-agent";
/// Pinned, so two runs compare the same pi.
const PI_VERSION: &str = "0.73.1";

/// What `cargo xtask bench` was asked for.
pub struct BenchArgs {
    pub iterations: u32,
    pub json: Option<PathBuf>,
    pub only: Option<String>,
    pub policy: deps::Policy,
}

/// Builds, installs what is missing, runs the benchmarks.
pub fn run(args: BenchArgs) -> Result<()> {
    let root = paths::repo_root();
    cmd::run(cmd::cargo().current_dir(&root).args([
        "build",
        "--release",
        "--workspace",
        "--bins",
    ]))?;
    let groups = args.only.clone().unwrap_or_default();
    let wants = |group: &str| groups.is_empty() || groups.split(',').any(|g| g.trim() == group);
    let mut tools = vec![deps::CC];
    if wants("spawn") {
        tools.push(deps::BWRAP);
        tools.push(deps::SLIRP4NETNS);
        tools.push(deps::PASTA);
    }
    if wants("llama") || wants("pi") {
        tools.push(deps::CURL);
    }
    if wants("pi") {
        tools.push(deps::NPM);
    }
    deps::ensure(&tools, args.policy)?;
    let bench = paths::target_dir(&root)?.join("release/subagent-bench");
    let mut command = Command::new(&bench);
    command.args(["--iterations", &args.iterations.to_string()]);
    if let Some(json) = &args.json {
        command.arg("--json").arg(json);
    }
    if let Some(only) = &args.only {
        command.args(["--only", only]);
    }
    if wants("llama") || wants("pi") {
        let model = local_model::ensure(args.policy)?;
        command
            .env("SUBAGENT_LLAMA_SERVER", &model.server)
            .env("SUBAGENT_LLAMA_MODEL", &model.model)
            .env("SUBAGENT_BENCH_CURL", which("curl")?);
    }
    if wants("pi") {
        command.env("SUBAGENT_BENCH_PI", install_pi()?);
    }
    println!("machine: {}", machine()?);
    let status = command
        .status()
        .with_context(|| format!("run {}", bench.display()))?;
    ending(status.code()).with_context(|| format!("subagent-bench ended: {status}"))
}

/// Exit status of `subagent-bench` (and of `cargo xtask bench`) when a
/// group could not run.
pub const GROUP_COULD_NOT_RUN: u8 = 2;

/// A group of `subagent-bench` could not run: `cargo xtask bench` exits
/// [`GROUP_COULD_NOT_RUN`] like it, not 1, so a caller can tell a missing
/// measurement from a missed target (BENCHMARKS.md says so).
#[derive(Debug)]
pub struct GroupCouldNotRun;

impl std::fmt::Display for GroupCouldNotRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a benchmark group could not run; its reason is printed above")
    }
}

impl std::error::Error for GroupCouldNotRun {}

/// What `subagent-bench`'s exit code means for `cargo xtask bench`.
fn ending(code: Option<i32>) -> Result<()> {
    match code {
        Some(0) => Ok(()),
        Some(1) => bail!(
            "a benchmark missed its target (FAIL rows above); BENCHMARKS.md says what bounds each"
        ),
        Some(2) => Err(GroupCouldNotRun.into()),
        _ => bail!("subagent-bench did not run to the end; see its messages above"),
    }
}

/// `cargo xtask`'s exit status for an error: [`GROUP_COULD_NOT_RUN`] when a
/// benchmark group could not run, else 1.
pub fn exit_code(error: &anyhow::Error) -> u8 {
    if error.chain().any(|e| e.is::<GroupCouldNotRun>()) {
        GROUP_COULD_NOT_RUN
    } else {
        1
    }
}

/// pi installed with npm into the cache (once per version); its entry
/// script, run with node.
fn install_pi() -> Result<PathBuf> {
    let entry = Entry::new(&paths::cache_root()?, format!("pi-{PI_VERSION}"));
    let dir = entry.get_or_fill(|dir: &Path| {
        cmd::run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(dir)
                .arg(format!("{PI_PACKAGE}@{PI_VERSION}")),
        )
    })?;
    let script = dir.join("node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
    if !script.exists() {
        bail!(
            "{} missing after installing pi; remove {} and run again",
            script.display(),
            dir.display()
        );
    }
    Ok(script)
}

fn which(program: &str) -> Result<PathBuf> {
    let path = cmd::stdout_of(Command::new("sh").args(["-c", &format!("command -v {program}")]))?;
    Ok(PathBuf::from(path.trim()))
}

/// CPU model, core count and kernel, for the record.
fn machine() -> Result<String> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = cmd::stdout_of(Command::new("uname").arg("-r"))?;
    Ok(format!("{model}, {cores} cores, Linux {}", kernel.trim()))
}

#[cfg(test)]
#[path = "bench_tests.rs"]
mod tests;

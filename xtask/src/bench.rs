//! `cargo xtask bench`: builds the release binaries and runs
//! `subagent-bench`, which prints each measurement beside its baseline
//! (e.g. sandboxed spawn vs bare fork/exec of /bin/true). The method and a
//! recorded run are in BENCHMARKS.md.

use std::process::Command;

use anyhow::{Context, Result};

use crate::cmd;

/// Builds release binaries, prints the machine, runs the benchmarks.
pub fn run(iterations: u32) -> Result<()> {
    let root = crate::paths::repo_root();
    cmd::run(cmd::cargo().current_dir(&root).args([
        "build",
        "--release",
        "-p",
        "subagent-tests",
        "--bins",
    ]))?;
    println!("machine: {}", machine()?);
    let bench = crate::paths::target_dir(&root)?.join("release/subagent-bench");
    cmd::run(Command::new(&bench).arg(iterations.to_string()))
        .with_context(|| format!("run {}", bench.display()))
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

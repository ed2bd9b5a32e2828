//! The local model's smoke test: the server starts on this machine and
//! completes 4 tokens. It runs right after a build, and the first time a
//! cached build is used on a machine (a cache may travel: CI reuses caches
//! between machines); a record per machine in the cache entry says it
//! passed there, so later runs start at once.
//!
//! A machine is its CPU (what cpuid says) and its kernel (what it enables):
//! the two things that decide whether the binary's instructions may run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::llama_server::RunningServer;

/// Tokens the smoke test asks for.
const SMOKE_TOKENS: u32 = 4;

/// `/proc/cpuinfo` keys that say what the CPU is and can do (x86 and arm),
/// leaving out what changes from one reading to the next (clock, ids).
const CPU_IDENTITY_KEYS: &[&str] = &[
    "vendor_id",
    "cpu family",
    "model",
    "model name",
    "stepping",
    "flags",
    "Features",
    "CPU implementer",
    "CPU architecture",
    "CPU variant",
    "CPU part",
    "CPU revision",
];

/// The identity lines of the first processor in `cpuinfo`, in order.
pub fn cpu_identity(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            CPU_IDENTITY_KEYS
                .contains(&key.trim())
                .then(|| format!("{}: {}\n", key.trim(), value.trim()))
        })
        .collect()
}

/// 64-bit FNV-1a: a stable hash (std's is not stable across releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// This machine as the smoke test sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// The CPU's identity lines.
    cpu: String,
    /// The kernel's release.
    kernel: String,
}

impl Machine {
    /// This machine; unreadable files count as empty (the key then still
    /// differs from any machine that could read them).
    pub fn this() -> Self {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        Self {
            cpu: cpu_identity(&read("/proc/cpuinfo")),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
        }
    }

    /// A short key: the same for the same CPU and kernel.
    pub fn key(&self) -> String {
        format!(
            "{:016x}",
            fnv1a(format!("{}\nkernel: {}", self.cpu, self.kernel).as_bytes())
        )
    }

    /// One line a person recognises: the CPU model and the kernel.
    pub fn describe(&self) -> String {
        let model = self
            .cpu
            .lines()
            .find_map(|line| line.strip_prefix("model name: "))
            .unwrap_or(std::env::consts::ARCH);
        format!("{model}, Linux {}", self.kernel)
    }
}

/// Where an entry records the machines its server passed on.
fn record_path(entry: &Path, machine: &Machine) -> PathBuf {
    entry
        .join("machines")
        .join(format!("{}.passed", machine.key()))
}

/// True when the server of `entry` passed its smoke test on `machine`.
pub fn passed_on(entry: &Path, machine: &Machine) -> bool {
    record_path(entry, machine).is_file()
}

/// Runs the smoke test of the server in `entry` (`server`, with `model`) on
/// this machine and records that it passed; the server's output goes to a
/// log beside the record, which an error names.
pub fn run_and_record(entry: &Path, server: &Path, model: &Path) -> Result<()> {
    let machine = Machine::this();
    let record = record_path(entry, &machine);
    let dir = record.parent().unwrap_or(entry);
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let log = dir.join(format!("{}.log", machine.key()));
    eprintln!(
        "xtask: smoke test of llama-server on this machine ({}): start, {SMOKE_TOKENS} tokens",
        machine.describe()
    );
    let started = std::time::Instant::now();
    let mut running = RunningServer::start(server, model, &log)
        .with_context(|| format!("the server's output is in {}", log.display()))?;
    let predicted = running
        .complete("The capital of France is", SMOKE_TOKENS)
        .with_context(|| format!("the server's output is in {}", log.display()))?;
    drop(running);
    eprintln!(
        "xtask: smoke test passed: {predicted} tokens in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    std::fs::write(&record, format!("{}\n", machine.describe()))
        .with_context(|| format!("record the smoke test in {}", record.display()))
}

#[cfg(test)]
#[path = "smoke_tests.rs"]
mod tests;

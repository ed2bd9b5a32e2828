//! What every group may need: the iteration count, the binaries built next
//! to this one, and the external tools `cargo xtask bench` installed (their
//! paths come in the environment; a group that needs a missing one fails
//! with a message naming the variable and what sets it).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

pub struct BenchContext {
    /// Samples per process-spawning measurement.
    pub iterations: usize,
    /// The directory of this binary: `subagent`, `subagent-worker` and
    /// `fixture-worker` of the same build sit beside it.
    pub bin_dir: PathBuf,
    /// CPU, cores, kernel.
    pub machine: String,
}

impl BenchContext {
    pub fn from_env(iterations: usize) -> Result<Self> {
        let exe = std::env::current_exe().context("find this binary")?;
        let bin_dir = exe
            .parent()
            .context("this binary has no directory")?
            .to_owned();
        Ok(Self {
            iterations,
            bin_dir,
            machine: machine(),
        })
    }

    /// A binary of this build (`subagent`, `fixture-worker`, ...).
    pub fn binary(&self, name: &str) -> Result<PathBuf> {
        let path = self.bin_dir.join(name);
        if !path.exists() {
            bail!(
                "{} missing: build with `cargo build --release --workspace --bins` (cargo xtask bench does)",
                path.display()
            );
        }
        Ok(path)
    }

    /// An external tool's path from `var`, checked to exist.
    pub fn external(&self, var: &str) -> Result<PathBuf> {
        let value = std::env::var_os(var).with_context(|| {
            format!("{var} is not set: run the benchmarks through `cargo xtask bench`, which installs the tool and sets it")
        })?;
        let path = PathBuf::from(value);
        if !Path::new(&path).exists() {
            bail!(
                "{var}={} does not exist; run `cargo xtask bench` again",
                path.display()
            );
        }
        Ok(path)
    }
}

/// CPU model, core count and kernel, for the record.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{model}, {cores} cores, Linux {}", kernel.trim())
}

/// No user or project config, no log settings, no terminal: `command` runs
/// in `dir/workspace` as a subagent command would for a script. The config
/// dir (`dir/no-config`) stays outside that workspace: subagent refuses a
/// workspace that holds a file it reads back (issue 32).
pub fn isolate(command: &mut std::process::Command, dir: &std::path::Path) {
    let workspace = dir.join("workspace");
    // A failure shows up as the command's own "cannot enter" error.
    let _ = std::fs::create_dir_all(&workspace);
    command
        .current_dir(workspace)
        .env("XDG_CONFIG_HOME", dir.join("no-config"))
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
}

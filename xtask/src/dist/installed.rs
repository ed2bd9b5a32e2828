//! What every check asks of an installed (or unpacked) `subagent`,
//! whichever package put it there: the man pages it writes, and that its
//! `doctor` finds the worker beside it. Runs the binary; changes nothing
//! outside the scratch directory it is given.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};

use crate::cmd;

/// Exit statuses of `subagent doctor`: 0 when every protection is there,
/// 7 when one is missing (crates/supervisor/src/exit_codes.rs); either
/// way the report is complete.
const DOCTOR_EXITS: [i32; 2] = [0, 7];

/// The names of the pages `subagent man --out` writes, sorted: what every
/// The CLI's binaries that are not a file in `dir`.
pub fn binaries_missing(dir: &Path) -> Vec<&'static str> {
    super::BINARIES
        .into_iter()
        .filter(|b| !dir.join(b).is_file())
        .collect()
}

/// The CLI's binaries of which anything is left in `dir`.
pub fn binaries_left(dir: &Path) -> Vec<&'static str> {
    super::BINARIES
        .into_iter()
        .filter(|b| dir.join(b).exists())
        .collect()
}

/// package must ship.
pub fn man_pages_of(subagent: &Path, scratch: &Path) -> Result<Vec<String>> {
    let out = scratch.join("expected-man-pages");
    // It prints each path it writes: not worth showing.
    cmd::stdout_of(Command::new(subagent).args(["man", "--out"]).arg(&out))?;
    let pages = super::files_ending(&out, ".1")?;
    ensure!(
        pages.iter().any(|p| p == "subagent.1"),
        "`{} man` wrote no subagent.1",
        subagent.display()
    );
    std::fs::remove_dir_all(&out).with_context(|| format!("remove {}", out.display()))?;
    Ok(pages)
}

/// Runs `subagent doctor --json` as a user would after installing (a
/// system PATH, no worker named, a home of its own in `scratch`): it must
/// exit with a documented status and find its worker beside itself.
pub fn doctor_finds_worker(which: &str, subagent: &Path, scratch: &Path) -> Result<()> {
    let worker: PathBuf = subagent.with_file_name("subagent-worker");
    let home = scratch.join("home");
    std::fs::create_dir_all(&home).with_context(|| format!("create {}", home.display()))?;
    let output = Command::new(subagent)
        .args(["doctor", "--json", "--sessions-dir"])
        .arg(scratch.join("sessions"))
        .current_dir(scratch)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SUBAGENT_WORKER")
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("start {}", subagent.display()))?;
    let code = output.status.code();
    ensure!(
        code.is_some_and(|c| DOCTOR_EXITS.contains(&c)),
        "{which} `{} doctor` exited {:?} (expected one of {DOCTOR_EXITS:?}): {}",
        subagent.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("{which} `subagent doctor --json` printed no JSON"))?;
    let probe = report["probes"]
        .as_array()
        .and_then(|probes| probes.iter().find(|p| p["name"] == "worker"))
        .with_context(|| format!("{which} doctor reported no worker probe: {report}"))?;
    let detail = probe["detail"].as_str().unwrap_or_default();
    ensure!(
        probe["ok"] == true && detail.contains(&*worker.to_string_lossy()),
        "{which} subagent must find its worker at {}; doctor says: {probe}",
        worker.display()
    );
    eprintln!(
        "xtask: {which} `subagent doctor` exited {} and found its worker at {}",
        code.unwrap_or_default(),
        worker.display()
    );
    Ok(())
}

/// Runs one `subagent run` against a provider address nothing listens on:
/// the error must be the worker's own ("model turn 1 failed", from
/// crates/worker/src/agent/run.rs), which proves the packaged `subagent`
/// started the packaged worker and spoke the protocol with it, where
/// `doctor` only sees that the file is there.
pub fn run_reaches_the_worker(which: &str, subagent: &Path, scratch: &Path) -> Result<()> {
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .context("bind a port on 127.0.0.1 to find a free one")?;
        listener.local_addr()?.port()
    };
    let workspace = scratch.join("workspace");
    std::fs::create_dir_all(&workspace)
        .with_context(|| format!("create {}", workspace.display()))?;
    let output = Command::new(subagent)
        .args(["run", "--json", "--task", "hi", "--provider", "openai-chat"])
        .args(["--model", "none", "--isolation", "none", "--timeout", "1m"])
        .arg("--base-url")
        .arg(format!("http://127.0.0.1:{closed_port}/v1"))
        .arg("--workspace")
        .arg(&workspace)
        .arg("--sessions-dir")
        .arg(scratch.join("sessions"))
        .current_dir(scratch)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", scratch.join("home"))
        .env("OPENAI_API_KEY", "not-a-key")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SUBAGENT_WORKER")
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("start {}", subagent.display()))?;
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "{which} `subagent run --json` printed no JSON: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    let error = result["details"]["results"][0]["error"]
        .as_str()
        .unwrap_or_default();
    ensure!(
        error.contains("model turn 1 failed"),
        "{which} `subagent run` did not reach its worker (the error should be the worker's \
         failed model turn): {error}"
    );
    eprintln!("xtask: {which} `subagent run` started its worker, which tried the provider");
    Ok(())
}

//! Which processes are alive, read from `/proc`: how a test proves that
//! nothing it started survived (every process-spawning test asserts it),
//! and how it finds a run's worker while the run is held.
//!
//! Reads `/proc` only: it never signals or waits for a process, so a
//! survivor fails the test instead of being cleaned up behind its back.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A live process: its pid and command line (arguments NUL-separated,
/// empty for a zombie).
#[derive(Debug)]
pub struct Process {
    pub pid: u32,
    pub cmdline: Vec<u8>,
}

impl Process {
    /// The program, as the command line's first argument names it.
    pub fn program(&self) -> &[u8] {
        self.cmdline.split(|b| *b == 0).next().unwrap_or_default()
    }

    /// `pid: cmdline`, for a failure message.
    fn describe(&self) -> String {
        format!(
            "{}: {}",
            self.pid,
            String::from_utf8_lossy(&self.cmdline).replace('\0', " ")
        )
    }
}

/// Every process of `/proc`, with its `/proc/<pid>` directory.
fn every_process() -> Vec<(Process, PathBuf)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            Some((Process { pid, cmdline }, entry.path()))
        })
        .collect()
}

/// No process whose command line carries `marker` is alive (live processes
/// show their command line; a zombie does not, so the worker leader itself is
/// checked by pid in [`assert_reaped`]).
pub fn assert_no_survivors(marker: &str) {
    let alive = survivors(marker);
    assert!(
        alive.is_empty(),
        "processes of the tree survived: {alive:#?}"
    );
}

/// The live processes whose command line carries `marker`, as "pid: cmdline".
pub fn survivors(marker: &str) -> Vec<String> {
    every_process()
        .into_iter()
        .filter(|(p, _)| String::from_utf8_lossy(&p.cmdline).contains(marker))
        .map(|(p, _)| p.describe())
        .collect()
}

/// The worker leader (pid from the session's lifecycle line) is gone: not
/// running, and not a zombie either, i.e. it was reaped.
pub fn assert_reaped(lines: &[Value]) {
    if let Some(pid) = unreaped_leader(lines) {
        panic!("worker {pid} is still in the process table (running or unreaped)");
    }
}

/// The worker leader's pid (from the session's lifecycle lines) while it is
/// still in the process table.
pub fn unreaped_leader(lines: &[Value]) -> Option<u64> {
    let pid = lines.iter().rev().find_map(|l| l["pid"].as_u64())?;
    Path::new(&format!("/proc/{pid}")).exists().then_some(pid)
}

/// No process has its working directory in `dir`: a run's worker and its
/// tool processes all do while they live (the worker carries no marker of
/// its own on its command line), so this proves none outlived the run.
pub fn assert_nothing_runs_in(dir: &Path) {
    let alive = processes_in(dir);
    assert!(
        alive.is_empty(),
        "processes of the run survived: {alive:#?}"
    );
}

/// The processes whose working directory is in `dir`, as `pid: cmdline`.
pub fn processes_in(dir: &Path) -> Vec<String> {
    running_in(dir).iter().map(Process::describe).collect()
}

/// The processes whose working directory is in `dir`.
pub fn running_in(dir: &Path) -> Vec<Process> {
    let dir = dir.canonicalize().unwrap();
    every_process()
        .into_iter()
        .filter(|(_, proc_dir)| {
            std::fs::read_link(proc_dir.join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .map(|(p, _)| p)
        .collect()
}

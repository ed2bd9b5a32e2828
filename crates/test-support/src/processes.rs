//! Which processes are alive, read from `/proc`: how a test proves that
//! nothing it started survived (every process-spawning test asserts it),
//! and how it finds a process it is waiting on.
//!
//! Reads `/proc` only: it never signals or waits for a process, so a
//! survivor fails the test instead of being cleaned up behind its back.

use std::path::{Path, PathBuf};

/// A live process: its pid and command line (arguments NUL-separated,
/// empty for a zombie).
#[derive(Debug)]
pub struct Process {
    /// Its pid.
    pub pid: u32,
    /// `/proc/<pid>/cmdline`.
    pub cmdline: Vec<u8>,
}

impl Process {
    /// The program, as the command line's first argument names it.
    pub fn program(&self) -> &[u8] {
        self.cmdline.split(|b| *b == 0).next().unwrap_or_default()
    }

    /// `pid: cmdline`, for a failure message.
    pub fn describe(&self) -> String {
        format!(
            "{}: {}",
            self.pid,
            String::from_utf8_lossy(&self.cmdline).replace('\0', " ")
        )
    }
}

/// Every process of `/proc`, with its `/proc/<pid>` directory.
fn every_process() -> Vec<(Process, PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        panic!("cannot read /proc: these tests need it");
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            Some((Process { pid, cmdline }, entry.path()))
        })
        .collect()
}

/// No process whose command line carries `marker` is alive (live
/// processes show their command line; a zombie does not).
pub fn assert_no_survivors(marker: &str) {
    let alive = survivors(marker);
    assert!(
        alive.is_empty(),
        "processes of the tree survived: {alive:#?}"
    );
}

/// The live processes whose command line carries `marker`, as
/// `pid: cmdline`.
pub fn survivors(marker: &str) -> Vec<String> {
    every_process()
        .into_iter()
        .filter(|(p, _)| String::from_utf8_lossy(&p.cmdline).contains(marker))
        .map(|(p, _)| p.describe())
        .collect()
}

/// No process has its working directory in `dir`: a run's worker and its
/// tool processes all do while they live, so this proves none outlived
/// the run.
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
    let dir = dir
        .canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    every_process()
        .into_iter()
        .filter(|(_, proc_dir)| {
            std::fs::read_link(proc_dir.join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .map(|(p, _)| p)
        .collect()
}

/// Pids of live (not zombie) processes other than this one whose
/// environment or command line contains `marker` (a sandboxed child may
/// carry it only in its environment).
pub fn alive_with_marker(marker: &str) -> Vec<u32> {
    let needle = marker.as_bytes();
    let contains = |haystack: &[u8]| haystack.windows(needle.len()).any(|w| w == needle);
    every_process()
        .into_iter()
        .map(|(p, _)| p.pid)
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| state_and_parent(*pid).is_some_and(|(s, _)| s != 'Z'))
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            contains(&environ) || contains(&cmdline)
        })
        .collect()
}

/// The state letter (`R`, `S`, `Z`, ...) and parent pid of `pid`, while it
/// is in the process table.
pub fn state_and_parent(pid: u32) -> Option<(char, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

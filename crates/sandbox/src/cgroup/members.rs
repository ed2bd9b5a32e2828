//! The members of one child's cgroup: listing them (the cgroups nested in it
//! included) and signalling them all without hitting a stranger.
//!
//! A member list is stale the moment it is read: a member can exit, be
//! reaped, and its pid go to a new process before the signal is sent. So a
//! SIGKILL goes through v2's `cgroup.kill` where the kernel has it (no pids
//! involved); otherwise the cgroup is frozen first where the hierarchy has
//! a freezer (a frozen process can neither fork nor exit, so no member's pid
//! is freed), every member is signalled through a handle checked against a
//! second reading of the list ([`crate::signal`]), and the cgroup is thawed,
//! so the signals land: a frozen process keeps even a SIGKILL pending.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::files::counter;
use crate::chores;
use crate::signal;

/// Longest wait for a freeze to take hold (ms): a member in uninterruptible
/// sleep holds a v1 freeze at FREEZING. After that the members are
/// signalled anyway; the checked handles still guard every signal.
const FREEZE_WINDOW: Duration = Duration::from_millis(100);

/// Pause between checks that the freeze took hold (ms); freezing a small
/// tree takes well under one.
const FREEZE_POLL: Duration = Duration::from_millis(1);

/// The freezer of one child's cgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Freezer {
    /// v1: `freezer.state` of the child's cgroup in the freezer hierarchy.
    V1 {
        /// The `freezer.state` file.
        state: PathBuf,
    },
    /// v2 (kernel 5.2 on): `cgroup.freeze`, and `cgroup.events`, whose
    /// `frozen` field says when it took hold.
    V2 {
        /// The `cgroup.freeze` file.
        freeze: PathBuf,
        /// The `cgroup.events` file.
        events: PathBuf,
    },
}

/// A value of v1's `freezer.state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FreezerState {
    /// Running.
    Thawed,
    /// Asked to freeze; some members still run.
    Freezing,
    /// Every member is frozen.
    Frozen,
}

impl FreezerState {
    /// The state as `freezer.state` shows it.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "THAWED" => Some(Self::Thawed),
            "FREEZING" => Some(Self::Freezing),
            "FROZEN" => Some(Self::Frozen),
            _ => None,
        }
    }

    /// The word to write into `freezer.state` to ask for this state.
    fn word(self) -> &'static str {
        match self {
            Self::Thawed => "THAWED",
            Self::Freezing => "FREEZING",
            Self::Frozen => "FROZEN",
        }
    }
}

impl Freezer {
    /// Freezes the cgroup and waits (up to [`FREEZE_WINDOW`]) for it to take
    /// hold. `None` when the freeze could not even be asked for; otherwise
    /// the guard thaws the cgroup when dropped, whether or not the freeze
    /// took hold in time.
    pub(crate) fn freeze(&self) -> Option<Thaw<'_>> {
        let asked = match self {
            Freezer::V1 { state } => fs::write(state, FreezerState::Frozen.word()),
            Freezer::V2 { freeze, .. } => fs::write(freeze, "1"),
        };
        asked.ok()?;
        let deadline = Instant::now() + FREEZE_WINDOW;
        while !self.is_frozen() && Instant::now() < deadline {
            std::thread::sleep(FREEZE_POLL);
        }
        Some(Thaw(self))
    }

    /// True once every member is frozen.
    pub(crate) fn is_frozen(&self) -> bool {
        match self {
            Freezer::V1 { state } => {
                fs::read_to_string(state)
                    .ok()
                    .and_then(|text| FreezerState::parse(&text))
                    == Some(FreezerState::Frozen)
            }
            Freezer::V2 { events, .. } => counter(events, "frozen") == 1,
        }
    }

    /// Thaws the cgroup and every cgroup nested in it. The nested ones
    /// matter: a worker killed while freezing its own tool's cgroup leaves
    /// that cgroup frozen, and a frozen process keeps even a SIGKILL
    /// pending, so the tool would outlive the run.
    fn thaw(&self) {
        // A cgroup that cannot be thawed has been removed: nobody is in it.
        let (file, word) = match self {
            Freezer::V1 { state } => (state, FreezerState::Thawed.word()),
            Freezer::V2 { freeze, .. } => (freeze, "0"),
        };
        let _ = fs::write(file, word);
        if let (Some(dir), Some(name)) = (file.parent(), file.file_name()) {
            thaw_below(dir, name, word);
        }
    }
}

/// Writes `word` to the `name` file of every cgroup nested in `dir`,
/// parents before children.
pub(super) fn thaw_below(dir: &Path, name: &std::ffi::OsStr, word: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            let nested = entry.path();
            let _ = fs::write(nested.join(name), word);
            thaw_below(&nested, name, word);
        }
    }
}

/// Thaws the cgroup when dropped.
#[derive(Debug)]
pub(crate) struct Thaw<'a>(&'a Freezer);

impl Drop for Thaw<'_> {
    fn drop(&mut self) {
        self.0.thaw();
    }
}

/// What it takes to list and signal one cgroup's members; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct CgroupMembers {
    /// The cgroup's directory in each hierarchy.
    dirs: Vec<PathBuf>,
    /// v2's `cgroup.kill`, where the kernel has it (5.14 on).
    kill: Option<PathBuf>,
    freezer: Option<Freezer>,
    /// One signalling round at a time (the chores thread and the reaper may
    /// both send one): a round that thaws would end another's freeze early.
    rounds: Arc<Mutex<()>>,
}

impl CgroupMembers {
    pub(crate) fn new(dirs: Vec<PathBuf>, kill: Option<PathBuf>, freezer: Option<Freezer>) -> Self {
        Self {
            dirs,
            kill,
            freezer,
            rounds: Arc::new(Mutex::new(())),
        }
    }

    /// Pids of every process in the cgroup and the cgroups nested in it (a
    /// worker's tool processes run in cgroups below the worker's), the union
    /// over hierarchies.
    pub(crate) fn list(&self) -> Vec<u32> {
        chores::assert_off_runtime("listing a cgroup's members");
        let mut pids = Vec::new();
        for dir in &self.dirs {
            procs_below(dir, &mut pids);
        }
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Tasks still charged to the cgroup's pids controller, nested cgroups
    /// included: `pids.current`. The kernel uncharges a task only when it
    /// is reaped, so zombies and processes half-way through exit still
    /// count (a `cgroup.procs` listing leaves them out). `None` when the
    /// hierarchy has no pids controller or the file cannot be read.
    pub(crate) fn tasks_charged(&self) -> Option<u64> {
        chores::assert_off_runtime("reading a cgroup's pids.current");
        self.dirs.iter().find_map(|dir| {
            fs::read_to_string(dir.join("pids.current"))
                .ok()
                .and_then(|text| text.trim().parse().ok())
        })
    }

    /// Sends `signal` to every member, as the module documentation says.
    pub(crate) fn signal_all(&self, signal: i32) {
        chores::assert_off_runtime("signalling a cgroup's members");
        let _round = self.rounds.lock().unwrap_or_else(PoisonError::into_inner);
        if signal == libc::SIGKILL
            && let Some(kill) = &self.kill
            && fs::write(kill, "1").is_ok()
        {
            return;
        }
        let _thaw = self.freezer.as_ref().and_then(Freezer::freeze);
        let listed = self.list();
        signal::signal_listed(&listed, || self.list(), signal);
    }
}

/// The pids a `cgroup.procs` text lists.
pub(super) fn listed_pids(text: &str) -> Vec<u32> {
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Adds the pids in `dir`'s `cgroup.procs` and in those of the cgroups
/// nested in it. A cgroup removed meanwhile simply adds nothing.
fn procs_below(dir: &Path, pids: &mut Vec<u32>) {
    if let Ok(text) = fs::read_to_string(dir.join("cgroup.procs")) {
        pids.extend(listed_pids(&text));
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            procs_below(&entry.path(), pids);
        }
    }
}

#[cfg(test)]
#[path = "members_tests.rs"]
mod tests;

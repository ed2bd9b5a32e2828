//! What the supervisor reads back from the host, and so what no run's
//! workspace may hold: a tool may write anywhere in its workspace, and the
//! next run would obey what it wrote.
//!
//! - The user's config dir (its `config.toml` names the provider the
//!   user's key is sent to, its agent files and the trust record `trusted.json`),
//!   the state dir (session files, which resume and replay read; server
//!   records, which recovery reads), the cache dir (the local model and
//!   the MCP venv), the supervisor's own programs (`subagent`, the worker,
//!   `subagent-render-page`) and every directory on its `PATH` (programs it
//!   runs by name): a workspace that is, holds, or (for the dirs) lies
//!   inside one is refused, naming it. Every place the path's resolution
//!   goes through counts ([`super::path_trail`]): a symlink on the way that
//!   lies in the workspace could be pointed elsewhere. Paths that do not
//!   exist yet count (a tool could create them); relative `PATH` entries
//!   are taken from the supervisor's working directory, as a lookup would.
//! - What the operator put in a workspace on purpose (`--sessions-dir ./s`,
//!   `batch --results results.jsonl`) is not refused but named
//!   ([`Admitted::protected`]) for the tool sandbox to bind read-only; a
//!   workspace inside such a sessions dir, or one such reached through a
//!   symlink in the workspace, is refused.
//!
//! Reads the environment it is given and the filesystem; changes nothing.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::locations::user_config_dir;
use super::path_trail::trail;
use super::trust_store::trust_file_path;

/// The program the worker runs to render fetched pages, beside the worker.
const RENDER_PAGE_PROGRAM: &str = "subagent-render-page";

/// What a host path is to the supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostFileKind {
    /// The user's config dir.
    ConfigDir,
    /// The trust record.
    TrustRecord,
    /// The state dir (default sessions dir, server records).
    StateDir,
    /// The cache dir.
    CacheDir,
    /// One of the supervisor's own programs.
    Program,
    /// A directory on the supervisor's `PATH`.
    PathDir,
    /// The sessions dir the operator chose.
    SessionsDir,
    /// A file the operator named that the supervisor writes and reads back
    /// (a batch's results file).
    OperatorFile,
}

impl HostFileKind {
    fn describe(self) -> &'static str {
        match self {
            HostFileKind::ConfigDir => "the user's config dir",
            HostFileKind::TrustRecord => "the trust record",
            HostFileKind::StateDir => "the state dir (session files and server records)",
            HostFileKind::CacheDir => "the cache dir",
            HostFileKind::Program => "one of the supervisor's own programs",
            HostFileKind::PathDir => "a directory on PATH (the supervisor runs programs from it)",
            HostFileKind::SessionsDir => "the sessions dir",
            HostFileKind::OperatorFile => "a file the operator named",
        }
    }

    /// Whatever lies inside it is its own (a workspace in it is refused).
    fn owns_inside(self) -> bool {
        matches!(
            self,
            HostFileKind::ConfigDir
                | HostFileKind::StateDir
                | HostFileKind::CacheDir
                | HostFileKind::SessionsDir
        )
    }

    /// Put in a workspace on purpose: protected there, not refused.
    fn placed_by_operator(self) -> bool {
        matches!(self, HostFileKind::SessionsDir | HostFileKind::OperatorFile)
    }
}

/// One host path the supervisor reads back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFile {
    /// Absolute, as the environment or the operator named it.
    pub path: PathBuf,
    /// What it is.
    pub kind: HostFileKind,
}

/// What a workspace was admitted with: the operator's files in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Admitted {
    /// Canonical paths inside the workspace the tool sandbox must keep
    /// read-only.
    pub protected: Vec<PathBuf>,
}

/// Every host path the supervisor reads back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFiles {
    files: Vec<HostFile>,
}

impl HostFiles {
    /// From this process's environment and working directory: the
    /// locations, this program and `programs` (the worker, whose page
    /// renderer lies beside it), and the operator's `sessions_dir` and
    /// `operator_files`.
    pub fn from_env(programs: &[PathBuf], sessions_dir: &Path, operator_files: &[PathBuf]) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let mut all: Vec<PathBuf> = std::env::current_exe().into_iter().collect();
        all.extend(programs.iter().cloned());
        Self::new(
            &|name| std::env::var_os(name),
            &cwd,
            &all,
            sessions_dir,
            operator_files,
        )
    }

    /// The same from `env` and `cwd` (which relative paths are taken from).
    pub fn new(
        env: &dyn Fn(&str) -> Option<OsString>,
        cwd: &Path,
        programs: &[PathBuf],
        sessions_dir: &Path,
        operator_files: &[PathBuf],
    ) -> Self {
        let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = set("HOME").filter(|h| h.is_absolute());
        let absolute = |p: PathBuf| if p.is_absolute() { p } else { cwd.join(p) };
        let mut files = Vec::new();
        let mut add = |path: Option<PathBuf>, kind| {
            if let Some(path) = path {
                files.push(HostFile { path, kind });
            }
        };
        add(
            user_config_dir(env("XDG_CONFIG_HOME"), env("HOME")),
            HostFileKind::ConfigDir,
        );
        add(
            trust_file_path(env("XDG_CONFIG_HOME"), env("HOME")),
            HostFileKind::TrustRecord,
        );
        let state = set("SUBAGENT_HOME")
            .or_else(|| set("XDG_STATE_HOME").map(|x| x.join("subagent")))
            .or_else(|| home.as_ref().map(|h| h.join(".local/state/subagent")));
        add(state.map(absolute), HostFileKind::StateDir);
        let cache = set("SUBAGENT_CACHE_DIR")
            .or_else(|| set("XDG_CACHE_HOME").map(|x| x.join("subagent")))
            .or_else(|| home.as_ref().map(|h| h.join(".cache/subagent")));
        add(cache.map(absolute), HostFileKind::CacheDir);
        for program in programs {
            let program = absolute(program.clone());
            let renderer = program.with_file_name(RENDER_PAGE_PROGRAM);
            add(Some(program), HostFileKind::Program);
            add(Some(renderer), HostFileKind::Program);
        }
        if let Some(path) = env("PATH") {
            for dir in std::env::split_paths(&path) {
                // An empty entry is the working directory, as for a shell.
                add(Some(absolute(dir)), HostFileKind::PathDir);
            }
        }
        add(
            Some(absolute(sessions_dir.to_owned())),
            HostFileKind::SessionsDir,
        );
        for file in operator_files {
            add(Some(absolute(file.clone())), HostFileKind::OperatorFile);
        }
        Self { files }
    }

    /// Whether `workspace` (canonical) may be a run's workspace: the
    /// operator's files in it when it may, else the one-line refusal.
    pub fn check(&self, workspace: &Path) -> Result<Admitted, String> {
        let mut admitted = Admitted::default();
        for file in &self.files {
            let places = trail(&file.path);
            let Some(end) = places.last() else {
                continue;
            };
            let links_inside = places[..places.len() - 1]
                .iter()
                .find(|p| p.starts_with(workspace));
            if file.kind.placed_by_operator() {
                if let Some(link) = links_inside {
                    return Err(refusal(workspace, link, file.kind, Relation::LinkIn));
                }
                if end == workspace || (file.kind.owns_inside() && workspace.starts_with(end)) {
                    return Err(refusal(workspace, end, file.kind, Relation::Inside));
                }
                if end.starts_with(workspace) {
                    admitted.protected.push(end.clone());
                }
                continue;
            }
            if let Some(held) = places.iter().find(|p| p.starts_with(workspace)) {
                return Err(refusal(workspace, held, file.kind, Relation::Holds));
            }
            if file.kind.owns_inside() && workspace.starts_with(end) {
                return Err(refusal(workspace, end, file.kind, Relation::Inside));
            }
        }
        Ok(admitted)
    }
}

/// How a workspace meets a host path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relation {
    /// The workspace is it or holds it.
    Holds,
    /// The workspace lies inside it (or is it).
    Inside,
    /// It is reached through a symlink in the workspace.
    LinkIn,
}

/// The one line a refused workspace gets.
fn refusal(workspace: &Path, path: &Path, kind: HostFileKind, relation: Relation) -> String {
    let (ws, what) = (workspace.display(), kind.describe());
    let shown = path.display();
    let off_path = if kind == HostFileKind::PathDir {
        ", or take that directory off PATH"
    } else {
        ""
    };
    match relation {
        Relation::Holds if path == workspace => format!(
            "the workspace {ws} is {shown}, {what}, which the supervisor reads back and a tool \
             there could change; use a subdirectory that holds none of the supervisor's files as \
             the workspace{off_path}"
        ),
        Relation::Holds => format!(
            "the workspace {ws} holds {shown}, {what}, which the supervisor reads back and a tool \
             there could change; use a subdirectory that holds none of the supervisor's files as \
             the workspace{off_path}"
        ),
        Relation::Inside => format!(
            "the workspace {ws} lies inside {shown}, {what}, which the supervisor reads back and a \
             tool there could change; use a directory outside it as the workspace"
        ),
        Relation::LinkIn => format!(
            "the workspace {ws} holds {shown}, a symlink that {what} is reached through, which a \
             tool there could point elsewhere; name that file by a path outside the workspace, or \
             use a subdirectory without the symlink as the workspace"
        ),
    }
}

#[cfg(test)]
#[path = "host_files_tests.rs"]
mod tests;

//! Project trust: a project's `.subagent/config.toml`, `.mcp.json` and agent files
//! (`.subagent/agents/*.md`, `.claude/agents/*.md`, in the workspace and
//! each parent up to the repository root) count only when the operator
//! trusted them as they are now, like `direnv allow` or `mise trust`.
//!
//! Why: a run's tools may write its workspace, and those files decide the
//! powers of every later run there (private networks, key variables sent
//! as bearer tokens, an agent's tools). A file a tool could have written
//! is data until the operator says otherwise with `subagent trust`, which
//! records each file's SHA-256 outside the workspace (`trust_store.rs`).
//! Any file changed, added or removed since then makes the whole project
//! untrusted again: its config and agent files are then ignored (with one
//! short warning counting them, with the commands that list and trust
//! them), and the run has
//! the user's config, the flags and the built-in agents only.
//!
//! In: a workspace and the trust record. Out: a [`ProjectConfig`], the
//! files as read once (text and hash) with the verdict. The loaders
//! (`load.rs`, `agents::discover`) parse the text read here, never the
//! disk again, so a file swapped after the check is not what runs. This
//! module reads; it never writes the record.
//!
//! The files are read before the verdict, as untrusted input
//! ([`super::project_files`]); one that is not read (a link, a FIFO, over
//! a cap) is skipped ([`ProjectConfig::skipped`], each with why, for the
//! callers' warnings): it counts as absent, so one that was trusted makes
//! the project untrusted (removed), and one that was not changes nothing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::locations::{PROJECT_CONFIG, project_dirs};
pub use super::project_files::{ProjectFile, ProjectFileKind};
use super::project_files::{ReadFiles, SkippedFile, hex, md_files_in};
use super::trust_store::{TrustError, TrustRecords, TrustedFile, TrustedProject, read_records};
use crate::project_files::AgentFileFlavor;

/// How a file differs from what was trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Not in the record (or no record for the project).
    New,
    /// In the record with another hash.
    Changed,
    /// In the record, gone from the disk.
    Removed,
}

impl Change {
    fn as_str(self) -> &'static str {
        match self {
            Change::New => "not trusted",
            Change::Changed => "changed since trusted",
            Change::Removed => "removed since trusted",
        }
    }
}

/// Whether a run may load the project's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustVerdict {
    /// The project has no config or agent file: nothing to trust.
    NoFiles,
    /// The files are exactly the ones the operator trusted.
    Trusted,
    /// Something differs: every file that does, with how.
    Untrusted(Vec<(PathBuf, Change)>),
}

/// A workspace's project configuration, read once, with the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectConfig {
    /// The workspace, canonical: what `subagent trust` is given.
    pub workspace: PathBuf,
    /// The project's directory: the repository root (the first directory
    /// up from the workspace holding `.git`), else the workspace. Trust is
    /// recorded under it.
    pub root: PathBuf,
    /// The trust record consulted; `None` without HOME or XDG_CONFIG_HOME.
    pub store: Option<PathBuf>,
    dirs: Vec<PathBuf>,
    files: Vec<ProjectFile>,
    skipped: Vec<SkippedFile>,
    verdict: TrustVerdict,
}

impl ProjectConfig {
    /// The verdict.
    pub fn verdict(&self) -> &TrustVerdict {
        &self.verdict
    }

    /// Every file found, trusted or not, nearest directory first.
    pub fn files(&self) -> &[ProjectFile] {
        &self.files
    }

    /// The files found but not read (a link, a FIFO, over a cap), in the
    /// order they were met; trusted or not, the project never loads them.
    pub fn skipped(&self) -> &[SkippedFile] {
        &self.skipped
    }

    /// One warning line per skipped config file (agent files are reported
    /// with the agent catalog's).
    pub fn skipped_config_warnings(&self) -> Vec<String> {
        self.skipped
            .iter()
            .filter(|f| matches!(f.kind, ProjectFileKind::Config | ProjectFileKind::McpJson))
            .map(|f| format!("warning: project config skipped: {}", f.reason))
            .collect()
    }

    /// The files a run loads: all of them when trusted, none otherwise.
    pub fn trusted_files(&self) -> &[ProjectFile] {
        match self.verdict {
            TrustVerdict::Trusted => &self.files,
            TrustVerdict::NoFiles | TrustVerdict::Untrusted(_) => &[],
        }
    }

    /// The config file a run loads: the nearest `.subagent/config.toml`,
    /// when the project is trusted.
    pub fn trusted_config(&self) -> Option<&ProjectFile> {
        self.trusted_files()
            .iter()
            .find(|f| f.kind == ProjectFileKind::Config)
    }

    /// The `.mcp.json` a run loads: the nearest, when the project is
    /// trusted.
    pub fn trusted_mcp_json(&self) -> Option<&ProjectFile> {
        self.trusted_files()
            .iter()
            .find(|f| f.kind == ProjectFileKind::McpJson)
    }

    /// True when a `file` of the record lies where this workspace looks
    /// for project files (so its absence means it was removed).
    pub(super) fn watches(&self, file: &Path) -> bool {
        self.dirs.iter().any(|dir| {
            file == dir.join(PROJECT_CONFIG)
                || file == dir.join(MCP_JSON)
                || file.parent().is_some_and(|parent| {
                    parent == dir.join(SUBAGENT_AGENTS) || parent == dir.join(CLAUDE_AGENTS)
                })
        })
    }

    /// `path` as the operator knows it: relative to the project's root
    /// when under it.
    pub fn display_path(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The command that trusts these files, ready to paste.
    pub fn trust_command(&self) -> String {
        format!(
            "subagent trust {}",
            shell_word(&self.workspace.display().to_string())
        )
    }

    /// The one warning for an untrusted project, one short line however
    /// many files it has: how many are ignored, the project's directory,
    /// and the commands that list them ([`Self::changes_listing`]) and
    /// trust them. `None` when nothing is ignored.
    pub fn warning(&self) -> Option<String> {
        let TrustVerdict::Untrusted(changes) = &self.verdict else {
            return None;
        };
        let files = match changes.len() {
            1 => "1 file".to_owned(),
            n => format!("{n} files"),
        };
        let mut text = format!(
            "warning: ignoring the project configuration of {} ({files} not trusted or changed \
             since; a tool run there could have written them)",
            self.root.display()
        );
        match &self.store {
            Some(_) => {
                let _ = write!(
                    text,
                    "; the run uses the user config, flags and built-in agents. List them with \
                     `{}`, review them, then run `{}` to use them",
                    self.list_command(),
                    self.trust_command()
                );
            }
            None => text.push_str(
                "; trust cannot be recorded without HOME or XDG_CONFIG_HOME: set one, then run \
                 `subagent trust`",
            ),
        }
        Some(text)
    }

    /// The command that lists the files [`Self::warning`] counts.
    pub fn list_command(&self) -> String {
        format!(
            "subagent trust --list {}",
            shell_word(&self.workspace.display().to_string())
        )
    }

    /// Each file that keeps the project untrusted, as `path (how)`, path
    /// relative to the project's root; empty when nothing is ignored.
    pub fn changes_listing(&self) -> Vec<String> {
        match &self.verdict {
            TrustVerdict::Untrusted(changes) => changes
                .iter()
                .map(|(path, change)| format!("{} ({})", self.display_path(path), change.as_str()))
                .collect(),
            TrustVerdict::NoFiles | TrustVerdict::Trusted => Vec::new(),
        }
    }

    /// SHA-256 over every file's hash and path: one value for the set.
    pub fn combined_hash(&self) -> String {
        let mut all = Sha256::new();
        for file in &self.files {
            all.update(file.sha256.as_bytes());
            all.update(b"  ");
            all.update(file.path.as_os_str().as_encoded_bytes());
            all.update(b"\n");
        }
        hex(&all.finalize())
    }
}

/// Claude Code's project MCP servers, in a project directory.
const MCP_JSON: &str = ".mcp.json";
/// `.subagent/agents` under a project directory.
const SUBAGENT_AGENTS: &str = ".subagent/agents";
/// Claude Code's agent files under a project directory.
const CLAUDE_AGENTS: &str = ".claude/agents";

/// Reads the project files of `workspace` and judges them against the
/// record at `store` (`None`: no record can exist, so nothing is trusted).
pub fn read_project(workspace: &Path, store: Option<&Path>) -> Result<ProjectConfig, TrustError> {
    let (dirs, root) = project_dirs(workspace).map_err(|source| TrustError::Workspace {
        dir: workspace.to_owned(),
        source,
    })?;
    let mut read = ReadFiles::default();
    for dir in &dirs {
        let config = dir.join(PROJECT_CONFIG);
        // Whatever stands at the name (a link included) is looked at.
        if std::fs::symlink_metadata(&config).is_ok() {
            read.read(config, ProjectFileKind::Config)?;
        }
        let mcp_json = dir.join(MCP_JSON);
        if std::fs::symlink_metadata(&mcp_json).is_ok() {
            read.read(mcp_json, ProjectFileKind::McpJson)?;
        }
        for (sub, flavor) in [
            (SUBAGENT_AGENTS, AgentFileFlavor::Subagent),
            (CLAUDE_AGENTS, AgentFileFlavor::ClaudeCode),
        ] {
            let dir = dir.join(sub);
            let paths = md_files_in(&dir).map_err(|source| TrustError::ListDir { dir, source })?;
            for path in paths {
                read.read(path, ProjectFileKind::Agent(flavor))?;
            }
        }
    }
    let records = match store {
        Some(path) => read_records(path)?,
        None => TrustRecords::default(),
    };
    let mut project = ProjectConfig {
        workspace: dirs.first().cloned().unwrap_or_else(|| root.clone()),
        root,
        store: store.map(Path::to_owned),
        dirs,
        files: read.files,
        skipped: read.skipped,
        verdict: TrustVerdict::NoFiles,
    };
    let recorded = records
        .project(&project.root)
        .map(|p| p.files.as_slice())
        .unwrap_or_default();
    project.verdict = judge(&project, recorded);
    Ok(project)
}

/// The verdict on `project`'s files against the `recorded` ones of its root.
fn judge(project: &ProjectConfig, recorded: &[TrustedFile]) -> TrustVerdict {
    let watched: Vec<&TrustedFile> = recorded
        .iter()
        .filter(|r| project.watches(&r.path))
        .collect();
    if project.files.is_empty() && watched.is_empty() {
        return TrustVerdict::NoFiles;
    }
    let mut changes = Vec::new();
    for file in &project.files {
        match watched.iter().find(|r| r.path == file.path) {
            None => changes.push((file.path.clone(), Change::New)),
            Some(r) if r.sha256 != file.sha256 => {
                changes.push((file.path.clone(), Change::Changed));
            }
            Some(_) => {}
        }
    }
    for r in watched {
        if !project.files.iter().any(|f| f.path == r.path) {
            changes.push((r.path.clone(), Change::Removed));
        }
    }
    if changes.is_empty() {
        TrustVerdict::Trusted
    } else {
        TrustVerdict::Untrusted(changes)
    }
}

/// `word` as one shell word: as is when it holds nothing the shell reads
/// specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%:,=".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A project read with every file trusted, for tests of the loaders.
#[cfg(test)]
pub(crate) fn read_project_trusting_all(workspace: &Path) -> ProjectConfig {
    let mut project = read_project(workspace, None).unwrap_or_else(|e| {
        unreachable!("test workspace {}: {e}", workspace.display());
    });
    project.verdict = TrustVerdict::Trusted;
    project
}

/// Recording trust needs what a project's files are, which this module
/// reads; the record's format stays in `trust_store.rs`, below it.
impl TrustRecords {
    /// Trusts `project`'s files as they are now: the record of its root
    /// keeps files other workspaces of it look at, and gets these in place
    /// of what it had where this workspace looks.
    pub fn trust(&mut self, project: &ProjectConfig) {
        let now: Vec<TrustedFile> = project
            .files()
            .iter()
            .map(|f| TrustedFile {
                path: f.path.clone(),
                sha256: f.sha256.clone(),
            })
            .collect();
        match self.projects.iter_mut().find(|p| p.dir == project.root) {
            Some(record) => {
                record.files.retain(|f| !project.watches(&f.path));
                record.files.extend(now);
                record.files.sort_by(|a, b| a.path.cmp(&b.path));
            }
            None => self.projects.push(TrustedProject {
                dir: project.root.clone(),
                files: now,
            }),
        }
    }
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;

//! Reading a workspace's project files for the trust check ([`super::trust`])
//! as untrusted input: a tool may have written them, and they are read
//! before the verdict, to be hashed.
//!
//! So each is opened as a file read back ([`subagent_session::untrusted_file`]): a
//! link, a FIFO or anything but a regular file is not followed or read, a
//! file over its cap ([`super::read_caps`]) is not read, and neither is one
//! that would take the project's files together past [`PROJECT_FILES_CAP`].
//! Such a file is skipped, with a reason naming it; only a regular file
//! that cannot be read fails the reading. It never writes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::read_caps::{AGENT_FILE_CAP, CONFIG_FILE_CAP, PROJECT_FILES_CAP};
use super::trust_store::TrustError;
use subagent_session::units::ByteSize;
use subagent_session::untrusted_file::{UntrustedFileError, open_read, read_opened};

/// Which tool vocabulary an agent file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentFileFlavor {
    /// `.subagent/agents`: tools are named as in `tool_names`.
    Subagent,
    /// `.claude/agents`: tools are Claude Code's, mapped by `agents::CLAUDE_TOOL_MAP`.
    ClaudeCode,
}

/// What a project file is to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectFileKind {
    /// A `.subagent/config.toml`.
    Config,
    /// An agent file of this flavor.
    Agent(AgentFileFlavor),
    /// A `.mcp.json` (Claude Code's MCP servers of a project).
    McpJson,
}

/// One project file as read for the trust check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    /// Where it is (under the canonical workspace or a parent of it).
    pub path: PathBuf,
    /// Config or agent file.
    pub kind: ProjectFileKind,
    /// Its text, as hashed.
    pub text: String,
    /// SHA-256 of the text, lowercase hex.
    pub sha256: String,
}

/// A project file that was not read: what it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFile {
    /// Where it is.
    pub path: PathBuf,
    /// Config or agent file.
    pub kind: ProjectFileKind,
    /// Why it was not read, naming the file.
    pub reason: String,
}

/// The project's files as read so far, and the ones skipped.
#[derive(Default)]
pub(super) struct ReadFiles {
    pub(super) files: Vec<ProjectFile>,
    pub(super) skipped: Vec<SkippedFile>,
    /// Bytes of `files` together.
    total: u64,
}

impl ReadFiles {
    /// Reads the file at `path`, or skips it (a link, a FIFO, over a cap);
    /// fails only when a regular file cannot be read.
    pub(super) fn read(&mut self, path: PathBuf, kind: ProjectFileKind) -> Result<(), TrustError> {
        let cap = match kind {
            ProjectFileKind::Config | ProjectFileKind::McpJson => CONFIG_FILE_CAP,
            ProjectFileKind::Agent(_) => AGENT_FILE_CAP,
        };
        let total = self.total;
        let opened = (|| -> Result<Option<Vec<u8>>, Skip> {
            let Some(opened) = open_read(&path)? else {
                return Ok(None);
            };
            let size = opened.size;
            if size <= cap && total + size > PROJECT_FILES_CAP {
                return Err(Skip::OverTotal(size));
            }
            Ok(Some(read_opened(&path, opened, cap)?))
        })();
        let bytes = match opened {
            Ok(Some(bytes)) => bytes,
            // Gone between the listing and the open.
            Ok(None) => return Ok(()),
            Err(Skip::Refused(UntrustedFileError::Io { path, source })) => {
                return Err(TrustError::ReadFile { path, source });
            }
            Err(skip) => {
                let reason = skip.reason(&path, self.total);
                self.skipped.push(SkippedFile { path, kind, reason });
                return Ok(());
            }
        };
        self.total += bytes.len() as u64;
        // Hashed as bytes; a file that is not UTF-8 is kept (so it can be
        // listed, and refused by its parser only if someone trusts it).
        let sha256 = hex(&Sha256::digest(&bytes));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        self.files.push(ProjectFile {
            path,
            kind,
            text,
            sha256,
        });
        Ok(())
    }
}

/// Why a project file is not read.
enum Skip {
    /// Not a regular file, over its own cap, or unreadable.
    Refused(UntrustedFileError),
    /// Within its cap, but past what the project's files may take together.
    OverTotal(u64),
}

impl From<UntrustedFileError> for Skip {
    fn from(error: UntrustedFileError) -> Self {
        Skip::Refused(error)
    }
}

impl Skip {
    fn reason(&self, path: &Path, total: u64) -> String {
        match self {
            Skip::Refused(error) => error.to_string(),
            Skip::OverTotal(size) => format!(
                "{} ({size} bytes) is not read: the project's files read before it take {total} \
                 bytes of the {} they may take together; remove files the project does not need",
                path.display(),
                ByteSize(PROJECT_FILES_CAP)
            ),
        }
    }
}

/// `dir/*.md` in name order, whatever each is (a link or a FIFO is listed,
/// for the reader to refuse and name), directories left out; none when
/// `dir` does not exist.
pub fn md_files_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        // `file_type` does not follow a link: a link to a directory is listed.
        if path.extension().is_some_and(|e| e == "md") && !entry.file_type()?.is_dir() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Lowercase hex of `bytes`.
pub(super) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

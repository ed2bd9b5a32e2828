//! The trust record: which project files the operator trusted, by path and
//! SHA-256, in `trusted.json` in the user's config dir (beside the user's
//! `config.toml`, outside every workspace).
//!
//! ```json
//! {"version": 1, "projects": [{"dir": "/home/me/proj", "files": [
//!   {"path": "/home/me/proj/.subagent/config.toml", "sha256": "9f86d0..."}]}]}
//! ```
//!
//! Written whole to a temporary file in the same directory and renamed
//! over the old one, so a reader sees the old record or the new one, never
//! half of one. A record that cannot be read is an error naming the file,
//! not an empty record: guessing would either trust nothing (a surprise)
//! or lose what was trusted when it is written back.
//!
//! It is read as a file read back ([`subagent_session::untrusted_file`]): a link, a
//! FIFO or a record over [`TRUST_RECORD_CAP`] is refused before a byte is
//! read; its temporary file is created `O_EXCL`, never through a link.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::locations::user_config_dir;
use super::read_caps::TRUST_RECORD_CAP;
use subagent_session::untrusted_file::{UntrustedFileError, create_temp, read_capped_string};

/// The record's file name in the user's config dir.
pub const TRUST_FILE: &str = "trusted.json";

/// The record's format version; a reader refuses a newer one.
const TRUST_FORMAT_VERSION: u32 = 1;

/// Why the project's trust cannot be judged or recorded.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The workspace cannot be made absolute.
    #[error("resolve workspace {}: {source}", dir.display())]
    Workspace {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A project file exists but cannot be read.
    #[error("read project file {}: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An agents directory exists but cannot be listed.
    #[error("list agents dir {}: {source}", dir.display())]
    ListDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The record exists but cannot be read or is not a record.
    #[error(
        "read the trust record {}: {reason}; fix it or delete it (then trust projects again \
         with `subagent trust DIR`)",
        path.display()
    )]
    ReadRecord {
        /// The record's file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The record's name holds a link, a FIFO or a file over
    /// [`TRUST_RECORD_CAP`]: it is not read.
    #[error("the trust record {0}")]
    UntrustedRecord(UntrustedFileError),
    /// The record cannot be written.
    #[error("write the trust record {}: {source}", path.display())]
    WriteRecord {
        /// The record's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Every trusted project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecords {
    /// [`TRUST_FORMAT_VERSION`] when written.
    pub version: u32,
    /// One entry per project root.
    pub projects: Vec<TrustedProject>,
}

impl Default for TrustRecords {
    fn default() -> Self {
        Self {
            version: TRUST_FORMAT_VERSION,
            projects: Vec::new(),
        }
    }
}

/// A trusted project: its root and the files trusted in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedProject {
    /// The project's root, canonical.
    pub dir: PathBuf,
    /// Each trusted file.
    pub files: Vec<TrustedFile>,
}

/// A trusted file and its content hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedFile {
    /// The file, under the canonical workspace or a parent.
    pub path: PathBuf,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
}

impl TrustRecords {
    /// The record of the project rooted at `root`.
    pub fn project(&self, root: &Path) -> Option<&TrustedProject> {
        self.projects.iter().find(|p| p.dir == root)
    }

    /// Forgets the project rooted at `root`; false when it was not trusted.
    pub fn revoke(&mut self, root: &Path) -> bool {
        let before = self.projects.len();
        self.projects.retain(|p| p.dir != root);
        self.projects.len() != before
    }
}

/// The record's place: [`TRUST_FILE`] in the user's config dir.
pub fn trust_file_path(
    xdg_config_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    user_config_dir(xdg_config_home, home).map(|dir| dir.join(TRUST_FILE))
}

/// [`trust_file_path`] from this process's environment.
pub fn default_trust_file_path() -> Option<PathBuf> {
    trust_file_path(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

/// The record at `path`; empty when there is no file.
pub fn read_records(path: &Path) -> Result<TrustRecords, TrustError> {
    let failed = |reason: String| TrustError::ReadRecord {
        path: path.to_owned(),
        reason,
    };
    let text = match read_capped_string(path, TRUST_RECORD_CAP) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(TrustRecords::default()),
        Err(UntrustedFileError::Io { source, .. }) => return Err(failed(source.to_string())),
        Err(refused) => return Err(TrustError::UntrustedRecord(refused)),
    };
    let records: TrustRecords = serde_json::from_str(&text).map_err(|e| failed(e.to_string()))?;
    if records.version > TRUST_FORMAT_VERSION {
        return Err(failed(format!(
            "format version {} is newer than this subagent reads ({TRUST_FORMAT_VERSION})",
            records.version
        )));
    }
    Ok(records)
}

/// Writes `records` to `path` atomically (a temporary file renamed over it).
pub fn write_records(path: &Path, records: &TrustRecords) -> Result<(), TrustError> {
    let failed = |source: std::io::Error| TrustError::WriteRecord {
        path: path.to_owned(),
        source,
    };
    let dir = path
        .parent()
        .ok_or_else(|| failed(std::io::Error::other("the record's path has no directory")))?;
    std::fs::create_dir_all(dir).map_err(failed)?;
    let text = serde_json::to_string_pretty(records).map_err(|e| failed(e.into()))?;
    let temp = dir.join(format!(".{TRUST_FILE}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = create_temp(&temp)?;
        file.write_all(text.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(failed)
}

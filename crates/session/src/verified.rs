//! A session file read for something that acts on it (resume, replay,
//! batch continuation, serve recovery, `sessions verify`): opened as
//! untrusted input ([`crate::untrusted_file`]) and believed only when its chain
//! ([`super::chain`]) holds under this user's key.
//!
//! Display commands (`ls`, `show`, `tail`, `export`) read files without
//! this: they show what a file says and act on nothing.

use std::path::{Path, PathBuf};

use super::SESSION_FILE_CAP;
use super::chain::{ChainBreak, Verified, verify};
use super::key::{KeyError, session_key};
use crate::untrusted_file::{FileIdentity, UntrustedFileError, open_read_existing, read_opened};

/// A session file whose chain holds.
#[derive(Debug)]
pub struct VerifiedFile {
    /// Its bytes as read.
    pub bytes: Vec<u8>,
    /// Which file was read.
    pub identity: FileIdentity,
    /// What the chain said.
    pub verified: Verified,
}

impl VerifiedFile {
    /// The text, lossily: a file whose chain holds is what subagent wrote.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }
}

/// Why a session file is not believed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// It could not be read as a session file may be.
    #[error(transparent)]
    Untrusted(#[from] UntrustedFileError),
    /// The key is not at hand, so nothing can be checked.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The chain breaks.
    #[error(
        "{}: {at}; it is not believed (`subagent sessions verify` checks a file)",
        path.display()
    )]
    Broken {
        /// The file.
        path: PathBuf,
        /// Where and how (in the text, not a source: said once).
        at: ChainBreak,
    },
    /// Nothing in it.
    #[error("{}: empty, so not a session file subagent wrote", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// Reads `path` (at most [`SESSION_FILE_CAP`] bytes) and checks its chain.
pub fn read_verified(path: &Path) -> Result<VerifiedFile, VerifyError> {
    let key = session_key()?;
    let opened = open_read_existing(path)?;
    let identity = opened.identity;
    let bytes = read_opened(path, opened, SESSION_FILE_CAP)?;
    let verified = verify(key, &bytes).map_err(|at| VerifyError::Broken {
        path: path.to_owned(),
        at,
    })?;
    if verified.lines == 0 {
        return Err(VerifyError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(VerifiedFile {
        bytes,
        identity,
        verified,
    })
}

/// The first line of a file as its chain vouches for it: a line's value
/// depends only on the lines before it, so a header is checked without the
/// rest of the file. `None` when the line is not chained under this key.
pub fn verified_first_line(line: &[u8]) -> Option<&[u8]> {
    let key = session_key().ok()?;
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    verify(key, line).ok().filter(|v| v.lines == 1)?;
    Some(line)
}

#[cfg(test)]
#[path = "verified_tests.rs"]
mod tests;

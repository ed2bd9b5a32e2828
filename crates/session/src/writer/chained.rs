//! One chain per session file within the process: every line appended to
//! a file, by its own writer thread or by anyone else here (a nested run's
//! lifecycle lines in its parent's file, a server's job lines, recovery's
//! endings), is sealed onto the value of the line before it, under one lock
//! per file, so lines from several appenders never chain onto the same
//! value.
//!
//! A file is known by its identity (device, inode), not its path. The
//! writer that creates a file knows its chain from the start; an appender
//! that finds no one holding the file reads the value of the last line on
//! disk (and covers a torn last line: see [`super::super::chain`]).
//!
//! It writes whole lines with one `write_all` and nothing else; opening the
//! file safely is the caller's.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use subagent_protocol::session::SessionLine;

use super::SessionWriterError;
use crate::SESSION_FILE_CAP;
use crate::chain::{ChainValue, GENESIS, MEMBER_LEN, seal, split};
use crate::key::session_key;
use crate::untrusted_file::FileIdentity;

/// The chains of the files some appender of this process holds now.
static LIVE: LazyLock<Mutex<HashMap<FileIdentity, Weak<FileChain>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Bytes read at a time when looking back for a file's last line.
const TAIL_CHUNK: u64 = 64 * 1024;

/// The chain of one file: the value its next line chains onto, once known.
#[derive(Debug)]
pub(crate) struct FileChain {
    identity: FileIdentity,
    /// `None` until read from the file, and again after a failed write
    /// (which may have left part of a line).
    last: Mutex<Option<ChainValue>>,
}

impl FileChain {
    /// The chain of a file just created, empty.
    pub(crate) fn created(identity: FileIdentity) -> Arc<Self> {
        Self::register(identity, Some(GENESIS))
    }

    /// The chain of an existing file: the one an appender of this process
    /// holds, else one read from the file at the first append.
    pub(crate) fn existing(identity: FileIdentity) -> Arc<Self> {
        Self::register(identity, None)
    }

    /// A new chain for `identity`, or with `last` unknown the live one.
    fn register(identity: FileIdentity, last: Option<ChainValue>) -> Arc<Self> {
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        if last.is_none()
            && let Some(chain) = live.get(&identity).and_then(Weak::upgrade)
        {
            return chain;
        }
        let chain = Arc::new(Self {
            identity,
            last: Mutex::new(last),
        });
        live.insert(identity, Arc::downgrade(&chain));
        chain
    }

    /// Seals `line` onto the file's chain and appends it to `file` (opened
    /// for appending, and for reading when the chain may need to be read
    /// from it), fsyncing lifecycle lines.
    pub(crate) fn append(
        &self,
        file: &mut File,
        path: &Path,
        line: &SessionLine,
    ) -> Result<(), SessionWriterError> {
        let io_err = |source| SessionWriterError::Write {
            path: path.to_owned(),
            source,
        };
        let key = session_key().map_err(SessionWriterError::Key)?;
        let body = serde_json::to_vec(line)?;
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let (prev, torn) = match *last {
            Some(prev) => (prev, Vec::new()),
            None => read_tail(file).map_err(io_err)?,
        };
        let mut covered = torn.clone();
        if !torn.is_empty() {
            covered.push(b'\n');
        }
        let (sealed, value) =
            seal(key, &prev, &covered, &body).map_err(|e| io_err(std::io::Error::other(e)))?;
        // The newline that ends a torn line goes in the same write as the
        // line after it.
        let bytes = if torn.is_empty() {
            sealed
        } else {
            [b"\n".as_slice(), &sealed].concat()
        };
        *last = None;
        file.write_all(&bytes).map_err(io_err)?;
        file.flush().map_err(io_err)?;
        if line.is_lifecycle() {
            file.sync_data().map_err(io_err)?;
        }
        *last = Some(value);
        Ok(())
    }
}

impl Drop for FileChain {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        // Only this chain's own entry: a new one for the same file may have
        // been registered once this one could no longer be upgraded.
        if live
            .get(&self.identity)
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), self))
        {
            live.remove(&self.identity);
        }
    }
}

/// The value the file's last complete line carries (the genesis value
/// when it carries none, or there is none), and the bytes after that line
/// (a line torn by a crash, without its newline).
fn read_tail(file: &File) -> std::io::Result<(ChainValue, Vec<u8>)> {
    let len = file.metadata()?.len();
    let mut end = len;
    // Look back for the last newline, a chunk at a time.
    let newline = loop {
        if end == 0 || len - end > SESSION_FILE_CAP {
            break None;
        }
        let start = end.saturating_sub(TAIL_CHUNK);
        let mut chunk = vec![0; usize::try_from(end - start).unwrap_or(0)];
        file.read_exact_at(&mut chunk, start)?;
        if let Some(at) = chunk.iter().rposition(|&b| b == b'\n') {
            break Some(start + at as u64);
        }
        end = start;
    };
    let torn_from = newline.map_or(0, |at| at + 1);
    if len - torn_from > SESSION_FILE_CAP {
        return Err(std::io::Error::other(
            "the file ends in a line longer than a session file may be",
        ));
    }
    let mut torn = vec![0; usize::try_from(len - torn_from).unwrap_or(0)];
    file.read_exact_at(&mut torn, torn_from)?;
    let Some(at) = newline else {
        return Ok((GENESIS, torn));
    };
    let member_start = at.saturating_sub(MEMBER_LEN as u64);
    let mut member = vec![0; usize::try_from(at - member_start).unwrap_or(0)];
    file.read_exact_at(&mut member, member_start)?;
    let prev = split(&member).map_or(GENESIS, |(_, value)| value);
    Ok((prev, torn))
}

#[cfg(test)]
#[path = "chained_tests.rs"]
mod tests;

//! Following a session file as it grows (`sessions tail -f`): the lines
//! completed since the last look, a partial last line held back until its
//! newline arrives.
//!
//! The file is opened as untrusted input at every look ([`crate::untrusted_file`])
//! and must stay the file first opened; it is read up to
//! [`SESSION_FILE_CAP`] and no further. Never writes.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::SESSION_FILE_CAP;
use super::read::{ReadError, ReadItem, parse_line};
use crate::untrusted_file::{FileIdentity, UntrustedFileError, open_read_existing};

/// Follows a session file as it grows: each [`SessionTail::poll`] returns
/// the lines completed since the last one. A partial last line is held back
/// until its newline arrives, so a line being written is never reported as
/// torn; [`SessionTail::finish`] reports what is left as torn.
#[derive(Debug)]
pub struct SessionTail {
    path: PathBuf,
    /// The file first opened: a file swapped in under the path is not
    /// followed.
    identity: Option<FileIdentity>,
    offset: u64,
    pending: Vec<u8>,
    line_no: usize,
}

impl SessionTail {
    /// A tail of `path` from its beginning.
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            identity: None,
            offset: 0,
            pending: Vec::new(),
            line_no: 0,
        }
    }

    /// The complete lines appended since the last poll. The file is opened
    /// as untrusted input each time and read up to [`SESSION_FILE_CAP`].
    pub fn poll(&mut self) -> Result<Vec<ReadItem>, ReadError> {
        let opened = open_read_existing(&self.path)?;
        if *self.identity.get_or_insert(opened.identity) != opened.identity {
            return Err(ReadError::Replaced {
                path: self.path.clone(),
            });
        }
        if opened.size < self.offset {
            // Truncated under us: start over rather than read garbage.
            self.offset = 0;
            self.pending.clear();
            self.line_no = 0;
        }
        if opened.size > SESSION_FILE_CAP {
            return Err(UntrustedFileError::TooLarge {
                path: self.path.clone(),
                size: opened.size,
                cap: SESSION_FILE_CAP,
            }
            .into());
        }
        // What was there at the open, not what arrives while reading: the
        // cap above holds for every byte taken.
        let want = opened.size.saturating_sub(self.offset);
        let mut fresh = vec![0; usize::try_from(want).unwrap_or(0)];
        let got = read_at_most(&opened.file, &mut fresh, self.offset).map_err(|source| {
            ReadError::Io {
                path: self.path.clone(),
                source,
            }
        })?;
        fresh.truncate(got);
        self.offset += fresh.len() as u64;
        self.pending.extend_from_slice(&fresh);
        let mut items = Vec::new();
        while let Some(nl) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=nl).collect();
            self.line_no += 1;
            let text = String::from_utf8_lossy(&line[..line.len() - 1]);
            if !text.trim().is_empty() {
                items.push(parse_line(self.line_no, &text));
            }
        }
        Ok(items)
    }

    /// What a partial last line left behind, once no more is coming.
    pub fn finish(&mut self) -> Option<ReadItem> {
        if self.pending.is_empty() {
            return None;
        }
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        let line_no = self.line_no + 1;
        let bytes = self.pending.len();
        self.pending.clear();
        match parse_line(line_no, &text) {
            ReadItem::Invalid { .. } => Some(ReadItem::Torn { line_no, bytes }),
            item => Some(item),
        }
    }
}

/// Reads into `buf` from `offset` until it is full or the file ends;
/// returns the bytes read.
fn read_at_most(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
#[path = "tail_tests.rs"]
mod tests;

//! Reading a file that is large by nature (a results file) one line at a
//! time, holding at most one line of at most `cap` bytes: a file of
//! gigabytes costs the reader one line's buffer, and a line longer than
//! the cap is reported without being held.
//!
//! A line is the bytes before a newline. Bytes after the last newline
//! (a write cut short) are a torn tail: only their length is reported,
//! since the reader's callers drop them.
//!
//! It reads from a reader it is given and never opens a file (that is
//! [`super::open`]'s), nor parses a line.

use std::io::{self, BufRead, BufReader, Read};

/// What [`CappedLines::next_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum CappedLine<'a> {
    /// A complete line (without its newline), `number` 1-based.
    Line {
        /// Its 1-based number.
        number: usize,
        /// Its bytes.
        bytes: &'a [u8],
    },
    /// A complete line longer than the cap; its bytes were not kept.
    TooLong {
        /// Its 1-based number.
        number: usize,
    },
    /// Bytes with no newline after them at the end of the file.
    Torn {
        /// How many.
        len: u64,
    },
}

/// The lines of a reader, each held only until the next is asked for.
#[derive(Debug)]
pub struct CappedLines<R> {
    reader: BufReader<R>,
    cap: usize,
    line: Vec<u8>,
    number: usize,
    /// Bytes up to and including the last newline read.
    complete_len: u64,
}

impl<R: Read> CappedLines<R> {
    /// Lines of `reader`, each at most `cap` bytes.
    pub fn new(reader: R, cap: usize) -> Self {
        Self {
            reader: BufReader::new(reader),
            cap,
            line: Vec::new(),
            number: 0,
            complete_len: 0,
        }
    }

    /// Bytes up to and including the last newline read so far: after the
    /// last line, the length a torn tail is cut back to.
    pub fn complete_len(&self) -> u64 {
        self.complete_len
    }

    /// The next line, a torn tail, or `None` at the end.
    pub fn next_line(&mut self) -> io::Result<Option<CappedLine<'_>>> {
        self.line.clear();
        let mut len: u64 = 0;
        let mut too_long = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok((len > 0).then_some(CappedLine::Torn { len }));
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let taken = newline.unwrap_or(available.len());
            let wanted = self.line.len() + taken;
            if !too_long && wanted <= self.cap {
                // Doubling, but never past the cap: a line at the cap holds
                // the cap, not twice it.
                if wanted > self.line.capacity() {
                    let grown = (self.line.capacity() * 2).clamp(wanted, self.cap);
                    self.line.reserve_exact(grown - self.line.len());
                }
                self.line.extend_from_slice(&available[..taken]);
            } else {
                too_long = true;
                // Let go of what was kept: a long line must not stay held.
                self.line = Vec::new();
            }
            let consumed = newline.map_or(taken, |i| i + 1);
            self.reader.consume(consumed);
            len += consumed as u64;
            if newline.is_some() {
                self.number += 1;
                self.complete_len += len;
                let number = self.number;
                return Ok(Some(if too_long {
                    CappedLine::TooLong { number }
                } else {
                    CappedLine::Line {
                        number,
                        bytes: &self.line,
                    }
                }));
            }
        }
    }
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;

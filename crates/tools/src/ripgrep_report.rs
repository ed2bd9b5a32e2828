//! `bash_ripgrep`'s output: what one search shows and counts ([`Report`]),
//! and the sink that collects one file's matching and context lines
//! ([`FileSink`]). Pure formatting over what grep-searcher reports; it
//! never opens a file (the caller hands it one opened beneath the
//! workspace root).

use std::fs::File;
use std::io;

use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

use super::{MAX_COUNTED_HIDDEN_MATCHES, MAX_LINE_BYTES, RIPGREP_MAX_MATCHES, RipgrepArguments};
use crate::blocking::CancelFlag;

/// One line of output before it is printed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Line {
        number: u64,
        text: String,
        is_match: bool,
    },
    Break,
}

/// Output and counts over all files of one search.
#[derive(Debug)]
pub(super) struct Report {
    max_matches: usize,
    with_context: bool,
    text: String,
    shown: usize,
    hidden: u64,
    pub(super) counting_stopped: bool,
    binary_files: usize,
    unreadable: usize,
    first_error: Option<String>,
}

impl Report {
    pub(super) fn new(max_matches: usize, with_context: bool) -> Report {
        Report {
            max_matches,
            with_context,
            text: String::new(),
            shown: 0,
            hidden: 0,
            counting_stopped: false,
            binary_files: 0,
            unreadable: 0,
            first_error: None,
        }
    }

    /// Counts an entry that could not be searched, keeping the first reason.
    pub(super) fn unreadable(&mut self, why: String) {
        self.unreadable += 1;
        self.first_error.get_or_insert(why);
    }

    pub(super) fn search_file(
        &mut self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        file: &File,
        display: &str,
        cancel: &CancelFlag,
    ) {
        let mut sink = FileSink {
            can_show: self.max_matches - self.shown,
            can_count: MAX_COUNTED_HIDDEN_MATCHES.saturating_sub(self.hidden),
            cancel,
            events: Vec::new(),
            pending: Vec::new(),
            shown: 0,
            hidden: 0,
            binary: false,
        };
        if let Err(e) = searcher.search_file(matcher, file, &mut sink) {
            self.unreadable(format!("{display}: {e}"));
            return;
        }
        // A binary file is skipped whole, even the matches found before its
        // first NUL byte: their "lines" are not text.
        if sink.binary {
            self.binary_files += 1;
            return;
        }
        self.shown += sink.shown;
        self.hidden += sink.hidden;
        if self.hidden >= MAX_COUNTED_HIDDEN_MATCHES {
            self.counting_stopped = true;
        }
        if sink.events.is_empty() {
            return;
        }
        if self.with_context && !self.text.is_empty() {
            self.text.push_str("--\n");
        }
        for event in sink.events {
            match event {
                Event::Line {
                    number,
                    text,
                    is_match,
                } => {
                    let separator = if is_match { ':' } else { '-' };
                    self.text
                        .push_str(&format!("{display}{separator}{number}{separator}{text}\n"));
                }
                Event::Break => self.text.push_str("--\n"),
            }
        }
    }

    pub(super) fn finish(mut self, arguments: &RipgrepArguments, under: &str) -> String {
        if self.shown == 0 {
            let in_files = arguments
                .glob
                .as_deref()
                .map(|g| format!(" in files matching `{g}`"))
                .unwrap_or_default();
            self.text.push_str(&format!(
                "no matches for `{}` under {under}{in_files} (hidden, ignored and binary files are skipped)\n",
                arguments.pattern
            ));
        }
        if self.hidden > 0 {
            let at_least = if self.counting_stopped {
                "at least "
            } else {
                ""
            };
            self.text.push_str(&format!(
                "... {at_least}{} more matching lines not shown (raise max_matches, at most {RIPGREP_MAX_MATCHES}, or narrow the pattern, path or glob)\n",
                self.hidden
            ));
        }
        if self.binary_files > 0 {
            self.text
                .push_str(&format!("({} binary files skipped)\n", self.binary_files));
        }
        if self.unreadable > 0 {
            let first = self
                .first_error
                .map(|e| format!("; first: {e}"))
                .unwrap_or_default();
            self.text.push_str(&format!(
                "({} entries could not be searched{first})\n",
                self.unreadable
            ));
        }
        self.text
    }
}

/// Collects one file's output, so a file found to be binary midway can be
/// dropped whole, and before-context is only kept for a match that is shown.
struct FileSink<'a> {
    /// Matching lines this file may still show.
    can_show: usize,
    /// Matching lines this file may still count past the shown ones.
    can_count: u64,
    cancel: &'a CancelFlag,
    events: Vec<Event>,
    /// Before-context and breaks, kept until the match they lead to is known
    /// to be shown.
    pending: Vec<Event>,
    shown: usize,
    hidden: u64,
    binary: bool,
}

impl FileSink<'_> {
    fn showing(&self) -> bool {
        self.hidden == 0 && self.shown < self.can_show
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.cancel.is_raised() {
            return Ok(false);
        }
        let first = mat.line_number().unwrap_or(0);
        for (number, line) in (first..).zip(mat.lines()) {
            if self.showing() {
                self.events.append(&mut self.pending);
                self.events.push(Event::Line {
                    number,
                    text: line_text(line),
                    is_match: true,
                });
                self.shown += 1;
            } else {
                self.pending.clear();
                self.hidden += 1;
                if self.hidden >= self.can_count {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        if !self.showing() && self.hidden > 0 {
            return Ok(true);
        }
        let event = Event::Line {
            number: context.line_number().unwrap_or(0),
            text: line_text(context.bytes()),
            is_match: false,
        };
        match context.kind() {
            // Lines before a match wait for it: it may be one not shown.
            SinkContextKind::Before if self.showing() => self.pending.push(event),
            // Lines after the last shown match still belong to it.
            SinkContextKind::After => self.events.push(event),
            SinkContextKind::Before | SinkContextKind::Other => {}
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        if self.showing() {
            self.pending.push(Event::Break);
        }
        Ok(true)
    }

    fn binary_data(
        &mut self,
        _searcher: &Searcher,
        _binary_byte_offset: u64,
    ) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The text of one line as shown: without its line terminator, invalid
/// UTF-8 replaced, cut after [`MAX_LINE_BYTES`].
fn line_text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    if text.len() <= MAX_LINE_BYTES {
        return text.into_owned();
    }
    let end = subagent_protocol::text::floor_char_boundary(&text, MAX_LINE_BYTES);
    format!(
        "{} [... {} more bytes of this line]",
        &text[..end],
        text.len() - end
    )
}

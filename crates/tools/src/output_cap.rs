//! Head + tail truncation of text shown to the model.
//!
//! Tool output is capped by bytes and by lines. The beginning of an output
//! usually says what ran and the end says how it finished, so both are kept
//! and the middle is replaced by one marker line saying how much was cut.
//! Cuts fall on UTF-8 character boundaries, so the result is always valid
//! text. The marker itself is not counted against the caps.

use subagent_protocol::text::{ceil_char_boundary, floor_char_boundary};

/// The result of [`cap_output`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// The text, with a marker where the middle was cut.
    pub text: String,
    /// Bytes removed (0 when nothing was cut).
    pub omitted_bytes: usize,
    /// Line breaks in the removed part, i.e. lines removed when the cut falls
    /// on line boundaries.
    pub omitted_lines: usize,
}

impl Capped {
    /// True when something was cut.
    pub fn was_capped(&self) -> bool {
        self.omitted_bytes > 0
    }
}

/// The marker that replaces the omitted middle.
pub fn omission_marker(omitted_bytes: usize, omitted_lines: usize) -> String {
    format!("[... {omitted_bytes} bytes / {omitted_lines} lines omitted ...]")
}

/// Keeps at most `max_bytes` bytes and `max_lines` lines of `text`: the first
/// half of each budget from the head, the rest from the tail.
pub fn cap_output(text: &str, max_bytes: usize, max_lines: usize) -> Capped {
    if text.len() <= max_bytes && line_count(text) <= max_lines {
        return Capped {
            text: text.to_owned(),
            omitted_bytes: 0,
            omitted_lines: 0,
        };
    }
    let head_end = head_end(text, max_bytes.div_ceil(2), max_lines.div_ceil(2));
    let tail_start = tail_start(text, max_bytes / 2, max_lines / 2).max(head_end);
    let (head, omitted, tail) = (
        &text[..head_end],
        &text[head_end..tail_start],
        &text[tail_start..],
    );
    let omitted_lines = omitted.bytes().filter(|b| *b == b'\n').count();
    let mut out = String::with_capacity(head.len() + tail.len() + 64);
    out.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&omission_marker(omitted.len(), omitted_lines));
    if !tail.is_empty() {
        out.push('\n');
        out.push_str(tail);
    }
    Capped {
        text: out,
        omitted_bytes: omitted.len(),
        omitted_lines,
    }
}

/// Lines as an editor counts them: a final line without `\n` still counts.
fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// End of the longest prefix with at most `max_bytes` bytes and `max_lines`
/// lines, on a character boundary.
fn head_end(text: &str, max_bytes: usize, max_lines: usize) -> usize {
    let by_bytes = floor_char_boundary(text, max_bytes);
    let by_lines = if max_lines == 0 {
        0
    } else {
        text.match_indices('\n')
            .nth(max_lines - 1)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    by_bytes.min(by_lines)
}

/// Start of the longest suffix with at most `max_bytes` bytes and
/// `max_lines` lines, on a character boundary.
fn tail_start(text: &str, max_bytes: usize, max_lines: usize) -> usize {
    let by_bytes = ceil_char_boundary(text, text.len() - max_bytes.min(text.len()));
    let by_lines = if max_lines == 0 {
        text.len()
    } else {
        // A trailing `\n` ends the last line rather than starting a new one.
        let body = text.strip_suffix('\n').unwrap_or(text);
        body.rmatch_indices('\n')
            .nth(max_lines - 1)
            .map_or(0, |(i, _)| i + 1)
    };
    by_bytes.max(by_lines)
}

#[cfg(test)]
#[path = "output_cap_tests.rs"]
mod tests;

//! Session text as HTML for the export: escaped, and folded into a closed
//! `<details>` when long. Every piece of text from a session file reaches
//! the page through [`escape`] here.

use super::display::{bytes, head};

/// Lines beyond which a text is folded into `<details>`: about a screen.
pub const COLLAPSE_LINES: usize = 20;
/// Bytes beyond which a text is folded into `<details>`, whatever its
/// line count (one 50 KiB line is no easier to scroll past).
pub const COLLAPSE_BYTES: usize = 2 * 1024;

/// Escapes `text` for HTML text and for double- or single-quoted
/// attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// True when `text` is long enough to be folded away.
pub fn is_long(text: &str) -> bool {
    text.len() > COLLAPSE_BYTES || text.lines().count() > COLLAPSE_LINES
}

/// `text` as a preformatted block; a long one inside a closed `<details>`
/// whose summary tells its size and first line.
pub fn text_block(text: &str) -> String {
    let pre = format!("<pre>{}</pre>", escape(text));
    if !is_long(text) {
        return pre;
    }
    let first = text.lines().next().unwrap_or("");
    format!(
        "<details class=\"long\"><summary>{} lines, {} — {}</summary>{pre}</details>",
        text.lines().count(),
        bytes(text.len() as u64),
        escape(&head(first, 80)),
    )
}

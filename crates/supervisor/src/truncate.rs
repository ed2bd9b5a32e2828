//! Truncating text returned to a parent: keep the head, add a marker that
//! says how much was cut and where the full text is.
//!
//! Limits come from `Limits::returned_text_bytes` / `returned_text_lines`
//! (200 KiB / 5,000 lines by default).

use subagent_protocol::result::{DisplayItem, Truncation};
use subagent_protocol::text::floor_char_boundary;

/// Text cut to fit, with what was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// The head plus the marker.
    pub text: String,
    /// What was cut.
    pub info: Truncation,
}

/// Cuts `text` to at most `max_bytes` and `max_lines` (at a line boundary
/// when possible, never inside a UTF-8 character). `None` when it fits.
/// `full_output_path` goes into the marker and the returned info.
pub fn truncate_returned(
    text: &str,
    max_bytes: u64,
    max_lines: u64,
    full_output_path: Option<&str>,
) -> Option<Truncated> {
    let original_bytes = text.len() as u64;
    let original_lines = text.lines().count() as u64;
    if original_bytes <= max_bytes && original_lines <= max_lines {
        return None;
    }
    let byte_cap = usize::try_from(max_bytes)
        .unwrap_or(usize::MAX)
        .min(text.len());
    let mut end = floor_char_boundary(text, byte_cap);
    // Apply the line cap: end after the max_lines-th newline.
    if let Some((idx, _)) = text[..end].match_indices('\n').nth(
        usize::try_from(max_lines)
            .unwrap_or(usize::MAX)
            .saturating_sub(1),
    ) && original_lines > max_lines
    {
        end = idx + 1;
    }
    // Prefer ending at a line boundary if one is reasonably close.
    if end < text.len()
        && let Some(nl) = text[..end].rfind('\n')
        && nl + 1 >= end / 2
    {
        end = nl + 1;
    }
    let kept = &text[..end];
    let bytes_cut = original_bytes - kept.len() as u64;
    let lines_cut = original_lines.saturating_sub(kept.lines().count() as u64);
    let where_ = match full_output_path {
        Some(p) => format!("; full output: {p}"),
        None => String::new(),
    };
    let mut out = String::with_capacity(kept.len() + 128);
    out.push_str(kept);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "[output truncated: {bytes_cut} bytes / {lines_cut} lines omitted{where_}]"
    ));
    Some(Truncated {
        text: out,
        info: Truncation {
            original_bytes,
            original_lines,
            bytes_cut,
            full_output_path: full_output_path.map(str::to_owned),
        },
    })
}

/// Bounds a result's display items (the run's assistant texts and tool
/// calls, another copy of the answer) to `max_bytes` in all: texts are cut
/// like [`truncate_returned`], tool-call arguments past the budget are
/// replaced by a note, and items past it by one marker, so no copy of the
/// answer in a result exceeds the return limit.
pub fn bound_display_items(
    items: Vec<DisplayItem>,
    max_bytes: u64,
    max_lines: u64,
    full_output_path: Option<&str>,
) -> Vec<DisplayItem> {
    let mut left = max_bytes;
    let mut out = Vec::with_capacity(items.len());
    let total = items.len();
    for (index, item) in items.into_iter().enumerate() {
        if left == 0 {
            let where_ =
                full_output_path.map_or_else(String::new, |p| format!("; full output: {p}"));
            out.push(DisplayItem::Text {
                text: format!("[{} display items omitted{where_}]", total - index),
            });
            break;
        }
        match item {
            DisplayItem::Text { text } => {
                let size = text.len() as u64;
                match truncate_returned(&text, left, max_lines, full_output_path) {
                    Some(cut) => {
                        left = 0;
                        out.push(DisplayItem::Text { text: cut.text });
                    }
                    None => {
                        left -= size;
                        out.push(DisplayItem::Text { text });
                    }
                }
            }
            DisplayItem::ToolCall { name, args } => {
                let size = args.to_string().len() as u64;
                if size <= left {
                    left -= size;
                    out.push(DisplayItem::ToolCall { name, args });
                } else {
                    left = 0;
                    let note = format!("{size} bytes of arguments omitted");
                    let args = serde_json::json!({ "_truncated": note });
                    out.push(DisplayItem::ToolCall { name, args });
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "truncate_tests.rs"]
mod tests;

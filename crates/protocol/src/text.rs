//! Cutting text without splitting a UTF-8 character: the one place the
//! workspace's truncation helpers (tool output caps, returned-text caps,
//! summaries, quoted excerpts in error messages) take their cut points from.
//!
//! Pure functions on `&str`; the policies (head and tail, markers, limits)
//! stay with their callers.

use std::borrow::Cow;

/// The largest char boundary of `text` at or below `index` (clamped to the
/// text's length).
pub fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The smallest char boundary of `text` at or above `index` (clamped to the
/// text's length).
pub fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// The longest prefix of `text` of at most `max_bytes` bytes.
pub fn prefix_bytes(text: &str, max_bytes: usize) -> &str {
    &text[..floor_char_boundary(text, max_bytes)]
}

/// The prefix of `text` of at most `max_chars` characters.
pub fn prefix_chars(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// `text` cut to `max_chars` characters with `ellipsis` appended when
/// anything was cut; the text itself when it fits.
pub fn shorten_chars<'a>(text: &'a str, max_chars: usize, ellipsis: &str) -> Cow<'a, str> {
    let prefix = prefix_chars(text, max_chars);
    if prefix.len() == text.len() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{prefix}{ellipsis}"))
    }
}

/// `text` cut to `max_bytes` bytes with `ellipsis` appended when anything
/// was cut; the text itself when it fits.
pub fn shorten_bytes<'a>(text: &'a str, max_bytes: usize, ellipsis: &str) -> Cow<'a, str> {
    let prefix = prefix_bytes(text, max_bytes);
    if prefix.len() == text.len() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{prefix}{ellipsis}"))
    }
}

/// Longest provider response id kept, in bytes: real ones are under 100.
pub const RESPONSE_ID_MAX_BYTES: usize = 256;

/// A provider's response id as it may be recorded (session files, traces):
/// kept when it is 1 to [`RESPONSE_ID_MAX_BYTES`] bytes of printable ASCII,
/// dropped otherwise. It comes from a remote server (and reaches the
/// supervisor through the worker, which checks it too): a control
/// character or an endless string is not an id, and a cut one would name
/// another response, so neither is kept at all.
pub fn response_id(raw: Option<&str>) -> Option<String> {
    let raw = raw?;
    let fits = !raw.is_empty()
        && raw.len() <= RESPONSE_ID_MAX_BYTES
        && raw.bytes().all(|b| b.is_ascii_graphic());
    fits.then(|| raw.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_never_split_a_character() {
        let text = "aé€😀z"; // 1 + 2 + 3 + 4 + 1 bytes
        let boundaries: Vec<usize> = (0..=12).map(|i| floor_char_boundary(text, i)).collect();
        assert_eq!(boundaries, vec![0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 11, 11]);
        let ceilings: Vec<usize> = (0..=12).map(|i| ceil_char_boundary(text, i)).collect();
        assert_eq!(ceilings, vec![0, 1, 3, 3, 6, 6, 6, 10, 10, 10, 10, 11, 11]);
        assert_eq!(prefix_bytes(text, 5), "aé");
        assert_eq!(prefix_chars(text, 3), "aé€");
        assert_eq!(prefix_chars(text, 99), text);
    }

    #[test]
    fn shortening_marks_only_a_real_cut() {
        assert_eq!(shorten_chars("short", 5, "…"), "short");
        assert_eq!(shorten_chars("longer", 4, "…"), "long…");
        assert_eq!(shorten_bytes("€€", 4, " ..."), "€ ...");
        assert_eq!(shorten_bytes("€€", 6, " ..."), "€€");
    }
}

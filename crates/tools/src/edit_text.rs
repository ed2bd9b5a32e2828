//! The semantics of `edit_file` and `multi_edit` on a file's text, as
//! Claude Code's `Edit` and `MultiEdit` have them: exact-string
//! replacement, an error when the string is absent or (without
//! `replace_all`) not unique, with the count of matches; edits applied in
//! order, each to the result of the one before, all or none; the file's
//! line endings kept (a file written with CRLF stays CRLF when the model
//! writes `\n`).
//!
//! Pure: text in, text or an error out. It never touches a file.

use std::borrow::Cow;
use std::fmt;

/// One replacement.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// The exact text to replace.
    pub old_string: String,
    /// What replaces it.
    pub new_string: String,
    /// Replace every match rather than exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// Why an edit could not be applied. The display is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// `old_string` is not in the text.
    #[error(
        "String to replace not found in file. It must match exactly, whitespace and indentation \
         included; read the file again (bash_read) and copy the text.\nString: {0}"
    )]
    NotFound(String),
    /// `old_string` matched more than once and `replace_all` was off.
    #[error(
        "Found {matches} matches of the string to replace, but replace_all is false. To replace \
         all occurrences, set replace_all to true. To replace only one occurrence, please provide \
         more context to uniquely identify the instance.\nString: {old_string}"
    )]
    NotUnique {
        /// How many times it matched.
        matches: usize,
        /// The string.
        old_string: String,
    },
    /// `old_string` and `new_string` are the same.
    #[error("No changes to make: old_string and new_string are exactly the same.")]
    NoChange,
    /// `old_string` is empty on a file that has content.
    #[error(
        "old_string is empty, which only creates a new (or empty) file, and this file has \
         content; name the text to replace, or use write_file to replace the whole file"
    )]
    EmptyOnContent,
}

/// An edit of a multi-edit that failed, with its place in the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiEditError {
    /// Its index, 0-based.
    pub index: usize,
    /// Why.
    pub error: EditError,
}

impl fmt::Display for MultiEditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "edit {} of the list (index {}) failed, so none was applied: {}",
            self.index + 1,
            self.index,
            self.error
        )
    }
}

/// The line ending a text is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
}

/// `CrLf` when every line break of `text` is `\r\n` (and there is one);
/// a mixed or `\n` text is `Lf`, and edits are applied as written.
pub fn line_ending(text: &str) -> LineEnding {
    let breaks = text.matches('\n').count();
    let crlf = text.matches("\r\n").count();
    if breaks > 0 && crlf == breaks {
        LineEnding::CrLf
    } else {
        LineEnding::Lf
    }
}

/// `s` with its line breaks written as `ending`.
fn with_ending(s: &str, ending: LineEnding) -> String {
    match ending {
        LineEnding::Lf => s.to_owned(),
        LineEnding::CrLf => s.replace("\r\n", "\n").replace('\n', "\r\n"),
    }
}

/// `text` with `edit` applied; the count of replacements made.
pub fn apply_edit(text: &str, edit: &Edit) -> Result<(String, usize), EditError> {
    if edit.old_string == edit.new_string {
        return Err(EditError::NoChange);
    }
    if edit.old_string.is_empty() {
        return if text.is_empty() {
            Ok((edit.new_string.clone(), 1))
        } else {
            Err(EditError::EmptyOnContent)
        };
    }
    // Only an edit with a line break can meet the file's line endings, and
    // the look at them is a pass over the whole file.
    let (old, new) = if edit.old_string.contains('\n') || edit.new_string.contains('\n') {
        let ending = line_ending(text);
        (
            Cow::Owned(with_ending(&edit.old_string, ending)),
            Cow::Owned(with_ending(&edit.new_string, ending)),
        )
    } else {
        (
            Cow::Borrowed(edit.old_string.as_str()),
            Cow::Borrowed(edit.new_string.as_str()),
        )
    };
    let (old, new) = (old.as_ref(), new.as_ref());
    let Some(first) = text.find(old) else {
        return Err(EditError::NotFound(edit.old_string.clone()));
    };
    if edit.replace_all {
        let matches = text.matches(old).count();
        return Ok((text.replace(old, new), matches));
    }
    // Counted as `matches` counts them: non-overlapping, from the first.
    let rest = &text[first + old.len()..];
    if rest.contains(old) {
        return Err(EditError::NotUnique {
            matches: 1 + rest.matches(old).count(),
            old_string: edit.old_string.clone(),
        });
    }
    let mut edited = String::with_capacity(text.len() - old.len() + new.len());
    edited.push_str(&text[..first]);
    edited.push_str(new);
    edited.push_str(rest);
    Ok((edited, 1))
}

/// `text` with every edit applied in order, each to the result of the one
/// before; the replacements made in all. The first that fails fails all.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Result<(String, usize), MultiEditError> {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    let mut replaced = 0;
    for (index, edit) in edits.iter().enumerate() {
        let (next, count) =
            apply_edit(&current, edit).map_err(|error| MultiEditError { index, error })?;
        current = Cow::Owned(next);
        replaced += count;
    }
    Ok((current.into_owned(), replaced))
}

#[cfg(test)]
#[path = "edit_text_tests.rs"]
mod tests;

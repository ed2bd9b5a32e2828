//! The lenient reading of an agent file's frontmatter: `key: value` lines,
//! as the tools that own the format read it, for frontmatter that strict
//! YAML rejects.
//!
//! Public collections of Claude Code agents hold files such as
//! `description: Use when ... Triggers on: 'growth loop', ...`: an unquoted
//! `: ` inside a value, which YAML refuses ("mapping values are not allowed
//! here") and Claude Code reads. This reading takes each line that starts at
//! column 0 with a key and `:` as a new field, the first `: ` splitting key
//! from value; indented `- item` lines under an empty value make a list; any
//! other line continues the value before it (joined with a space, as YAML
//! folds a plain scalar). A value that is plain YAML on its own (`12`,
//! `true`, `[a, b]`, `"quoted"`) is read as YAML; anything else is the text
//! as written, except a `[` or `{` that YAML cannot read, which fails the
//! reading. The first definition of a key wins.
//!
//! It is used only after strict YAML failed, so a file that is valid YAML
//! means what YAML says. It never reads the disk and never fails on its
//! own: `None` means the text is not `key: value` lines at all, and the
//! caller reports YAML's error.

use serde_yaml_ng::{Mapping, Value};

/// The frontmatter `yaml` as `key: value` lines; `None` when a line before
/// the first key is not blank or a comment, or no key is found.
pub(super) fn read_key_value_lines(yaml: &str) -> Option<Mapping> {
    let mut fields: Vec<(String, String, Vec<String>)> = Vec::new();
    // Whether lines now extend the last field (false after a repeated key,
    // whose continuation lines belong to nothing that is kept).
    let mut extending = false;
    for line in yaml.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || (trimmed.starts_with('#') && fields.is_empty()) {
            continue;
        }
        if let Some((key, value)) = key_line(line) {
            extending = !fields.iter().any(|(k, _, _)| k == key);
            if extending {
                fields.push((key.to_owned(), value.to_owned(), Vec::new()));
            }
            continue;
        }
        let (_, value, items) = fields.last_mut()?;
        if !extending {
            continue;
        }
        match trimmed
            .strip_prefix("- ")
            .or((trimmed == "-").then_some(""))
        {
            Some(item) if line.starts_with(char::is_whitespace) && value.is_empty() => {
                items.push(item.trim().to_owned());
            }
            _ => {
                if !value.is_empty() {
                    value.push(' ');
                }
                value.push_str(trimmed);
            }
        }
    }
    if fields.is_empty() {
        return None;
    }
    let mut map = Mapping::new();
    for (key, value, items) in fields {
        let value = if items.is_empty() {
            scalar(&value)?
        } else {
            Value::Sequence(
                items
                    .iter()
                    .map(|item| scalar(item))
                    .collect::<Option<_>>()?,
            )
        };
        map.insert(Value::String(key), value);
    }
    Some(map)
}

/// `key: value` (or `key:` alone) at column 0: the key is a word of
/// letters, digits, `_` and `-`; the first `:` followed by a space or the
/// line's end splits it from the value.
fn key_line(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = line.split_once(':')?;
    let key_ok = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !key_ok || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, rest.trim()))
}

/// One value: YAML when it is a scalar or a list on its own, else the text;
/// `None` for a `[` or `{` that YAML cannot close (the author meant YAML,
/// and YAML's error says what is wrong better than a guess would).
fn scalar(text: &str) -> Option<Value> {
    if text.is_empty() {
        return Some(Value::Null);
    }
    let flow = text.starts_with(['[', '{']);
    Some(match serde_yaml_ng::from_str::<Value>(text) {
        Ok(value @ (Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Null)) => value,
        Ok(Value::Sequence(items)) if items.iter().all(|i| matches!(i, Value::String(_))) => {
            Value::Sequence(items)
        }
        _ if flow => return None,
        _ => Value::String(text.to_owned()),
    })
}

//! Sanitizing text before it is returned to a parent or persisted.
//!
//! Masks secrets of the usual shapes (API keys, bearer tokens, Authorization
//! headers, GitHub tokens, `export X=secret` lines, URL query tokens) and the
//! exact secret values this run knows (its API key). For returned text it
//! also turns home paths into `~` and cuts stack traces to
//! [`MAX_STACK_FRAMES`] frames.
//!
//! Masking is best effort by pattern; the exact-value pass is what guarantees
//! the run's own key never leaves. This module must not log what it masks.

use std::sync::LazyLock;

use regex::Regex;

/// Frames kept of a stack trace in returned text.
pub const MAX_STACK_FRAMES: usize = 5;

/// What a masked secret becomes.
pub const MASK: &str = "***";

/// Secrets shorter than this are not masked by exact value: masking "a" would
/// shred unrelated text, and such a key is not a real credential.
const MIN_KNOWN_SECRET_LEN: usize = 8;

struct Pattern {
    regex: Option<Regex>,
    /// Replacement; `$1` keeps a prefix group.
    replacement: &'static str,
}

fn pattern(re: &str, replacement: &'static str) -> Pattern {
    Pattern {
        regex: Regex::new(re).ok(),
        replacement,
    }
}

/// Ordered: header-shaped patterns first so their whole value is masked
/// before token-shaped patterns look inside it.
static SECRET_PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        // Authorization / proxy-authorization / x-api-key headers, in text or JSON.
        pattern(
            r#"(?i)((?:proxy-)?authorization"?\s*[:=]\s*"?)[^"\r\n]+"#,
            "${1}***",
        ),
        pattern(r#"(?i)(x-api-key"?\s*[:=]\s*"?)[^"\s,}]+"#, "${1}***"),
        // export NAME=value (shell profiles, env dumps).
        pattern(
            r#"(?m)^(\s*export\s+[A-Za-z_][A-Za-z0-9_]*\s*=\s*)\S.*$"#,
            "${1}***",
        ),
        // NAME=value where the name says it is a secret.
        pattern(
            r#"(?i)\b([A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)[A-Z0-9_]*\s*[=:]\s*)[^\s"',;&]+"#,
            "${1}***",
        ),
        pattern(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}", "${1}***"),
        // Query-string tokens.
        pattern(
            r#"(?i)([?&](?:access_token|refresh_token|id_token|token|api_key|apikey|api-key|key|secret|client_secret|sig|signature|password|auth)=)[^&\s#"'<>]+"#,
            "${1}***",
        ),
        // Well-known token shapes.
        pattern(r"\bsk-[A-Za-z0-9_-]{16,}", MASK),
        pattern(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
            MASK,
        ),
        pattern(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", MASK),
        pattern(r"\bxox[abprs]-[A-Za-z0-9-]{10,}", MASK),
        pattern(r"\bAIza[0-9A-Za-z_-]{35}", MASK),
        pattern(r"\bglpat-[A-Za-z0-9_-]{20,}", MASK),
    ]
});

static HOME_PATH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?:/home|/Users)/[A-Za-z0-9._-]+|/root\b").ok());

/// Stack frame lines: Rust (`  12: name`), Python (`  File "x", line 3`),
/// and JavaScript/Java (`    at f (x.js:1:2)`).
static NUMBERED_FRAME: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\s*\d+: ").ok());
static PYTHON_FRAME: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"^\s*File ".*", line \d+"#).ok());
static AT_FRAME: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\s*at \S").ok());

/// Masks secrets and, for returned text, paths and long traces.
#[derive(Debug, Clone, Default)]
pub struct Sanitizer {
    known_secrets: Vec<String>,
    home: Option<String>,
}

impl Sanitizer {
    /// A sanitizer that also masks these exact values (e.g. the run's API
    /// key) and maps `home` (the user's home dir) to `~`.
    pub fn new(known_secrets: impl IntoIterator<Item = String>, home: Option<String>) -> Self {
        let mut known_secrets: Vec<String> = known_secrets
            .into_iter()
            .filter(|s| s.len() >= MIN_KNOWN_SECRET_LEN)
            .collect();
        // Longest first, so a secret containing another is masked whole.
        known_secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Self {
            known_secrets,
            home: home.filter(|h| h.len() > 1),
        }
    }

    /// Masks secrets only: for session files, where paths are useful.
    pub fn mask_secrets(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.known_secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), MASK);
            }
        }
        for p in SECRET_PATTERNS.iter() {
            if let Some(re) = &p.regex {
                if let std::borrow::Cow::Owned(s) = re.replace_all(&out, p.replacement) {
                    out = s;
                }
            }
        }
        out
    }

    /// Everything: secrets, home paths to `~`, stack traces cut short. For
    /// text returned to a parent.
    pub fn sanitize_returned(&self, text: &str) -> String {
        let masked = self.mask_secrets(text);
        let homed = self.replace_home(&masked);
        cut_stack_traces(&homed, MAX_STACK_FRAMES)
    }

    fn replace_home(&self, text: &str) -> String {
        let mut out = match &self.home {
            Some(home) => text.replace(home.as_str(), "~"),
            None => text.to_owned(),
        };
        if let Some(re) = HOME_PATH.as_ref() {
            if let std::borrow::Cow::Owned(s) = re.replace_all(&out, "~") {
                out = s;
            }
        }
        out
    }
}

/// Keeps the first `max_frames` frames of each run of stack-frame lines and
/// replaces the rest with one marker line. Indented lines directly after a
/// frame (source locations, code excerpts) belong to that frame; in a Rust
/// backtrace the `at path:line` lines are such continuations, elsewhere an
/// `at ...` line is a frame of its own.
pub fn cut_stack_traces(text: &str, max_frames: usize) -> String {
    let (Some(numbered), Some(python), Some(at)) = (
        NUMBERED_FRAME.as_ref(),
        PYTHON_FRAME.as_ref(),
        AT_FRAME.as_ref(),
    ) else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len());
    let mut frames = 0usize;
    let mut dropped = 0usize;
    let mut rust_style = false;
    let mut in_run = false;
    for line in text.split_inclusive('\n') {
        let is_numbered = numbered.is_match(line);
        let is_frame =
            is_numbered || python.is_match(line) || (at.is_match(line) && !(in_run && rust_style));
        let indented = line.starts_with(char::is_whitespace) && !line.trim().is_empty();
        if is_frame {
            if !in_run {
                rust_style = is_numbered;
            }
            in_run = true;
            frames += 1;
            if frames > max_frames {
                dropped += 1;
                continue;
            }
        } else if in_run && indented {
            if frames > max_frames {
                continue;
            }
        } else {
            push_marker(&mut out, &mut dropped);
            in_run = false;
            frames = 0;
        }
        out.push_str(line);
    }
    if dropped > 0 && !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    push_marker(&mut out, &mut dropped);
    out
}

fn push_marker(out: &mut String, dropped: &mut usize) {
    if *dropped > 0 {
        out.push_str(&format!("    [... {dropped} more frames omitted ...]\n"));
        *dropped = 0;
    }
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;

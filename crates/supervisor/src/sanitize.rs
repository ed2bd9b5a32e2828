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
            r#"(?i)\b([A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)[A-Z0-9_]*\s*[=:]\s*)[^\s"',;]+"#,
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

/// A stack frame line: Rust (`  12: name`), Python (`  File "x", line 3`),
/// JavaScript/Java (`    at f (x.js:1:2)`), Go (`goroutine`-style `\tpath:line`).
static FRAME_START: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"^\s*(?:\d+: |File ".*", line \d+|at [^\s].*)"#).ok());

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
/// frame (source locations, code excerpts) belong to that frame.
pub fn cut_stack_traces(text: &str, max_frames: usize) -> String {
    let Some(frame_start) = FRAME_START.as_ref() else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len());
    let mut frames_in_run = 0usize;
    let mut dropped = 0usize;
    let mut in_run = false;
    let flush_marker = |out: &mut String, dropped: &mut usize| {
        if *dropped > 0 {
            out.push_str(&format!("    [... {dropped} more frames omitted ...]\n"));
            *dropped = 0;
        }
    };
    for line in text.split_inclusive('\n') {
        let is_frame = frame_start.is_match(line);
        let is_continuation =
            in_run && !is_frame && line.starts_with(char::is_whitespace) && !line.trim().is_empty();
        if is_frame {
            in_run = true;
            frames_in_run += 1;
            if frames_in_run > max_frames {
                dropped += 1;
                continue;
            }
        } else if is_continuation {
            if frames_in_run > max_frames {
                continue;
            }
        } else {
            flush_marker(&mut out, &mut dropped);
            in_run = false;
            frames_in_run = 0;
        }
        out.push_str(line);
    }
    if dropped > 0 {
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        flush_marker(&mut out, &mut dropped);
    }
    out
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;

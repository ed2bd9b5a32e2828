//! Sanitizing text before it is returned to a parent or persisted.
//!
//! Secrets are masked by the workspace's one masking crate,
//! [`subagent_redact`]: every secret shape of its table, the exact secret
//! values this run knows (its API key) and the values of the supervisor's
//! own secret-looking environment variables. For returned text this module
//! also turns home paths into `~` and cuts stack traces to
//! [`MAX_STACK_FRAMES`] frames.
//!
//! This module must not decide what a secret looks like (that lives in
//! `subagent_redact`, shared with the worker) and must not log what it
//! masks.

use std::sync::LazyLock;

use regex::Regex;
use subagent_redact::Redactor;

/// Frames kept of a stack trace in returned text.
pub const MAX_STACK_FRAMES: usize = 5;

static HOME_PATH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?:/home|/Users)/[A-Za-z0-9._-]+|/root\b").ok());

/// Stack frame lines: Rust (`  12: name`), Python (`  File "x", line 3`),
/// and JavaScript/Java (`    at f (x.js:1:2)`).
static NUMBERED_FRAME: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\s*\d+: ").ok());
static PYTHON_FRAME: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"^\s*File ".*", line \d+"#).ok());
static AT_FRAME: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\s*at \S").ok());

/// Masks secrets and, for returned text, paths and long traces.
///
/// `Default` masks secret shapes only (no known values, no environment):
/// for tests and callers without a run.
#[derive(Debug, Clone, Default)]
pub struct Sanitizer {
    redactor: Redactor,
    home: Option<String>,
}

impl Sanitizer {
    /// A sanitizer that also masks these exact values (e.g. the run's API
    /// key) and the supervisor's secret environment values, and maps `home`
    /// (the user's home dir) to `~`.
    pub fn new(known_secrets: impl IntoIterator<Item = String>, home: Option<String>) -> Self {
        Self::with_redactor(Redactor::from_process_env(known_secrets), home)
    }

    /// A sanitizer over a redactor built by the caller (tests inject an
    /// environment with [`Redactor::with_env_vars`]).
    pub fn with_redactor(redactor: Redactor, home: Option<String>) -> Self {
        Self {
            redactor,
            home: home.filter(|h| h.len() > 1),
        }
    }

    /// Masks secrets only: for session files, where paths are useful.
    pub fn mask_secrets(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
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
        if let Some(re) = HOME_PATH.as_ref()
            && let std::borrow::Cow::Owned(s) = re.replace_all(&out, "~")
        {
            out = s;
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

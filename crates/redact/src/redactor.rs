//! The masking engine: compiles [`SECRET_PATTERNS`] once, prefilters with a
//! [`RegexSet`], masks known values exactly.
//!
//! Compiling the table costs milliseconds (about 3 ms for the set and 3.5
//! ms for the single patterns on the reference machine, BENCHMARKS.md), in
//! every process that masks anything. So each single pattern is compiled
//! only once the set says it matched (most texts hold no secret), and
//! [`warm_up`] lets a program compile the set on a thread of its own while
//! it does other start-up work.
//!
//! Must never panic (every slice is taken with `get`, every compile failure
//! is kept as a [`PatternError`] and the pattern skipped) and must stay
//! linear in the text: regexes only from the regex crate, literal values by
//! substring search.

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use regex::{Regex, RegexSet, RegexSetBuilder};

use crate::env::{process_env_secret_values, secret_env_values};
use crate::patterns::{SECRET_PATTERNS, SecretPattern};

/// What a masked secret becomes. Holds no quote or backslash, so masking
/// inside a JSON string keeps it valid JSON.
pub const MASK: &str = "***";

/// Known secret values shorter than this, in bytes, are not masked: a
/// placeholder key (llama-server takes any, e.g. `x`) masked everywhere
/// would shred unrelated words, and is not a credential.
pub const MIN_SECRET_LEN: usize = 6;

/// The lazy DFA's cache for the prefilter set, in bytes. The regex crate's
/// default (2 MiB) fills up on this many patterns over a large text, and a
/// cache that keeps filling makes it fall back to a slower engine.
const SET_DFA_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// A pattern of the table that did not compile (and so is skipped).
#[derive(Debug, Clone, thiserror::Error)]
#[error("compile the secret pattern {name}")]
pub struct PatternError {
    /// The entry's [`SecretPattern::name`].
    pub name: &'static str,
    /// Why the regex crate refused it.
    #[source]
    pub source: regex::Error,
}

struct CompiledPattern {
    regex: Regex,
    /// [`SecretPattern::keep`], anchored to the whole span.
    keep: Option<Regex>,
}

/// The table, compiled: the prefilter over every entry (same indices as
/// the table) and each entry's regexes, compiled on first use. When the set
/// cannot be built (an entry does not compile), every entry that compiles
/// is applied to every text: slower, never less safe.
struct Compiled {
    table: &'static [SecretPattern],
    patterns: Vec<OnceLock<Option<CompiledPattern>>>,
    prefilter: Option<RegexSet>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| compile(SECRET_PATTERNS));

fn compile(table: &'static [SecretPattern]) -> Compiled {
    let sources: Vec<&str> = table.iter().map(|entry| entry.regex).collect();
    let prefilter = RegexSetBuilder::new(&sources)
        .dfa_size_limit(SET_DFA_CACHE_BYTES)
        .build()
        .ok();
    Compiled {
        table,
        patterns: table.iter().map(|_| OnceLock::new()).collect(),
        prefilter,
    }
}

impl Compiled {
    /// Entry `index`, compiled on first use; `None` when it does not
    /// compile (see [`pattern_errors`]).
    fn pattern(&self, index: usize) -> Option<&CompiledPattern> {
        let entry = self.table.get(index)?;
        self.patterns
            .get(index)?
            .get_or_init(|| compile_entry(entry).ok())
            .as_ref()
    }
}

/// Compiles the secret patterns' prefilter now, on a thread of its own, so
/// the first text masked later does not wait for it. For programs that will
/// mask something soon (the supervisor masks every task it records).
pub fn warm_up() {
    let _ = std::thread::Builder::new()
        .name("redact-warm-up".into())
        .spawn(|| LazyLock::force(&COMPILED));
}

fn compile_entry(entry: &SecretPattern) -> Result<CompiledPattern, regex::Error> {
    Ok(CompiledPattern {
        regex: Regex::new(entry.regex)?,
        keep: entry
            .keep
            .map(|keep| Regex::new(&format!("^(?:{keep})$")))
            .transpose()?,
    })
}

/// The table's patterns that failed to compile; empty in a correct build
/// (a unit test pins that).
pub fn pattern_errors() -> &'static [PatternError] {
    static ERRORS: LazyLock<Vec<PatternError>> = LazyLock::new(|| {
        SECRET_PATTERNS
            .iter()
            .filter_map(|entry| {
                compile_entry(entry).err().map(|source| PatternError {
                    name: entry.name,
                    source,
                })
            })
            .collect()
    });
    &ERRORS
}

/// Whether the prefilter set was built (tests: a set that fails to build
/// would silently cost a pass per pattern).
#[cfg(test)]
pub(crate) fn prefilter_built() -> bool {
    COMPILED.prefilter.is_some()
}

/// Masks what one entry of the table matches, alone (tests of the table).
#[cfg(test)]
pub(crate) fn mask_with(entry: &SecretPattern, text: &str) -> Option<String> {
    let pattern = compile_entry(entry).ok()?;
    Some(mask_matches(&pattern, text).into_owned())
}

/// Masks every secret shape of [`SECRET_PATTERNS`] in `text`. Borrows when
/// nothing was masked.
pub fn mask_patterns(text: &str) -> Cow<'_, str> {
    let compiled = &*COMPILED;
    let mut out = Cow::Borrowed(text);
    let matched: Vec<usize> = match &compiled.prefilter {
        Some(set) => set.matches(text).into_iter().collect(),
        None => (0..compiled.table.len()).collect(),
    };
    for index in matched {
        let Some(pattern) = compiled.pattern(index) else {
            continue;
        };
        if let Cow::Owned(masked) = mask_matches(pattern, &out) {
            out = Cow::Owned(masked);
        }
    }
    out
}

/// Masks what one pattern matches: its capture groups that took part, or
/// the whole match when none did; spans its `keep` regex matches are kept.
fn mask_matches<'t>(pattern: &CompiledPattern, text: &'t str) -> Cow<'t, str> {
    let mut out = String::new();
    let mut last = 0;
    let mut masked = false;
    for caps in pattern.regex.captures_iter(text) {
        let groups: Vec<regex::Match<'_>> = caps.iter().skip(1).flatten().collect();
        let spans = if groups.is_empty() {
            caps.get(0).into_iter().collect()
        } else {
            groups
        };
        for span in spans {
            if pattern
                .keep
                .as_ref()
                .is_some_and(|keep| keep.is_match(span.as_str()))
            {
                continue;
            }
            // Spans come in order and do not overlap; a span that would
            // break that (a nested group) is skipped rather than sliced.
            let Some(before) = text.get(last..span.start()) else {
                continue;
            };
            out.push_str(before);
            out.push_str(MASK);
            last = span.end();
            masked = true;
        }
    }
    if !masked {
        return Cow::Borrowed(text);
    }
    out.push_str(text.get(last..).unwrap_or_default());
    Cow::Owned(out)
}

/// Masks every occurrence of one known secret value in `text`, unless the
/// value is shorter than [`MIN_SECRET_LEN`]. Borrows when nothing was
/// masked.
pub fn mask_literal<'t>(text: &'t str, secret: &str) -> Cow<'t, str> {
    if secret.len() < MIN_SECRET_LEN || !text.contains(secret) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace(secret, MASK))
}

/// Masks secrets: known values exactly, then every shape of the table.
///
/// Cheap to clone (the compiled patterns are shared by the process). Its
/// `Debug` never shows the values it holds.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Known values, longest first, so a value that contains another is
    /// masked whole before the shorter one could split it.
    literals: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("known_values", &self.literals.len())
            .finish_non_exhaustive()
    }
}

impl Redactor {
    /// Masks the table's shapes and these exact values (e.g. the run's API
    /// key); values shorter than [`MIN_SECRET_LEN`] are ignored.
    pub fn new(known: impl IntoIterator<Item = String>) -> Self {
        let mut literals: Vec<String> = known
            .into_iter()
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        literals.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        literals.dedup();
        Self { literals }
    }

    /// [`Redactor::new`], plus the values of the secret-looking variables
    /// among `vars` (see [`secret_env_values`]). For tests and callers
    /// that hold an environment of their own.
    pub fn with_env_vars(
        known: impl IntoIterator<Item = String>,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Self {
        Self::new(known.into_iter().chain(secret_env_values(vars)))
    }

    /// [`Redactor::new`], plus the values of this process's secret-looking
    /// environment variables, read once per process.
    pub fn from_process_env(known: impl IntoIterator<Item = String>) -> Self {
        Self::new(
            known
                .into_iter()
                .chain(process_env_secret_values().iter().cloned()),
        )
    }

    /// How many known values this redactor masks.
    pub fn known_values(&self) -> usize {
        self.literals.len()
    }

    /// Masks known values, then every shape of [`SECRET_PATTERNS`].
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.redact_known(text) {
            Cow::Borrowed(text) => mask_patterns(text),
            Cow::Owned(known_masked) => Cow::Owned(mask_patterns(&known_masked).into_owned()),
        }
    }

    /// Masks the known values only: for text whose shapes must stay as
    /// they are (a provider's own error message).
    pub fn redact_known<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for secret in &self.literals {
            if let Cow::Owned(masked) = mask_literal(&out, secret) {
                out = Cow::Owned(masked);
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "redactor_tests.rs"]
mod tests;

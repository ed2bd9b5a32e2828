//! Which environment variables hold secrets, and their values.
//!
//! The supervisor's environment is where a user keeps keys of every kind
//! (`OPENAI_API_KEY`, `GITHUB_TOKEN`, a company's `MY_SERVICE_TOKEN`). Their
//! values are masked exactly, wherever they appear, so a key with no known
//! shape cannot leave through an answer or a session file.
//!
//! The selection is a pure function ([`secret_env_values`]) so tests inject
//! variables; the process environment is read once, lazily, and nowhere
//! else. Nothing here prints a value.

use std::sync::LazyLock;

/// Values shorter than this, in bytes, are not masked: `TOKENIZERS_PARALLELISM=false`
/// or a 4-digit PIN masked everywhere would shred unrelated text. Higher
/// than [`crate::MIN_SECRET_LEN`] because these values are guessed to be
/// secret from their names, not known to be.
pub const MIN_ENV_SECRET_LEN: usize = 8;

/// Words that make a variable's name secret-looking (matched in upper case).
const SECRET_NAME_WORDS: &[&str] = &[
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
];

/// Name endings that say the value is a location or a count, not a secret
/// (`SSH_AUTH_SOCK`, `PASSWORD_STORE_DIR`, `GOOGLE_APPLICATION_CREDENTIALS_FILE`,
/// `MAX_TOKENS`).
const NON_SECRET_NAME_ENDINGS: &[&str] = &[
    "_PATH", "_FILE", "_DIR", "_SOCK", "_TOKENS", "_COUNT", "_LIMIT", "_SIZE", "_LEN",
];

/// Whether a variable with this name is taken to hold a secret.
pub fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_WORDS.iter().any(|w| upper.contains(w))
        && !NON_SECRET_NAME_ENDINGS.iter().any(|e| upper.ends_with(e))
}

/// Whether a value is worth masking everywhere: long enough, not a plain
/// number (a limit, a port) and not a path (a key file's location is not
/// the key, and masking paths would garble every answer that names them).
fn is_secret_env_value(value: &str) -> bool {
    value.len() >= MIN_ENV_SECRET_LEN
        && !value.bytes().all(|b| b.is_ascii_digit())
        && !value.starts_with('/')
        && !value.starts_with("~/")
}

/// The values of the secret-looking variables among `vars`.
pub fn secret_env_values(vars: impl IntoIterator<Item = (String, String)>) -> Vec<String> {
    vars.into_iter()
        .filter(|(name, value)| is_secret_env_name(name) && is_secret_env_value(value))
        .map(|(_, value)| value)
        .collect()
}

/// This process's secret environment values, read on first use. Variables
/// that are not UTF-8 are skipped (`std::env::vars` would panic on them).
static PROCESS_ENV_SECRETS: LazyLock<Vec<String>> =
    LazyLock::new(|| {
        secret_env_values(std::env::vars_os().filter_map(|(name, value)| {
            Some((name.into_string().ok()?, value.into_string().ok()?))
        }))
    });

pub(crate) fn process_env_secret_values() -> &'static [String] {
    &PROCESS_ENV_SECRETS
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;

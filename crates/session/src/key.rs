//! The key that chains session files ([`super::chain`]): 32 random bytes
//! in the user's config dir (`session.key`, hex, mode 0600), made on first
//! use and read by every later process of that user.
//!
//! Why there: a tool process sees only its workspace and the system paths,
//! and a workspace that holds the user's config dir is refused (issue 32),
//! so no tool can read the key and forge a line; the sessions dir, which a
//! careless `--sessions-dir` may put in a workspace, never holds it.
//!
//! The file is read as untrusted input (no link followed, regular file,
//! exact size) and refused when anyone but its owner may read it, as ssh
//! refuses a private key. It never prints the key, and never writes the
//! key anywhere but that file.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rand::TryRngCore;

use crate::untrusted_file::read_capped;
use crate::user_dirs::user_config_dir;

/// The key file's name in the user's config dir.
pub const KEY_FILE: &str = "session.key";

/// Key bytes.
const KEY_BYTES: usize = 32;

/// The key file holds the key in hex and a newline.
const KEY_FILE_BYTES: u64 = (KEY_BYTES * 2 + 1) as u64;

/// The key of this user's session files. `Debug` shows no byte of it.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionKey([u8; KEY_BYTES]);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

impl SessionKey {
    /// A key from its 32 bytes: for a program that keeps the key elsewhere,
    /// and for tests that need keys of their own. A run's files are chained
    /// only with [`session_key`]'s.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The key's bytes, for the MAC.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// HMAC-SHA256 of `message` under this key, for the use `domain`
    /// names (its own, so a MAC made for one use is never valid for
    /// another, e.g. a live record's for a session line's).
    pub fn mac(&self, domain: &[u8], message: &[u8]) -> [u8; 32] {
        use hmac::{Hmac, KeyInit, Mac};
        // HMAC takes a key of any length: this never fails for 32 bytes.
        let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| <Hmac<sha2::Sha256> as KeyInit>::new(&Default::default()));
        mac.update(domain);
        mac.update(&(message.len() as u64).to_be_bytes());
        mac.update(message);
        mac.finalize().into_bytes().into()
    }

    /// A key of fixed bytes (unit tests of this crate).
    #[cfg(test)]
    pub(crate) fn fixed(byte: u8) -> Self {
        Self([byte; KEY_BYTES])
    }
}

/// Why the key cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot use the key that chains session files ({}): {reason}",
    path.as_ref().map_or_else(|| "no place for it".to_owned(), |p| p.display().to_string())
)]
pub struct KeyError {
    /// The key file, when there is a place for it.
    pub path: Option<PathBuf>,
    /// What is wrong and what to do.
    pub reason: String,
}

/// The key of this process's user: read once from the user's config dir
/// (made there on first use) and kept for the process's life.
pub fn session_key() -> Result<&'static SessionKey, KeyError> {
    static KEY: OnceLock<Result<SessionKey, KeyError>> = OnceLock::new();
    KEY.get_or_init(load_for_this_user)
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(not(test))]
fn load_for_this_user() -> Result<SessionKey, KeyError> {
    let dir = user_config_dir(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
    .ok_or_else(|| KeyError {
        path: None,
        reason: "no user config dir to keep it in: set XDG_CONFIG_HOME or HOME".to_owned(),
    })?;
    load_or_create(&dir)
}

/// The unit tests of this crate sign with a fixed key rather than make
/// one in the config dir of whoever runs them.
#[cfg(test)]
fn load_for_this_user() -> Result<SessionKey, KeyError> {
    let _ = user_config_dir;
    Ok(SessionKey::fixed(7))
}

/// The key in `config_dir` (the user's config dir), made there first when
/// there is none. Two processes making it at once agree on one: each writes
/// its own temporary file and links it into place, which fails for the
/// second, who then reads the first's.
pub fn load_or_create(config_dir: &Path) -> Result<SessionKey, KeyError> {
    let path = config_dir.join(KEY_FILE);
    match read_key(&path) {
        Err(KeyRead::Missing) => {}
        other => return other.map_err(|e| e.into_error(&path)),
    }
    create_key(config_dir, &path)?;
    read_key(&path).map_err(|e| e.into_error(&path))
}

enum KeyRead {
    Missing,
    Bad(String),
}

impl KeyRead {
    fn into_error(self, path: &Path) -> KeyError {
        KeyError {
            path: Some(path.to_owned()),
            reason: match self {
                KeyRead::Missing => "vanished while it was being made; run again".to_owned(),
                KeyRead::Bad(reason) => reason,
            },
        }
    }
}

fn read_key(path: &Path) -> Result<SessionKey, KeyRead> {
    let bytes = match read_capped(path, KEY_FILE_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(KeyRead::Missing),
        Err(e) => return Err(KeyRead::Bad(e.to_string())),
    };
    let meta = std::fs::symlink_metadata(path).map_err(|e| KeyRead::Bad(e.to_string()))?;
    if meta.mode() & 0o077 != 0 {
        return Err(KeyRead::Bad(format!(
            "may be read by others (mode {:o}): make it the owner's alone (chmod 600)",
            meta.mode() & 0o777
        )));
    }
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(KeyRead::Bad(
            "belongs to another user: remove it, and the next run makes one of yours".to_owned(),
        ));
    }
    let text = std::str::from_utf8(&bytes).unwrap_or_default().trim_end();
    let mut key = [0u8; KEY_BYTES];
    if text.len() != KEY_BYTES * 2 || !hex_decode(text, &mut key) {
        return Err(KeyRead::Bad(format!(
            "is not {KEY_BYTES} bytes in hex: remove it and the next run makes a new one (the \
             session files it chained will then fail `subagent sessions verify`)"
        )));
    }
    Ok(SessionKey(key))
}

fn create_key(config_dir: &Path, path: &Path) -> Result<(), KeyError> {
    let fail = |what: &str, e: std::io::Error| KeyError {
        path: Some(path.to_owned()),
        reason: format!("cannot {what}: {e}"),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(config_dir)
        .map_err(|e| fail("make the config dir", e))?;
    let mut key = [0u8; KEY_BYTES];
    rand::rngs::OsRng
        .try_fill_bytes(&mut key)
        .map_err(|e| fail("draw random bytes", std::io::Error::other(e)))?;
    let temp = config_dir.join(format!(
        ".{KEY_FILE}.{}.{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut file| {
            file.write_all(format!("{}\n", hex_encode(&key)).as_bytes())?;
            file.sync_all()
        });
    let linked = written.and_then(|()| match std::fs::hard_link(&temp, path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    });
    let _ = std::fs::remove_file(&temp);
    linked.map_err(|e| fail("write it", e))
}

/// Lowercase hex of `bytes`.
pub fn hex_encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Decodes lowercase hex `text` into `out` (exactly twice its length);
/// false when it is not that.
pub fn hex_decode(text: &str, out: &mut [u8]) -> bool {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let bytes = text.as_bytes();
    if bytes.len() != out.len() * 2 {
        return false;
    }
    for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        match (digit(pair[0]), digit(pair[1])) {
            (Some(hi), Some(lo)) => *slot = hi << 4 | lo,
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;

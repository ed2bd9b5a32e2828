//! Secret masking for everything subagent returns or persists.
//!
//! One place decides what a secret looks like, so the supervisor (results,
//! session files) and the worker (provider errors) cannot drift apart.
//! Three layers, each replacing a secret with [`MASK`]:
//!
//! - **Known values**, exactly, wherever they appear: the run's API key, and
//!   in the supervisor the values of its own secret-looking environment
//!   variables ([`Redactor::from_process_env`]). This is the layer that
//!   guarantees a secret with no known shape still never leaves.
//! - **Shapes** from one table, [`SECRET_PATTERNS`]: provider keys, cloud
//!   and forge tokens, JWTs, `Authorization` headers, URL passwords, PEM
//!   private key blocks and `NAME=value` lines whose name says secret. Each
//!   entry carries examples that its tests check, masked and untouched.
//! - A [`regex::RegexSet`] prefilter in front of the shapes, so clean text
//!   costs one pass and only the families that matched are applied.
//!
//! Guarantees: masking never panics, and runs in time linear in the text
//! (the regex crate's guarantee; literal values use substring search).
//!
//! What it must not do: I/O beyond reading the process environment once
//! (and only through [`Redactor::from_process_env`]), logging, or printing
//! the values it holds (its `Debug` shows a count).
//!
//! ```
//! use subagent_redact::Redactor;
//!
//! let redactor = Redactor::new(["run-key-0123456789".to_owned()]);
//! let text = "key run-key-0123456789, DB_PASSWORD=hunter2hunter2, max_tokens: 4096";
//! assert_eq!(
//!     redactor.redact(text),
//!     "key ***, DB_PASSWORD=***, max_tokens: 4096"
//! );
//! ```
#![forbid(unsafe_code)]

mod env;
mod patterns;
mod redactor;

pub use env::{MIN_ENV_SECRET_LEN, is_secret_env_name, secret_env_values};
pub use patterns::{SECRET_PATTERNS, SecretPattern};
pub use redactor::{
    MASK, MIN_SECRET_LEN, PatternError, Redactor, mask_literal, mask_patterns, pattern_errors,
    warm_up,
};

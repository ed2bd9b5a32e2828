//! `ApiKey`: a secret on the wire (the model's key, an MCP server's
//! variables), masked in every human-readable form. Its own module because
//! both the task spec and the MCP server spec hold it.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// An API key, held as a [`SecretString`] (wiped from memory on drop).
///
/// Its `Debug` never shows the value, and neither does a human-readable
/// serialization (JSON, a log dump of a `TaskSpec`): those write `"***"`.
/// Only a binary format (bincode on the worker's fd 3, which is not
/// human-readable) carries the value, because that is how the key reaches
/// the worker without passing through its environment.
#[derive(Clone)]
pub struct ApiKey(SecretString);

/// What a human-readable serialization writes instead of the key.
pub const MASKED_API_KEY: &str = "***";

impl ApiKey {
    /// Wraps a key value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(SecretString::from(value.into()))
    }

    /// The key value, for the one place that puts it in a request header.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl PartialEq for ApiKey {
    fn eq(&self, other: &Self) -> bool {
        self.expose() == other.expose()
    }
}

impl Eq for ApiKey {}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl Serialize for ApiKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(MASKED_API_KEY)
        } else {
            serializer.serialize_str(self.expose())
        }
    }
}

impl<'de> Deserialize<'de> for ApiKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(ApiKey::new)
    }
}

//! How settings read the environment: a lookup a caller can replace (a
//! test, a server answering for a client) and the process's own. A leaf:
//! imports nothing of this crate.

/// A variable's value; unset and empty are the same (as for the SDKs).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A variable's value, or `None` when it is unset, empty or not UTF-8 (an
/// exported-but-empty variable means "not configured" to the SDKs too).
pub fn env_value(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

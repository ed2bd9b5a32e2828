//! Whether a value given where the name of the variable that holds an API
//! key belongs (`api_key_env`, `search.api_key_env`, `--api-key-env`) is
//! such a name: keys stay in the environment, and a key pasted there by
//! mistake is refused without being repeated.
//!
//! It judges the name only: looking the variable up is the resolver's,
//! and which variables a `subagent call` payload may name is `call`'s.

/// What is wrong with a value given where the name of the variable that
/// holds a key belongs (`api_key_env`, `--api-key-env`). Neither says the
/// value: it may be the key itself, pasted in the wrong place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyVariableProblem {
    /// It has the shape of a secret (`subagent_redact`'s patterns).
    LooksLikeKey,
    /// It is not `[A-Za-z_][A-Za-z0-9_]*`.
    NotAName,
}

impl KeyVariableProblem {
    /// The refusal for `setting` (`search.api_key_env`, `--api-key-env`),
    /// with `example` as a variable name to follow.
    pub fn message(self, setting: &str, example: &str) -> String {
        match self {
            KeyVariableProblem::LooksLikeKey => format!(
                "{setting} looks like a key, not a variable name: put the key in an environment \
                 variable and name that variable here (e.g. {example})"
            ),
            KeyVariableProblem::NotAName => format!(
                "{setting} is not a variable name (letters, digits and _, not starting with a \
                 digit, e.g. {example}): put the key in an environment variable and name that \
                 variable here"
            ),
        }
    }
}

/// Checks that `var` names an environment variable and is not a key.
pub fn check_key_variable(var: &str) -> Result<(), KeyVariableProblem> {
    if matches!(
        subagent_redact::mask_patterns(var),
        std::borrow::Cow::Owned(_)
    ) {
        return Err(KeyVariableProblem::LooksLikeKey);
    }
    let mut chars = var.chars();
    let starts_well = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if starts_well && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(KeyVariableProblem::NotAName)
    }
}

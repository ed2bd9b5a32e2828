//! Turning a tool call's JSON arguments into a tool's typed parameters.
//!
//! Every tool parses the same way, so a model sees the same kind of message
//! for a misspelt field, a missing one or a wrong type. This module only
//! parses: range checks that depend on a tool's limits stay in the tool.

use serde::de::DeserializeOwned;

use crate::tool::ToolError;

/// Deserializes `arguments` into `T` (declare it `deny_unknown_fields`, so a
/// misspelt optional field is reported instead of silently ignored).
pub(crate) fn parse_arguments<T: DeserializeOwned>(
    arguments: serde_json::Value,
) -> Result<T, ToolError> {
    serde_json::from_value(arguments).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

/// Checks that an optional count lies in `1..=max`, giving `default` when
/// it is absent.
pub(crate) fn count_in_range(
    name: &str,
    value: Option<u64>,
    default: usize,
    max: usize,
) -> Result<usize, ToolError> {
    let Some(value) = value else {
        return Ok(default);
    };
    match usize::try_from(value) {
        Ok(count) if (1..=max).contains(&count) => Ok(count),
        _ => Err(ToolError::InvalidArguments(format!(
            "{name} must be between 1 and {max}, got {value}"
        ))),
    }
}

/// Checks that an optional count is at least 1, giving `default` when it is
/// absent (for counts with no upper bound, like a first line).
pub(crate) fn at_least_one(
    name: &str,
    value: Option<u64>,
    default: usize,
) -> Result<usize, ToolError> {
    match value {
        None => Ok(default),
        Some(0) => Err(ToolError::InvalidArguments(format!(
            "{name} must be at least 1, got 0"
        ))),
        // Past usize::MAX is past the end of any file anyway.
        Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

//! `report_back`: structured output checked against the parent's JSON Schema.
//!
//! When a task carries an output schema, the child is offered a `report_back`
//! tool whose parameters *are* that schema; its first valid call ends the task
//! and its arguments become the structured output. This module compiles the
//! schema once ([`ReportBackSchema::compile`]) and checks arguments against it
//! ([`ReportBackSchema::validate`]), listing every violation with its instance
//! path so the model can fix them.
//!
//! The supervisor calls [`ReportBackSchema::compile`] too, to refuse a bad
//! schema with `INVALID_INPUT` before spawning anything: it must stay cheap
//! and must never reach the network or the filesystem (remote `$ref`s are an
//! error, because the `jsonschema` crate is built without resolvers).
//!
//! How many invalid attempts are allowed, and what ends the task, is the
//! agent loop's business, not this module's.
//!
//! A crate of its own so that the supervisor can check a schema without
//! linking every tool (the worker reaches it through `subagent_tools`).

#![forbid(unsafe_code)]

use std::fmt;

use serde_json::Value;

/// The tool's name, as the model sees it.
pub const REPORT_BACK_TOOL_NAME: &str = "report_back";

/// The tool's description, as the model sees it.
pub const REPORT_BACK_DESCRIPTION: &str = "Report the final result back to the parent agent and end the task. \
     Call it once, when the task is complete; its arguments are the result and must match its \
     parameters schema. If the call is rejected, fix the listed problems and call it again.";

/// The line added to the system prompt when `report_back` is offered.
pub const REPORT_BACK_INSTRUCTION: &str = "When the task is complete, call the `report_back` tool with the final \
     result as its arguments (they must match its parameters schema); calling it ends the task.";

/// Violations listed to the model per rejected call. More rarely help the
/// model and would crowd out the ones it should fix first.
const MAX_VIOLATIONS_LISTED: usize = 20;

/// Bytes of one violation message kept (UTF-8 safe). `jsonschema` messages
/// quote the offending value, which can be the whole argument object.
const MAX_VIOLATION_MESSAGE_BYTES: usize = 500;

/// An output schema that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The text is not JSON at all.
    #[error("the output schema is not valid JSON: {0}")]
    NotJson(String),
    /// The JSON is not a usable JSON Schema.
    #[error("the output schema is not a valid JSON Schema: {0}")]
    InvalidSchema(String),
}

/// One way the arguments missed the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer to the offending value (`""` is the whole object).
    pub instance_path: String,
    /// What is wrong, as `jsonschema` words it.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.instance_path.is_empty() {
            "(root)"
        } else {
            &self.instance_path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// A compiled output schema. Compile once per task, validate many times.
#[derive(Debug)]
pub struct ReportBackSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

impl ReportBackSchema {
    /// Parses and compiles `schema_json`.
    pub fn compile(schema_json: &str) -> Result<Self, SchemaError> {
        let schema: Value =
            serde_json::from_str(schema_json).map_err(|e| SchemaError::NotJson(e.to_string()))?;
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| SchemaError::InvalidSchema(e.to_string()))?;
        Ok(Self { schema, validator })
    }

    /// The schema, to offer as the tool's parameters or as a native schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Checks `arguments`; on failure lists every violation (the first
    /// [`MAX_VIOLATIONS_LISTED`] of them).
    pub fn validate(&self, arguments: &Value) -> Result<(), Vec<Violation>> {
        let violations: Vec<Violation> = self
            .validator
            .iter_errors(arguments)
            .take(MAX_VIOLATIONS_LISTED)
            .map(|e| Violation {
                instance_path: e.instance_path().as_str().to_owned(),
                message: clip(e.to_string(), MAX_VIOLATION_MESSAGE_BYTES),
            })
            .collect();
        if violations.is_empty() {
            Ok(())
        } else {
            Err(violations)
        }
    }
}

/// The violations as lines `- <instance path>: <message>`, for the model.
pub fn describe_violations(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("- {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn clip(text: String, max_bytes: usize) -> String {
    subagent_protocol::text::shorten_bytes(&text, max_bytes, " ...").into_owned()
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;

//! `edit_file` and `multi_edit`: exact-string replacements in one file,
//! with Claude Code's `Edit` (`file_path`, `old_string`, `new_string`,
//! `replace_all`) and `MultiEdit` (`file_path`, `edits`) parameters and
//! errors ([`crate::edit_text`] holds the semantics).
//!
//! The file is read and written back whole beneath the workspace fd, the
//! write atomic ([`crate::write_target`]), on a thread Landlocked to the
//! workspace ([`crate::confined`]); a binary file is refused, as is an
//! `old_string` that is absent or, without `replace_all`, not unique, and
//! a multi-edit writes all its edits or none. An empty `old_string` on a
//! file that does not exist creates it, as Claude Code's does. This module
//! never writes anything but the file it was given.

use std::path::PathBuf;

use serde::Deserialize;
use subagent_protocol::tool_names::{EDIT_FILE, MULTI_EDIT};

use crate::arguments::parse_arguments;
use crate::confined::{FileRights, run_confined_with};
use crate::edit_text::{Edit, apply_edits};
use crate::read::{guess_binary_type, looks_binary};
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use crate::workspace::Workspace;
use crate::write_target;

/// Bytes looked at to tell a binary file from a text file.
const SNIFF_BYTES: usize = 8 * 1024;

/// Most edits one `multi_edit` call applies.
pub const MAX_EDITS: usize = 100;

/// The `edit_file` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct EditFile;

/// The `multi_edit` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct MultiEdit;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArguments {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MultiEditArguments {
    file_path: String,
    edits: Vec<Edit>,
}

fn edit_schema() -> serde_json::Value {
    serde_json::json!({
        "old_string": {
            "type": "string",
            "description": "The exact text to replace (whitespace and indentation included); it must be unique in the file unless replace_all is true."
        },
        "new_string": {
            "type": "string",
            "description": "The text to replace it with (must differ from old_string)."
        },
        "replace_all": {
            "type": "boolean",
            "default": false,
            "description": "Replace every occurrence of old_string (default false)."
        }
    })
}

impl Tool for EditFile {
    fn name(&self) -> &str {
        EDIT_FILE
    }

    fn description(&self) -> &str {
        "Replace exact text in a file of the workspace. old_string must match the file exactly \
         (read it first) and be unique unless replace_all is true; the error says how many \
         matches there are. The file's line endings are kept. An empty old_string creates a new \
         file with new_string. Binary files are refused. Paths are relative to the workspace \
         root."
    }

    fn parameters(&self) -> serde_json::Value {
        let mut properties = edit_schema();
        if let Some(map) = properties.as_object_mut() {
            map.insert(
                "file_path".into(),
                serde_json::json!({"type": "string", "description": "The file to edit, relative to the workspace root."}),
            );
        }
        serde_json::json!({
            "type": "object",
            "properties": properties,
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: EditArguments = parse_arguments(arguments)?;
            let edits = vec![Edit {
                old_string: arguments.old_string,
                new_string: arguments.new_string,
                replace_all: arguments.replace_all,
            }];
            run(ctx, arguments.file_path, edits, EDIT_FILE).await
        })
    }
}

impl Tool for MultiEdit {
    fn name(&self) -> &str {
        MULTI_EDIT
    }

    fn description(&self) -> &str {
        "Make several exact-text replacements in one file of the workspace, in order, each on \
         the result of the one before; all are applied or none (the error names the edit that \
         failed). Each edit is as edit_file's: old_string must match exactly and be unique \
         unless replace_all is true. Paths are relative to the workspace root."
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The file to edit, relative to the workspace root."},
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_EDITS,
                    "description": "The replacements, applied in order.",
                    "items": {
                        "type": "object",
                        "properties": edit_schema(),
                        "required": ["old_string", "new_string"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["file_path", "edits"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: MultiEditArguments = parse_arguments(arguments)?;
            if arguments.edits.is_empty() || arguments.edits.len() > MAX_EDITS {
                return Err(ToolError::InvalidArguments(format!(
                    "edits must hold 1 to {MAX_EDITS} edits, got {}",
                    arguments.edits.len()
                )));
            }
            run(ctx, arguments.file_path, arguments.edits, MULTI_EDIT).await
        })
    }
}

async fn run(
    ctx: &ToolContext,
    file_path: String,
    edits: Vec<Edit>,
    tool: &'static str,
) -> Result<ToolOutput, ToolError> {
    let workspace_dir = ctx.workspace_dir.clone();
    let protected = ctx.protected.clone();
    let text = run_confined_with(ctx, FileRights::Write, move |_| {
        let workspace = Workspace::new(&workspace_dir)?;
        edit(&workspace, &file_path, &edits, &protected, tool)
    })
    .await?;
    Ok(ToolOutput::text(text))
}

/// Applies `edits` to `file_path`; the line the model reads.
pub(crate) fn edit(
    workspace: &Workspace,
    file_path: &str,
    edits: &[Edit],
    protected: &[PathBuf],
    tool: &str,
) -> Result<String, ToolError> {
    let target = write_target::resolve(workspace, file_path, protected)?;
    let existing = target.read_existing()?;
    let creates = edits.first().is_some_and(|e| e.old_string.is_empty());
    let text: &str = match &existing {
        None if creates => "",
        None => {
            return Err(ToolError::Failed(format!(
                "File does not exist: `{file_path}`. To create it, use write_file (or {tool} \
                 with an empty old_string)."
            )));
        }
        Some(existing) => {
            let head = &existing.bytes[..existing.bytes.len().min(SNIFF_BYTES)];
            if looks_binary(head) {
                return Err(ToolError::Failed(format!(
                    "`{}` is a binary file ({}, {} bytes); {tool} edits text files only",
                    target.shown,
                    guess_binary_type(head),
                    existing.bytes.len()
                )));
            }
            match std::str::from_utf8(&existing.bytes) {
                Ok(text) => text,
                Err(e) => {
                    return Err(ToolError::Failed(format!(
                        "`{}` is not valid UTF-8 (at byte {}); {tool} edits UTF-8 text only: \
                         change it with bash or python_execute",
                        target.shown,
                        e.valid_up_to()
                    )));
                }
            }
        }
    };
    let (edited, replaced) = apply_edits(text, edits).map_err(|e| {
        ToolError::Failed(if edits.len() == 1 {
            e.error.to_string()
        } else {
            e.to_string()
        })
    })?;
    target.write(edited.as_bytes(), existing.as_ref())?;
    Ok(match existing {
        None => format!("File created successfully at: {}", target.shown),
        Some(_) => format!(
            "The file {} has been updated: {replaced} replacement{} ({} edit{}).",
            target.shown,
            if replaced == 1 { "" } else { "s" },
            edits.len(),
            if edits.len() == 1 { "" } else { "s" }
        ),
    })
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;

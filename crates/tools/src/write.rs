//! `write_file`: a file created or overwritten whole, with Claude Code's
//! `Write` parameters (`file_path`, `content`).
//!
//! Parents are made; the write is atomic (a temp file beside the target,
//! renamed over it, beneath the workspace fd: [`crate::write_target`]);
//! paths outside the workspace, through a symlink out, or into an entry the
//! host trusts are refused. The work runs on a thread Landlocked to the
//! workspace ([`crate::confined`]). This module only says what to write.

use serde::Deserialize;
use subagent_protocol::tool_names::WRITE_FILE;

use crate::arguments::parse_arguments;
use crate::confined::{FileRights, run_confined_with};
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use crate::workspace::Workspace;
use crate::write_target::{self, MAX_FILE_BYTES};

/// The `write_file` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct WriteFile;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteArguments {
    pub(crate) file_path: String,
    pub(crate) content: String,
}

impl Tool for WriteFile {
    fn name(&self) -> &str {
        WRITE_FILE
    }

    fn description(&self) -> &str {
        "Write a file in the workspace: creates it (and its missing parent directories) or \
         overwrites it whole, atomically. Paths are relative to the workspace root (an absolute \
         path inside it works too); paths outside it, and .git, .subagent and .claude, are \
         refused. To change part of an existing file, prefer edit_file."
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "The file to write, relative to the workspace root."
                },
                "content": {
                    "type": "string",
                    "description": format!("The whole content of the file (at most {MAX_FILE_BYTES} bytes).")
                }
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: WriteArguments = parse_arguments(arguments)?;
            let workspace_dir = ctx.workspace_dir.clone();
            let protected = ctx.protected.clone();
            let text = run_confined_with(ctx, FileRights::Write, move |_| {
                let workspace = Workspace::new(&workspace_dir)?;
                write(&workspace, &arguments, &protected)
            })
            .await?;
            Ok(ToolOutput::text(text))
        })
    }
}

/// Writes as `arguments` say; the line the model reads.
pub(crate) fn write(
    workspace: &Workspace,
    arguments: &WriteArguments,
    protected: &[std::path::PathBuf],
) -> Result<String, ToolError> {
    let target = write_target::resolve(workspace, &arguments.file_path, protected)?;
    let existing = target.read_existing()?;
    target.write(arguments.content.as_bytes(), existing.as_ref())?;
    let bytes = arguments.content.len();
    Ok(match existing {
        None => format!(
            "File created successfully at: {} ({bytes} bytes)",
            target.shown
        ),
        Some(_) => format!(
            "The file {} has been overwritten ({bytes} bytes).",
            target.shown
        ),
    })
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;

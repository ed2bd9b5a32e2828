//! The set of tools a worker can offer, and the subset one child gets.
//!
//! Lookups are by exact name. The registry never runs a tool itself (see
//! [`crate::run_tool`]) and never holds `report_back`, whose parameters
//! depend on each task's schema.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::bash::Bash;
use crate::edit::{EditFile, MultiEdit};
use crate::find::BashFind;
use crate::list_dir::ListDir;
use crate::python::PythonExecute;
use crate::read::BashRead;
use crate::report_back::REPORT_BACK_TOOL_NAME;
use crate::ripgrep::BashRipgrep;
use crate::todo::TodoWrite;
use crate::tool::Tool;
use crate::web::{PageRenderer, ScrapeWebpage, SearchWeb};
use crate::write::WriteFile;

/// Named tools, kept in name order so listings are stable.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}

/// A tool could not be added to a registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// Another tool already has the name.
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
    /// The name belongs to a tool the worker provides per task.
    #[error("`{0}` is reserved: the worker adds it per task when an output schema is given")]
    Reserved(String),
}

/// A tool subset named tools the registry does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown tool{} {}; known tools: {}",
    if unknown.len() == 1 { "" } else { "s" },
    list(unknown),
    if known.is_empty() { "(none)".to_owned() } else { list(known) }
)]
pub struct UnknownTools {
    /// The names that matched nothing, in the order given.
    pub unknown: Vec<String>,
    /// Every name the registry knows.
    pub known: Vec<String>,
}

fn list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tools this build ships, exactly
    /// [`subagent_protocol::tool_names::BUILTIN_TOOLS`]: the file tools
    /// (`bash_find`, `bash_ripgrep`, `bash_read`, `list_dir`), those that
    /// write (`write_file`, `edit_file`, `multi_edit`), the process tools
    /// (`python_execute`, `bash`) and the web tools (`search_web`,
    /// `scrape_webpage`) and `todo_write`.
    pub fn builtin() -> Self {
        let tools: [Arc<dyn Tool>; 12] = [
            Arc::new(BashFind),
            Arc::new(BashRipgrep),
            Arc::new(BashRead),
            Arc::new(ListDir),
            Arc::new(WriteFile),
            Arc::new(EditFile),
            Arc::new(MultiEdit),
            Arc::new(PythonExecute),
            Arc::new(Bash),
            Arc::new(TodoWrite),
            Arc::new(SearchWeb),
            // The worker never links the HTML parser: pages are rendered
            // by the helper installed beside it (web/render.rs).
            Arc::new(ScrapeWebpage::new(PageRenderer::beside_this_program())),
        ];
        let tools = tools
            .into_iter()
            .map(|tool| (tool.name().to_owned(), tool))
            .collect();
        ToolRegistry { tools }
    }

    /// Adds `tool`; refuses a duplicate or reserved name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegisterError> {
        let name = tool.name().to_owned();
        if name == REPORT_BACK_TOOL_NAME {
            return Err(RegisterError::Reserved(name));
        }
        if self.tools.contains_key(&name) {
            return Err(RegisterError::Duplicate(name));
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// Every tool, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.values()
    }

    /// Every name, in name order.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when there is no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The registry restricted to `names` (duplicates are fine). Any name the
    /// registry does not know fails the whole subset, so a typo in an agent
    /// definition is reported instead of silently dropping a tool.
    pub fn subset(&self, names: &[String]) -> Result<ToolRegistry, UnknownTools> {
        let mut unknown: Vec<String> = Vec::new();
        let mut tools = BTreeMap::new();
        for name in names {
            match self.tools.get(name) {
                Some(tool) => {
                    tools.insert(name.clone(), Arc::clone(tool));
                }
                None if !unknown.contains(name) => unknown.push(name.clone()),
                None => {}
            }
        }
        if unknown.is_empty() {
            Ok(ToolRegistry { tools })
        } else {
            Err(UnknownTools {
                unknown,
                known: self.names(),
            })
        }
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;

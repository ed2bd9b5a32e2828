//! The workspace directory a run's tools hold on to ([`WorkspacePin`]).
//!
//! The supervisor decides the workspace at admission and starts the worker
//! in that directory by its descriptor, saying so with
//! [`WORKSPACE_IS_CWD_ENV`]: the worker's working directory is then the
//! admitted directory, whatever its path leads to by now. A worker started
//! otherwise (tests, embedders) holds the directory its spec's path names
//! when the run starts.
//!
//! Opens one directory; decides nothing else.

use std::path::Path;

use subagent_tools::WorkspacePin;

/// Set to `1` by the supervisor when the worker's working directory is the
/// run's admitted workspace.
pub const WORKSPACE_IS_CWD_ENV: &str = "SUBAGENT_WORKSPACE_IS_CWD";

/// The run's workspace directory; `None` (tools then go by the path) when
/// it cannot be opened, which its tools report on their first call.
pub(crate) fn workspace_pin(workspace_dir: &Path) -> Option<WorkspacePin> {
    let started_in_it = std::env::var_os(WORKSPACE_IS_CWD_ENV).is_some_and(|v| v == "1");
    let pin = if started_in_it {
        WorkspacePin::current_dir()
    } else {
        WorkspacePin::open(workspace_dir)
    };
    pin.ok()
}

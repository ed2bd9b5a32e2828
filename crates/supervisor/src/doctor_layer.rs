//! The `workspace_layer` probe of `subagent doctor`: whether a run whose
//! tools can write gets its copy-on-write layer over this workspace (a
//! child started under one, as a run's worker is), and what to do when
//! not.
//!
//! Starts one short child (`/bin/true`); changes nothing in the
//! workspace.

use std::os::fd::OwnedFd;
use std::path::Path;

use subagent_sandbox::{SandboxSpec, WorkspaceLayer};

use super::Probe;

/// Starts `/bin/true` under a small layer over `workspace`.
pub async fn layer_support(workspace: &Path) -> Result<(), String> {
    let mut spec = SandboxSpec::new("/bin/true", workspace);
    spec.env = subagent_sandbox::allowlisted_env(subagent_sandbox::DEFAULT_ENV_ALLOWLIST);
    spec.cwd_fd = Some(OwnedFd::from(
        std::fs::File::open(workspace).map_err(|e| format!("{}: {e}", workspace.display()))?,
    ));
    spec.layer = Some(WorkspaceLayer::New {
        bytes: 1024 * 1024,
        inodes: 64,
        within: None,
    });
    let mut child = subagent_sandbox::spawn(spec)
        .await
        .map_err(|e| e.to_string())?;
    let layer = child.take_layer();
    let exit = child.wait().await;
    match (layer, exit.termination.is_success()) {
        (Some(_), true) => Ok(()),
        (None, _) => Err("the child came back without its layer".to_owned()),
        (Some(_), false) => Err(format!("the child failed: {:?}", exit.termination)),
    }
}

/// The probe of [`layer_support`]'s outcome for `workspace`.
pub fn workspace_layer_probe(workspace: &Path, outcome: &Result<(), String>) -> Probe {
    match outcome {
        Ok(()) => Probe::ok(
            "workspace_layer",
            format!(
                "runs that can write work on a copy-on-write layer over {} (--isolation overlay)",
                workspace.display()
            ),
        ),
        Err(why) => Probe::missing(
            "workspace_layer",
            why.as_str(),
            "runs with python_execute are refused here; allow unprivileged user namespaces and \
             overlayfs in them (Linux 5.11+), use a workspace not already under two overlays, \
             or run with --isolation none (writes land in place as they happen)",
        ),
    }
}

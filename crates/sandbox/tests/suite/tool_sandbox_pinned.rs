//! What the view holds on to: a working directory pinned by descriptor
//! (`SandboxSpec::cwd_fd`) stays the one bound after its path is swapped
//! for a symlink, and configuration entries a workspace lacks cannot be
//! created (their placeholders are gone again once the tool is). Each with
//! a control that shows the attempt getting through without the pin.

use std::os::fd::OwnedFd;
use std::path::Path;

use super::support::{marker, needs_tool_sandbox};
use super::tool_sandbox_support::{
    assert_denied, dirs, probe, python_spec, run, run_spec, stdout, strict,
};

/// The directory at `path`, opened as a caller pins a workspace.
fn open_dir(path: &Path) -> OwnedFd {
    OwnedFd::from(std::fs::File::open(path).unwrap())
}

/// Python writing `pinned.txt` in its working directory.
const WRITE: &str = "open('pinned.txt', 'w').write('here')\nprint('wrote')";

#[tokio::test]
async fn a_pinned_workspace_swapped_for_a_symlink_is_still_the_one_bound() {
    if !needs_tool_sandbox() {
        return;
    }
    for pinned in [true, false] {
        let dirs = dirs();
        let ws = dirs.workspace.path().to_owned();
        let fd = open_dir(&ws);
        // Admitted, then swapped: the name now leads outside.
        let admitted = ws.with_extension("admitted");
        std::fs::rename(&ws, &admitted).unwrap();
        std::os::unix::fs::symlink(dirs.outside.path(), &ws).unwrap();
        let marker = marker().await;
        let mut spec = python_spec(WRITE, &dirs, &marker, strict(&dirs));
        if pinned {
            spec.cwd_fd = Some(fd);
        }
        let exit = run_spec(spec, &marker).await;
        assert!(stdout(&exit).contains("wrote"), "{exit:?}");
        let outside = dirs.outside.path().join("pinned.txt").exists();
        let inside = admitted.join("pinned.txt").exists();
        // Put the workspace back for the temp dir's cleanup.
        std::fs::remove_file(&ws).unwrap();
        std::fs::rename(&admitted, &ws).unwrap();
        if pinned {
            assert!(inside && !outside, "pinned: written outside the workspace");
        } else {
            assert!(outside, "control: without the pin the path is followed");
        }
    }
}

#[tokio::test]
async fn absent_configuration_entries_cannot_be_made_and_leave_nothing_behind() {
    if !needs_tool_sandbox() {
        return;
    }
    for (name, attempt) in [
        (".git", "import os\nos.mkdir('.git/hooks')"),
        (".subagent", "import os\nos.makedirs('.subagent/agents')"),
        (
            ".claude",
            "import os\nos.rmdir('.claude'); os.symlink('/tmp', '.claude')",
        ),
    ] {
        let dirs = dirs();
        let exit = run(&probe(attempt), &dirs, strict(&dirs)).await;
        assert_denied(&exit, &format!("making {name}"));
        for entry in [".git", ".subagent", ".claude"] {
            assert!(
                std::fs::symlink_metadata(dirs.workspace.path().join(entry)).is_err(),
                "{entry} was left in the workspace after {name}"
            );
        }
    }
}

//! No `.git` is left for the host to run (issue 32, attack 6): a tool
//! makes a git directory whose `core.fsmonitor` is a command, at the top
//! of a workspace that has none (through a symlink, as the attack did) and
//! nested in a repository (`src/.git`), and changes the config of a
//! repository the workspace already held (`vendor/lib/.git`). The host's
//! real `git status` then runs in each place; the command must not run.
//! What was quarantined is said in the tool result and the session file.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::python_call::{python_call, python_call_with};

/// Python making a git directory at `gitdir` whose fsmonitor touches
/// `marker`.
fn make_gitdir(gitdir: &str, marker: &Path) -> String {
    format!(
        "os.makedirs({gitdir:?} + '/objects', exist_ok=True)\n\
         os.makedirs({gitdir:?} + '/refs', exist_ok=True)\n\
         open({gitdir:?} + '/HEAD', 'w').write('ref: refs/heads/main\\n')\n\
         open({gitdir:?} + '/config', 'w').write('[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch {marker}; false\"\\n')\n",
        marker = marker.display()
    )
}

/// The host's `git status` in `dir`, as root (this test's user).
fn host_git_status(dir: &Path) {
    let _ = Command::new("git")
        .arg("-C")
        .arg(dir)
        .arg("status")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
}

/// The session's `log` lines that mention quarantine.
fn quarantine_logs(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "log")
        .filter_map(|l| l["message"].as_str())
        .filter(|m| m.contains("quarantined"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_git_dir_made_at_the_top_through_a_symlink_never_reaches_the_hosts_git() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let marker = dir.path().join("ran");
    let code = format!(
        "import os\n{}os.symlink('.gitdata/.git', '.git')\n",
        make_gitdir(".gitdata/.git", &marker)
    );
    let (output, lines) = python_call(&ws, &code);
    for place in [ws.clone(), ws.join(".gitdata")] {
        host_git_status(&place);
    }
    assert!(
        !marker.exists(),
        "the host's git ran the tool's command: {output}"
    );
    // The top `.git` could not be made; the nested one was set aside.
    assert!(std::fs::symlink_metadata(ws.join(".git")).is_err());
    assert!(!ws.join(".gitdata/.git").exists());
    assert!(output.contains(".gitdata/.git"), "{output}");
    assert!(output.contains("quarantined"), "{output}");
    let logs = quarantine_logs(&lines);
    assert!(
        logs.iter().any(|m| m.contains(".gitdata/.git")),
        "{lines:#?}"
    );
}

/// `git init` on the host in `dir`.
fn git_init(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let out = Command::new("git")
        .args(["init", "-q"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_nested_git_dir_and_a_changed_repository_config_are_quarantined() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    git_init(&ws);
    git_init(&ws.join("vendor/lib"));
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let untouched = ws.join("docs");
    git_init(&untouched);
    let marker = dir.path().join("ran");
    let code = format!(
        "import os\n{}open('vendor/lib/.git/config', 'a').write('[core]\\n\\tfsmonitor = \"touch {}; false\"\\n')\n",
        make_gitdir("src/.git", &marker),
        marker.display()
    );
    // In place: the quarantine is what `--isolation none` has (with the
    // default layer, no change under a `.git` reaches the workspace at all).
    let (output, lines) = python_call_with(&ws, &code, &["--isolation", "none"]);
    for place in [ws.clone(), ws.join("src"), ws.join("vendor/lib")] {
        host_git_status(&place);
    }
    assert!(
        !marker.exists(),
        "the host's git ran the tool's command: {output}"
    );
    for quarantined in ["src/.git", "vendor/lib/.git"] {
        assert!(
            !ws.join(quarantined).exists(),
            "{quarantined} is still there"
        );
        assert!(output.contains(quarantined), "{quarantined}: {output}");
        let logs = quarantine_logs(&lines);
        assert!(
            logs.iter().any(|m| m.contains(quarantined)),
            "{quarantined}: {lines:#?}"
        );
    }
    // What the tool did not touch stays: the workspace's own repository
    // and a nested one left alone.
    assert!(ws.join(".git/config").is_file());
    assert!(untouched.join(".git/config").is_file());
    let set_aside: Vec<String> = std::fs::read_dir(ws.join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        set_aside.iter().any(|n| n.starts_with(".git.quarantined-")),
        "{set_aside:?}"
    );
}

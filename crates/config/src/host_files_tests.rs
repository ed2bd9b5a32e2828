//! Which workspaces the host's files refuse, on real directories.

use std::collections::BTreeMap;

use super::*;

/// A home with a config dir, a workspace beside it, and the env of a user
/// whose HOME is that home.
struct Host {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Host {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("home/.config/subagent")).unwrap();
        std::fs::create_dir_all(root.join("home/project")).unwrap();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        Self { _dir: dir, root }
    }

    fn files(&self, vars: &[(&str, String)], operator: &[PathBuf]) -> HostFiles {
        let mut env: BTreeMap<String, OsString> = BTreeMap::new();
        env.insert("HOME".into(), self.root.join("home").into());
        env.insert("PATH".into(), self.root.join("bin").into());
        for (k, v) in vars {
            env.insert((*k).to_owned(), v.into());
        }
        HostFiles::new(
            &|name| env.get(name).cloned(),
            &self.root.join("home/project"),
            &[self.root.join("bin/subagent-worker")],
            &self.root.join("sessions"),
            operator,
        )
    }
}

#[test]
fn the_home_dir_is_refused_and_a_project_in_it_is_not() {
    let host = Host::new();
    let files = host.files(&[], &[]);
    let refused = files.check(&host.root.join("home")).unwrap_err();
    assert!(refused.contains(".config/subagent"), "{refused}");
    assert!(refused.contains("the user's config dir"), "{refused}");
    assert!(refused.contains("subdirectory"), "{refused}");
    assert_eq!(
        files.check(&host.root.join("home/project")),
        Ok(Admitted::default())
    );
}

#[test]
fn a_workspace_inside_the_config_state_or_cache_dir_is_refused() {
    let host = Host::new();
    let files = host.files(&[], &[]);
    for inside in [
        ".config/subagent/agents",
        ".local/state/subagent/x",
        ".cache/subagent",
    ] {
        let ws = host.root.join("home").join(inside);
        std::fs::create_dir_all(&ws).unwrap();
        let refused = files.check(&ws).unwrap_err();
        assert!(
            refused.contains("lies inside") || refused.contains(" is "),
            "{inside}: {refused}"
        );
    }
}

#[test]
fn path_dirs_count_missing_relative_and_empty() {
    let host = Host::new();
    let ws = host.root.join("home/project");
    let shims = ws.join(".pyenv/shims").display().to_string();
    for path in [shims.as_str(), "tools", ""] {
        let files = host.files(&[("PATH", path.to_owned())], &[]);
        let refused = files.check(&ws).unwrap_err();
        assert!(refused.contains("on PATH"), "{path:?}: {refused}");
        assert!(refused.contains("off PATH"), "{path:?}: {refused}");
    }
}

#[test]
fn programs_and_the_renderer_beside_the_worker_count() {
    let host = Host::new();
    let files = host.files(&[], &[]);
    let refused = files.check(&host.root.join("bin")).unwrap_err();
    assert!(refused.contains("own programs"), "{refused}");
}

#[test]
fn a_location_reached_through_a_symlink_in_the_workspace_counts() {
    let host = Host::new();
    let ws = host.root.join("home/project");
    // XDG_CONFIG_HOME outside the workspace, through a link inside it.
    std::fs::create_dir_all(host.root.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(host.root.join("elsewhere"), ws.join("cfg")).unwrap();
    let files = host.files(
        &[("XDG_CONFIG_HOME", ws.join("cfg").display().to_string())],
        &[],
    );
    let refused = files.check(&ws).unwrap_err();
    assert!(refused.contains("cfg"), "{refused}");
}

#[test]
fn the_operators_files_in_the_workspace_are_protected_not_refused() {
    let host = Host::new();
    let ws = host.root.join("home/project");
    std::fs::create_dir_all(ws.join("out")).unwrap();
    let files = host.files(&[], &[ws.join("out/results.jsonl")]);
    assert_eq!(
        files.check(&ws),
        Ok(Admitted {
            protected: vec![ws.join("out/results.jsonl")]
        })
    );
    // The sessions dir as the workspace, or around it: refused.
    let sessions = host.root.join("sessions");
    std::fs::create_dir_all(sessions.join("ws")).unwrap();
    for inside in [sessions.clone(), sessions.join("ws")] {
        let refused = files.check(&inside).unwrap_err();
        assert!(refused.contains("the sessions dir"), "{refused}");
    }
    // Reached through a symlink in the workspace: refused.
    std::os::unix::fs::symlink(host.root.join("elsewhere"), ws.join("link")).unwrap();
    let files = host.files(&[], &[ws.join("link/results.jsonl")]);
    let refused = files.check(&ws).unwrap_err();
    assert!(refused.contains("a symlink"), "{refused}");
}

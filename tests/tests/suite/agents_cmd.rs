//! `subagent agents` and agent files as a user meets them: a project's
//! `.subagent/agents` listed with its path, shown in full, used by `subagent
//! run` as the system prompt, refused when disabled, and a malformed file
//! named with its line. HOME and XDG_CONFIG_HOME point into a tempdir so the
//! real home is never read.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::support::*;

/// A repository (`repo/.git`) with one agents dir, and a home beside it.
pub(super) struct Project {
    pub(super) root: tempfile::TempDir,
}

impl Project {
    pub(super) fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        Self { root }
    }

    pub(super) fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }

    pub(super) fn add_agent(&self, file: &str, text: &str) -> PathBuf {
        let dir = self.repo().join(".subagent/agents");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        self.trust();
        path
    }

    /// A Claude Code agent file in `.claude/agents`, the project trusted.
    pub(super) fn add_claude_agent(&self, file: &str, text: &[u8]) -> PathBuf {
        let dir = self.repo().join(".claude/agents");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        self.trust();
        path
    }

    /// The operator trusts the project's files as they are now.
    pub(super) fn trust(&self) {
        trust_project(&self.repo(), &self.root.path().join("home"));
    }

    pub(super) fn subagent(&self, args: &[&str]) -> Output {
        let home = self.root.path().join("home");
        Command::new(binary("subagent"))
            .args(args)
            .current_dir(self.repo())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `subagent run --agent AGENT --json` with the fixture worker.
    pub(super) fn run(&self, agent: &str, sessions: &Path) -> Output {
        self.run_with(agent, sessions, &[])
    }

    /// [`Project::run`] with `extra` flags.
    pub(super) fn run_with(&self, agent: &str, sessions: &Path, extra: &[&str]) -> Output {
        let workspace = self.repo();
        let mut args = vec![
            "run",
            "--worker",
            FIXTURE,
            "--sessions-dir",
            sessions.to_str().unwrap(),
            "--workspace",
            workspace.to_str().unwrap(),
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--task",
            "fixture:success",
            "--agent",
            agent,
            "--json",
        ];
        args.extend_from_slice(extra);
        self.subagent(&args)
    }
}

const REVIEW: &str = "---\nname: team-review\ndescription: Reviews our code.\n\
    tools: [bash_read, bash_ripgrep]\nmodel: house-model\n---\nYou are our team's reviewer. Marker 7f3a.\n";

#[test]
fn agents_ls_shows_a_project_agent_with_its_path_and_the_builtins() {
    let project = Project::new();
    let path = project.add_agent("review.md", REVIEW);
    let out = project.subagent(&["agents", "ls"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("team-review"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(path.to_str().unwrap()), "{line}");
    assert!(
        line.contains("bash_read,bash_ripgrep") && line.contains("house-model"),
        "{line}"
    );
    for builtin in ["general", "reviewer", "implementer"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(builtin) && l.contains("built-in")),
            "{text}"
        );
    }

    let out = project.subagent(&["agents", "ls", "--json"]);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list[0]["name"], "team-review");
    assert_eq!(list[0]["source"], path.to_str().unwrap());
}

#[test]
fn agents_show_prints_the_prompt_and_claude_code_warnings() {
    let project = Project::new();
    project.add_agent("review.md", REVIEW);
    let out = project.subagent(&["agents", "show", "team-review"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("You are our team's reviewer. Marker 7f3a."),
        "{text}"
    );
    assert!(text.contains("description: Reviews our code."), "{text}");

    let claude = project.repo().join(".claude/agents");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("c.md"),
        "---\nname: cc\ntools: Read, Bash, NotebookEdit\n---\np\n",
    )
    .unwrap();
    project.trust();
    let out = project.subagent(&["agents", "show", "cc"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tools: bash_read,bash")
            && text.contains("warning: tool `NotebookEdit` dropped"),
        "{text}"
    );
    // stderr counts them in one line; stdout above has them in full.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "subagent: warning: 1 agent file: 1 tool not available here; \
         `subagent agents ls --warnings` lists them",
        "{out:?}"
    );

    let out = project.subagent(&["agents", "show", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("UNKNOWN_AGENT"),
        "{out:?}"
    );
}

#[test]
fn a_run_with_a_project_agents_file_records_its_prompt_as_the_system_message() {
    let project = Project::new();
    project.add_agent("review.md", REVIEW);
    let sessions = project.root.path().join("sessions");
    let out = project.run("team-review", &sessions);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_children_reaped(&json);
    let file = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let system = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v.to_string().contains("\"system\""))
        .unwrap_or_else(|| panic!("no system message in {text}"));
    assert!(system.to_string().contains("Marker 7f3a"), "{system}");
}

#[test]
fn a_builtins_system_prompt_names_only_the_tools_the_run_has() {
    let project = Project::new();
    let sessions = project.root.path().join("sessions");
    let out = project.run_with("general", &sessions, &["--tools", "bash_read"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_children_reaped(&json);
    let file = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let system = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v.to_string().contains("\"system\""))
        .unwrap_or_else(|| panic!("no system message in {text}"))
        .to_string();
    assert!(system.contains("bash_read"), "{system}");
    for absent in ["python_execute", "bash_ripgrep", "bash_find"] {
        assert!(!system.contains(absent), "names {absent}: {system}");
    }
}

#[test]
fn a_disabled_agents_run_exits_with_subagent_disabled_naming_the_file() {
    let project = Project::new();
    let path = project.add_agent("off.md", "---\nname: off\ndisabled: true\n---\np\n");
    let out = project.run("off", &project.root.path().join("sessions"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = &json["details"]["error"];
    assert_eq!(error["code"], "SUBAGENT_DISABLED", "{json}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains(path.to_str().unwrap()),
        "{json}"
    );
}

#[test]
fn a_malformed_agents_file_is_skipped_with_one_warning_and_only_its_run_refused() {
    let project = Project::new();
    let path = project.add_agent(
        "bad.md",
        "---\nname: bad\ndescription: d\nmaxTurns: lots\n---\np\n",
    );
    let expected = format!("{}:4:", path.display());
    for args in [&["agents", "ls"][..], &["agents", "show", "general"][..]] {
        let out = project.subagent(args);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("subagent: warning: agent file skipped: ")
                && err.contains(&expected)
                && err.contains("maxTurns"),
            "{err}"
        );
    }
    let sessions = project.root.path().join("sessions");
    let out = project.run("general", &sessions);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_children_reaped(&serde_json::from_slice(&out.stdout).unwrap());

    let out = project.run("bad", &sessions);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = &json["details"]["error"];
    assert_eq!(error["code"], "UNKNOWN_AGENT", "{json}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&expected) && message.contains("cannot be read"),
        "{message}"
    );
}

#[test]
fn agents_help_shows_the_lookup_order_and_examples() {
    let project = Project::new();
    let out = project.subagent(&["agents", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("LOOKUP ORDER") && text.contains("subagent agents show reviewer"),
        "{text}"
    );
}

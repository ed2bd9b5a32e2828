//! Agent files as the ecosystem writes them, through the real binary: the
//! vendored corpus of public Claude Code agents (`tests/corpus/agents`,
//! see its README) as one workspace's `.claude/agents/`.
//!
//! What must hold: a file that strict YAML rejects (an unquoted `: ` in its
//! description) is read as Claude Code reads it; a file that cannot be read
//! at all is skipped with exactly one warning and takes nothing else down
//! (`agents ls`, a built-in's run, `serve --mcp`, `doctor`); and the
//! warnings of forty files are one line, in full only for the agent a
//! command runs and with `agents ls --warnings`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::agents_cmd::Project;
use super::support::*;

/// The corpus: one directory per collection.
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/agents");

/// The one corpus file no reader can use: it starts with a blank line and
/// an indented `---`, so it has no frontmatter.
const UNREADABLE: &str = "sqs-expert.md";

/// A corpus file whose frontmatter strict YAML rejects.
const NOT_STRICT_YAML: &str = "voltagent-awesome-claude-code-subagents/growth-loops.md";

/// Every agent file of the corpus, in name order.
fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for collection in std::fs::read_dir(CORPUS).unwrap() {
        let collection = collection.unwrap().path();
        if !collection.is_dir() {
            continue;
        }
        assert!(
            collection.join("LICENSE").is_file(),
            "{} has no LICENSE",
            collection.display()
        );
        for file in std::fs::read_dir(&collection).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A trusted project whose `.claude/agents/` holds the whole corpus.
fn corpus_project() -> Project {
    let project = Project::new();
    let dir = project.repo().join(".claude/agents");
    std::fs::create_dir_all(&dir).unwrap();
    for file in corpus_files() {
        std::fs::copy(&file, dir.join(file.file_name().unwrap())).unwrap();
    }
    project.trust();
    project
}

/// The `name:` of a readable corpus file, as Claude Code reads it.
fn declared_name(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("name:"))
        .unwrap_or_else(|| panic!("{} has no name line", path.display()));
    line.trim().to_owned()
}

/// stderr's lines without the `subagent: ` every one starts with.
fn stderr_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| l.strip_prefix("subagent: ").unwrap_or(l).to_owned())
        .collect()
}

#[test]
fn the_corpus_has_at_least_30_files_with_some_that_strict_yaml_rejects() {
    let files = corpus_files();
    assert!(files.len() >= 30, "{} files", files.len());
    let yaml_head = std::fs::read_to_string(Path::new(CORPUS).join(NOT_STRICT_YAML)).unwrap();
    assert!(
        yaml_head.contains("Triggers on: 'growth loop'"),
        "{NOT_STRICT_YAML} changed"
    );
}

#[test]
fn every_readable_corpus_file_is_listed_and_the_unreadable_one_warns_once() {
    let project = corpus_project();
    let out = project.subagent(&["agents", "ls", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut names: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["source"] != "built-in")
        .map(|a| a["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = corpus_files()
        .iter()
        .filter(|f| !f.ends_with(UNREADABLE))
        .map(|f| declared_name(f))
        .collect();
    expected.sort();
    assert_eq!(names, expected);

    let lines = stderr_lines(&out);
    let skipped: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("warning: agent file skipped: "))
        .collect();
    assert_eq!(skipped.len(), 1, "{lines:#?}");
    assert!(
        skipped[0].contains(UNREADABLE) && skipped[0].contains("no frontmatter"),
        "{lines:#?}"
    );
    // The skipped line and one grouped line for every dropped tool and alias.
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[1].contains(" agent files: ") && lines[1].contains("agents ls --warnings"),
        "{lines:#?}"
    );
}

#[test]
fn a_file_strict_yaml_rejects_is_read_with_its_whole_description() {
    let project = corpus_project();
    let out = project.subagent(&["agents", "show", "growth-loops", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let agent: Value = serde_json::from_slice(&out.stdout).unwrap();
    let description = agent["description"].as_str().unwrap();
    assert!(
        description.starts_with("Use when the user wants to design a growth loop")
            && description.ends_with("'word of mouth'."),
        "{description}"
    );
    assert_eq!(
        agent["tools"],
        json!([
            "bash_read",
            "write_file",
            "edit_file",
            "bash_find",
            "bash_ripgrep",
            "scrape_webpage",
            "search_web"
        ])
    );
}

/// Claude Code's tools that act, as issue 35 counted them in 429 public
/// agent files. The vendored collections list Write, Edit, MultiEdit and
/// Bash; none of them lists LS, TodoWrite, Task or a `Bash(pattern)` rule
/// at its pinned commit, so one file written here lists those.
const TOOLS_THAT_ACT: &[&str] = &[
    "Write",
    "Edit",
    "MultiEdit",
    "Bash",
    "LS",
    "TodoWrite",
    "Task",
];

#[test]
fn agents_ls_warnings_over_the_corpus_drops_none_of_the_tools_that_act() {
    let project = corpus_project();
    std::fs::write(
        project.repo().join(".claude/agents/issue-35-tools.md"),
        "---\nname: issue-35-tools\ndescription: Lists what the corpus does not.\n\
         tools: LS, TodoWrite, Task, Bash(git diff:*), MultiEdit\n---\nDo the task.\n",
    )
    .unwrap();
    project.trust();
    let listed = std::fs::read_dir(project.repo().join(".claude/agents"))
        .unwrap()
        .map(|f| std::fs::read_to_string(f.unwrap().path()).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    for tool in TOOLS_THAT_ACT {
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with("tools:") && l.split([':', ',']).any(|t| t.trim() == *tool)),
            "no file of the corpus lists {tool}"
        );
    }
    let all = project.subagent(&["agents", "ls", "--warnings"]);
    assert_eq!(all.status.code(), Some(0), "{all:?}");
    let lines = stderr_lines(&all);
    for tool in TOOLS_THAT_ACT {
        let dropped = format!("tool `{tool}` dropped");
        assert!(
            !lines.iter().any(|l| l.contains(&dropped)),
            "{tool} dropped: {lines:#?}"
        );
    }
    let patterns: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("given without its pattern"))
        .collect();
    assert_eq!(patterns.len(), 1, "{lines:#?}");
    assert!(patterns[0].contains("`Bash(git diff:*)`"), "{lines:#?}");

    let shown = project.subagent(&["agents", "show", "issue-35-tools", "--json"]);
    let agent: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        agent["tools"],
        json!(["list_dir", "todo_write", "subagent", "bash", "multi_edit"])
    );
    let shown = project.subagent(&["agents", "show", "python-pro", "--json"]);
    let agent: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        agent["tools"],
        json!([
            "bash_read",
            "write_file",
            "multi_edit",
            "bash",
            "bash_find",
            "bash_ripgrep"
        ])
    );
}

#[test]
fn a_command_prints_one_grouped_warning_line_and_the_run_agents_in_full() {
    let project = corpus_project();
    let show = project.subagent(&["agents", "show", "cpp-pro"]);
    assert_eq!(show.status.code(), Some(0), "{show:?}");
    assert_eq!(stderr_lines(&show).len(), 2, "{show:?}");

    let all = project.subagent(&["agents", "ls", "--warnings"]);
    assert_eq!(all.status.code(), Some(0), "{all:?}");
    let listed: Value =
        serde_json::from_slice(&project.subagent(&["agents", "ls", "--json"]).stdout).unwrap();
    let total: usize = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["warnings"].as_array().unwrap().len())
        .sum();
    assert!(total > 30, "{total} warnings in the corpus");
    // Every warning, plus the skipped file.
    assert_eq!(stderr_lines(&all).len(), total + 1, "{all:?}");

    let sessions = project.root.path().join("sessions");
    let run = project.run("cpp-pro", &sessions);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_children_reaped(&serde_json::from_slice(&run.stdout).unwrap());
    let cpp_pro = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "cpp-pro")
        .unwrap();
    let own = cpp_pro["warnings"].as_array().unwrap().len();
    assert!(own > 0);
    let lines = stderr_lines(&run);
    let warnings: Vec<&String> = lines.iter().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 2 + own, "{lines:#?}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("warning: agent cpp-pro "))
            .count(),
        own,
        "{lines:#?}"
    );
}

/// A trusted project with one file strict YAML rejects and one that
/// cannot be read at all.
fn project_with_bad_files() -> Project {
    let project = Project::new();
    for name in [
        NOT_STRICT_YAML,
        &format!("0xfurai-claude-code-subagents/{UNREADABLE}"),
    ] {
        let path = Path::new(CORPUS).join(name);
        let file = path.file_name().unwrap().to_str().unwrap();
        project.add_claude_agent(file, &std::fs::read(&path).unwrap());
    }
    project
}

#[test]
fn agents_ls_and_a_builtins_run_work_beside_bad_agent_files() {
    let project = project_with_bad_files();
    let out = project.subagent(&["agents", "ls"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.lines().any(|l| l.starts_with("growth-loops ")),
        "{table}"
    );

    let sessions = project.root.path().join("sessions");
    let out = project.run("general", &sessions);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_children_reaped(&serde_json::from_slice(&out.stdout).unwrap());

    // Only the run that asks for the unreadable file's agent is refused.
    let out = project.run("sqs-expert", &sessions);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let message = json["details"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(UNREADABLE) && message.contains("no frontmatter"),
        "{message}"
    );
}

#[test]
fn serve_mcp_starts_and_lists_its_tool_beside_bad_agent_files() {
    let project = project_with_bad_files();
    let home = project.root.path().join("home");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "agent-corpus-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let input: String = messages.iter().map(|m| format!("{m}\n")).collect();
    let mut command = Command::new(binary("subagent"));
    command
        .args(["serve", "--mcp", "--worker", FIXTURE, "--model", "m"])
        .args(["--base-url", "http://127.0.0.1:9/v1"])
        .arg("--sessions-dir")
        .arg(project.root.path().join("sessions"))
        .current_dir(project.repo())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The server answers, sees stdin close, and exits.
    let child = spawn_with_stdin(&mut command, input.as_bytes());
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    eprintln!("server pid {pid}: {:?}", out.status);
    assert!(out.status.success(), "{out:?}");
    assert_nothing_runs_in(&project.repo());
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tools = answers
        .iter()
        .find(|a| a["id"] == 2)
        .unwrap_or_else(|| panic!("no tools/list answer: {out:?}"));
    assert!(
        !tools["result"]["tools"].as_array().unwrap().is_empty(),
        "{tools}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("warning: agent file skipped: ").count(),
        1,
        "{err}"
    );
}

#[test]
fn doctor_reports_bad_agent_files_without_failing() {
    let project = project_with_bad_files();
    let out = project.subagent(&["doctor", "--json"]);
    assert_nothing_runs_in(&project.repo());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let agents = report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "agents")
        .unwrap();
    assert_eq!(agents["ok"], true, "{agents}");
    let detail = agents["detail"].as_str().unwrap();
    assert!(
        detail.contains("growth-loops") && detail.contains("1 agent file skipped"),
        "{detail}"
    );
    // The exit code follows the other probes of this machine, not the file.
    let expected = if report["ok"] == true { 0 } else { 7 };
    assert_eq!(out.status.code(), Some(expected), "{report}");
}

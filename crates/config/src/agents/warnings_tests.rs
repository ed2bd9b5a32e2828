use pretty_assertions::assert_eq;

use super::catalog::{AgentCatalog, AgentDefinition, AgentSource};
use super::warnings::{AgentWarning, UnreadableAgentFile, WarningDetail};

fn with_warnings(name: &str, warnings: Vec<AgentWarning>) -> AgentDefinition {
    AgentDefinition {
        name: name.to_owned(),
        source: AgentSource::File(format!("{name}.md").into()),
        warnings,
        ..AgentDefinition::default()
    }
}

fn catalog() -> AgentCatalog {
    let tool = |t: &str| AgentWarning::ToolDropped(t.to_owned());
    AgentCatalog::with_unreadable(
        vec![
            with_warnings(
                "a",
                vec![
                    AgentWarning::PatternNotEnforced("Bash(git:*)".into()),
                    tool("NotebookEdit"),
                    AgentWarning::ModelAlias("sonnet".into()),
                ],
            ),
            with_warnings("b", vec![tool("Write"), tool("Edit")]),
            with_warnings("c", Vec::new()),
        ],
        vec![UnreadableAgentFile {
            path: "x.md".into(),
            name: Some("x".into()),
            reason: "x.md:1: agent file has no frontmatter".into(),
        }],
    )
}

#[test]
fn grouped_warnings_are_one_line_plus_one_per_unreadable_file() {
    assert_eq!(
        catalog().warning_lines(WarningDetail::Grouped { full_for: None }),
        [
            "warning: agent file skipped: x.md:1: agent file has no frontmatter",
            "warning: 2 agent files: 3 tools not available here, 1 tool pattern not enforced, 1 \
             Claude Code model alias ignored; \
             `subagent agents ls --warnings` lists them",
        ]
    );
}

#[test]
fn the_agent_a_command_runs_gets_its_warnings_in_full() {
    let lines = catalog().warning_lines(WarningDetail::Grouped {
        full_for: Some("b"),
    });
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(
        lines[1].starts_with(
            "warning: 1 agent file: 1 tool not available here, 1 tool pattern not enforced"
        ),
        "{lines:#?}"
    );
    assert!(
        lines[2].starts_with("warning: agent b (b.md): tool `Write` dropped"),
        "{lines:#?}"
    );
}

#[test]
fn full_detail_prints_every_warning() {
    let lines = catalog().warning_lines(WarningDetail::Full);
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(
        lines[1].contains("`Bash(git:*)` given without its pattern: patterns are not enforced")
    );
    assert!(lines[2].contains("`NotebookEdit` dropped: no equivalent here"));
    assert!(lines[3].contains("`sonnet` is a Claude Code alias"));
}

#[test]
fn a_catalog_without_warnings_prints_nothing() {
    assert!(
        AgentCatalog::builtin()
            .warning_lines(WarningDetail::Grouped {
                full_for: Some("general")
            })
            .is_empty()
    );
}

use pretty_assertions::assert_eq;
use subagent_protocol::tool_names::{BASH_READ, BUILTIN_TOOLS, READ_ONLY_TOOLS, SUBAGENT};

use super::catalog::{AgentCatalog, AgentDefinition, AgentSource};

#[test]
fn builtin_agents_include_reviewer_read_only_and_implementer_with_every_tool() {
    let catalog = AgentCatalog::builtin();
    assert_eq!(
        catalog.names(),
        [
            "general",
            "explorer",
            "researcher",
            "reviewer",
            "implementer"
        ]
    );
    let reviewer = catalog.get("reviewer").unwrap();
    assert_eq!(reviewer.tools, READ_ONLY_TOOLS);
    assert!(reviewer.system_prompt.contains("path:line"));
    // Every tool, `subagent` too: the depth limit, not the list, decides
    // whether it may delegate.
    let mut every_tool = BUILTIN_TOOLS.to_vec();
    every_tool.push(SUBAGENT);
    assert_eq!(catalog.get("implementer").unwrap().tools, every_tool);
    assert!(
        catalog
            .agents()
            .iter()
            .all(|a| a.source == AgentSource::BuiltIn)
    );
}

#[test]
fn every_builtin_agents_prompt_names_each_of_its_tools() {
    for agent in AgentCatalog::builtin().agents() {
        let prompt = agent.system_prompt_for(&agent.tools);
        for tool in &agent.tools {
            assert!(prompt.contains(tool.as_str()), "{}: {tool}", agent.name);
        }
    }
}

/// Whether `prompt` names `tool` as a word of its own (`bash` is in
/// `bash_read`, and is not named by it).
fn names_tool(prompt: &str, tool: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    prompt.match_indices(tool).any(|(at, _)| {
        !prompt[..at].ends_with(word) && !prompt[at + tool.len()..].starts_with(word)
    })
}

#[test]
fn a_builtin_prompt_names_only_the_tools_the_run_has() {
    let only_read = vec![BASH_READ.to_owned()];
    for agent in AgentCatalog::builtin().agents() {
        let prompt = agent.system_prompt_for(&only_read);
        assert!(prompt.contains(BASH_READ), "{}: {prompt}", agent.name);
        for other in BUILTIN_TOOLS.iter().filter(|t| **t != BASH_READ) {
            assert!(
                !names_tool(&prompt, other),
                "{} names {other}: {prompt}",
                agent.name
            );
        }
        let none = agent.system_prompt_for(&[]);
        assert!(
            BUILTIN_TOOLS.iter().all(|t| !names_tool(&none, t)) && none.contains("no tools"),
            "{}: {none}",
            agent.name
        );
    }
}

#[test]
fn a_files_prompt_is_kept_as_written() {
    let agent = AgentDefinition {
        system_prompt: "Use python_execute.".into(),
        source: AgentSource::File("a.md".into()),
        ..AgentDefinition::default()
    };
    assert_eq!(agent.system_prompt_for(&[]), "Use python_execute.");
}

use pretty_assertions::assert_eq;
use subagent_protocol::tool_names::{BUILTIN_TOOLS, READ_ONLY_TOOLS};

use super::catalog::{AgentCatalog, AgentSource};

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
    assert_eq!(catalog.get("implementer").unwrap().tools, BUILTIN_TOOLS);
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
        for tool in &agent.tools {
            assert!(
                agent.system_prompt.contains(tool.as_str()),
                "{}: {tool}",
                agent.name
            );
        }
    }
}

use std::path::Path;

use pretty_assertions::assert_eq;
use subagent_protocol::tool_names::BUILTIN_TOOLS;

use super::catalog::{AgentDefinition, AgentOutputSchema, AgentSource};
use super::file::{AgentFileError, AgentFileFlavor, parse_agent_file};
use crate::{LimitKey, LimitSet, LimitValue};

fn parse(text: &str) -> Result<AgentDefinition, AgentFileError> {
    parse_agent_file(Path::new("a/review.md"), text, AgentFileFlavor::Subagent)
}

fn claude(text: &str) -> AgentDefinition {
    parse_agent_file(Path::new("a/c.md"), text, AgentFileFlavor::ClaudeCode).unwrap()
}

#[test]
fn agents_file_fields_are_read_and_the_body_is_the_prompt() {
    let agent = parse(
        "---\nname: review\ndescription: Reviews.\ntools: bash_read, bash_ripgrep\n\
         model: gpt-4o-mini\nprovider: openai-chat\nmaxTurns: 12\ntimeout: 10m\nidleTimeout: 45\n\
         memory: 1G\nmaxCost: 0.25\ncolor: blue\n---\n\
         You review code.\n\nReport path:line.\n",
    )
    .unwrap();
    assert_eq!(
        agent,
        AgentDefinition {
            name: "review".into(),
            description: "Reviews.".into(),
            system_prompt: "You review code.\n\nReport path:line.".into(),
            tools: vec!["bash_read".into(), "bash_ripgrep".into()],
            mcp_servers: Vec::new(),
            source: AgentSource::File("a/review.md".into()),
            model: Some("gpt-4o-mini".into()),
            provider: Some("openai-chat".into()),
            limits: {
                let mut set = LimitSet::default();
                set.set(LimitKey::MaxTurns, LimitValue::Count(12));
                set.set(LimitKey::Timeout, LimitValue::Ms(600_000));
                set.set(LimitKey::IdleTimeout, LimitValue::Ms(45_000));
                set.set(LimitKey::Memory, LimitValue::Bytes(1 << 30));
                set.set(LimitKey::MaxCost, LimitValue::Dollars(0.25));
                set
            },
            output_schema: None,
            disabled: false,
            warnings: Vec::new(),
            describes_tools: false,
            isolation: None,
        }
    );
}

#[test]
fn agents_tools_may_be_a_yaml_list_and_default_to_every_tool() {
    let listed = parse("---\nname: x\ntools:\n  - bash_find\n  - python_execute\n---\np").unwrap();
    assert_eq!(listed.tools, ["bash_find", "python_execute"]);
    let absent = parse("---\nname: x\ndisabled: true\n---\np").unwrap();
    assert_eq!(absent.tools, BUILTIN_TOOLS);
    assert!(absent.disabled);
}

#[test]
fn malformed_agents_yaml_names_the_file_and_line() {
    let err = parse("---\nname: x\ntools: [bash_read\n---\np").unwrap_err();
    let text = err.to_string();
    // The flow list opens on line 3 and is still open at the closing `---`.
    assert!(
        matches!(err, AgentFileError::Yaml { line: 4, .. }),
        "{text}"
    );
    assert!(text.starts_with("a/review.md:4: "), "{text}");
    assert!(text.contains("at line 3 column 8"), "{text}");
}

#[test]
fn a_bad_agents_field_names_the_file_the_line_and_the_field() {
    let err = parse("---\nname: x\ndescription: d\nmaxTurns: many\n---\np").unwrap_err();
    assert!(
        matches!(
            &err,
            AgentFileError::Field {
                line: 4,
                field: "maxTurns",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("a/review.md:4: agent file field `maxTurns`"),
        "{err}"
    );

    let err = parse("---\nname: x\ntools: bash_read, bash_grep\n---\np").unwrap_err();
    assert!(
        matches!(
            &err,
            AgentFileError::Field {
                line: 3,
                field: "tools",
                ..
            }
        ),
        "{err:?}"
    );
    let err = parse("---\ndescription: d\n---\np").unwrap_err();
    assert!(
        matches!(&err, AgentFileError::Field { field: "name", .. }),
        "{err:?}"
    );
}

#[test]
fn agents_file_without_frontmatter_is_refused() {
    let err = parse("name: x\n").unwrap_err();
    assert!(
        matches!(err, AgentFileError::NoFrontmatter { .. }),
        "{err:?}"
    );
    let err = parse("---\nname: x\n").unwrap_err();
    assert!(
        matches!(err, AgentFileError::NoFrontmatter { .. }),
        "{err:?}"
    );
}

#[test]
fn claude_code_agents_tools_are_mapped_and_the_rest_dropped_with_warnings() {
    let agent = claude(
        "---\nname: c\ntools: Read, Grep, Glob, Bash(git:*), Edit, NotebookEdit, WebFetch, WebSearch\n---\np",
    );
    assert_eq!(
        agent.tools,
        [
            "bash_read",
            "bash_ripgrep",
            "bash_find",
            "bash",
            "edit_file",
            "scrape_webpage",
            "search_web"
        ]
    );
    assert_eq!(agent.warnings.len(), 2, "{:?}", agent.warnings);
    assert!(
        agent.warnings[0]
            .to_string()
            .contains("`Bash(git:*)` given without its pattern: patterns are not enforced"),
        "{:?}",
        agent.warnings
    );
    assert!(
        agent.warnings[1]
            .to_string()
            .contains("`NotebookEdit` dropped"),
        "{:?}",
        agent.warnings
    );
    assert!(!agent.tools.iter().any(|t| t == "python_execute"));
}

/// Claude Code's tools that act, one row each: (as written, ours).
#[test]
fn claude_codes_tools_that_act_map_to_ours() {
    for (claude_tool, ours) in [
        ("Write", "write_file"),
        ("Edit", "edit_file"),
        ("MultiEdit", "multi_edit"),
        ("Bash", "bash"),
        ("LS", "list_dir"),
        ("TodoWrite", "todo_write"),
        ("Task", "subagent"),
        ("subagent", "subagent"),
    ] {
        let agent = claude(&format!("---\nname: c\ntools: {claude_tool}\n---\np"));
        assert_eq!(agent.tools, [ours], "{claude_tool}");
        assert!(
            agent.warnings.is_empty(),
            "{claude_tool}: {:?}",
            agent.warnings
        );
    }
    // Several patterns of one tool give it once, with a warning each.
    let agent = claude("---\nname: c\ntools: Bash(git diff:*), Bash(npm test:*)\n---\np");
    assert_eq!(agent.tools, ["bash"]);
    assert_eq!(agent.warnings.len(), 2, "{:?}", agent.warnings);
}

#[test]
fn a_subagent_file_may_list_the_subagent_tool() {
    let agent = parse("---\nname: s\ntools: bash, write_file, subagent\n---\np").unwrap();
    assert_eq!(agent.tools, ["bash", "write_file", "subagent"]);
}

#[test]
fn claude_code_agents_without_tools_get_every_mapped_one() {
    let agent = claude("---\nname: c\ndescription: d\n---\np");
    assert_eq!(
        agent.tools,
        [
            "bash_read",
            "bash_ripgrep",
            "bash_find",
            "list_dir",
            "write_file",
            "edit_file",
            "multi_edit",
            "bash",
            "todo_write",
            "subagent",
            "search_web",
            "scrape_webpage"
        ]
    );
    assert!(agent.warnings.is_empty());
}

#[test]
fn bad_agent_limits_name_the_file_line_and_field() {
    let err = parse("---\nname: x\nmaxTurns: 12\nmemory: lots\n---\np").unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            AgentFileError::Field {
                line: 4,
                field: "memory",
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.starts_with("a/review.md:4:") && text.contains("512M"),
        "{text}"
    );
    let err = parse("---\nname: x\ntoolPids: [1]\n---\np").unwrap_err();
    assert!(
        matches!(
            err,
            AgentFileError::Field {
                line: 3,
                field: "toolPids",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn output_schema_is_inline_yaml_or_a_path_next_to_the_file() {
    let inline = parse(
        "---\nname: x\noutputSchema:\n  type: object\n  required: [answer]\n  properties:\n    answer: {type: string}\n---\np",
    )
    .unwrap();
    let Some(AgentOutputSchema::Inline(json)) = inline.output_schema else {
        panic!("expected an inline schema, got {:?}", inline.output_schema);
    };
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["required"][0], "answer");
    assert_eq!(value["properties"]["answer"]["type"], "string");
    let file = parse("---\nname: x\noutputSchema: schemas/a.json\n---\np").unwrap();
    assert_eq!(
        file.output_schema,
        Some(AgentOutputSchema::File("a/schemas/a.json".into()))
    );
    let err = parse("---\nname: x\noutputSchema: 3\n---\np").unwrap_err();
    assert!(
        matches!(
            err,
            AgentFileError::Field {
                field: "outputSchema",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn claude_code_model_aliases_are_dropped_with_a_warning() {
    let agent = claude("---\nname: c\nmodel: sonnet\n---\np");
    assert_eq!(agent.model, None);
    assert!(
        agent
            .warnings
            .iter()
            .any(|w| w.to_string().contains("sonnet")),
        "{:?}",
        agent.warnings
    );
    let agent = claude("---\nname: c\nmodel: gpt-4o\n---\np");
    assert_eq!(agent.model.as_deref(), Some("gpt-4o"));
}

/// The head of VoltAgent/awesome-claude-code-subagents'
/// `categories/08-business-product/growth-loops.md`: strict YAML refuses
/// its description ("mapping values are not allowed here").
const GROWTH_LOOPS: &str = "---\nname: growth-loops\ndescription: Use when the user wants to design a growth loop. \
    Triggers on: 'growth loop', 'flywheel', 'viral loop'.\ntools: Read, Write, Edit, Glob, Grep, WebFetch, WebSearch\n\
    model: sonnet\n---\n\nYou are an expert product growth strategist.\n";

#[test]
fn frontmatter_that_strict_yaml_rejects_is_read_as_key_value_lines() {
    let yaml = GROWTH_LOOPS.split("---\n").nth(1).unwrap();
    assert!(serde_yaml_ng::from_str::<serde_yaml_ng::Value>(yaml).is_err());
    let agent = claude(GROWTH_LOOPS);
    assert_eq!(agent.name, "growth-loops");
    assert_eq!(
        agent.description,
        "Use when the user wants to design a growth loop. Triggers on: 'growth loop', 'flywheel', 'viral loop'."
    );
    assert_eq!(
        agent.tools,
        [
            "bash_read",
            "write_file",
            "edit_file",
            "bash_find",
            "bash_ripgrep",
            "scrape_webpage",
            "search_web"
        ]
    );
    assert_eq!(agent.model, None);
    // Only the model alias is left to warn about.
    assert_eq!(agent.warnings.len(), 1, "{:?}", agent.warnings);
    assert_eq!(
        agent.system_prompt,
        "You are an expert product growth strategist."
    );
}

#[test]
fn the_key_value_reading_keeps_limits_lists_and_booleans_typed() {
    let agent = parse(
        "---\nname: x\ndescription: a: b\nmaxTurns: 7\ndisabled: true\ntools:\n  - bash_read\n  - bash_find\n---\np",
    )
    .unwrap();
    assert_eq!(agent.description, "a: b");
    assert_eq!(agent.tools, ["bash_read", "bash_find"]);
    assert!(agent.disabled);
    assert_eq!(
        agent.limits.get(LimitKey::MaxTurns),
        Some(LimitValue::Count(7))
    );
}

#[test]
fn the_name_of_an_unreadable_file_is_its_name_line_else_its_stem() {
    use super::file::unreadable_agent_name;
    let path = Path::new("a/stem.md");
    assert_eq!(
        unreadable_agent_name(path, "---\nname: real\nmaxTurns: lots\n---\n").as_deref(),
        Some("real")
    );
    assert_eq!(
        unreadable_agent_name(path, "\n    ---\n    name: sqs-expert\n").as_deref(),
        Some("stem")
    );
}

#[test]
fn an_agent_files_mcp_servers_defines_servers_inline_and_names_configured_ones() {
    let agent = claude(
        "---\nname: web\ntools: Read, mcp__inl, mcp__time__get_current_time\nmcpServers:\n\
         \x20 - time\n\
         \x20 - inl:\n      command: node\n      args: [\"server.js\", \"--flag\"]\n      env:\n        TZ: UTC\n\
         \x20 - remote:\n      type: http\n      url: https://example.com/mcp\n---\nBody.\n",
    );
    assert_eq!(
        agent.tools,
        ["bash_read", "mcp__inl", "mcp__time__get_current_time"]
    );
    let names: Vec<&str> = agent.mcp_servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["inl"],
        "only the inline stdio server is defined here"
    );
    assert_eq!(agent.mcp_servers[0].command, "node");
    assert_eq!(agent.mcp_servers[0].args, ["server.js", "--flag"]);
    let warnings: Vec<String> = agent.warnings.iter().map(ToString::to_string).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("mcpServers: ") && w.contains("remote")),
        "the http server is left out with a warning: {warnings:?}"
    );
}

#[test]
fn a_bad_mcp_servers_field_is_an_error_naming_it() {
    for bad in [
        "mcpServers: 3\n",
        "mcpServers:\n  - 3\n",
        "mcpServers:\n  - bad__name\n",
        "mcpServers:\n  - x:\n      args: [a]\n",
    ] {
        let text = format!("---\nname: web\n{bad}---\nBody.\n");
        let err = parse_agent_file(Path::new("a/c.md"), &text, AgentFileFlavor::ClaudeCode)
            .expect_err(bad)
            .to_string();
        assert!(err.contains("mcpServers"), "{bad}: {err}");
    }
}

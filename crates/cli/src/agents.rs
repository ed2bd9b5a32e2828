//! `subagent agents ls|show`: which agents a run in a workspace would find,
//! and where each comes from.
//!
//! Also the one place the CLI builds its catalog ([`load_catalog`]), so
//! `subagent run` and these listings cannot disagree. Warnings from agent
//! files (Claude Code tools dropped, files skipped) go to stderr: one
//! grouped line per command, in full for the agent a command runs or
//! shows, and all of them with `agents ls --warnings`.
//!
//! `subagent run` applies every field of an agent file: its model,
//! provider, limits and output schema sit below the run's flags and above
//! the config files (`subagent_supervisor::config::resolve_run`).

use std::path::PathBuf;

use crate::exit::Ending;
use anyhow::Result;
use serde_json::json;
use subagent_supervisor::agents::{
    AgentCatalog, AgentDefinition, AgentOutputSchema, WarningDetail, default_user_agents_dir,
    discover_catalog,
};
use subagent_supervisor::config::ProjectConfig;
use subagent_supervisor::prepare::workspace_catalog;

use super::trust::{load_project, print_warning, workspace_or_cwd};
use crate::console;

#[derive(Debug, clap::Args)]
#[command(after_help = "LOOKUP ORDER (the first definition of a name wins):\n  \
    1. .subagent/agents/*.md, then .claude/agents/*.md, in the workspace and each\n     \
    parent directory up to the repository root (the first dir holding .git),\n     \
    once the project is trusted (`subagent trust`; until then they are ignored)\n  \
    2. $XDG_CONFIG_HOME/subagent/agents/*.md (default ~/.config/subagent/agents)\n  \
    3. built-in: general, explorer, researcher, reviewer, implementer\n\n\
    AGENT FILE (Markdown with YAML frontmatter; the body is the system prompt):\n  \
    ---\n  \
    name: reviewer\n  \
    description: Reviews code and reports issues with file:line.\n  \
    tools: bash_read, bash_ripgrep, bash_find\n  \
    model: gpt-4o-mini                  # or leave it to --model / config\n  \
    provider: local                     # a [providers.NAME] of config.toml, or a kind\n  \
    maxTurns: 12                        # limits as run's flags, camelCase:\n  \
    timeout: 10m                        #   idleTimeout, memory, pids, maxCost, ...\n  \
    outputSchema: review.schema.json    # or the schema inline as YAML\n  \
    disabled: false\n  \
    ---\n  \
    You are a careful reviewer...\n\n\
    Claude Code tools map as Read -> bash_read, Grep -> bash_ripgrep, Glob -> bash_find,\n\
    WebSearch -> search_web, WebFetch -> scrape_webpage;\n\
    others (Bash included) are dropped with a warning, and so are Claude Code's model\n\
    aliases (sonnet, opus, haiku, inherit); `agents ls --warnings` lists every warning.\n\
    Frontmatter that strict YAML rejects (an unquoted `: ` in a description) is read as\n\
    `key: value` lines, as Claude Code does; a file that still cannot be read is skipped\n\
    with a warning naming it, and only a run asking for its agent is refused. A run's flags override the file's fields;\n\
    the file's override config.toml.\n\n\
    EXAMPLES:\n  \
    subagent agents ls\n  \
    subagent agents ls --workspace ./project --json\n  \
    subagent agents show reviewer")]
pub(super) struct AgentsArgs {
    #[command(subcommand)]
    command: AgentsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum AgentsCommand {
    /// List the agents: name, source (file or built-in), tools, model.
    #[command(after_help = "EXAMPLES:\n  \
        subagent agents ls\n  \
        subagent agents ls --workspace ./project --json")]
    Ls {
        /// Directory whose agents to list (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// One JSON array instead of a table.
        #[arg(long)]
        json: bool,
        /// Every warning of every agent file in full on stderr (other
        /// commands print one grouped line).
        #[arg(long)]
        warnings: bool,
    },
    /// Everything about one agent, its system prompt and warnings included.
    #[command(after_help = "EXAMPLES:\n  \
        subagent agents show reviewer\n  \
        subagent agents show my-agent --workspace ./project --json")]
    Show {
        /// The agent's name.
        name: String,
        /// Directory whose agents to look in (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The catalog a run in `project`'s workspace sees (its agent files only
/// when trusted: [`super::trust::load_project`]). The first call in a
/// process prints its warnings on stderr, grouped
/// ([`WarningDetail::Grouped`]): a server that prepares every request
/// reports them once, not per request.
pub(super) fn load_catalog(project: &ProjectConfig) -> Result<AgentCatalog> {
    Ok(workspace_catalog(project, &print_warning)?)
}

/// The warnings of `agent`, the one a command runs, in full on stderr (the
/// grouped line of [`load_catalog`] only counts them).
pub(super) fn print_agent_warnings(catalog: &AgentCatalog, agent: &str) {
    if let Some(agent) = catalog.get(agent) {
        for warning in &agent.warnings {
            console::err(&format!(
                "warning: agent {} ({}): {warning}",
                agent.name, agent.source
            ));
        }
    }
}

/// One warning per agent naming MCP tools of a server nobody defines: not
/// in its own `mcpServers`, not in the config files or a trusted
/// `.mcp.json`. Such tools are left out of the agent's runs.
fn unserved_mcp_tools(catalog: &AgentCatalog, project: &ProjectConfig) -> Vec<String> {
    use subagent_supervisor::config::{default_user_config_path, load_config};
    use subagent_supervisor::prepare::configured_mcp_servers;
    let registry = load_config(project, default_user_config_path().as_deref())
        .ok()
        .and_then(|files| configured_mcp_servers(&files, project).ok());
    let mut lines = Vec::new();
    for agent in catalog.agents() {
        let mut missing: Vec<&str> = Vec::new();
        for tool in &agent.tools {
            let Some((server, _)) = subagent_protocol::mcp_server::parse_mcp_name(tool) else {
                continue;
            };
            let defined = agent.mcp_servers.iter().any(|s| s.name == server)
                || registry.as_ref().is_some_and(|r| r.get(server).is_some());
            if !defined && !missing.contains(&server) {
                missing.push(server);
            }
        }
        for server in missing {
            lines.push(format!(
                "warning: agent {} ({}): no MCP server named `{server}` is configured, so its \
                 mcp__{server} tools are left out; add [mcp_servers.{server}] to config.toml or \
                 define it in the file's mcpServers",
                agent.name, agent.source
            ));
        }
    }
    lines
}

pub(super) fn run(args: AgentsArgs) -> Result<Ending> {
    match args.command {
        AgentsCommand::Ls {
            workspace,
            json,
            warnings,
        } => {
            let project = load_project(&workspace_or_cwd(workspace)?)?;
            let catalog = if warnings {
                let catalog = discover_catalog(&project, default_user_agents_dir().as_deref())?;
                for line in catalog.warning_lines(WarningDetail::Full) {
                    console::err(&line);
                }
                for line in unserved_mcp_tools(&catalog, &project) {
                    console::err(&line);
                }
                catalog
            } else {
                load_catalog(&project)?
            };
            if json {
                let list: Vec<_> = catalog.agents().iter().map(agent_json).collect();
                console::out(&serde_json::to_string_pretty(&list)?)?;
            } else {
                console::out(&table(catalog.agents()))?;
            }
            Ok(Ending::Success)
        }
        AgentsCommand::Show {
            name,
            workspace,
            json,
        } => {
            let catalog = load_catalog(&load_project(&workspace_or_cwd(workspace)?)?)?;
            let Some(agent) = catalog.get(&name) else {
                console::err(&format!(
                    "UNKNOWN_AGENT: {}",
                    catalog.unknown_message(&name)
                ));
                return Ok(Ending::InputRefused);
            };
            if json {
                console::out(&serde_json::to_string_pretty(&agent_json(agent))?)?;
            } else {
                console::out(&details(agent))?;
            }
            Ok(Ending::Success)
        }
    }
}

fn agent_json(agent: &AgentDefinition) -> serde_json::Value {
    json!({
        "name": agent.name,
        "description": agent.description,
        "source": agent.source.to_string(),
        "tools": agent.tools,
        "model": agent.model,
        "provider": agent.provider,
        "limits": limits_json(agent),
        "outputSchema": schema_text(agent),
        "disabled": agent.disabled,
        "warnings": agent.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "systemPrompt": agent.system_prompt_for(&agent.tools),
    })
}

/// The limits the agent's file sets, keyed as the file writes them.
fn limits_json(agent: &AgentDefinition) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = agent
        .limits
        .iter()
        .map(|(key, value)| (key.agent_key().to_owned(), value.to_string().into()))
        .collect();
    serde_json::Value::Object(map)
}

fn schema_text(agent: &AgentDefinition) -> Option<String> {
    agent.output_schema.as_ref().map(|schema| match schema {
        AgentOutputSchema::Inline(json) => json.clone(),
        AgentOutputSchema::File(path) => path.display().to_string(),
    })
}

fn tools_text(agent: &AgentDefinition) -> String {
    if agent.tools.is_empty() {
        "none".into()
    } else {
        agent.tools.join(",")
    }
}

/// NAME SOURCE TOOLS MODEL, columns padded to their widest cell.
fn table(agents: &[AgentDefinition]) -> String {
    let mut rows = vec![[
        "NAME".to_owned(),
        "SOURCE".to_owned(),
        "TOOLS".to_owned(),
        "MODEL".to_owned(),
    ]];
    for agent in agents {
        let name = if agent.disabled {
            format!("{} (disabled)", agent.name)
        } else {
            agent.name.clone()
        };
        rows.push([
            name,
            agent.source.to_string(),
            tools_text(agent),
            agent.model.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    let width = |col: usize| {
        rows.iter()
            .map(|r| r[col].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2)];
    rows.iter()
        .map(|r| {
            format!(
                "{:w0$}  {:w1$}  {:w2$}  {}",
                r[0],
                r[1],
                r[2],
                r[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2]
            )
            .trim_end()
            .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn details(agent: &AgentDefinition) -> String {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let mut text = format!(
        "name: {}\ndescription: {}\nsource: {}\ntools: {}\nmodel: {}\nprovider: {}\nlimits: {}\noutputSchema: {}\ndisabled: {}\n",
        agent.name,
        agent.description,
        agent.source,
        tools_text(agent),
        opt(&agent.model),
        opt(&agent.provider),
        if agent.limits.is_empty() {
            "-".to_owned()
        } else {
            agent
                .limits
                .iter()
                .map(|(key, value)| format!("{}={value}", key.agent_key()))
                .collect::<Vec<_>>()
                .join(" ")
        },
        opt(&schema_text(agent)),
        agent.disabled,
    );
    for warning in &agent.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text.push_str("system prompt:\n");
    text.push_str(&agent.system_prompt_for(&agent.tools));
    text
}

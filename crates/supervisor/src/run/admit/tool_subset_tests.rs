use pretty_assertions::assert_eq;
use subagent_protocol::tool_names::{BUILTIN_TOOLS, READ_ONLY_TOOLS};

use super::*;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn every_builtin_tool_subagent_and_the_empty_subset_are_accepted() {
    assert_eq!(
        check_tool_subset(&names(BUILTIN_TOOLS), SubsetOrigin::Requested),
        Ok(())
    );
    assert_eq!(
        check_tool_subset(&names(READ_ONLY_TOOLS), SubsetOrigin::Requested),
        Ok(())
    );
    assert_eq!(check_tool_subset(&[], SubsetOrigin::Requested), Ok(()));
    // The supervisor's own tool: admission removes it at the depth limit.
    assert_eq!(
        check_tool_subset(&names(&["subagent"]), SubsetOrigin::Requested),
        Ok(())
    );
    assert_eq!(
        check_tool_subset(&names(&["bash_read", "bash_read"]), SubsetOrigin::Requested),
        Ok(())
    );
}

#[test]
fn unknown_names_are_listed_once_in_order_with_every_known_tool() {
    let err = check_tool_subset(
        &names(&["bash_read", "nope", "rm_rf", "nope"]),
        SubsetOrigin::Requested,
    )
    .unwrap_err();
    assert_eq!(
        err,
        ToolSubsetError {
            origin: SubsetOrigin::Requested,
            unknown: names(&["nope", "rm_rf"]),
            report_back: false,
        }
    );
    assert_eq!(
        err.to_string(),
        "unknown tools `nope`, `rm_rf` in the requested tools; known tools: \
         `bash`, `bash_find`, `bash_read`, `bash_ripgrep`, `edit_file`, `list_dir`, \
         `multi_edit`, `python_execute`, `scrape_webpage`, `search_web`, `todo_write`, \
         `write_file`, `subagent`"
    );
}

#[test]
fn names_are_exact_not_case_folded_or_trimmed() {
    // The CLI trims around commas; a library caller's names are taken as given.
    let err = check_tool_subset(
        &names(&["Bash_Read", " bash_find"]),
        SubsetOrigin::Requested,
    )
    .unwrap_err();
    assert_eq!(err.unknown, names(&["Bash_Read", " bash_find"]));
}

#[test]
fn report_back_is_refused_with_the_way_to_ask_for_structured_output() {
    let err = check_tool_subset(&names(&["report_back"]), SubsetOrigin::Requested).unwrap_err();
    assert!(err.report_back);
    assert!(err.unknown.is_empty());
    let message = err.to_string();
    assert!(message.contains("`report_back`"), "{message}");
    assert!(message.contains("--output-schema"), "{message}");
    assert!(!message.contains("unknown tool"), "{message}");
}

#[test]
fn report_back_and_unknown_names_are_both_reported_at_once() {
    let err = check_tool_subset(
        &names(&["report_back", "web_search"]),
        SubsetOrigin::Requested,
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("unknown tool `web_search` in the requested tools; known tools: "),
        "{message}"
    );
    assert!(message.contains("--output-schema"), "{message}");
}

#[test]
fn an_agent_definition_is_named_as_the_origin() {
    let err = check_tool_subset(
        &names(&["bash_grep"]),
        SubsetOrigin::Agent("explorer".to_owned()),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("unknown tool `bash_grep` in the tool list of agent `explorer`;"),
        "{err}"
    );
}

#[test]
fn every_builtin_agent_lists_only_known_tools_and_mentions_them() {
    let catalog = crate::agents::AgentCatalog::builtin();
    for name in catalog.names() {
        let agent = catalog.get(name).unwrap();
        assert!(!agent.tools.is_empty(), "{name} has tools");
        assert_eq!(
            check_tool_subset(&agent.tools, SubsetOrigin::Agent(name.to_owned())),
            Ok(()),
            "{name}"
        );
        let prompt = agent.system_prompt_for(&agent.tools);
        for tool in &agent.tools {
            assert!(
                prompt.contains(tool.as_str()),
                "{name}'s prompt mentions {tool}"
            );
        }
        assert!(prompt.contains("relative to the workspace"));
    }
    let sorted = |name: &str| {
        let mut tools = catalog.get(name).unwrap().tools.clone();
        tools.sort();
        tools
    };
    assert_eq!(
        sorted("general"),
        names(&[
            "bash",
            "bash_find",
            "bash_read",
            "bash_ripgrep",
            "edit_file",
            "list_dir",
            "multi_edit",
            "python_execute",
            "write_file"
        ])
    );
    assert_eq!(sorted("explorer"), names(READ_ONLY_TOOLS));
    assert_eq!(
        sorted("researcher"),
        names(&[
            "bash_find",
            "bash_read",
            "bash_ripgrep",
            "list_dir",
            "scrape_webpage",
            "search_web"
        ])
    );
}

mod admission {
    //! The check on the supervisor's admission path: a refusal result, and
    //! no process, no session file. The worker program does not exist, so a
    //! run that got past admission would fail differently.

    use std::path::PathBuf;

    use subagent_protocol::{ErrorCode, ProviderKind, ProviderSpec};
    use tokio_util::sync::CancellationToken;

    use crate::agents::{AgentCatalog, AgentDefinition};
    use crate::run::{RunRequest, Supervisor, SupervisorConfig, WorkerCommand};

    fn config(sessions: &std::path::Path) -> SupervisorConfig {
        let worker = WorkerCommand {
            program: PathBuf::from("/nonexistent/subagent-worker"),
            args: Vec::new(),
        };
        SupervisorConfig::new(worker, sessions.to_owned())
    }

    fn request(agent: &str) -> RunRequest {
        let provider = ProviderSpec::new(ProviderKind::OpenaiChat, "http://127.0.0.1:9/v1", "m");
        RunRequest::new(agent, "a task", provider)
    }

    async fn refused(config: SupervisorConfig, request: RunRequest) -> (ErrorCode, String) {
        let sessions = config.sessions_dir.clone();
        let result = Supervisor::new(config)
            .run(request, CancellationToken::new())
            .await;
        assert!(result.details.results.is_empty(), "nothing ran");
        assert!(!sessions.exists(), "no session file was created");
        let error = result.details.error.unwrap();
        (error.code, error.message)
    }

    #[tokio::test]
    async fn a_requested_unknown_tool_is_refused_before_spawning() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = request("general");
        r.tools = Some(vec!["bash_read".into(), "nope".into()]);
        let (code, message) = refused(config(&dir.path().join("sessions")), r).await;
        assert_eq!(code, ErrorCode::InvalidInput);
        assert!(
            message.contains("`nope`") && message.contains("`python_execute`"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_requested_report_back_is_refused_before_spawning() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = request("general");
        r.tools = Some(vec!["report_back".into()]);
        let (code, message) = refused(config(&dir.path().join("sessions")), r).await;
        assert_eq!(code, ErrorCode::InvalidInput);
        assert!(message.contains("--output-schema"), "{message}");
    }

    #[tokio::test]
    async fn disabled_agents_are_refused_with_subagent_disabled_naming_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(&dir.path().join("sessions"));
        cfg.catalog = AgentCatalog::new(vec![AgentDefinition {
            name: "off".into(),
            tools: vec!["bash_read".into()],
            source: crate::agents::AgentSource::File("team/.subagent/agents/off.md".into()),
            disabled: true,
            ..AgentDefinition::default()
        }]);
        let (code, message) = refused(cfg, request("off")).await;
        assert_eq!(code, ErrorCode::SubagentDisabled);
        assert!(
            message.contains("team/.subagent/agents/off.md"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn an_agent_definition_with_an_unknown_tool_is_refused_unless_overridden() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(&dir.path().join("sessions"));
        cfg.catalog = AgentCatalog::new(vec![AgentDefinition {
            name: "typo".into(),
            description: "d".into(),
            system_prompt: "p".into(),
            tools: vec!["bash_grep".into()],
            ..AgentDefinition::default()
        }]);
        let (code, message) = refused(cfg.clone(), request("typo")).await;
        assert_eq!(code, ErrorCode::InvalidInput);
        assert!(
            message.contains("`bash_grep` in the tool list of agent `typo`"),
            "{message}"
        );
        // A caller's own subset replaces the definition's, so only it is
        // checked: this run passes admission and fails to spawn instead.
        let mut r = request("typo");
        r.tools = Some(Vec::new());
        let result = Supervisor::new(cfg).run(r, CancellationToken::new()).await;
        let error = result.details.error.unwrap();
        assert_ne!(error.code, ErrorCode::InvalidInput, "{}", error.message);
    }
}

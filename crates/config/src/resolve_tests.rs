use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use subagent_protocol::{Limits, ProviderKind};

use super::file::parse_config;
use super::limits::{LimitKey, LimitSet, LimitValue};
use super::load::{ConfigLayer, LoadedConfig};
use super::provenance::{Origin, ResolveError};
use super::resolve::{RunOverrides, resolve_run};
use super::show::describe_config;
use crate::agents::{AgentCatalog, AgentDefinition, AgentSource};

const USER: &str = "home/.config/subagent/config.toml";
const PROJECT: &str = "proj/.subagent/config.toml";

fn layer(path: &str, text: &str) -> ConfigLayer {
    ConfigLayer {
        path: PathBuf::from(path),
        file: parse_config(Path::new(path), text).unwrap(),
    }
}

fn config(user: &str, project: &str) -> LoadedConfig {
    LoadedConfig {
        user: Some(layer(USER, user)),
        project: Some(layer(PROJECT, project)),
    }
}

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |var| map.get(var).cloned()
}

fn agent_file(name: &str, model: Option<&str>, limits: &[(LimitKey, LimitValue)]) -> AgentCatalog {
    let mut set = LimitSet::default();
    for (k, v) in limits {
        set.set(*k, *v);
    }
    let mut agents = AgentCatalog::builtin().agents().to_vec();
    agents.insert(
        0,
        AgentDefinition {
            name: name.into(),
            source: AgentSource::File(PathBuf::from(format!("proj/.subagent/agents/{name}.md"))),
            model: model.map(str::to_owned),
            limits: set,
            ..AgentDefinition::default()
        },
    );
    AgentCatalog::new(agents)
}

/// Resolves `flags` with no config files, the built-in agents and `vars` as the environment.
fn resolve_without_config(
    flags: &RunOverrides,
    vars: &[(&str, &str)],
) -> Result<super::resolve::ResolvedRun, ResolveError> {
    resolve_run(
        flags,
        &LoadedConfig::default(),
        &AgentCatalog::builtin(),
        &env(vars),
    )
}

fn origin_of(run: &super::resolve::ResolvedRun, key: &str) -> Origin {
    run.sources
        .iter()
        .find(|s| s.key == key)
        .map(|s| s.origin.clone())
        .unwrap_or_else(|| panic!("no {key} in {:?}", run.sources))
}

const USER_TEXT: &str = r#"
default_provider = "local"
[providers.local]
kind = "openai-chat"
base_url = "http://127.0.0.1:8080/v1"
model = "smollm2"
[providers.claude]
kind = "anthropic"
model = "claude-x"
api_key_env = "MY_ANTHROPIC"
[limits]
timeout = "5m"
memory = "1G"
pids = 100
"#;

const PROJECT_TEXT: &str = r#"
default_agent = "reviewer"
[limits]
memory = "768M"
max_turns = 7
"#;

#[test]
fn flags_beat_agent_files_beat_project_beat_user_beat_defaults() {
    let catalog = agent_file(
        "reviewer",
        None,
        &[
            (LimitKey::MaxTurns, LimitValue::Count(9)),
            (LimitKey::Pids, LimitValue::Count(50)),
        ],
    );
    let mut flags = RunOverrides::default();
    flags.limits.set(LimitKey::Pids, LimitValue::Count(10));
    let run = resolve_run(
        &flags,
        &config(USER_TEXT, PROJECT_TEXT),
        &catalog,
        &env(&[]),
    )
    .unwrap();
    assert_eq!(run.agent, "reviewer");
    assert_eq!(
        origin_of(&run, "agent"),
        Origin::ProjectConfig(PROJECT.into())
    );
    // user only
    assert_eq!(run.limits.wall_timeout_ms, 300_000);
    assert_eq!(
        origin_of(&run, "limits.timeout"),
        Origin::UserConfig(USER.into())
    );
    // project over user
    assert_eq!(run.limits.memory_bytes, 768 << 20);
    assert_eq!(
        origin_of(&run, "limits.memory"),
        Origin::ProjectConfig(PROJECT.into())
    );
    // agent over project
    assert_eq!(run.budget.max_turns, 9);
    assert!(matches!(
        origin_of(&run, "limits.max_turns"),
        Origin::Agent(AgentSource::File(_))
    ));
    // flag over agent over user
    assert_eq!(run.limits.pids, 10);
    assert_eq!(
        origin_of(&run, "limits.pids"),
        Origin::Flag("--pids".into())
    );
    // nobody
    assert_eq!(
        run.limits.idle_timeout_ms,
        Limits::default().idle_timeout_ms
    );
    assert_eq!(origin_of(&run, "limits.idle_timeout"), Origin::Default);
    assert_eq!(run.max_depth, 1);
    assert!(run.subagents_disabled.is_none());
}

#[test]
fn the_default_provider_gives_kind_url_and_model() {
    let run = resolve_run(
        &RunOverrides::default(),
        &config(USER_TEXT, ""),
        &AgentCatalog::builtin(),
        &env(&[("OPENAI_BASE_URL", "http://ignored.example/v1")]),
    )
    .unwrap();
    assert_eq!(run.agent, "general");
    assert_eq!(run.provider.kind, ProviderKind::OpenaiChat);
    // A configured base URL beats the ecosystem variable.
    assert_eq!(run.provider.base_url, "http://127.0.0.1:8080/v1");
    assert_eq!(run.provider.model, "smollm2");
    assert!(run.provider.api_key.is_none());
}

#[test]
fn the_agent_model_beats_the_provider_model_and_the_flag_beats_both() {
    let catalog = agent_file("writer", Some("agent-model"), &[]);
    let mut flags = RunOverrides {
        agent: Some("writer".into()),
        ..RunOverrides::default()
    };
    let cfg = config(USER_TEXT, "");
    let run = resolve_run(&flags, &cfg, &catalog, &env(&[])).unwrap();
    assert_eq!(run.provider.model, "agent-model");
    flags.model = Some("flag-model".into());
    let run = resolve_run(&flags, &cfg, &catalog, &env(&[])).unwrap();
    assert_eq!(run.provider.model, "flag-model");
    assert_eq!(origin_of(&run, "model"), Origin::Flag("--model".into()));
}

#[test]
fn a_named_provider_uses_its_key_variable_and_refuses_when_unset() {
    let flags = RunOverrides {
        provider: Some("claude".into()),
        ..RunOverrides::default()
    };
    let cfg = config(USER_TEXT, "");
    let catalog = AgentCatalog::builtin();
    let run = resolve_run(
        &flags,
        &cfg,
        &catalog,
        &env(&[("MY_ANTHROPIC", "sk-ant-secret-value")]),
    )
    .unwrap();
    assert_eq!(run.provider.kind, ProviderKind::Anthropic);
    assert_eq!(run.provider.base_url, "https://api.anthropic.com/v1");
    assert!(run.provider.api_key.is_some());
    let shown = format!("{:?}", run.sources);
    assert!(!shown.contains("sk-ant-secret-value"), "{shown}");
    match resolve_run(&flags, &cfg, &catalog, &env(&[])) {
        Err(ResolveError::KeyVariableUnset { var, origin }) => {
            assert_eq!(var, "MY_ANTHROPIC");
            assert_eq!(origin, Origin::UserConfig(USER.into()));
        }
        other => panic!("expected KeyVariableUnset, got {other:?}"),
    }
}

#[test]
fn without_config_the_sdk_variables_are_used() {
    let flags = RunOverrides {
        provider: Some("anthropic".into()),
        model: Some("m".into()),
        ..RunOverrides::default()
    };
    let run = resolve_without_config(
        &flags,
        &[
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9999"),
            ("ANTHROPIC_API_KEY", "sk-ant-xyz-0123456789"),
        ],
    )
    .unwrap();
    assert_eq!(run.provider.base_url, "http://127.0.0.1:9999");
    assert!(run.provider.api_key.is_some());
    assert_eq!(
        origin_of(&run, "base_url"),
        Origin::Env("ANTHROPIC_BASE_URL".into())
    );
}

#[test]
fn unknown_provider_and_missing_model_say_what_to_do() {
    let flags = RunOverrides {
        provider: Some("nope".into()),
        ..RunOverrides::default()
    };
    let err = resolve_run(
        &flags,
        &config(USER_TEXT, ""),
        &AgentCatalog::builtin(),
        &env(&[]),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("claude, local") && err.contains("openai-chat"),
        "{err}"
    );
    let err = resolve_without_config(&RunOverrides::default(), &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--model") && err.contains("config path"),
        "{err}"
    );
}

#[test]
fn project_switch_beats_user_switch() {
    let on_off = config(
        "[subagents]\nenabled = true\n",
        "[subagents]\nenabled = false\n",
    );
    let flags = RunOverrides {
        model: Some("m".into()),
        ..RunOverrides::default()
    };
    let run = resolve_run(&flags, &on_off, &AgentCatalog::builtin(), &env(&[])).unwrap();
    let why = run.subagents_disabled.unwrap();
    assert!(
        why.contains(PROJECT) && why.contains("enabled = false"),
        "{why}"
    );
    let off_on = config(
        "[subagents]\nenabled = false\n",
        "[subagents]\nenabled = true\n",
    );
    let run = resolve_run(&flags, &off_on, &AgentCatalog::builtin(), &env(&[])).unwrap();
    assert!(run.subagents_disabled.is_none());
}

#[test]
fn show_masks_keys_and_url_credentials_and_names_origins() {
    let cfg = config(
        "[providers.p]\nkind = \"openai-chat\"\nbase_url = \"http://bob:hunter2pass@127.0.0.1:1/v1\"\napi_key_env = \"P_KEY\"\n",
        "[limits]\ntimeout = \"1h\"\n",
    );
    let shown = describe_config(
        &cfg,
        &env(&[
            ("P_KEY", "sk-live-0123456789abcdef"),
            ("OPENAI_API_KEY", "sk-0123456789abcdefghijkl"),
        ]),
    );
    let text = format!("{shown:?}");
    assert!(!text.contains("hunter2pass"), "{text}");
    assert!(!text.contains("sk-live-0123456789abcdef"), "{text}");
    assert!(!text.contains("sk-0123456789abcdefghijkl"), "{text}");
    let get = |key: &str| shown.iter().find(|s| s.key == key).unwrap();
    assert_eq!(get("providers.p.api_key_env").value, "P_KEY (set: ***)");
    assert_eq!(get("limits.timeout").value, "1h");
    assert_eq!(
        get("limits.timeout").origin,
        Origin::ProjectConfig(PROJECT.into())
    );
    assert_eq!(get("limits.memory").origin, Origin::Default);
    assert_eq!(get("env.OPENAI_API_KEY").value, "set: ***");
}

#[test]
fn show_gives_max_concurrent_from_the_highest_file_else_the_default() {
    let get = |cfg: &LoadedConfig| {
        describe_config(cfg, &env(&[]))
            .into_iter()
            .find(|s| s.key == "max_concurrent")
            .map(|s| (s.value, s.origin))
    };
    assert_eq!(
        get(&config("max_concurrent = 3\n", "max_concurrent = 2\n")),
        Some(("2".to_owned(), Origin::ProjectConfig(PROJECT.into())))
    );
    assert_eq!(
        get(&config("max_concurrent = 3\n", "")),
        Some(("3".to_owned(), Origin::UserConfig(USER.into())))
    );
    assert_eq!(
        get(&config("", "")),
        Some((crate::DEFAULT_MAX_CONCURRENT.to_string(), Origin::Default))
    );
}

#[test]
fn vertex_location_url_comes_from_the_vertex_sdk_variables_and_the_token_variable() {
    let flags = RunOverrides {
        provider: Some("vertexai-anthropic".into()),
        model: Some("claude-sonnet-4@20250514".into()),
        ..RunOverrides::default()
    };
    let run = resolve_without_config(
        &flags,
        &[
            ("CLOUD_ML_REGION", "us-east5"),
            ("ANTHROPIC_VERTEX_PROJECT_ID", "proj-7"),
            ("GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.token"),
        ],
    )
    .unwrap();
    assert_eq!(run.provider.kind, ProviderKind::VertexaiAnthropic);
    assert_eq!(
        run.provider.base_url,
        "https://us-east5-aiplatform.googleapis.com/v1/projects/proj-7/locations/us-east5"
    );
    assert_eq!(
        run.provider.api_key.as_ref().map(|k| k.expose()),
        Some("ya29.token")
    );
    // An explicit base URL variable wins over the built one.
    let run = resolve_without_config(
        &flags,
        &[
            ("CLOUD_ML_REGION", "us-east5"),
            ("ANTHROPIC_VERTEX_PROJECT_ID", "proj-7"),
            (
                "ANTHROPIC_VERTEX_BASE_URL",
                "http://127.0.0.1:9/v1/projects/p/locations/r",
            ),
        ],
    )
    .unwrap();
    assert_eq!(
        run.provider.base_url,
        "http://127.0.0.1:9/v1/projects/p/locations/r"
    );
}

#[test]
fn an_unset_key_variable_is_blamed_on_whoever_named_it() {
    let catalog = AgentCatalog::builtin();
    let cfg = config("", "");
    let mut flags = RunOverrides {
        model: Some("m".into()),
        api_key_env: Some("NAMED_KEY".into()),
        ..RunOverrides::default()
    };
    let message = |flags: &RunOverrides| match resolve_run(flags, &cfg, &catalog, &env(&[])) {
        Err(e @ ResolveError::KeyVariableUnset { .. }) => e.to_string(),
        other => panic!("expected KeyVariableUnset, got {other:?}"),
    };
    assert!(message(&flags).contains("named by flag --api-key-env: NAMED_KEY"));
    flags.api_key_env_origin = Some(Origin::RequestField("api_key_name".into()));
    let text = message(&flags);
    assert!(
        text.contains("named by the request's field api_key_name: NAMED_KEY")
            && !text.contains("--api-key-env"),
        "{text}"
    );
}

use pretty_assertions::assert_eq;
use subagent_protocol::{ProviderKind, ProviderSpec};

use super::*;

const VERTEX: ProviderKind = ProviderKind::VertexaiAnthropic;

const SEED_EXAMPLE: &str = r#"{
  "model": "claude-sonnet-4@20250514",
  "provider": "vertexai-anthropic",
  "url": "http://127.0.0.1:9/v1/projects/p/locations/r",
  "api_key_name": "VERTEX_TOKEN",
  "prompt": "Find the config parser",
  "system_prompt": "Be brief.",
  "tool_subset": ["search_web", "scrape_webpage"],
  "think": true,
  "temperature": 0.8,
  "max_tokens": 8192
}"#;

#[test]
fn the_seed_example_maps_onto_overrides_and_request() {
    let input = CallInput::parse(SEED_EXAMPLE).unwrap();
    let base = RunOverrides {
        model: Some("flag-model".into()),
        agent: Some("general".into()),
        ..RunOverrides::default()
    };
    let overrides = input.overrides(base);
    assert_eq!(overrides.model.as_deref(), Some("claude-sonnet-4@20250514"));
    assert_eq!(overrides.provider.as_deref(), Some("vertexai-anthropic"));
    assert_eq!(
        overrides.base_url.as_deref(),
        Some("http://127.0.0.1:9/v1/projects/p/locations/r")
    );
    assert_eq!(overrides.api_key_env.as_deref(), Some("VERTEX_TOKEN"));
    assert_eq!(overrides.agent.as_deref(), Some("general"));

    let provider = ProviderSpec::new(ProviderKind::OpenaiChat, "http://127.0.0.1:9/v1", "m");
    let mut request = RunRequest::new("general", String::new(), provider);
    input.apply(&mut request);
    assert_eq!(request.task, "Find the config parser");
    assert_eq!(request.system_prompt.as_deref(), Some("Be brief."));
    assert_eq!(
        request.tools,
        Some(vec!["search_web".to_owned(), "scrape_webpage".to_owned()])
    );
    assert!(request.provider.reasoning);
    assert_eq!(request.provider.temperature, Some(0.8));
    assert_eq!(request.provider.max_tokens, Some(8192));
    assert_eq!(request.output_schema_json, None);
}

#[test]
fn null_and_empty_fields_leave_the_flags_in_charge() {
    let input = CallInput::parse(
        r#"{"model": "", "provider": null, "url": null, "api_key_name": "",
            "prompt": "hi", "system_prompt": null, "tool_subset": null,
            "think": null, "temperature": null, "max_tokens": null}"#,
    )
    .unwrap();
    let base = RunOverrides {
        model: Some("flag-model".into()),
        ..RunOverrides::default()
    };
    assert_eq!(input.overrides(base.clone()).model, base.model);
    let provider = ProviderSpec::new(ProviderKind::OpenaiChat, "http://127.0.0.1:9/v1", "m");
    let mut request = RunRequest::new("general", String::new(), provider);
    request.tools = Some(vec!["bash_read".into()]);
    input.apply(&mut request);
    assert_eq!(request.tools, Some(vec!["bash_read".to_owned()]));
    assert_eq!(request.system_prompt, None);
}

#[test]
fn an_output_schema_travels_as_json_text() {
    let input =
        CallInput::parse(r#"{"prompt": "capital?", "output_schema": {"type": "object"}}"#).unwrap();
    let provider = ProviderSpec::new(ProviderKind::OpenaiChat, "http://127.0.0.1:9/v1", "m");
    let mut request = RunRequest::new("general", String::new(), provider);
    input.apply(&mut request);
    assert_eq!(
        request.output_schema_json.as_deref(),
        Some(r#"{"type":"object"}"#)
    );
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    let err = CallInput::parse("not json").unwrap_err();
    assert!(
        err.to_string().starts_with("stdin is not a call request"),
        "{err}"
    );
    let err = CallInput::parse(r#"{"prompt": "x", "promt": "y"}"#).unwrap_err();
    assert!(err.to_string().contains("promt"), "{err}");
    assert!(matches!(
        CallInput::parse(r#"{"prompt": "  "}"#),
        Err(CallError::EmptyPrompt)
    ));
    assert!(matches!(
        CallInput::parse(r#"{"prompt": "x", "output_schema": "object"}"#),
        Err(CallError::SchemaNotObject)
    ));
}

#[test]
fn a_field_the_flags_pin_cannot_be_changed_unless_the_operator_lets_it() {
    let input = CallInput::parse(SEED_EXAMPLE).unwrap();
    // Nothing pinned: the payload chooses, as the contract says.
    assert!(
        input
            .check_pinned(&RunOverrides::default(), &RaiseSettings::default(), VERTEX)
            .is_ok()
    );
    let pinned = RunOverrides {
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        ..RunOverrides::default()
    };
    let err = input
        .check_pinned(&pinned, &RaiseSettings::default(), VERTEX)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("`url` is `http://127.0.0.1:9/v1/projects/p/locations/r`, but `subagent call` was started with --base-url http://127.0.0.1:8080/v1"),
        "{err}"
    );
    assert!(err.contains("--allow-raise provider"), "{err}");
    let raise = RaiseSettings::default().with([Raise::Provider]);
    assert!(input.check_pinned(&pinned, &raise, VERTEX).is_ok());

    let model = RunOverrides {
        model: Some("flag-model".into()),
        ..RunOverrides::default()
    };
    assert!(
        input
            .check_pinned(&model, &RaiseSettings::default(), VERTEX)
            .is_err()
    );
    let allowed = RaiseSettings::default().with_models(["claude-sonnet-4@20250514".to_owned()]);
    assert!(input.check_pinned(&model, &allowed, VERTEX).is_ok());
}

#[test]
fn a_full_endpoint_url_repeats_the_pinned_base_url_of_its_server() {
    let pinned = RunOverrides {
        base_url: Some("http://127.0.0.1:8080/v1/".into()),
        ..RunOverrides::default()
    };
    let chat = ProviderKind::OpenaiChat;
    for url in [
        "http://127.0.0.1:8080/v1",
        "http://127.0.0.1:8080/v1/chat/completions",
        "http://127.0.0.1:8080/v1/chat/completions/",
    ] {
        let input = CallInput {
            url: Some(url.into()),
            prompt: "x".into(),
            ..CallInput::default()
        };
        assert!(
            input
                .check_pinned(&pinned, &RaiseSettings::default(), chat)
                .is_ok(),
            "{url}"
        );
    }
    // Another server's endpoint is still another value.
    let other = CallInput {
        url: Some("http://127.0.0.1:9/v1/chat/completions".into()),
        prompt: "x".into(),
        ..CallInput::default()
    };
    assert!(
        other
            .check_pinned(&pinned, &RaiseSettings::default(), chat)
            .is_err()
    );
}

fn input(json: &str) -> CallInput {
    CallInput::parse(json).unwrap()
}

fn prod() -> ConfiguredProvider {
    ConfiguredProvider {
        name: "prod".into(),
        base_url: Some("https://prod.example/v1".into()),
        api_key_env: Some("PROD_KEY".into()),
    }
}

#[test]
fn a_configured_provider_keeps_its_url_and_key_variable() {
    let chat = ProviderKind::OpenaiChat;
    let flags = RunOverrides::default();
    let check = |json: &str| input(json).check_operator_keys(&flags, Some(&prod()), chat, &[]);
    let error = check(r#"{"prompt": "p", "url": "http://elsewhere.example/v1"}"#).unwrap_err();
    assert!(
        matches!(&error, CallError::OperatorProvider { field: "url", provider, .. } if provider == "prod"),
        "{error}"
    );
    let error = check(r#"{"prompt": "p", "api_key_name": "OPENAI_API_KEY"}"#).unwrap_err();
    assert!(
        matches!(
            error,
            CallError::OperatorProvider {
                field: "api_key_name",
                ..
            }
        ),
        "{error}"
    );
    // Its own, the endpoint form of its URL included.
    check(
        r#"{"prompt": "p", "url": "https://prod.example/v1/chat/completions", "api_key_name": "PROD_KEY"}"#,
    )
    .unwrap();
    check(r#"{"prompt": "p"}"#).unwrap();
    // What the operator's flags pin instead.
    let pinned = RunOverrides {
        base_url: Some("http://mirror.example/v1".into()),
        ..RunOverrides::default()
    };
    input(r#"{"prompt": "p", "url": "http://mirror.example/v1"}"#)
        .check_operator_keys(&pinned, Some(&prod()), chat, &[])
        .unwrap();
    // An entry without a URL of its own: no payload URL at all.
    let bare = ConfiguredProvider {
        base_url: None,
        ..prod()
    };
    assert!(
        input(r#"{"prompt": "p", "url": "https://prod.example/v1"}"#)
            .check_operator_keys(&flags, Some(&bare), chat, &[])
            .is_err()
    );
}

#[test]
fn api_key_name_is_the_kinds_variable_or_one_the_operator_allows() {
    let flags = RunOverrides::default();
    let named = input(r#"{"prompt": "p", "api_key_name": "AWS_SECRET_ACCESS_KEY"}"#);
    let error = named
        .check_operator_keys(&flags, None, ProviderKind::OpenaiChat, &[])
        .unwrap_err();
    assert!(
        error.to_string().contains("OPENAI_API_KEY")
            && error.to_string().contains("allowed_api_key_env"),
        "{error}"
    );
    named
        .check_operator_keys(
            &flags,
            None,
            ProviderKind::OpenaiChat,
            &["AWS_SECRET_ACCESS_KEY".to_owned()],
        )
        .unwrap();
    let flagged = RunOverrides {
        api_key_env: Some("AWS_SECRET_ACCESS_KEY".into()),
        ..RunOverrides::default()
    };
    named
        .check_operator_keys(&flagged, None, ProviderKind::OpenaiChat, &[])
        .unwrap();
    // Each kind's own; another kind's is not.
    for (kind, own, other) in [
        (
            ProviderKind::OpenaiResponses,
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
        ),
        (
            ProviderKind::Anthropic,
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
        ),
        (VERTEX, "GOOGLE_OAUTH_ACCESS_TOKEN", "OPENAI_API_KEY"),
    ] {
        let json = |var: &str| format!(r#"{{"prompt": "p", "api_key_name": "{var}"}}"#);
        input(&json(own))
            .check_operator_keys(&flags, None, kind, &[])
            .unwrap();
        assert!(
            input(&json(other))
                .check_operator_keys(&flags, None, kind, &[])
                .is_err()
        );
    }
}

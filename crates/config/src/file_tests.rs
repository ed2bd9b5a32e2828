use std::path::Path;

use pretty_assertions::assert_eq;
use subagent_protocol::ProviderKind;

use super::file::{ConfigFileError, parse_config};
use super::key_variable::{KeyVariableProblem, check_key_variable};
use super::limits::{LimitKey, LimitValue};

fn parse(text: &str) -> Result<super::file::ConfigFile, ConfigFileError> {
    parse_config(Path::new("proj/.subagent/config.toml"), text)
}

/// The message of an `Invalid` error with its line.
fn invalid(text: &str) -> (usize, String) {
    match parse(text) {
        Err(ConfigFileError::Invalid { line, message, .. }) => (line, message),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn a_full_file_is_read() {
    let config = parse(
        r#"
default_provider = "local"
default_agent = "reviewer"

[subagents]
enabled = false

[providers.local]
kind = "openai-chat"
base_url = "http://127.0.0.1:8080/v1"
model = "smollm2"
api_key_env = "LOCAL_KEY"
price = { input = 0.15, output = 0.6 }

[limits]
timeout = "15m"
memory = "1G"
max_turns = 30
max_cost = 0.5
"#,
    )
    .unwrap();
    assert_eq!(config.default_provider.as_deref(), Some("local"));
    assert_eq!(config.default_agent.as_deref(), Some("reviewer"));
    assert_eq!(config.subagents_enabled, Some(false));
    let local = &config.providers["local"];
    assert_eq!(local.kind, ProviderKind::OpenaiChat);
    assert_eq!(local.base_url.as_deref(), Some("http://127.0.0.1:8080/v1"));
    assert_eq!(local.model.as_deref(), Some("smollm2"));
    assert_eq!(local.api_key_env.as_deref(), Some("LOCAL_KEY"));
    let price = local.price.unwrap();
    assert_eq!(
        (price.input, price.output, price.cache_read),
        (0.15, 0.6, 0.0)
    );
    assert_eq!(
        config.limits.get(LimitKey::Timeout),
        Some(LimitValue::Ms(900_000))
    );
    assert_eq!(
        config.limits.get(LimitKey::Memory),
        Some(LimitValue::Bytes(1 << 30))
    );
    assert_eq!(
        config.limits.get(LimitKey::MaxTurns),
        Some(LimitValue::Count(30))
    );
    assert_eq!(
        config.limits.get(LimitKey::MaxCost),
        Some(LimitValue::Dollars(0.5))
    );
    assert_eq!(config.limits.get(LimitKey::Pids), None);
}

#[test]
fn an_empty_file_sets_nothing() {
    assert_eq!(parse("").unwrap(), super::file::ConfigFile::default());
}

#[test]
fn a_typo_names_the_line_and_the_key() {
    let (line, message) = invalid("default_agent = \"general\"\ndefault_provder = \"x\"\n");
    assert_eq!(line, 2);
    assert!(message.contains("default_provder"), "{message}");
}

#[test]
fn a_bad_limit_names_the_line_and_what_is_accepted() {
    let (line, message) = invalid("[limits]\ntimeout = \"15m\"\nmemory = \"lots\"\n");
    assert_eq!(line, 3);
    assert!(
        message.contains("limits.memory") && message.contains("512M"),
        "{message}"
    );
    let (line, message) = invalid("[limits]\n\nmemroy = \"1G\"\n");
    assert_eq!(line, 3);
    assert!(
        message.contains("unknown limit") && message.contains("tool_memory"),
        "{message}"
    );
}

#[test]
fn an_unknown_provider_kind_is_refused_with_the_kinds() {
    let (line, message) = invalid("[providers.x]\nmodel = \"m\"\nkind = \"openai\"\n");
    assert_eq!(line, 3);
    assert!(
        message.contains("openai-chat, openai-responses, anthropic or vertexai-anthropic"),
        "{message}"
    );
}

#[test]
fn a_key_written_into_the_file_is_refused_and_never_echoed() {
    let (line, message) = invalid(
        "[providers.x]\nkind = \"anthropic\"\napi_key = \"sk-ant-abcdefghijklmnopqrstuvwxyz\"\n",
    );
    assert_eq!(line, 3);
    assert!(message.contains("api_key_env"), "{message}");
    assert!(!message.contains("sk-ant-"), "{message}");
}

/// Issue 25 item 7: a key pasted where the variable's name belongs is
/// refused, in [providers.NAME] and in [search], and never echoed.
#[test]
fn a_key_in_api_key_env_is_refused_without_echoing_it() {
    const KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwx0123";
    let cases = [
        (
            format!("[providers.x]\nkind = \"openai-chat\"\napi_key_env = \"{KEY}\"\n"),
            3,
            "providers.x.api_key_env looks like a key, not a variable name: put the key in an \
             environment variable and name that variable here",
        ),
        (
            format!("\n[search]\nbackend = \"brave\"\napi_key_env = \"{KEY}\"\n"),
            4,
            "search.api_key_env looks like a key, not a variable name",
        ),
        // A token with a variable name's characters is still a key.
        (
            "[providers.x]\nkind = \"openai-chat\"\napi_key_env = \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"\n"
                .to_owned(),
            3,
            "providers.x.api_key_env looks like a key",
        ),
        // Not a key's shape, not a name either: refused, not echoed.
        (
            "[providers.x]\nkind = \"openai-chat\"\napi_key_env = \"a1b2-c3d4 e5\"\n".to_owned(),
            3,
            "providers.x.api_key_env is not a variable name",
        ),
    ];
    for (text, want_line, want) in cases {
        let (line, message) = invalid(&text);
        assert_eq!(line, want_line, "{text}");
        assert!(message.contains(want), "{message}");
        for secret in [KEY, "ghp_abcdef", "a1b2-c3d4"] {
            assert!(!message.contains(secret), "{message}");
        }
    }
}

#[test]
fn variable_names_are_checked_by_shape() {
    for good in ["OPENAI_API_KEY", "_K", "k2", "MY_BRAVE"] {
        assert_eq!(check_key_variable(good), Ok(()), "{good}");
    }
    for bad in ["", "2KEY", "MY-KEY", "A B", "A=B", "ÄKEY"] {
        assert_eq!(
            check_key_variable(bad),
            Err(KeyVariableProblem::NotAName),
            "{bad}"
        );
    }
    assert_eq!(
        check_key_variable("sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345"),
        Err(KeyVariableProblem::LooksLikeKey)
    );
}

#[test]
fn not_toml_names_the_line() {
    let (line, _) = invalid("default_agent = \"a\"\n\n[limits\n");
    assert_eq!(line, 3);
    let error = parse("x = [").unwrap_err().to_string();
    assert!(
        error.starts_with("proj/.subagent/config.toml:1: "),
        "{error}"
    );
}

#[test]
fn negative_prices_are_refused() {
    let (_, message) =
        invalid("[providers.x]\nkind = \"openai-chat\"\nprice = { input = -1, output = 1 }\n");
    assert!(message.contains("0 or more"), "{message}");
}

#[test]
fn max_concurrent_is_read_and_bounded() {
    assert_eq!(
        parse("max_concurrent = 32\n").unwrap().max_concurrent,
        Some(32)
    );
    let (line, message) = invalid("default_agent = \"a\"\nmax_concurrent = 0\n");
    assert_eq!(line, 2);
    assert!(message.contains("1 to 100000"), "{message}");
    let (_, message) = invalid("max_concurrent = 500000\n");
    assert!(message.contains("1 to 100000"), "{message}");
    assert_eq!(
        parse("max_concurrent = 5000\n").unwrap().max_concurrent,
        Some(5000)
    );
}

#[test]
fn the_telemetry_section_is_read_and_its_unknown_keys_refused() {
    let file = parse(
        "[telemetry]\nendpoint = \"http://127.0.0.1:4318\"\nprotocol = \"http/json\"\ninclude_content = true\n",
    )
    .unwrap();
    assert_eq!(
        file.telemetry.endpoint.as_deref(),
        Some("http://127.0.0.1:4318")
    );
    assert_eq!(file.telemetry.protocol.as_deref(), Some("http/json"));
    assert_eq!(file.telemetry.include_content, Some(true));
    let (line, message) = invalid("[telemetry]\nheaders = \"x-api-key=k\"\n");
    assert_eq!(line, 2, "{message}");
    assert!(message.contains("headers"), "{message}");
}

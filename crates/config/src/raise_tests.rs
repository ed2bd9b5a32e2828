use std::path::Path;

use pretty_assertions::assert_eq;

use super::file::parse_config;
use super::limits::LimitKey;
use super::raise::{Raise, RaiseSettings};

#[test]
fn names_are_limits_in_either_spelling_or_the_other_switches() {
    assert_eq!(Raise::parse("timeout"), Ok(Raise::Limit(LimitKey::Timeout)));
    assert_eq!(
        Raise::parse("toolMemory"),
        Ok(Raise::Limit(LimitKey::ToolMemory))
    );
    assert_eq!(Raise::parse("tools"), Ok(Raise::Tools));
    assert_eq!(Raise::parse("private_networks"), Ok(Raise::PrivateNetworks));
    assert_eq!(
        Raise::parse("link_local_networks"),
        Ok(Raise::LinkLocalNetworks)
    );
    let err = Raise::parse("require_sandbox").unwrap_err();
    assert!(err.contains("`require_sandbox` cannot be raised"), "{err}");
    assert!(err.contains("max_cost") && err.contains("model"), "{err}");
}

#[test]
fn the_serve_table_is_read_and_a_bad_name_names_its_line() {
    let file = parse_config(
        Path::new("config.toml"),
        "[serve]\nallow_raise = [\"timeout\", \"network\"]\nallowed_models = [\"big\", \" \"]\n",
    )
    .unwrap();
    assert_eq!(
        file.serve,
        RaiseSettings {
            allow_raise: vec![Raise::Limit(LimitKey::Timeout), Raise::Network],
            allowed_models: vec!["big".into()],
        }
    );
    let err = parse_config(
        Path::new("config.toml"),
        "default_agent = \"general\"\n[serve]\nallow_raise = [\"everything\"]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("config.toml:2: serve.allow_raise: `everything` cannot be raised"),
        "{err}"
    );
}

#[test]
fn the_call_table_lists_key_variables_and_refuses_a_key() {
    let file = parse_config(
        Path::new("config.toml"),
        "[call]\nallowed_api_key_env = [\"LOCAL_API_KEY\", \"VERTEX_TOKEN\"]\n",
    )
    .unwrap();
    assert_eq!(file.call_key_variables, ["LOCAL_API_KEY", "VERTEX_TOKEN"]);
    let err = parse_config(
        Path::new("config.toml"),
        "[call]\nallowed_api_key_env = [\"sk-abcdefghijklmnopqrstuvwxyz0123456789\"]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("call.allowed_api_key_env looks like a key"),
        "{err}"
    );
    assert!(!err.contains("sk-abcdefghij"), "{err}");
}

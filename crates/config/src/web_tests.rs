use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use subagent_protocol::{ApiKey, SearchBackend, SearchKind, WebSettings};

use super::super::file::{ConfigFileError, parse_config};
use super::super::load::{ConfigLayer, LoadedConfig};
use super::super::provenance::{Origin, ResolveError};
use super::super::show::describe_config;
use super::{WebFlags, resolve_web};

const USER: &str = "home/.config/subagent/config.toml";
const PROJECT: &str = "proj/.subagent/config.toml";

fn config(user: &str, project: &str) -> LoadedConfig {
    let layer = |path: &str, text: &str| ConfigLayer {
        path: PathBuf::from(path),
        file: parse_config(Path::new(path), text).unwrap(),
    };
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

fn resolve(
    cfg: &LoadedConfig,
    flag: bool,
    vars: &[(&str, &str)],
) -> Result<WebSettings, ResolveError> {
    let flags = WebFlags {
        private_networks: flag,
        link_local_networks: false,
    };
    resolve_web(cfg, flags, &env(vars), &mut Vec::new())
}

#[test]
fn nothing_configured_means_no_search_and_public_addresses_only() {
    let web = resolve(&config("", ""), false, &[]).unwrap();
    assert_eq!(web, WebSettings::default());
}

#[test]
fn a_searxng_backend_needs_no_key_and_the_project_section_wins_whole() {
    let user = "[search]\nbackend = \"brave\"\napi_key_env = \"MY_BRAVE\"\n";
    let project = "[search]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:8888\"\n";
    let web = resolve(&config(user, project), false, &[]).unwrap();
    assert_eq!(
        web.search,
        Some(SearchBackend {
            kind: SearchKind::Searxng,
            url: "http://127.0.0.1:8888".into(),
            api_key: None,
        })
    );
}

#[test]
fn brave_reads_its_key_from_the_named_variable_with_a_default_url() {
    let user = "[search]\nbackend = \"brave\"\napi_key_env = \"MY_BRAVE\"\n";
    let web = resolve(&config(user, ""), false, &[("MY_BRAVE", "k-1")]).unwrap();
    assert_eq!(
        web.search,
        Some(SearchBackend {
            kind: SearchKind::Brave,
            url: "https://api.search.brave.com".into(),
            api_key: Some(ApiKey::new("k-1")),
        })
    );
}

#[test]
fn brave_with_its_key_variable_unset_is_refused_naming_the_variable() {
    let user = "[search]\nbackend = \"brave\"\n";
    let err = resolve(&config(user, ""), false, &[]).unwrap_err();
    assert!(
        matches!(&err, ResolveError::SearchKeyUnset { var, origin: Origin::UserConfig(_) } if var == "BRAVE_API_KEY"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("variable BRAVE_API_KEY") && message.contains("is not set"),
        "{message}"
    );
}

#[test]
fn private_networks_are_allowed_by_the_flag_or_the_highest_file() {
    let allow = "[web]\nallow_private_networks = true\n";
    let deny = "[web]\nallow_private_networks = false\n";
    assert!(
        resolve(&config(allow, ""), false, &[])
            .unwrap()
            .allow_private_networks
    );
    assert!(
        !resolve(&config(allow, deny), false, &[])
            .unwrap()
            .allow_private_networks
    );
    assert!(
        resolve(&config("", deny), true, &[])
            .unwrap()
            .allow_private_networks
    );
}

#[test]
fn link_local_networks_have_their_own_switch_which_private_networks_do_not_turn_on() {
    let private = "[web]\nallow_private_networks = true\n";
    let link_local = "[web]\nallow_link_local_networks = true\n";
    let deny = "[web]\nallow_link_local_networks = false\n";
    let web = resolve(&config(private, ""), true, &[]).unwrap();
    assert!(web.allow_private_networks && !web.allow_link_local_networks);
    let web = resolve(&config(link_local, ""), false, &[]).unwrap();
    assert!(web.allow_link_local_networks && !web.allow_private_networks);
    assert!(
        !resolve(&config(link_local, deny), false, &[])
            .unwrap()
            .allow_link_local_networks
    );
    let flags = WebFlags {
        private_networks: false,
        link_local_networks: true,
    };
    let mut sources = Vec::new();
    let web = resolve_web(&config("", deny), flags, &env(&[]), &mut sources).unwrap();
    assert!(web.allow_link_local_networks);
    let source = sources
        .iter()
        .find(|s| s.key == "web.allow_link_local_networks")
        .unwrap();
    assert!(
        source
            .origin
            .to_string()
            .contains("--allow-link-local-networks"),
        "{source:?}"
    );
}

fn invalid(text: &str) -> (usize, String) {
    match parse_config(Path::new(PROJECT), text) {
        Err(ConfigFileError::Invalid { line, message, .. }) => (line, message),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn bad_search_sections_are_named_by_line() {
    let (line, message) = invalid("\n[search]\nbackend = \"bing\"\n");
    assert_eq!(line, 3);
    assert!(
        message.contains("`bing` is not a search backend"),
        "{message}"
    );
    let (line, message) = invalid("[search]\nbackend = \"searxng\"\n");
    assert_eq!(line, 1);
    assert!(message.contains("search.url"), "{message}");
    let (line, message) = invalid("[search]\nbackend = \"brave\"\napi_key = \"sk-secret\"\n");
    assert_eq!(line, 3);
    assert!(message.contains("api_key_env"), "{message}");
    assert!(!message.contains("sk-secret"), "{message}");
    let (_, message) = invalid("[web]\nallow_private = true\n");
    assert!(message.contains("allow_private"), "{message}");
}

#[test]
fn config_show_lists_the_search_backend_with_its_key_masked() {
    let user = "[search]\nbackend = \"brave\"\nurl = \"https://b.example\"\n[web]\nallow_private_networks = true\n";
    let shown = describe_config(&config(user, ""), &env(&[("BRAVE_API_KEY", "secret-key")]));
    let value = |key: &str| {
        shown
            .iter()
            .find(|s| s.key == key)
            .map(|s| s.value.clone())
            .unwrap_or_default()
    };
    assert_eq!(value("search.backend"), "brave");
    assert_eq!(value("search.url"), "https://b.example");
    assert_eq!(value("search.api_key_env"), "BRAVE_API_KEY (set: ***)");
    assert_eq!(value("web.allow_private_networks"), "true");
    assert!(shown.iter().all(|s| !s.value.contains("secret-key")));
}

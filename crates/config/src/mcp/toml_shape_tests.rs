use std::path::Path;

use super::entry::EnvValue;
use super::toml_shape::parse_toml_servers;

fn parse(text: &str) -> Result<(Vec<super::McpServerEntry>, Vec<String>), super::TomlServersError> {
    let table: toml::Table = toml::from_str(text).unwrap_or_default();
    let servers = match table.get("mcp_servers") {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => toml::Table::new(),
    };
    parse_toml_servers(Path::new("/cfg/config.toml"), &servers)
}

#[test]
fn codexs_shape_loads_with_its_defaults() {
    let (entries, warnings) = parse(
        r#"
[mcp_servers.time]
command = "uvx"
args = ["mcp-server-time", "--local-timezone", "UTC"]
env = { TZ = "UTC" }
env_vars = ["GITHUB_TOKEN"]
tool_timeout_sec = 1.5
enabled_tools = ["get_current_time"]

[mcp_servers.fs]
command = "/opt/fs/bin/server"
startup_timeout_ms = 2500
enabled = false
disabled_tools = ["write_file"]
read_only = ["/srv/data"]
"#,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let fs = &entries[0];
    assert_eq!(fs.name, "fs");
    assert_eq!(fs.startup_timeout_ms, 2500);
    assert_eq!(fs.tool_timeout_ms, 60_000);
    assert!(!fs.enabled);
    assert_eq!(fs.disabled_tools, ["write_file"]);
    let time = &entries[1];
    assert_eq!(time.command, "uvx");
    assert_eq!(time.args.len(), 3);
    assert_eq!(time.startup_timeout_ms, 10_000);
    assert_eq!(time.tool_timeout_ms, 1500);
    assert_eq!(
        time.env,
        [
            ("TZ".to_owned(), EnvValue::Literal("UTC".into())),
            ("GITHUB_TOKEN".to_owned(), EnvValue::Passthrough)
        ]
    );
    assert_eq!(
        time.enabled_tools.as_deref(),
        Some(&["get_current_time".to_owned()][..])
    );
    assert!(!time.expands);
}

#[test]
fn an_unknown_key_is_an_error_naming_it_and_codex_only_keys_a_warning() {
    let err = parse("[mcp_servers.t]\ncommand = \"x\"\ncomand = \"y\"\n")
        .err()
        .map(|e| e.message)
        .unwrap_or_default();
    assert!(err.contains("mcp_servers.t.comand: unknown key"), "{err}");
    let (entries, warnings) =
        parse("[mcp_servers.t]\ncommand = \"x\"\ncwd = \"/tmp\"\n").unwrap_or_default();
    assert_eq!(entries.len(), 1);
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].contains("mcp_servers.t.cwd is ignored"),
        "{warnings:?}"
    );
    let (entries, warnings) =
        parse("[mcp_servers.remote]\nurl = \"https://x/mcp\"\nbearer_token_env_var = \"T\"\n")
            .unwrap_or_default();
    assert!(entries.is_empty());
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`remote` is skipped") && w.contains("stdio")),
        "{warnings:?}"
    );
}

#[test]
fn bad_names_timeouts_and_values_are_errors() {
    for (text, says) in [
        ("[mcp_servers.a__b]\ncommand = \"x\"\n", "may not hold `__`"),
        (
            "[mcp_servers.\"a b\"]\ncommand = \"x\"\n",
            "letters, digits",
        ),
        ("[mcp_servers.t]\nargs = []\n", "command: missing"),
        (
            "[mcp_servers.t]\ncommand = \"x\"\nstartup_timeout_sec = 0\n",
            "out of range",
        ),
        (
            "[mcp_servers.t]\ncommand = \"x\"\nstartup_timeout_sec = 1\nstartup_timeout_ms = 5\n",
            "not both",
        ),
        (
            "[mcp_servers.t]\ncommand = \"x\"\nenv = { T = 1 }\n",
            "env_vars",
        ),
        (
            "[mcp_servers.t]\ncommand = \"x\"\nread_only = [\"rel\"]\n",
            "absolute",
        ),
        (
            "[mcp_servers.t]\ncommand = \"x\"\nenv_vars = [\"1X\"]\n",
            "not a variable name",
        ),
    ] {
        let err = parse(text).err().map(|e| e.message).unwrap_or_default();
        assert!(err.contains(says), "{text}: {err}");
    }
}

use std::path::Path;

use super::entry::EnvValue;
use super::json_shape::{parse_inline_server, parse_mcp_json};

#[test]
fn claude_codes_shape_loads_and_http_servers_are_skipped_with_a_warning() {
    let (entries, warnings) = parse_mcp_json(
        Path::new("/p/.mcp.json"),
        r#"{"mcpServers": {
            "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"],
                     "env": {"TZ": "${TZ:-UTC}"}},
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/"]},
            "remote": {"type": "http", "url": "https://x/mcp"},
            "odd": {"command": "x", "headers": {}}
        }}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["fs", "odd", "time"]);
    assert!(entries.iter().all(|e| e.expands));
    assert_eq!(
        entries[2].env,
        [("TZ".to_owned(), EnvValue::Expand("${TZ:-UTC}".into()))]
    );
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("`remote` is skipped")));
    assert!(warnings.iter().any(|w| w.contains("`headers` is ignored")));
}

#[test]
fn errors_name_the_file_and_the_server() {
    for (text, says) in [
        ("{", "not valid JSON"),
        (r#"{"mcpServers": []}"#, "must be an object"),
        (
            r#"{"mcpServers": {"a__b": {"command": "x"}}}"#,
            "may not hold `__`",
        ),
        (
            r#"{"mcpServers": {"t": {"args": []}}}"#,
            "`command`: missing",
        ),
        (
            r#"{"mcpServers": {"t": {"command": "x", "type": "ws"}}}"#,
            "not a server type",
        ),
    ] {
        let err = parse_mcp_json(Path::new("/p/.mcp.json"), text)
            .err()
            .unwrap_or_default();
        assert!(
            err.contains("/p/.mcp.json") && err.contains(says),
            "{text}: {err}"
        );
    }
    let mut warnings = Vec::new();
    let err = parse_inline_server(
        Path::new("/a.md"),
        "t",
        &serde_json::json!("x"),
        &mut warnings,
    )
    .err()
    .unwrap_or_default();
    assert!(err.contains("expected an object"), "{err}");
}

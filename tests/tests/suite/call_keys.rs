//! Issue 32: `subagent call` cannot steer the operator's key. Two loopback
//! servers record the `Authorization` header of every request: `prod`, the
//! provider of the operator's config, and `elsewhere`, a host the payload
//! names. Through the real binary and worker:
//! - `call --provider prod` with a payload `url` of `elsewhere` sent prod's
//!   key there; now INVALID_INPUT names `url` and nothing reaches it (the
//!   same when the payload, not the flag, names `prod`);
//! - a payload `api_key_name: "AWS_SECRET_ACCESS_KEY"` went to the
//!   provider as a bearer token; now INVALID_INPUT names `api_key_name`,
//!   unless the operator allows it (`[call] allowed_api_key_env`,
//!   `--api-key-env`); the kind's own variable always works.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use subagent_test_support::http::{LoopbackHttp, Response};

use super::scripted_model::text_turn;
use super::support::*;

const PROD_KEY: &str = "prod-key-abcdefghijklmnop";
const AWS_SECRET: &str = "aws-secret-abcdefghijklmnop";
const OPENAI_KEY: &str = "openai-key-abcdefghijklmnop";

/// A loopback server (the test support's stub) answering every request
/// with one scripted text turn and keeping each request's `Authorization`
/// header.
struct Recorder {
    url: String,
    server: LoopbackHttp,
}

impl Recorder {
    fn start() -> Self {
        let server =
            LoopbackHttp::start(|_| Response::new(200, "text/event-stream", text_turn("answered")));
        Self {
            url: server.url("/v1"),
            server,
        }
    }

    fn authorizations(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .map(|r| r.header("authorization").unwrap_or_default().to_owned())
            .collect()
    }
}

/// A user config dir whose config.toml is `text`.
fn user_config(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("subagent")).unwrap();
    std::fs::write(dir.path().join("subagent/config.toml"), text).unwrap();
    dir
}

/// The operator's config: `prod` at `prod_url` with its own key variable.
fn prod_config(prod_url: &str, more: &str) -> tempfile::TempDir {
    user_config(&format!(
        "[providers.prod]\nkind = \"openai-chat\"\nbase_url = \"{prod_url}\"\n\
         model = \"scripted\"\napi_key_env = \"PROD_KEY\"\n{more}"
    ))
}

/// `subagent call ARGS` with `payload` on stdin, the keys of this test in
/// its environment and `config` as its user config dir.
fn call(config: &Path, args: &[&str], payload: &Value) -> Output {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(binary("subagent"));
    command
        .arg("call")
        .args(args)
        .arg("--workspace")
        .arg(workspace.path())
        .arg("--sessions-dir")
        .arg(sessions.path())
        .args(["--timeout", "60"])
        .env("XDG_CONFIG_HOME", config)
        .env("PROD_KEY", PROD_KEY)
        .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("SUBAGENT_WORKER");
    let out = spawn_with_stdin(&mut command, payload.to_string().as_bytes())
        .wait_with_output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    out
}

/// The call was refused as INVALID_INPUT naming `field`, before any
/// request (`target` is where the payload tried to send a key).
fn assert_refused(out: &Output, field: &str, target: &Recorder) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "not refused; {} received {:?}\nstdout: {stdout}\nstderr: {stderr}",
        target.url,
        target.authorizations()
    );
    assert!(
        stdout.starts_with("Error: INVALID_INPUT: ") && stdout.contains(&format!("`{field}`")),
        "{stdout}"
    );
}

fn assert_answered(out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("answered"), "{stdout}");
}

#[test]
fn a_payload_url_cannot_take_a_configured_providers_key_elsewhere() {
    let prod = Recorder::start();
    let elsewhere = Recorder::start();
    let config = prod_config(&prod.url, "");
    let steer = json!({"prompt": "hi", "url": elsewhere.url});

    assert_refused(
        &call(config.path(), &["--provider", "prod"], &steer),
        "url",
        &elsewhere,
    );
    // Named by the payload instead of the flag: the same provider, the same key.
    let named = json!({"prompt": "hi", "provider": "prod", "url": elsewhere.url});
    assert_refused(&call(config.path(), &[], &named), "url", &elsewhere);
    // Nor may it swap the key variable prod's key is read from.
    let key = json!({"prompt": "hi", "api_key_name": "OPENAI_API_KEY"});
    assert_refused(
        &call(config.path(), &["--provider", "prod"], &key),
        "api_key_name",
        &prod,
    );
    assert_eq!(elsewhere.authorizations(), Vec::<String>::new());
    assert_eq!(prod.authorizations(), Vec::<String>::new());

    // Repeating prod's own URL and variable is fine, and prod gets its key.
    let own = json!({"prompt": "hi", "url": format!("{}/chat/completions", prod.url),
        "api_key_name": "PROD_KEY"});
    assert_answered(&call(config.path(), &["--provider", "prod"], &own));
    assert_eq!(prod.authorizations(), vec![format!("Bearer {PROD_KEY}")]);
    assert_eq!(elsewhere.authorizations(), Vec::<String>::new());
}

#[test]
fn a_payload_api_key_name_names_only_the_kinds_variable_or_one_the_operator_allows() {
    let provider = Recorder::start();
    let no_config = user_config("");
    let payload = |var: &str| {
        json!({"prompt": "hi", "provider": "openai-chat", "model": "scripted",
            "url": provider.url, "api_key_name": var})
    };
    assert_refused(
        &call(no_config.path(), &[], &payload("AWS_SECRET_ACCESS_KEY")),
        "api_key_name",
        &provider,
    );
    assert_eq!(provider.authorizations(), Vec::<String>::new());

    // The kind's own variable.
    assert_answered(&call(no_config.path(), &[], &payload("OPENAI_API_KEY")));
    // One the operator allows, in its config or with the flag.
    let allowing = user_config("[call]\nallowed_api_key_env = [\"AWS_SECRET_ACCESS_KEY\"]\n");
    assert_answered(&call(
        allowing.path(),
        &[],
        &payload("AWS_SECRET_ACCESS_KEY"),
    ));
    assert_answered(&call(
        no_config.path(),
        &["--api-key-env", "AWS_SECRET_ACCESS_KEY"],
        &payload("AWS_SECRET_ACCESS_KEY"),
    ));
    assert_eq!(
        provider.authorizations(),
        vec![
            format!("Bearer {OPENAI_KEY}"),
            format!("Bearer {AWS_SECRET}"),
            format!("Bearer {AWS_SECRET}"),
        ]
    );
}

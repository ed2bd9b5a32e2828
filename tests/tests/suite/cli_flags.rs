//! `subagent run`'s limit and provider flags as a user types them: sizes and
//! durations with units end up in the limits the session header records,
//! bad values are usage errors that say what is accepted, and the provider's
//! usual environment variables are read without leaking the key.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::llama::LlamaServer;
use super::support::*;

/// Every limit flag of `subagent run`, as `--help` must list it.
const LIMIT_FLAGS: [&str; 13] = [
    "--memory",
    "--pids",
    "--stdout-limit",
    "--stderr-limit",
    "--return-limit",
    "--tool-timeout",
    "--tool-memory",
    "--tool-pids",
    "--max-depth",
    "--max-turns",
    "--max-cost",
    "--timeout",
    "--idle-timeout",
];

/// The provider variables the CLI reads; removed from every spawned CLI so
/// the developer's own shell cannot change what a test sees.
const PROVIDER_VARS: [&str; 4] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
];

/// `subagent run` on the fixture worker, with a clean provider environment.
fn cli(sessions: &Path) -> Command {
    let mut c = Command::new(binary("subagent"));
    c.arg("run")
        .arg("--worker")
        .arg(FIXTURE)
        .arg("--sessions-dir")
        .arg(sessions)
        .arg("--model")
        .arg("fixture-model")
        .stdin(Stdio::null());
    for var in PROVIDER_VARS {
        c.env_remove(var);
    }
    c
}

/// The result object of a run that must have succeeded.
fn succeeded(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = serde_json::from_slice(&out.stdout).unwrap();
    assert_children_reaped(&result);
    result
}

fn session_file(result: &Value) -> String {
    result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn limit_flags_with_units_reach_the_session_header() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args(["--base-url", "http://127.0.0.1:9/v1"])
        .args(["--task", "fixture:success", "--json"])
        .args(["--memory", "512M", "--pids", "32", "--timeout", "90s"])
        .args(["--tool-timeout", "30s", "--return-limit", "100K"])
        .output()
        .unwrap();
    let result = succeeded(&out);
    let lines = check_session_file(Path::new(&session_file(&result)));
    let header = &lines[0];
    assert_eq!(header["type"], "session");
    let limits = &header["limits"];
    let recorded: Vec<(&str, &Value)> = [
        "memoryBytes",
        "pids",
        "wallTimeoutMs",
        "toolTimeoutMs",
        "returnedTextBytes",
    ]
    .into_iter()
    .map(|k| (k, &limits[k]))
    .collect();
    assert_eq!(
        recorded,
        vec![
            ("memoryBytes", &Value::from(512u64 * 1024 * 1024)),
            ("pids", &Value::from(32)),
            ("wallTimeoutMs", &Value::from(90_000)),
            ("toolTimeoutMs", &Value::from(30_000)),
            ("returnedTextBytes", &Value::from(100 * 1024)),
        ]
    );
    // A flag not given keeps the library's default.
    assert_eq!(
        limits["idleTimeoutMs"],
        subagent_protocol::Limits::default().idle_timeout_ms
    );
}

#[test]
fn a_plain_number_is_still_seconds_for_the_timeouts() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args(["--base-url", "http://127.0.0.1:9/v1"])
        .args(["--task", "fixture:success", "--json"])
        .args(["--timeout", "900", "--idle-timeout", "120"])
        .output()
        .unwrap();
    let lines = check_session_file(Path::new(&session_file(&succeeded(&out))));
    assert_eq!(lines[0]["limits"]["wallTimeoutMs"], 900_000);
    assert_eq!(lines[0]["limits"]["idleTimeoutMs"], 120_000);
}

#[test]
fn a_bad_value_exits_2_and_says_what_is_accepted() {
    for (flag, value, expected) in [
        (
            "--memory",
            "12X",
            "`12X` is not a size; use a number with K, M or G (e.g. 512M, 2G)",
        ),
        (
            "--timeout",
            "soon",
            "`soon` is not a duration; use seconds or a number with ms, s, m or h (e.g. 90s, 15m, 1h)",
        ),
        (
            "--pids",
            "0",
            "`0` is not a count; use a whole number, 1 or more",
        ),
        ("--max-cost", "lots", "`lots` is not an amount of dollars"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = cli(dir.path())
            .args(["--task", "fixture:success", flag, value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(
            err.contains(flag) && err.contains(expected),
            "{flag} {value}: {err}"
        );
        // Refused while parsing: no worker started, no session file written.
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{flag} {value}: something was written"
        );
    }
}

#[test]
fn help_lists_every_limit_flag_and_the_provider_variables() {
    let out = Command::new(binary("subagent"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in LIMIT_FLAGS.into_iter().chain(PROVIDER_VARS) {
        assert!(help.contains(needle), "{needle} missing from help:\n{help}");
    }
    // Defaults read like values a user would type.
    for default in ["[default: 2G]", "[default: 15m]", "[default: 200K]"] {
        assert!(
            help.contains(default),
            "{default} missing from help:\n{help}"
        );
    }
}

#[test]
fn openai_api_key_is_read_from_the_environment_and_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args(["--task", "fixture:success", "--json"])
        .args(["--provider", "openai-chat"])
        .env("OPENAI_API_KEY", TEST_API_KEY)
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .output()
        .unwrap();
    let result = succeeded(&out);
    let session = std::fs::read_to_string(session_file(&result)).unwrap();
    for (what, text) in [
        ("stdout", String::from_utf8_lossy(&out.stdout).into_owned()),
        ("stderr", String::from_utf8_lossy(&out.stderr).into_owned()),
        ("the session file", session),
    ] {
        assert!(!text.contains(TEST_API_KEY), "the key leaked into {what}");
    }
}

#[test]
fn anthropic_base_url_from_the_environment_works_without_v1() {
    // The case end to end: a shell set up for the Anthropic SDKs
    // (host only, no `/v1`) and no --base-url, against the real worker.
    let Some(server) =
        LlamaServer::start_or_skip("anthropic_base_url_from_the_environment_works_without_v1")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let base_url = server.base_url();
    let out = Command::new(binary("subagent"))
        .arg("run")
        .arg("--worker")
        .arg(binary("subagent-worker"))
        .arg("--sessions-dir")
        .arg(dir.path())
        .args(["--provider", "anthropic", "--model", "smollm2"])
        .args(["--task", "Say hello in five words.", "--max-turns", "3"])
        .args(["--max-tokens", "48", "--temperature", "0", "--json"])
        .env_remove("ANTHROPIC_API_KEY")
        .env(
            "ANTHROPIC_BASE_URL",
            base_url.strip_suffix("/v1").expect("base_url ends in /v1"),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    drop(server);
    let result = succeeded(&out);
    assert!(
        result["details"]["results"][0]["usage"]["output"]
            .as_u64()
            .unwrap()
            > 0,
        "the model answered: {result:#}"
    );
}

#[test]
fn call_blames_an_unset_key_variable_on_the_stdin_field_that_named_it() {
    let sessions = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let input = serde_json::json!({
        "model": "m",
        "provider": "openai-chat",
        "url": "http://127.0.0.1:9/v1",
        "api_key_name": "OPENAI_API_KEY",
        "prompt": "fixture:success",
    });
    let mut command = Command::new(binary("subagent"));
    command
        .args(["call", "--worker", FIXTURE, "--workspace"])
        .arg(workspace.path())
        .arg("--sessions-dir")
        .arg(sessions.path())
        .env_remove("OPENAI_API_KEY");
    let out = spawn_with_stdin(&mut command, input.to_string().as_bytes())
        .wait_with_output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("named by the request's field api_key_name: OPENAI_API_KEY"),
        "{err}"
    );
    assert!(!err.contains("--api-key-env"), "{err}");
}

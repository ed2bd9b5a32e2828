//! What a server reads back is evidence, not authority (issue 32), through
//! the real `serve --stdio` and `serve --mcp`: recovery of a dead server's
//! runs appends to no file it did not write (a fake dead-server file naming
//! the user's agent file and a shell script, a link, a FIFO), and an MCP
//! client's `resume` reaches only the runs of the server's workspace, by
//! id: not the operator's run of another workspace, not a path, not a
//! FIFO or /dev/zero, and no id is learned from an ambiguous prefix.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;
use subagent_protocol::RunMode;
use subagent_supervisor::jobs::job_start_line;

use super::serve_mcp::{FIXTURE_SERVER, client_command, mcp_python, report_of, setup, texts};
use super::session_evidence::Dirs;
use super::support::*;

/// A `subagent:start` line of job `job` whose child file is `child`.
fn start_naming(job: &str, child: &Path) -> String {
    let mut line = job_start_line(
        job,
        "tester",
        "general",
        RunMode::Single,
        "fixture-model",
        "2026-11-27T00:00:00.000Z",
    );
    if let subagent_protocol::session::SessionEntry::AgentEvent(e) = &mut line.entry {
        e.session_file = Some(child.display().to_string());
    }
    serde_json::to_string(&line).unwrap() + "\n"
}

#[test]
fn serve_recovery_appends_to_no_file_it_did_not_write() {
    let dirs = Dirs::new();
    let serve = dirs.sessions.join("serve");
    std::fs::create_dir_all(&serve).unwrap();
    let agents = dirs.config.join("subagent/agents");
    std::fs::create_dir_all(&agents).unwrap();
    let agent = agents.join("helper.md");
    std::fs::write(&agent, "---\nname: helper\n---\nBe helpful.\n").unwrap();
    let script = dirs.outside.join("deploy.sh");
    std::fs::write(&script, "#!/bin/sh\necho deploy\n").unwrap();
    let targets = start_naming("aaaa0001", &agent) + &start_naming("aaaa0002", &script);
    // A fake dead server's file, as a tool would plant it...
    let forged = serve.join("serve-999991.jsonl");
    std::fs::write(&forged, &targets).unwrap();
    // ...one that verifies but names files outside the sessions dir...
    let signed = serve.join("serve-999992.jsonl");
    std::fs::write(
        &signed,
        dirs.sign(&(start_naming("bbbb0001", &agent) + &start_naming("bbbb0002", &script))),
    )
    .unwrap();
    // ...a link to the script, and a FIFO no one writes.
    std::os::unix::fs::symlink(&script, serve.join("serve-999993.jsonl")).unwrap();
    make_fifo(&serve.join("serve-999994.jsonl"));
    let before = [&agent, &script, &forged].map(|f| std::fs::read_to_string(f).unwrap());

    // stdin at its end: the server starts, recovers, and stops.
    let out = Command::new("timeout")
        .arg("60")
        .arg(binary("subagent"))
        .args(["serve", "--stdio", "--worker", FIXTURE])
        .args([
            "--model",
            "fixture-model",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .arg("--sessions-dir")
        .arg(&dirs.sessions)
        .arg("--workspace")
        .arg(&dirs.ws)
        .env("XDG_CONFIG_HOME", &dirs.config)
        .current_dir(&dirs.ws)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let after = [&agent, &script, &forged].map(|f| std::fs::read_to_string(f).unwrap());
    assert_eq!(
        after, before,
        "a file recovery did not write was appended to"
    );
    // The server file that verifies is the server's own kind: its runs are
    // marked there, and only there.
    let marked = std::fs::read_to_string(&signed).unwrap();
    assert_eq!(marked.lines().count(), 4, "{marked}");
    assert_eq!(marked.matches("interrupted:").count(), 4, "{marked}");
    assert!(stderr.contains("outside the sessions dir"), "{stderr}");
    assert_nothing_runs_in(&dirs.ws);
}

/// `subagent run` of the fixture worker in `workspace`: the run id.
fn fixture_run(sessions: &Path, workspace: &Path) -> (String, String) {
    let out = fixture_cli(sessions)
        .arg("--workspace")
        .arg(workspace)
        .args(["--json", "--task", "the operator's own secret plan"])
        // The server's client passes only HOME and the like: the same key.
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let (result, lines) = checked(&out, 0);
    let id = lines[0]["runId"].as_str().unwrap().to_owned();
    (id, session_file_of(&result).display().to_string())
}

#[test]
fn mcp_resume_reaches_only_runs_of_the_servers_workspace_by_id() {
    let Some(python) = mcp_python("mcp_resume_reaches_only_runs_of_the_servers_workspace") else {
        return;
    };
    let setup = setup();
    let elsewhere = tempfile::tempdir().unwrap();
    // The operator's own CLI runs of another workspace.
    let foreign: Vec<(String, String)> = (0..3)
        .map(|_| fixture_run(&setup.sessions, elsewhere.path()))
        .collect();
    // One run of the server's workspace, and a copy of its file under
    // another name: two runs of that id prefix, for an ambiguous prefix.
    let (own, own_file) = fixture_run(&setup.sessions, &setup.workspace);
    let twin = Path::new(&own_file).with_file_name(format!("{own}-twin.jsonl"));
    std::fs::copy(&own_file, &twin).unwrap();
    let day = Path::new(&own_file).parent().unwrap();
    make_fifo(&day.join("f1f0f1f0-general.jsonl"));
    std::os::unix::fs::symlink("/dev/zero", day.join("2e402e40-general.jsonl")).unwrap();

    let (foreign_id, foreign_file) = &foreign[0];
    let targets = json!([
        foreign_id,
        // A prefix of the foreign run's id alone: ids of one minute share
        // their first digits (the time), so a short one names own runs too.
        &foreign_id[..foreign_id.len() - 1],
        foreign_file,
        "../../../../etc/passwd",
        "f1f0f1f0",
        "2e402e40",
        &own[..6],
        "0",
        "",
    ]);
    let mut client = client_command(&python, &setup, "reach", &FIXTURE_SERVER);
    client.env("REACH_TARGETS", targets.to_string());
    let report = report_of(client);
    let reach = &report["reach"];
    let refusal = |target: &str| -> String {
        let answer = &reach[target];
        assert_ne!(answer, "TIMEOUT", "resume {target:?} was not answered");
        assert_eq!(answer["isError"], true, "{target:?}: {answer}");
        texts(answer).join("\n")
    };
    for target in [foreign_id.as_str(), &foreign_id[..foreign_id.len() - 1]] {
        let text = refusal(target);
        assert!(
            text.contains("no run this server can continue has that id"),
            "{target}: {text}"
        );
    }
    for target in [foreign_file.as_str(), "../../../../etc/passwd", ""] {
        let text = refusal(target);
        assert!(text.contains("never by path"), "{target:?}: {text}");
    }
    for target in ["f1f0f1f0", "2e402e40"] {
        let text = refusal(target);
        assert!(
            text.contains("no run this server can continue"),
            "{target}: {text}"
        );
    }
    let text = refusal(&own[..6]);
    assert!(text.contains("matches 2 runs"), "{text}");
    // No answer names a run the client was not given (the other runs of
    // that workspace, its own run's whole id, the twin's file) or shows
    // a word of the operator's conversation.
    let all = reach.to_string();
    for (id, _) in &foreign[1..] {
        assert!(!all.contains(id.as_str()), "{id}: {all}");
    }
    assert!(!all.contains(&own), "{all}");
    assert!(!all.contains("-twin.jsonl"), "{all}");
    assert!(!all.contains("operator's own secret"), "{all}");
    // And the server still answers.
    assert_eq!(report["after"]["isError"], false, "{report}");
    assert_nothing_runs_in(&setup.workspace);
}

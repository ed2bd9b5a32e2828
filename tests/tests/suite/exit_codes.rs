//! The `subagent` binary's exit statuses as README.md documents them: the
//! contract these tests hold the binary to, written out here rather than
//! imported, so a change of the binary's table fails them.

pub const OK: i32 = 0;
pub const INVALID_INPUT: i32 = 2;
pub const TIMEOUT: i32 = 3;
pub const BUDGET_EXCEEDED: i32 = 4;
pub const DOCTOR_MISSING: i32 = 7;
pub const RECORD_LOST: i32 = 9;

use std::process::{Command, Stdio};

use super::support::*;

/// A run whose result cannot be written (stdout on a full disk) ended
/// without its caller getting what it asked for: the status is a lost
/// record's, not "invalid input" (2) as the run itself was fine.
#[test]
fn a_result_that_cannot_be_written_to_stdout_is_a_lost_record() {
    let dir = tempfile::tempdir().unwrap();
    for (command, stdin) in [("run", ""), ("call", "{\"prompt\": \"fixture:success\"}")] {
        let mut cmd = Command::new(binary("subagent"));
        cmd.args([command, "--worker", FIXTURE, "--model", "fixture-model"])
            .args(["--base-url", "http://127.0.0.1:9/v1"])
            .arg("--workspace")
            .arg(dir.path())
            .arg("--sessions-dir")
            .arg(dir.path().join("sessions"))
            .env_remove("SUBAGENT_WORKER")
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .stderr(Stdio::piped());
        if command == "run" {
            cmd.args(["--quiet", "--task", "fixture:success"]);
        }
        let mut child = cmd.stdin(Stdio::piped()).spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut input, stdin.as_bytes()).unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        assert_nothing_runs_in(dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(RECORD_LOST), "{command}: {stderr}");
        assert!(
            stderr.contains("cannot write the result to stdout")
                && stderr.contains("No space left on device"),
            "{command}: {stderr}"
        );
    }
}

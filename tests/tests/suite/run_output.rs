//! What a finished CLI run left, read back for a test's assertions: its
//! exit status (a failed assertion shows its stderr), its JSON result, its
//! session lines, its tool's output and the sandbox layers its header
//! records.
//!
//! Reads only: it starts nothing and changes no file.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::processes::assert_reaped;
use super::support::{assert_valid_result, check_session_file};

/// The process's stderr, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The process exited `code`.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "stderr: {}", stderr(out));
}

/// The process exited `code` and its stderr says `needle`.
pub fn assert_exit_saying(out: &Output, code: i32, needle: &str) {
    assert_exit(out, code);
    assert!(
        stderr(out).contains(needle),
        "{needle:?} not in: {}",
        stderr(out)
    );
}

/// The session file of a result object's first (or only) run.
pub fn session_file_of(result: &Value) -> PathBuf {
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap_or_else(|| panic!("no session file in {result:#}"));
    PathBuf::from(file)
}

/// Exit status, result validation, session-file validation and reaping;
/// returns the result and the session lines.
pub fn checked(out: &Output, expected_exit: i32) -> (Value, Vec<Value>) {
    assert_exit(out, expected_exit);
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is no JSON result ({e}); stderr: {}", stderr(out)));
    assert_valid_result(&json);
    let lines = check_session_file(Path::new(&session_file_of(&json)));
    assert_reaped(&lines);
    (json, lines)
}

/// The session lines of type `ty`.
pub fn of_type<'a>(lines: &'a [Value], ty: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == ty).collect()
}

/// The first `tool_result` line.
pub fn tool_result(lines: &[Value]) -> &Value {
    lines
        .iter()
        .find(|l| l["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool result: {lines:#?}"))
}

/// The output of the first `tool_result` line.
pub fn tool_output(lines: &[Value]) -> String {
    let result = tool_result(lines);
    result["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no output in {result:#}"))
        .to_owned()
}

/// The layers of the tool sandbox that a session header says its tool
/// processes got (`toolSandbox.applied`).
pub fn sandbox_layers(header: &Value) -> Vec<&str> {
    header["toolSandbox"]["applied"]
        .as_array()
        .unwrap_or_else(|| panic!("no toolSandbox in the header: {header:#}"))
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

//! `--tool-disk` through the real CLI, the scripted model and real
//! python3 in the tool sandbox: a call that writes four 300 MiB files
//! under a 512 MiB cap is stopped and told so, and the workspace keeps
//! less than the cap plus what the watch lets through between two looks;
//! a call under the cap runs untouched.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

const MIB: u64 = 1024 * 1024;

/// What the watch may let through past the cap (480 MiB): a tool writing
/// at page-cache speed for one 100 ms watch interval and one walk. Python
/// writes 300 MiB in 1 MiB pieces in 62 ms on an idle machine here (4.8
/// GB/s, so 480 MiB in 100 ms); the test saw 269 to 318 MiB past the cap
/// alone on an idle machine, 2 to 153 MiB when the machine was busy.
/// Without the watch all four files land (1,200 MiB, 688 MiB past the cap,
/// more than this allows).
const SLACK: u64 = 480 * MIB;

/// Four files of 300 MiB, written in 1 MiB pieces; a file stopped by the
/// per-file cap (EFBIG: Python ignores SIGXFSZ) is left and the next begun.
const FOUR_FILES: &str = r#"
import os
chunk = b"x" * (1024 * 1024)
for i in range(4):
    try:
        with open(f"big{i}.bin", "wb") as f:
            for _ in range(300):
                f.write(chunk)
                f.flush()
    except OSError as e:
        print(f"big{i}.bin: {e}")
print("all four written")
"#;

/// Allocated bytes of the files under `dir` (what the watch counts).
fn allocated(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().blocks() * 512)
        .sum()
}

fn run(model: &ScriptedModel, workspace: &Path, sessions: &Path, cap: &str) -> Output {
    model
        .run_command(workspace, sessions)
        .args(["--task", "Write the files.", "--tools", "python_execute"])
        // The walk is what `--isolation none` keeps; the default layer's
        // kernel cap is tests/tests/suite/cow_attacks.rs'.
        .args(["--tool-disk", cap, "--json", "--isolation", "none"])
        .output()
        .unwrap()
}

/// The one python_execute result line of the run's session file.
fn tool_result(out: &Output) -> Value {
    let result: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}; stderr:\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_valid_result(&result);
    assert_children_reaped(&result);
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned();
    let lines = check_session_file(Path::new(&file));
    let header = &lines[0];
    assert!(header["limits"]["toolDiskBytes"].is_u64(), "{header}");
    lines
        .into_iter()
        .find(|l| l["type"] == "tool_result")
        .expect("a tool result line")
}

#[test]
fn a_call_growing_the_workspace_past_tool_disk_is_stopped_and_told_so() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_big", "python_execute", &json!({"code": FOUR_FILES})),
        text_turn("done"),
    ]);
    let out = run(&model, workspace.path(), sessions.path(), "512M");
    let result = tool_result(&out);
    let output = result["output"].as_str().unwrap();
    assert_eq!(result["isError"], true, "{output}");
    assert!(
        output.contains(
            "stopped: the tool grew the workspace by more than 512 MiB (--tool-disk) and was stopped"
        ),
        "{output}"
    );
    assert!(!output.contains("all four written"), "{output}");
    let kept = allocated(workspace.path());
    eprintln!(
        "tool_disk: the workspace kept {} MiB under a 512 MiB cap",
        kept / MIB
    );
    assert!(
        kept < 512 * MIB + SLACK,
        "the workspace holds {} MiB",
        kept / MIB
    );
    assert!(
        kept > 300 * MIB,
        "the files were written: {} MiB",
        kept / MIB
    );
    assert_nothing_runs_in(workspace.path());
}

#[test]
fn a_call_under_tool_disk_runs_untouched() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let code = "open('small.bin', 'wb').write(b'y' * (20 * 1024 * 1024)); print('wrote 20 MiB')";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_small", "python_execute", &json!({"code": code})),
        text_turn("done"),
    ]);
    let out = run(&model, workspace.path(), sessions.path(), "512M");
    let result = tool_result(&out);
    let output = result["output"].as_str().unwrap();
    assert_eq!(result["isError"], false, "{output}");
    assert!(output.starts_with("exit code 0"), "{output}");
    assert!(output.contains("wrote 20 MiB"), "{output}");
    assert!(!output.contains("--tool-disk"), "{output}");
    assert_eq!(
        std::fs::metadata(workspace.path().join("small.bin"))
            .unwrap()
            .len(),
        20 * MIB
    );
    assert_nothing_runs_in(workspace.path());
}

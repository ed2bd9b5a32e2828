//! Escape sequences chosen by the model never reach the user's terminal
//! as sequences: `subagent run` in a real terminal (tmux, as in
//! `status_line.rs`) against a scripted model whose tool name and final
//! text carry OSC 0 (window title), OSC 52 (clipboard), CSI 2J (clear
//! screen), SGR and an 8-bit C1 CSI. The pane shows the text stripped, the
//! title and the clipboard stay as they were, the screen is not cleared,
//! and the bytes written to the pane never hold the sequences.

use serde_json::json;

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::status_line::{Tmux, check_sessions, run_args, shell_line, workspace};
use super::support;

/// What executed sequences would leave: a title, a clipboard entry.
const PWNED: &str = "PWNED";

/// `pwned` in base64, as OSC 52 carries it.
const PWNED_B64: &str = "cHduZWQ=";

/// A tool name the model makes up: refused as unknown, shown on the status
/// line while it runs.
fn evil_tool() -> String {
    format!("probe\x1b]0;{PWNED}-TITLE\x07\x1b[2J\u{9b}31mtool")
}

fn evil_answer() -> String {
    format!(
        "ANSWER-START\x1b]0;{PWNED}-ANSWER\x1b\\\x1b]52;c;{PWNED_B64}\x07\x1b[2J\x1b[H\x1b[1;31mANSWER-END"
    )
}

#[test]
fn escape_sequences_from_the_model_show_stripped_and_do_not_execute() {
    let dir = workspace();
    let record = dir.path().join("pane-record");
    let Some(tmux) = Tmux::start_or_skip("escapes_in_a_terminal", dir.path(), record) else {
        return;
    };
    // OSC 52 from a program would fill a tmux paste buffer.
    tmux.run(&["set", "-s", "set-clipboard", "on"]);
    tmux.type_line("echo BEFORE-THE-RUN");
    tmux.wait_for("the marker", Tmux::screen, |s| {
        s.lines().any(|l| l.trim_end() == "BEFORE-THE-RUN")
    });
    let title = || {
        String::from_utf8_lossy(&tmux.run(&["display", "-p", "#{pane_title}"]).stdout).into_owned()
    };
    let title_before = title();

    let model = ScriptedModel::start_held(vec![
        tool_call_turn("call_1", &evil_tool(), &json!({})),
        text_turn(&evil_answer()),
    ]);
    tmux.type_line(&shell_line(&run_args(&model, dir.path(), &[])));
    tmux.wait_for("turn 1", Tmux::screen, |s| s.contains("turn 1"));
    model.release();
    let status = tmux.wait_for("the tool name on the status line", Tmux::screen, |s| {
        s.contains("probetool")
    });
    model.release();
    let done = tmux.wait_for("the run's end", Tmux::screen, |s| s.contains("exit:0"));

    assert!(
        done.lines()
            .any(|l| l.trim_end() == "ANSWER-STARTANSWER-END"),
        "the answer, stripped, on a line of its own:\n{done}"
    );
    assert!(
        done.lines().any(|l| l.trim_end() == "BEFORE-THE-RUN"),
        "the screen was cleared:\n{done}"
    );
    assert!(status.contains("probetool"), "{status}");
    let title_after = title();
    assert_eq!(title_after, title_before, "the pane title changed");
    assert!(!title_after.contains(PWNED));
    let buffers = tmux.run(&["list-buffers", "-F", "#{buffer_sample}"]);
    assert!(
        !String::from_utf8_lossy(&buffers.stdout).contains("pwned"),
        "the clipboard was written: {}",
        String::from_utf8_lossy(&buffers.stdout)
    );
    let written = tmux.wait_for("the run's end in the record", Tmux::recorded, |s| {
        s.contains("exit:0")
    });
    assert!(
        !written.contains(PWNED) && !written.contains(PWNED_B64),
        "a sequence reached the terminal: {written:?}"
    );
    assert!(!written.contains('\u{9b}'), "{written:?}");

    tmux.kill();
    support::assert_nothing_runs_in(dir.path());
    assert_eq!(check_sessions(&dir.path().join("sessions")), 1);
}

//! The status line's token figures inside a real terminal (a private tmux
//! server, as in `status_line.rs`): while a turn streams, before its usage
//! arrives, the line counts the streamed output as an estimate (`~N out`);
//! once the usage arrives it shows the provider's figures, input counted
//! as the result and the session file count it and the cache on its own.
//! The scripted model stops its reply part-way ([`PAUSE`]) so the test
//! looks at a turn still streaming when it chooses, waiting on the screen,
//! never sleeping.

use std::path::Path;

use serde_json::{Value, json};

use super::scripted_model::{PAUSE, ScriptedModel, text_turn_with};
use super::status_line::{Tmux, check_sessions, run_args, shell_line, status_line, workspace};
use super::support;

/// 400 characters of answer text: about 100 tokens at 4 characters each.
const STREAMED: &str = "0123456789";

/// One SSE event of an OpenAI chat completion chunk.
fn event(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-tokens", "object": "chat.completion.chunk", "created": 1_744_112_711,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        "usage": null,
    });
    format!("data: {chunk}\n\n")
}

/// Turn 1: 400 characters of text in 40 deltas, a pause, then a call of
/// bash_read, and usage with 93 of the 104 prompt tokens from the cache.
fn streaming_turn_with_a_call() -> Vec<u8> {
    let mut sse = event(json!({"role": "assistant", "content": ""}), None);
    for _ in 0..40 {
        sse.push_str(&event(json!({"content": STREAMED}), None));
    }
    sse.push_str(PAUSE);
    sse.push_str(&event(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "bash_read", "arguments": "{\"path\": \"notes.txt\"}"}}]}),
        None,
    ));
    sse.push_str(&event(json!({}), Some("tool_calls")));
    let usage = json!({
        "id": "chatcmpl-tokens", "object": "chat.completion.chunk", "created": 1_744_112_711,
        "model": "scripted", "choices": [],
        "usage": {"prompt_tokens": 104, "completion_tokens": 98, "total_tokens": 202,
                  "prompt_tokens_details": {"cached_tokens": 93}},
    });
    sse.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    sse.into_bytes()
}

#[test]
fn the_status_line_counts_streamed_output_then_shows_the_usage_as_the_result_counts_it() {
    let dir = workspace();
    let record = dir.path().join("pane-record");
    let Some(tmux) = Tmux::start_or_skip("status_line_tokens", dir.path(), record) else {
        return;
    };
    let model = ScriptedModel::start(vec![
        streaming_turn_with_a_call(),
        text_turn_with(
            &[PAUSE, "The notes ", "say hello."],
            "stop",
            json!({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}),
        ),
    ]);
    let line = shell_line(&run_args(&model, dir.path(), &["--json"])).replacen(
        "; echo",
        " > result.json; echo",
        1,
    );
    tmux.type_line(&line);

    // Mid-turn, before any usage: the streamed text counted, marked `~`.
    let streaming = tmux.wait_for("the streamed estimate", Tmux::screen, |s| {
        status_line(s, "turn 1").is_some_and(|l| l.contains("~100 out tok"))
    });
    let shown = status_line(&streaming, "turn 1").unwrap();
    assert!(shown.contains("0 in / ~100 out tok"), "{shown}");
    model.resume_stream();

    // Turn 2 held at its start: turn 1's usage, input without the cache.
    let counted = tmux.wait_for("turn 1's usage on the line", Tmux::screen, |s| {
        status_line(s, "turn 2").is_some_and(|l| l.contains("11 in (+93 cached) / 98 out tok"))
    });
    assert!(!status_line(&counted, "turn 2").unwrap().contains('~'));
    model.resume_stream();
    tmux.wait_for("the run's end", Tmux::screen, |s| s.contains("exit:0"));
    tmux.kill();
    support::assert_nothing_runs_in(dir.path());

    // The same figures in the result and the session file's usage line.
    let result: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("result.json")).unwrap()).unwrap();
    support::assert_valid_result(&result);
    let usage = &result["details"]["results"][0]["usage"];
    assert_eq!(
        (&usage["input"], &usage["cacheRead"], &usage["output"]),
        (&json!(11), &json!(93), &json!(98)),
        "{result:#}"
    );
    let lines = support::check_session_file(Path::new(
        result["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap(),
    ));
    let turn1 = lines
        .iter()
        .find(|l| l["type"] == "usage" && l["turn"] == 1)
        .unwrap();
    assert_eq!(
        (&turn1["usage"]["input"], &turn1["usage"]["cacheRead"]),
        (&json!(11), &json!(93))
    );
    assert_eq!(check_sessions(&dir.path().join("sessions")), 1);
}

#[test]
fn an_answer_cut_by_max_tokens_leaves_a_note_above_it_when_the_line_goes() {
    let dir = workspace();
    let record = dir.path().join("pane-record");
    let Some(tmux) = Tmux::start_or_skip("status_line_cut", dir.path(), record) else {
        return;
    };
    let model = ScriptedModel::start(vec![text_turn_with(
        &["Once upon ", PAUSE, "a time"],
        "length",
        json!({"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}),
    )]);
    tmux.type_line(&shell_line(&run_args(
        &model,
        dir.path(),
        &["--max-tokens", "5"],
    )));
    tmux.wait_for("the streaming turn", Tmux::screen, |s| {
        status_line(s, "turn 1").is_some_and(|l| l.contains("~3 out tok"))
    });
    model.resume_stream();
    let done = tmux.wait_for("the run's end", Tmux::screen, |s| s.contains("exit:0"));
    let note = done
        .lines()
        .position(|l| l.contains("note: general: a model turn was cut by max_tokens"));
    let answer = done
        .lines()
        .position(|l| l.trim_end() == "Once upon a time");
    assert!(
        note.is_some() && answer.is_some() && note < answer,
        "the note stays, above the answer:\n{done}"
    );
    assert!(status_line(&done, "turn 1").is_none(), "{done}");
    tmux.kill();
    support::assert_nothing_runs_in(dir.path());
    assert_eq!(check_sessions(&dir.path().join("sessions")), 1);
}

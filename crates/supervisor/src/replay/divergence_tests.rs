use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::session::{
    LifecycleStatus, SandboxStatus, SessionHeader, ToolCallLine, ToolResultLine,
};
use subagent_protocol::{Limits, Usage};

use super::*;
use crate::replay::recording::{RecordedTurn, Recording};

fn header() -> SessionHeader {
    SessionHeader {
        version: 1,
        run_id: "r".into(),
        agent: "general".into(),
        task: "t".into(),
        model: "m".into(),
        provider: "openai-chat".into(),
        cwd: "ws".into(),
        depth: 1,
        limits: Limits::default(),
        sandbox: SandboxStatus::default(),
        tool_sandbox: None,
        parent_session: None,
        tools: None,
        output_schema: None,
        output_mode: None,
        max_turns: None,
        max_cost: None,
        python: None,
        resumed_from: None,
        batch_task: None,
    }
}

fn call(turn: u32, name: &str, path: &str) -> ToolCallLine {
    ToolCallLine {
        turn,
        call_id: format!("call_{turn}"),
        name: name.into(),
        args: json!({ "path": path }),
    }
}

fn result(name: &str, output: &str, is_error: bool) -> ToolResultLine {
    ToolResultLine {
        call_id: "c".into(),
        name: name.into(),
        output: output.into(),
        is_error,
    }
}

fn turn(n: u32, calls: Vec<ToolCallLine>, results: Vec<ToolResultLine>) -> RecordedTurn {
    RecordedTurn {
        turn: n,
        text: String::new(),
        stop_reason: "tool_calls".into(),
        usage: Usage::default(),
        tool_calls: calls,
        tool_results: results,
    }
}

/// read then find, then a final answer; `notes` is what bash_read saw.
fn run(notes: &str, status: LifecycleStatus) -> Recording {
    Recording {
        header: header(),
        turns: vec![
            turn(
                1,
                vec![call(1, "bash_read", "notes.txt")],
                vec![result("bash_read", notes, false)],
            ),
            turn(
                2,
                vec![call(2, "bash_find", "*.txt")],
                vec![result("bash_find", "notes.txt", false)],
            ),
            turn(3, vec![], vec![]),
        ],
        status: Some(status),
        summary: Some("done".into()),
        skipped: vec![],
    }
}

const CLEAN: ReplayFacts<'static> = ReplayFacts {
    asked_past_end: false,
    error: None,
};

#[test]
fn identical_runs_do_not_diverge() {
    let rec = run("alpha", LifecycleStatus::Completed);
    assert_eq!(first_divergence(&rec, &rec.clone(), CLEAN), None);
}

#[test]
fn call_ids_and_text_are_not_compared() {
    let rec = run("alpha", LifecycleStatus::Completed);
    let mut rep = rec.clone();
    rep.turns[0].tool_calls[0].call_id = "other".into();
    rep.turns[2].text = "different words".into();
    assert_eq!(first_divergence(&rec, &rep, CLEAN), None);
}

#[test]
fn a_changed_tool_result_names_its_turn_and_both_outputs() {
    let rec = run("alpha", LifecycleStatus::Completed);
    let rep = run("CHANGED", LifecycleStatus::Completed);
    assert_eq!(
        first_divergence(&rec, &rep, CLEAN),
        Some(Divergence {
            turn: 1,
            kind: DivergenceKind::ToolResult,
            recorded: "bash_read (ok): alpha".into(),
            replayed: "bash_read (ok): CHANGED".into(),
        })
    );
}

#[test]
fn an_error_flag_alone_is_a_divergence() {
    let rec = run("alpha", LifecycleStatus::Completed);
    let mut rep = rec.clone();
    rep.turns[1].tool_results[0].is_error = true;
    let d = first_divergence(&rec, &rep, CLEAN).unwrap();
    assert_eq!((d.turn, d.kind), (2, DivergenceKind::ToolResult));
    assert_eq!(d.replayed, "bash_find (error): notes.txt");
}

#[test]
fn a_different_call_comes_before_its_result() {
    let rec = run("alpha", LifecycleStatus::Completed);
    let mut rep = run("CHANGED", LifecycleStatus::Completed);
    rep.turns[0].tool_calls[0].args = json!({"path": "other.txt"});
    let d = first_divergence(&rec, &rep, CLEAN).unwrap();
    assert_eq!((d.turn, d.kind), (1, DivergenceKind::ToolCall));
    assert_eq!(d.recorded, r#"bash_read {"path":"notes.txt"}"#);
    assert_eq!(d.replayed, r#"bash_read {"path":"other.txt"}"#);
}

#[test]
fn a_call_only_one_side_made_is_shown_as_missing() {
    let rec = run("alpha", LifecycleStatus::Completed);
    let mut rep = rec.clone();
    rep.turns[1].tool_calls.clear();
    let d = first_divergence(&rec, &rep, CLEAN).unwrap();
    assert_eq!((d.turn, d.kind), (2, DivergenceKind::ToolCall));
    assert_eq!(d.replayed, "(no call)");
}

#[test]
fn asking_past_the_recording_is_reported_as_the_recording_ending() {
    let mut rec = run("alpha", LifecycleStatus::Completed);
    rec.turns.pop();
    let mut rep = rec.clone();
    rep.status = Some(LifecycleStatus::Failed);
    let facts = ReplayFacts {
        asked_past_end: true,
        error: Some("SUBAGENT_FAILED: model turn 3 failed"),
    };
    assert_eq!(
        first_divergence(&rec, &rep, facts),
        Some(Divergence {
            turn: 3,
            kind: DivergenceKind::RecordingEnded,
            recorded: "the recorded run ended after 2 turns".into(),
            replayed: "the replay asked for turn 3".into(),
        })
    );
}

#[test]
fn an_earlier_difference_wins_over_the_recording_ending() {
    let mut rec = run("alpha", LifecycleStatus::Completed);
    rec.turns.pop();
    let mut rep = run("CHANGED", LifecycleStatus::Failed);
    rep.turns.pop();
    let facts = ReplayFacts {
        asked_past_end: true,
        error: None,
    };
    let d = first_divergence(&rec, &rep, facts).unwrap();
    assert_eq!((d.turn, d.kind), (1, DivergenceKind::ToolResult));
}

#[test]
fn fewer_replayed_turns_is_a_turn_count_divergence() {
    let rec = run("alpha", LifecycleStatus::Completed);
    let mut rep = rec.clone();
    rep.turns.pop();
    let d = first_divergence(&rec, &rep, CLEAN).unwrap();
    assert_eq!((d.turn, d.kind), (3, DivergenceKind::Turns));
    assert_eq!(
        (d.recorded.as_str(), d.replayed.as_str()),
        ("3 turns", "2 turns")
    );
}

#[test]
fn a_different_ending_is_an_outcome_divergence() {
    let rec = run("alpha", LifecycleStatus::Completed);
    let rep = run("alpha", LifecycleStatus::Failed);
    let facts = ReplayFacts {
        asked_past_end: false,
        error: Some("SUBAGENT_TIMEOUT: wall timeout"),
    };
    let d = first_divergence(&rec, &rep, facts).unwrap();
    assert_eq!((d.turn, d.kind), (3, DivergenceKind::Outcome));
    assert_eq!(d.recorded, "completed: done");
    assert_eq!(d.replayed, "failed: SUBAGENT_TIMEOUT: wall timeout");
}

#[test]
fn long_outputs_are_cut_and_start_near_their_first_difference() {
    let head = "x".repeat(1_000);
    let rec = run(&format!("{head}alpha{head}"), LifecycleStatus::Completed);
    let rep = run(&format!("{head}BETA{head}"), LifecycleStatus::Completed);
    let d = first_divergence(&rec, &rep, CLEAN).unwrap();
    for side in [&d.recorded, &d.replayed] {
        assert!(
            side.len() <= EXCERPT_BYTES + 2 * "…".len(),
            "{} bytes",
            side.len()
        );
        assert!(side.starts_with('…'), "{side}");
    }
    assert!(d.recorded.contains("alpha"), "{}", d.recorded);
    assert!(d.replayed.contains("BETA"), "{}", d.replayed);
}

#[test]
fn the_status_word_is_the_one_sessions_ls_prints() {
    assert_eq!(status_word(Some(LifecycleStatus::Completed)), "completed");
    assert_eq!(status_word(Some(LifecycleStatus::Failed)), "failed");
    assert_eq!(status_word(Some(LifecycleStatus::Aborted)), "aborted");
    assert_eq!(status_word(None), "interrupted");
}

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_supervisor::run::ProgressEvent;

use super::*;

fn run_id() -> String {
    "r1".to_owned()
}

#[test]
fn a_fresh_child_shows_its_agent_starting_with_no_tokens() {
    assert_eq!(
        RunStatus::new("general".into()).line(),
        "general · starting · 0 in / 0 out tok"
    );
}

#[test]
fn turn_tool_tokens_and_cost_read_left_to_right() {
    let mut s = RunStatus::new("general".into());
    s.apply(ProgressEvent::Turn {
        run_id: run_id(),
        turn: 2,
    });
    s.apply(ProgressEvent::ToolStarted {
        run_id: run_id(),
        name: "bash_read".into(),
    });
    s.apply(ProgressEvent::Usage {
        run_id: run_id(),
        input_tokens: 1_200,
        cached_input_tokens: 0,
        output_tokens: 34,
        cost: 0.0012,
        cut_by_max_tokens: false,
    });
    assert_eq!(
        s.line(),
        "general · turn 2 · bash_read · 1,200 in / 34 out tok · $0.0012"
    );
}

fn todos(done: usize, total: usize, active: Option<&str>) -> ProgressEvent {
    ProgressEvent::Todos {
        run_id: run_id(),
        done,
        total,
        active: active.map(str::to_owned),
    }
}

#[test]
fn the_task_list_shows_done_of_total_and_the_item_in_progress() {
    let mut s = RunStatus::new("general".into());
    s.apply(ProgressEvent::Turn {
        run_id: run_id(),
        turn: 3,
    });
    s.apply(todos(1, 3, Some("Running the tests")));
    assert_eq!(
        s.line(),
        "general · turn 3 · tasks 1/3: Running the tests · 0 in / 0 out tok"
    );
    s.apply(todos(3, 3, None));
    assert_eq!(s.line(), "general · turn 3 · tasks 3/3 · 0 in / 0 out tok");
}

#[test]
fn a_hostile_item_in_progress_stays_short_text_on_one_line() {
    // An unterminated OSC would swallow the rest of the line if it were
    // stripped together with it; the tokens after it must still show.
    let hostile = format!(
        "\x1b]0;pwned\x07Running\n\tthe \x1b[31mtests\x1b[0m\r{}\x1b]52;c;cHduZWQ=",
        "A".repeat(2_000)
    );
    let mut s = RunStatus::new("general".into());
    s.apply(todos(0, 2, Some(&hostile)));
    let line = s.line();
    assert!(
        line.starts_with("general · starting · tasks 0/2: Running the tests"),
        "{line}"
    );
    assert!(line.ends_with("… · 0 in / 0 out tok"), "{line}");
    assert!(!line.chars().any(char::is_control), "{line:?}");
    assert!(line.chars().count() < 120, "{}", line.chars().count());
    assert_eq!(todos_text(0, 1, Some("\x1b[2J\n")), "tasks 0/1");
    // Unterminated at the start: stripped with the whole line, it would
    // take the tokens with it.
    s.apply(todos(0, 1, Some("\x1b]52;c;cHduZWQ= Running")));
    assert_eq!(
        s.line(),
        "general · starting · tasks 0/1 · 0 in / 0 out tok"
    );
}

#[test]
fn a_finished_tool_stays_shown_with_how_it_went() {
    let mut s = RunStatus::new("explorer".into());
    s.apply(ProgressEvent::Turn {
        run_id: run_id(),
        turn: 1,
    });
    s.apply(ProgressEvent::ToolFinished {
        run_id: run_id(),
        name: "bash_find".into(),
        is_error: false,
    });
    assert_eq!(
        s.line(),
        "explorer · turn 1 · bash_find done · 0 in / 0 out tok"
    );
    s.apply(ProgressEvent::ToolFinished {
        run_id: run_id(),
        name: "python_execute".into(),
        is_error: true,
    });
    assert_eq!(
        s.line(),
        "explorer · turn 1 · python_execute failed · 0 in / 0 out tok"
    );
}

#[test]
fn streamed_output_is_an_estimate_until_the_usage_arrives_and_a_cut_is_named() {
    let mut s = RunStatus::new("general".into());
    s.apply(ProgressEvent::Turn {
        run_id: run_id(),
        turn: 1,
    });
    s.progress.tokens.on_streamed(400);
    assert_eq!(s.line(), "general · turn 1 · 0 in / ~100 out tok");
    assert_eq!(s.cut_note(), None);
    s.apply(ProgressEvent::Usage {
        run_id: run_id(),
        input_tokens: 11,
        cached_input_tokens: 93,
        output_tokens: 90,
        cost: 0.0,
        cut_by_max_tokens: true,
    });
    assert_eq!(
        s.line(),
        "general · turn 1 · 11 in (+93 cached) / 90 out tok · cut at max_tokens"
    );
    assert!(s.cut_note().unwrap().contains("cut by max_tokens"));
}

#[test]
fn cost_has_four_decimals_under_a_dollar_and_two_above() {
    assert_eq!(dollars(0.0012), "$0.0012");
    assert_eq!(dollars(0.5), "$0.5000");
    assert_eq!(dollars(1.0), "$1.00");
    assert_eq!(dollars(12.345), "$12.35");
}

#[test]
fn elapsed_is_tenths_of_seconds_then_minutes_then_hours() {
    let cases = [
        (Duration::from_millis(0), "0.0s"),
        (Duration::from_millis(3_450), "3.4s"),
        (Duration::from_millis(59_999), "59.9s"),
        (Duration::from_secs(60), "1m00s"),
        (Duration::from_secs(125), "2m05s"),
        (Duration::from_secs(3_720), "1h02m"),
    ];
    for (d, want) in cases {
        assert_eq!(elapsed(d), want, "{d:?}");
    }
}

#[test]
fn quiet_shows_nothing_and_gives_no_sink() {
    let status = StatusLine::start(true);
    assert!(status.sink().is_none());
    status.finish();
}

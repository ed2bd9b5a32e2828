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
        "general · starting · 0 tok"
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
        output_tokens: 34,
        cost: 0.0012,
    });
    assert_eq!(
        s.line(),
        "general · turn 2 · bash_read · 1,234 tok · $0.0012"
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
    assert_eq!(s.line(), "explorer · turn 1 · bash_find done · 0 tok");
    s.apply(ProgressEvent::ToolFinished {
        run_id: run_id(),
        name: "python_execute".into(),
        is_error: true,
    });
    assert_eq!(
        s.line(),
        "explorer · turn 1 · python_execute failed · 0 tok"
    );
}

#[test]
fn tokens_get_thousands_separators() {
    let cases = [
        (0, "0"),
        (999, "999"),
        (1_000, "1,000"),
        (12_345, "12,345"),
        (1_234_567, "1,234,567"),
        (u64::MAX, "18,446,744,073,709,551,615"),
    ];
    for (n, want) in cases {
        assert_eq!(thousands(n), want, "{n}");
    }
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

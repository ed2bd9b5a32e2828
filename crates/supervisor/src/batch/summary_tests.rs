use pretty_assertions::assert_eq;
use subagent_protocol::Usage;

use super::*;

fn line(id: &str, status: TaskStatus, ms: u64, cost: f64) -> ResultLine {
    ResultLine {
        id: id.into(),
        status,
        cli_exit: 0,
        error_code: None,
        error: None,
        agent: "general".into(),
        model: None,
        output: None,
        full_output_path: None,
        structured_output: None,
        usage: Usage {
            input: 10,
            output: 5,
            cost,
            ..Usage::default()
        },
        duration_ms: ms,
        session_file: None,
        continued_from: None,
        changes: None,
        todos: None,
    }
}

#[test]
fn the_summary_counts_statuses_tokens_cost_and_names_the_slowest() {
    let mut tally = Tally::default();
    tally.add(&line("a", TaskStatus::Ok, 100, 0.01));
    tally.add(&line("b", TaskStatus::Failed, 4000, 0.02));
    tally.add(&line("c", TaskStatus::Timeout, 9000, 0.0));
    tally.add(&line("d", TaskStatus::Ok, 2500, 0.0));
    tally.add(&line("e", TaskStatus::Ok, 50, 0.0));
    let mut quick = Tally::default();
    quick.add(&line("q", TaskStatus::Ok, 53, 0.0));
    assert_eq!(quick.render(0, 0)[2], "slowest: q (53ms)");
    assert_eq!(
        (tally.ok, tally.failed, tally.timed_out, tally.done()),
        (3, 1, 1, 5)
    );
    assert_eq!(tally.tokens(), 75);
    assert_eq!(
        tally.render(2, 1),
        vec![
            "batch: 3 ok, 1 failed, 1 timed out (5 run, 2 already in results, 1 not run: cancelled)"
                .to_owned(),
            "tokens: 50 in, 25 out; cost $0.0300".to_owned(),
            "slowest: c (9.0s), b (4.0s), d (2.5s)".to_owned(),
        ]
    );
}

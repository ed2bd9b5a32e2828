use pretty_assertions::assert_eq;

use subagent_supervisor::batch::ResultLine;

use super::*;

#[test]
fn long_id_lists_are_cut_with_a_count() {
    let ids: Vec<String> = (0..25).map(|n| format!("t{n}")).collect();
    let text = id_list(ids.iter().map(String::as_str));
    assert!(text.starts_with("t0, t1, "), "{text}");
    assert!(text.ends_with("t19 and 5 more"), "{text}");
    assert_eq!(id_list(["a", "b"].into_iter()), "a, b");
}

#[test]
fn the_bar_counts_finished_tasks_and_adds_the_running_ones_usage() {
    let mut tally = Tally::default();
    let line = |id: &str, status| ResultLine {
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
        usage: subagent_protocol::Usage {
            input: 100,
            output: 20,
            cost: 0.01,
            ..Default::default()
        },
        duration_ms: 5,
        session_file: None,
        continued_from: None,
        changes: None,
        todos: None,
    };
    tally.add(&line("a", subagent_supervisor::batch::TaskStatus::Ok));
    tally.add(&line("b", subagent_supervisor::batch::TaskStatus::Timeout));
    assert_eq!(
        counts_text(&tally, 8, 3, 30, 0.005),
        "[#####---------------] 2/8 · ok 1 · failed 1 · running 3 · 270 tok · $0.0250"
    );
    assert_eq!(
        counts_text(&Tally::default(), 0, 0, 0, 0.0),
        "[####################] 0/0 · ok 0 · failed 0 · running 0 · 0 tok · $0.0000"
    );
}

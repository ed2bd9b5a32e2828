use pretty_assertions::assert_eq;
use subagent_supervisor::config::{LimitKey, LimitSet, LimitValue};

use super::*;

fn task(line: &str) -> TaskLine {
    parse_tasks(line).unwrap().remove(0)
}

#[test]
fn a_task_line_overrides_the_flags_it_names_and_keeps_the_rest() {
    let mut limits = LimitSet::default();
    limits.set(LimitKey::Timeout, LimitValue::Ms(60_000));
    limits.set(LimitKey::MaxTurns, LimitValue::Count(5));
    let base = RunOverrides {
        agent: Some("general".into()),
        model: Some("flag-model".into()),
        provider: Some("openai-chat".into()),
        limits,
        ..RunOverrides::default()
    };
    let patched = task_overrides(
        &base,
        &task(r#"{"id":"a","task":"x","model":"line-model","limits":{"timeout":"2s"}}"#),
    );
    assert_eq!(patched.agent.as_deref(), Some("general"));
    assert_eq!(patched.provider.as_deref(), Some("openai-chat"));
    assert_eq!(patched.model.as_deref(), Some("line-model"));
    assert_eq!(
        patched.limits.get(LimitKey::Timeout),
        Some(LimitValue::Ms(2_000))
    );
    assert_eq!(
        patched.limits.get(LimitKey::MaxTurns),
        Some(LimitValue::Count(5))
    );
}

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
        exit_code: 0,
        error_code: None,
        error: None,
        agent: "general".into(),
        model: None,
        output: None,
        structured_output: None,
        usage: subagent_protocol::Usage {
            input: 100,
            output: 20,
            cost: 0.01,
            ..Default::default()
        },
        duration_ms: 5,
        session_file: None,
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

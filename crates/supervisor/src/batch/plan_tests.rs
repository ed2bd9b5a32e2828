use crate::batch::parse_tasks;
use crate::config::{LimitKey, LimitSet, LimitValue};
use pretty_assertions::assert_eq;

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

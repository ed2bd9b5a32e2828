use pretty_assertions::assert_eq;

use super::*;
use crate::config::{LimitKey, LimitValue};

#[test]
fn a_full_line_is_read_with_its_overrides() {
    let text = r#"{"id":"a","task":"do it","agent":"explorer","provider":"anthropic","model":"m","limits":{"timeout":"90s","max_turns":3,"max_cost":0.5},"outputSchema":{"type":"object"}}"#;
    let tasks = parse_tasks(text).unwrap();
    assert_eq!(tasks.len(), 1);
    let t = &tasks[0];
    assert_eq!((t.line, t.id.as_str(), t.task.as_str()), (1, "a", "do it"));
    assert_eq!(t.agent.as_deref(), Some("explorer"));
    assert_eq!(t.provider.as_deref(), Some("anthropic"));
    assert_eq!(t.model.as_deref(), Some("m"));
    assert_eq!(
        t.limits.get(LimitKey::Timeout),
        Some(LimitValue::Ms(90_000))
    );
    assert_eq!(t.limits.get(LimitKey::MaxTurns), Some(LimitValue::Count(3)));
    assert_eq!(
        t.limits.get(LimitKey::MaxCost),
        Some(LimitValue::Dollars(0.5))
    );
    assert_eq!(
        t.output_schema_json.as_deref(),
        Some(r#"{"type":"object"}"#)
    );
}

#[test]
fn blank_lines_are_skipped_and_line_numbers_count_them() {
    let text = "\n{\"id\":\"a\",\"task\":\"x\"}\n\n{\"id\":\"b\",\"task\":\"y\"}\n";
    let tasks = parse_tasks(text).unwrap();
    let got: Vec<(usize, &str)> = tasks.iter().map(|t| (t.line, t.id.as_str())).collect();
    assert_eq!(got, vec![(2, "a"), (4, "b")]);
}

#[test]
fn every_bad_line_is_reported_with_its_number() {
    let text = [
        r#"{"id":"a","task":"x"}"#,
        r#"{"id":"b","task":"#,
        r#"{"id":"c"}"#,
        r#"{"id":"a","task":"again"}"#,
        r#"{"id":"d","task":"x","modle":"m"}"#,
        r#"{"id":"e","task":"x","limits":{"timeout":"soon"}}"#,
        r#"{"id":"f","task":"x","limits":{"speed":1}}"#,
        r#"{"id":"","task":"x"}"#,
        r#"{"id":"g","task":"x","outputSchema":"schema.json"}"#,
    ]
    .join("\n");
    let err = parse_tasks(&text).unwrap_err();
    let lines: Vec<usize> = err.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, vec![2, 3, 4, 5, 6, 7, 8, 9]);
    let text = err.to_string();
    assert!(text.contains("8 bad line(s)"), "{text}");
    assert!(text.contains("line 3: missing field `task`"), "{text}");
    assert!(
        text.contains("line 4: duplicate id `a` (first on line 1)"),
        "{text}"
    );
    assert!(text.contains("unknown field `modle`"), "{text}");
    assert!(text.contains("limits.timeout: `soon`"), "{text}");
    assert!(text.contains("limits.speed: unknown limit"), "{text}");
    assert!(
        text.contains("`outputSchema` must be a JSON Schema object"),
        "{text}"
    );
}

#[test]
fn a_line_that_is_not_utf8_is_reported_with_its_number_beside_the_others() {
    let mut bytes = b"{\"id\":\"a\",\"task\":\"x\"}\n{\"id\":\"b\",\"task\":\"caf".to_vec();
    bytes.extend([0xff, b'"', b'}', b'\n']);
    bytes.extend(b"not json\r\n");
    let err = parse_task_bytes(&bytes).unwrap_err();
    let lines: Vec<usize> = err.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, vec![2, 3]);
    assert!(err.problems[0].message.contains("not UTF-8"), "{err}");
    assert!(err.problems[0].message.contains("column 22"), "{err}");
}

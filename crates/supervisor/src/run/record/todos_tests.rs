use serde_json::json;
use subagent_protocol::{HistoryMessage, HistoryToolCall};

use super::*;

fn tools(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn list_json(items: &[(&str, &str)]) -> String {
    let todos: Vec<serde_json::Value> = items
        .iter()
        .map(|(content, status)| {
            json!({"content": content, "status": status, "activeForm": format!("Doing {content}")})
        })
        .collect();
    json!({ "todos": todos }).to_string()
}

fn contents(list: &[TodoItem]) -> Vec<&str> {
    list.iter().map(|t| t.content.as_str()).collect()
}

#[test]
fn an_accepted_call_replaces_the_list_and_a_refused_one_does_not() {
    let mut todos = RunTodos::new(&tools(&["todo_write"]), &[]);
    assert_eq!(todos.for_result(), Some(Vec::new()), "offered: [] before");
    todos.on_call("a", "todo_write", &list_json(&[("one", "in_progress")]));
    assert!(todos.current().is_empty(), "not before its result");
    let changed = todos.on_result("a", false).map(contents);
    assert_eq!(changed, Some(vec!["one"]));

    todos.on_call(
        "b",
        "todo_write",
        &list_json(&[("one", "in_progress"), ("two", "in_progress")]),
    );
    assert_eq!(todos.on_result("b", true), None, "the tool refused it");
    assert_eq!(contents(todos.current()), ["one"]);

    todos.on_call(
        "c",
        "todo_write",
        &list_json(&[("one", "completed"), ("two", "in_progress")]),
    );
    todos.on_result("c", false);
    let list = todos.for_result().unwrap();
    assert_eq!(contents(&list), ["one", "two"]);
    assert_eq!(list[1].active_form.as_deref(), Some("Doing two"));
    assert_eq!(summary(&list), (1, 2, Some("Doing two")));
}

#[test]
fn other_tools_and_unparsable_arguments_change_nothing() {
    let mut todos = RunTodos::new(&tools(&["bash_read"]), &[]);
    assert_eq!(todos.for_result(), None, "not offered, never written");
    todos.on_call("a", "bash_read", &list_json(&[("one", "pending")]));
    assert_eq!(todos.on_result("a", false), None);
    todos.on_call("b", "todo_write", "{\"todos\": \"not a list\"}");
    assert_eq!(todos.on_result("b", false), None);
    todos.on_call("c", "todo_write", &list_json(&[("x", "someday")]));
    assert_eq!(todos.on_result("c", false), None, "unknown status");
    assert_eq!(todos.for_result(), None);
}

#[test]
fn a_worker_that_lies_is_bounded() {
    let mut todos = RunTodos::new(&tools(&["todo_write"]), &[]);
    let long = "é".repeat(3_000);
    let items: Vec<serde_json::Value> = (0..500)
        .map(|_| json!({"content": long, "status": "pending", "activeForm": long}))
        .collect();
    todos.on_call("a", "todo_write", &json!({ "todos": items }).to_string());
    let list = todos.on_result("a", false).unwrap();
    assert_eq!(list.len(), MAX_ITEMS);
    assert!(list.iter().all(|t| t.content.len() <= MAX_TEXT_BYTES));
    assert!(
        list.iter()
            .all(|t| t.active_form.as_ref().unwrap().len() <= MAX_TEXT_BYTES)
    );
    for i in 0..50 {
        todos.on_call(
            &format!("p{i}"),
            "todo_write",
            &list_json(&[("p", "pending")]),
        );
    }
    assert_eq!(todos.pending.len(), MAX_PENDING);
    assert_eq!(todos.on_result("p0", false), None, "the oldest was dropped");
    assert!(todos.on_result("p49", false).is_some());
}

#[test]
fn a_resumed_run_starts_from_the_list_its_history_left() {
    let call = |id: &str, json: String| HistoryToolCall {
        id: id.into(),
        name: "todo_write".into(),
        arguments_json: json,
    };
    let result = |id: &str, is_error: bool| HistoryMessage::ToolResult {
        call_id: id.into(),
        name: "todo_write".into(),
        output: String::new(),
        is_error,
    };
    let history = vec![
        HistoryMessage::User { text: "go".into() },
        HistoryMessage::Assistant {
            text: String::new(),
            tool_calls: vec![call("a", list_json(&[("first", "in_progress")]))],
        },
        result("a", false),
        HistoryMessage::Assistant {
            text: String::new(),
            tool_calls: vec![call("b", list_json(&[("refused", "pending")]))],
        },
        result("b", true),
    ];
    let todos = RunTodos::new(&tools(&["todo_write"]), &history);
    assert_eq!(contents(todos.current()), ["first"]);
    // Resumed without the tool, the list it wrote is still the run's.
    let todos = RunTodos::new(&tools(&["bash_read"]), &history);
    assert_eq!(todos.for_result().map(|l| l.len()), Some(1));
}

#[test]
fn the_summary_falls_back_to_the_content_without_an_active_form() {
    let list = vec![TodoItem {
        content: "Run the tests".into(),
        status: TodoStatus::InProgress,
        active_form: None,
    }];
    assert_eq!(summary(&list), (0, 1, Some("Run the tests")));
    assert_eq!(summary(&[]), (0, 0, None));
}

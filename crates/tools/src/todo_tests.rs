use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::test_tree::{call, failure, tree};

#[tokio::test]
async fn the_list_is_read_back_with_its_marks() {
    let dir = tree(&[]);
    let said = call(
        &TodoWrite,
        dir.path(),
        json!({"todos": [
            {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
            {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
            {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests", "id": "3", "priority": "high"}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(
        said,
        "Task list (1/3 done):\n[x] Read the code\n[~] Fix the bug (Fixing the bug)\n[ ] Run the tests\n"
    );
    assert_eq!(
        call(&TodoWrite, dir.path(), json!({"todos": []}))
            .await
            .unwrap(),
        "Task list cleared.\n"
    );
}

#[tokio::test]
async fn bad_lists_are_refused_with_what_to_fix() {
    let dir = tree(&[]);
    for (todos, said) in [
        (
            json!([{"content": "a", "status": "doing", "activeForm": "A"}]),
            "unknown variant `doing`",
        ),
        (
            json!([{"content": " ", "status": "pending", "activeForm": "A"}]),
            "todos[0].content is empty",
        ),
        (
            json!([{"content": "a", "status": "in_progress", "activeForm": "A"}, {"content": "b", "status": "in_progress", "activeForm": "B"}]),
            "2 items are in_progress",
        ),
    ] {
        let got = failure(call(&TodoWrite, dir.path(), json!({"todos": todos})).await);
        assert!(got.contains(said), "{said}: {got}");
    }
}

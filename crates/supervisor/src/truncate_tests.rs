use super::*;

#[test]
fn text_within_limits_is_not_truncated() {
    assert_eq!(truncate_returned("a\nb\n", 100, 10, None), None);
}

#[test]
fn byte_limit_keeps_head_and_says_where_the_rest_is() {
    let text = "0123456789\n".repeat(100); // 1100 bytes, 100 lines
    let t = truncate_returned(&text, 500, 5_000, Some("/s/run.output.txt")).unwrap();
    let head = t.text.split("[output truncated").next().unwrap();
    assert!(head.len() <= 500, "{}", head.len());
    assert!(text.starts_with(head));
    assert!(t.text.contains("full output: /s/run.output.txt"));
    assert_eq!(t.info.original_bytes, 1100);
    assert_eq!(t.info.bytes_cut, 1100 - head.len() as u64);
    assert_eq!(
        t.info.full_output_path.as_deref(),
        Some("/s/run.output.txt")
    );
}

#[test]
fn line_limit_applies_independently() {
    let text = "x\n".repeat(10_000);
    let t = truncate_returned(&text, 1_000_000, 5_000, None).unwrap();
    let head = t.text.split("[output truncated").next().unwrap();
    assert_eq!(head.lines().count(), 5_000);
    assert!(
        t.text.contains("5000 lines omitted"),
        "{}",
        &t.text[t.text.len() - 80..]
    );
}

#[test]
fn never_cuts_inside_a_utf8_character() {
    let text = "é".repeat(1000); // 2000 bytes, no newline
    let t = truncate_returned(&text, 101, 10, None).unwrap();
    let head = t.text.split("\n[output truncated").next().unwrap();
    assert_eq!(head.len(), 100);
    assert!(head.chars().all(|c| c == 'é'));
}

#[test]
fn display_items_are_bounded_in_all_by_the_return_limit() {
    let items = vec![
        DisplayItem::Text {
            text: "a".repeat(60),
        },
        DisplayItem::ToolCall {
            name: "bash".into(),
            args: serde_json::json!({ "command": "x".repeat(500) }),
        },
        DisplayItem::Text {
            text: "b".repeat(500),
        },
        DisplayItem::Text { text: "c".into() },
    ];
    let out = bound_display_items(items, 100, 5000, Some("out.txt"));
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(
        out[0],
        DisplayItem::Text {
            text: "a".repeat(60)
        }
    );
    let DisplayItem::ToolCall { args, .. } = &out[1] else {
        panic!("{out:?}")
    };
    assert!(
        args["_truncated"]
            .as_str()
            .unwrap()
            .contains("bytes of arguments omitted")
    );
    assert_eq!(
        out[2],
        DisplayItem::Text {
            text: "[2 display items omitted; full output: out.txt]".into()
        }
    );
}

#[test]
fn a_display_text_over_the_budget_is_cut_like_the_output() {
    let items = vec![DisplayItem::Text {
        text: "line\n".repeat(100),
    }];
    let out = bound_display_items(items, 50, 5000, None);
    let DisplayItem::Text { text } = &out[0] else {
        panic!("{out:?}")
    };
    assert!(text.len() < 50 + 80, "{text}");
    assert!(text.contains("[output truncated:"), "{text}");
}

use pretty_assertions::assert_eq;

use super::*;

fn usage(input: u64, cached: u64, output: u64, cut: bool) -> ProgressEvent {
    ProgressEvent::Usage {
        run_id: "r1".into(),
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        cost: 0.0,
        cut_by_max_tokens: cut,
    }
}

fn delta(text: &str) -> ContentEvent {
    ContentEvent::TextDelta {
        run_id: "r1".into(),
        text: text.into(),
    }
}

#[test]
fn streamed_text_is_estimated_until_the_turns_usage_replaces_it() {
    let mut t = LiveTokens::default();
    assert_eq!(t.text(), "0 in / 0 out tok");
    t.on_content(&delta("Hello, "));
    t.on_content(&delta("world"));
    // 12 characters at 4 a token.
    assert_eq!(t.estimated_output(), 3);
    assert_eq!(t.text(), "0 in / ~3 out tok");
    t.on_progress(&usage(11, 93, 5, false));
    assert_eq!(t.estimated_output(), 0);
    assert_eq!(t.text(), "11 in (+93 cached) / 5 out tok");
    // The next turn's stream adds to the counted output, marked again.
    t.on_progress(&ProgressEvent::Turn {
        run_id: "r1".into(),
        turn: 2,
    });
    t.on_content(&ContentEvent::ReasoningDelta {
        run_id: "r1".into(),
        text: "x".repeat(4_000),
    });
    assert_eq!(t.text(), "11 in (+93 cached) / ~1,005 out tok");
}

#[test]
fn tool_events_count_nothing_and_a_cut_stays_known() {
    let call = ContentEvent::ToolCall {
        run_id: "r1".into(),
        call_id: "c".into(),
        name: "bash_read".into(),
        arguments_json: "{\"path\": \"a long argument\"}".into(),
    };
    assert_eq!(streamed_chars(&call), 0);
    let mut t = LiveTokens::default();
    t.on_progress(&usage(1, 0, 2, true));
    t.on_progress(&usage(3, 0, 4, false));
    assert!(
        t.cut_by_max_tokens,
        "a later whole turn does not undo the cut"
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

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn text_within_both_caps_is_returned_unchanged() {
    let capped = cap_output("one\ntwo\n", 100, 2);
    assert_eq!(
        capped,
        Capped {
            text: "one\ntwo\n".to_owned(),
            omitted_bytes: 0,
            omitted_lines: 0,
        }
    );
    assert!(!capped.was_capped());
}

#[test]
fn line_cap_keeps_head_and_tail_lines_and_counts_the_omitted_ones() {
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    let capped = cap_output(&text, 10_000, 4);
    assert_eq!(
        capped.text,
        "line 1\nline 2\n[... 42 bytes / 6 lines omitted ...]\nline 9\nline 10\n"
    );
    assert_eq!(capped.omitted_lines, 6);
    assert_eq!(
        capped.omitted_bytes,
        text.len() - "line 1\nline 2\nline 9\nline 10\n".len()
    );
}

#[test]
fn line_cap_counts_a_last_line_without_newline() {
    let capped = cap_output("a\nb\nc", 10_000, 2);
    assert_eq!(capped.text, "a\n[... 2 bytes / 1 lines omitted ...]\nc");
}

#[test]
fn byte_cap_keeps_half_from_each_end() {
    let text = "0123456789abcdefghij";
    let capped = cap_output(text, 8, 100);
    assert_eq!(
        capped.text,
        "0123\n[... 12 bytes / 0 lines omitted ...]\nghij"
    );
    assert_eq!(capped.omitted_bytes, 12);
}

#[test]
fn byte_cap_never_splits_a_multibyte_character() {
    // Each 'é' is 2 bytes, each '😀' 4: no cap below may cut through one.
    let text = "éééééé😀😀😀😀ééé";
    for max_bytes in 0..text.len() {
        let capped = cap_output(text, max_bytes, 100);
        let kept = text.len() - capped.omitted_bytes;
        assert!(
            kept <= max_bytes,
            "kept {kept} bytes under a cap of {max_bytes}"
        );
        assert!(capped.omitted_bytes > 0);
        // Re-assemble: head + omitted + tail must be the original text.
        let marker = omission_marker(capped.omitted_bytes, capped.omitted_lines);
        let (head, tail) = capped.text.split_once(&marker).expect("marker present");
        let head = head.strip_suffix('\n').unwrap_or(head);
        let tail = tail.strip_prefix('\n').unwrap_or(tail);
        assert!(text.starts_with(head));
        assert!(text.ends_with(tail));
        assert_eq!(head.len() + tail.len() + capped.omitted_bytes, text.len());
    }
}

#[test]
fn the_tighter_of_both_caps_wins() {
    let text: String = (0..100).map(|i| format!("{i:03}\n")).collect();
    // 6 lines allowed but only 8 bytes: the byte cap binds (2 lines of 4 bytes).
    let capped = cap_output(&text, 8, 6);
    assert_eq!(
        capped.text,
        "000\n[... 392 bytes / 98 lines omitted ...]\n099\n"
    );
    // 2 lines allowed, plenty of bytes: the line cap binds.
    let capped = cap_output(&text, 1_000, 2);
    assert_eq!(
        capped.text,
        "000\n[... 392 bytes / 98 lines omitted ...]\n099\n"
    );
}

#[test]
fn zero_caps_keep_only_the_marker() {
    let capped = cap_output("abc\ndef\n", 0, 0);
    assert_eq!(capped.text, "[... 8 bytes / 2 lines omitted ...]");
}

#[test]
fn empty_text_is_never_capped() {
    assert_eq!(cap_output("", 0, 0).text, "");
}

use std::borrow::Cow;

use pretty_assertions::assert_eq;

use super::strip_controls;

#[test]
fn plain_text_is_borrowed_unchanged() {
    let text = "Hello, wörld: 3 < 4\n\tindented 😀";
    assert!(matches!(strip_controls(text), Cow::Borrowed(t) if t == text));
}

#[test]
fn osc_52_clipboard_write_is_removed_whole() {
    // BEL-terminated, as shells and tmux pass it through.
    let text = "before\u{1b}]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\u{7}after";
    assert_eq!(strip_controls(text), "beforeafter");
}

#[test]
fn osc_0_title_is_removed_whole_with_st_or_bel() {
    assert_eq!(
        strip_controls("a\u{1b}]0;pwned title\u{1b}\\b"),
        "ab",
        "ST-terminated"
    );
    assert_eq!(strip_controls("a\u{1b}]0;pwned title\u{7}b"), "ab");
    assert_eq!(
        strip_controls("a\u{1b}]2;title\u{9c}b"),
        "ab",
        "C1 ST-terminated"
    );
}

#[test]
fn csi_sequences_with_and_without_parameters_are_removed() {
    assert_eq!(strip_controls("x\u{1b}[2Jy"), "xy", "clear screen");
    assert_eq!(strip_controls("x\u{1b}[Hy"), "xy", "cursor home");
    assert_eq!(
        strip_controls("\u{1b}[1;31mred\u{1b}[0m"),
        "red",
        "SGR with params"
    );
    assert_eq!(
        strip_controls("a\u{1b}[?1049hb"),
        "ab",
        "private-mode alternate screen"
    );
    assert_eq!(strip_controls("a\u{1b}[38;2;255;0;0mb"), "ab", "truecolour");
    assert_eq!(strip_controls("a\u{1b}[ qb"), "ab", "with an intermediate");
}

#[test]
fn eight_bit_c1_csi_and_osc_are_removed_whole() {
    assert_eq!(strip_controls("a\u{9b}2Jb"), "ab", "C1 CSI");
    assert_eq!(strip_controls("a\u{9b}1;31mb"), "ab");
    assert_eq!(strip_controls("a\u{9d}0;title\u{7}b"), "ab", "C1 OSC");
    assert_eq!(
        strip_controls("a\u{90}qsixel\u{1b}\\b"),
        "ab",
        "C1 DCS up to ST"
    );
    assert_eq!(strip_controls("a\u{85}b\u{9f}"), "ab", "lone C1 controls");
}

#[test]
fn dcs_apc_and_two_character_escapes_are_removed() {
    assert_eq!(strip_controls("a\u{1b}Pq#0;2;0;0;0\u{1b}\\b"), "ab", "DCS");
    assert_eq!(strip_controls("a\u{1b}_apc data\u{1b}\\b"), "ab", "APC");
    assert_eq!(strip_controls("a\u{1b}cb"), "ab", "RIS reset");
    assert_eq!(strip_controls("a\u{1b}(Bb"), "ab", "charset");
    assert_eq!(strip_controls("a\u{1b}7b\u{1b}8"), "ab", "save and restore");
}

#[test]
fn c0_controls_go_but_newline_and_tab_stay() {
    assert_eq!(
        strip_controls("a\rb\u{8}c\u{7}d\u{0}e\u{7f}f\n\tg"),
        "abcdef\n\tg"
    );
}

#[test]
fn unterminated_and_truncated_sequences_never_leak_an_escape() {
    assert_eq!(strip_controls("a\u{1b}]52;c;AAAA"), "a", "OSC to the end");
    assert_eq!(strip_controls("a\u{1b}["), "a");
    assert_eq!(strip_controls("a\u{1b}"), "a");
    assert_eq!(strip_controls("a\u{1b}[12"), "a");
    // A CSI broken by a non-CSI byte ends there; the byte is text again.
    assert_eq!(strip_controls("a\u{1b}[12é"), "aé");
    assert_eq!(strip_controls("a\u{1b}(\nb"), "a\nb");
}

#[test]
fn nothing_stripped_ever_contains_a_control() {
    let nasty = [
        "\u{1b}\u{1b}[[2J",
        "\u{1b}]\u{1b}]0;x\u{7}",
        "\u{9b}\u{9b}\u{9d}\u{9c}",
        "\u{1b}P\u{1b}\\\u{1b}[",
        "ok\u{1b}[2J\u{1b}]0;t\u{1b}\\\u{9b}31m\u{7}\r\n",
    ];
    for text in nasty {
        let clean = strip_controls(text);
        assert!(
            !clean.chars().any(super::is_control),
            "{text:?} -> {clean:?}"
        );
    }
}

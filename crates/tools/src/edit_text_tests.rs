use pretty_assertions::assert_eq;

use super::*;

fn edit(old: &str, new: &str, replace_all: bool) -> Edit {
    Edit {
        old_string: old.to_owned(),
        new_string: new.to_owned(),
        replace_all,
    }
}

/// Claude Code's Edit, one row per documented behaviour: (what, text,
/// edit, the text after or the error).
#[test]
fn edit_semantics_follow_claude_codes_edit() {
    type Want = Result<(&'static str, usize), EditError>;
    let rows: Vec<(&str, &str, Edit, Want)> = vec![
        (
            "a unique match is replaced",
            "a b c",
            edit("b", "B", false),
            Ok(("a B c", 1)),
        ),
        (
            "an absent string is an error naming it",
            "a b c",
            edit("x", "y", false),
            Err(EditError::NotFound("x".into())),
        ),
        (
            "two matches without replace_all say how many",
            "b b",
            edit("b", "c", false),
            Err(EditError::NotUnique {
                matches: 2,
                old_string: "b".into(),
            }),
        ),
        (
            "replace_all replaces every match",
            "b b b",
            edit("b", "c", true),
            Ok(("c c c", 3)),
        ),
        (
            "replace_all with one match",
            "a b",
            edit("b", "c", true),
            Ok(("a c", 1)),
        ),
        (
            "identical strings change nothing",
            "a",
            edit("a", "a", false),
            Err(EditError::NoChange),
        ),
        (
            "an empty old_string fills an empty file",
            "",
            edit("", "new\n", false),
            Ok(("new\n", 1)),
        ),
        (
            "an empty old_string on content is refused",
            "x",
            edit("", "y", false),
            Err(EditError::EmptyOnContent),
        ),
        (
            "CRLF is kept when the model writes LF",
            "one\r\ntwo\r\nthree\r\n",
            edit("one\ntwo", "uno\ndos", false),
            Ok(("uno\r\ndos\r\nthree\r\n", 1)),
        ),
        (
            "CRLF written as CRLF matches too",
            "one\r\ntwo\r\n",
            edit("one\r\ntwo", "x\r\ny", false),
            Ok(("x\r\ny\r\n", 1)),
        ),
        (
            "LF files stay LF",
            "one\ntwo\n",
            edit("one\ntwo", "a\nb", false),
            Ok(("a\nb\n", 1)),
        ),
        (
            "whitespace must match exactly",
            "    x = 1\n",
            edit("  x = 1", "  x = 2", false),
            Ok(("    x = 2\n", 1)),
        ),
        (
            "indentation that differs is not found",
            "\tx = 1\n",
            edit("    x = 1", "y", false),
            Err(EditError::NotFound("    x = 1".into())),
        ),
        (
            "unicode is matched by its bytes",
            "naïve café",
            edit("café", "bar", false),
            Ok(("naïve bar", 1)),
        ),
    ];
    for (what, text, edit, want) in rows {
        let got = apply_edit(text, &edit);
        let want = want.map(|(text, n)| (text.to_owned(), n));
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn multi_edits_apply_in_order_each_on_the_result_before() {
    let edits = [edit("a", "b", false), edit("b b", "c", false)];
    // The second edit only matches once the first has been made.
    assert_eq!(apply_edits("a b", &edits), Ok(("c".to_owned(), 2)));
}

#[test]
fn a_failing_edit_fails_the_whole_multi_edit_and_names_its_place() {
    let edits = [
        edit("a", "b", false),
        edit("zzz", "y", false),
        edit("c", "d", false),
    ];
    let error = apply_edits("a c", &edits).unwrap_err();
    assert_eq!(error.index, 1);
    assert_eq!(error.error, EditError::NotFound("zzz".into()));
    assert!(
        error
            .to_string()
            .starts_with("edit 2 of the list (index 1) failed, so none was applied"),
        "{error}"
    );
}

#[test]
fn a_multi_edit_that_starts_empty_creates_the_text() {
    let edits = [
        edit("", "fn main() {}\n", false),
        edit("main", "start", false),
    ];
    assert_eq!(
        apply_edits("", &edits),
        Ok(("fn start() {}\n".to_owned(), 2))
    );
}

#[test]
fn line_endings_are_told_apart() {
    assert_eq!(line_ending("a\r\nb\r\n"), LineEnding::CrLf);
    assert_eq!(line_ending("a\nb\n"), LineEnding::Lf);
    // Mixed: edits are applied as written.
    assert_eq!(line_ending("a\r\nb\n"), LineEnding::Lf);
    assert_eq!(line_ending("no break"), LineEnding::Lf);
}

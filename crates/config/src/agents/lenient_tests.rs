use pretty_assertions::assert_eq;
use serde_yaml_ng::{Mapping, Value};

use super::lenient::read_key_value_lines;

fn map(pairs: &[(&str, Value)]) -> Mapping {
    pairs
        .iter()
        .map(|(k, v)| (Value::String((*k).to_owned()), v.clone()))
        .collect()
}

fn text(s: &str) -> Value {
    Value::String(s.to_owned())
}

#[test]
fn the_first_colon_space_splits_key_from_value() {
    assert_eq!(
        read_key_value_lines("name: a\ndescription: Use when: x, y: z\n"),
        Some(map(&[
            ("name", text("a")),
            ("description", text("Use when: x, y: z"))
        ]))
    );
}

#[test]
fn lines_without_a_key_continue_the_value_and_indented_dashes_make_a_list() {
    let read = read_key_value_lines(
        "description: one\n  two: three\nno colon here\ntools:\n  - Read\n  - Grep\nmaxTurns: 3\n",
    );
    assert_eq!(
        read,
        Some(map(&[
            ("description", text("one two: three no colon here")),
            ("tools", Value::Sequence(vec![text("Read"), text("Grep")])),
            ("maxTurns", Value::Number(3.into())),
        ]))
    );
}

#[test]
fn plain_yaml_values_keep_their_type_and_the_first_key_wins() {
    assert_eq!(
        read_key_value_lines(
            "disabled: true\ntools: [Read, Grep]\nname: \"q: x\"\nname: other\n  more\n"
        ),
        Some(map(&[
            ("disabled", Value::Bool(true)),
            ("tools", Value::Sequence(vec![text("Read"), text("Grep")])),
            ("name", text("q: x")),
        ]))
    );
}

#[test]
fn text_that_is_not_key_value_lines_is_not_read() {
    assert_eq!(read_key_value_lines("just words\nname: a\n"), None);
    assert_eq!(read_key_value_lines("\n# only a comment\n"), None);
    assert_eq!(read_key_value_lines("    name: indented\n"), None);
    // An unclosed flow list was meant as YAML: its error is the better one.
    assert_eq!(read_key_value_lines("name: a\ntools: [Read\n"), None);
}

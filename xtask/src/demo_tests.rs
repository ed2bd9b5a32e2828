use super::*;

#[test]
fn plain_arguments_are_printed_as_they_are() {
    assert_eq!(shell_quote("--max-turns"), "--max-turns");
    assert_eq!(
        shell_quote("http://127.0.0.1:8080/v1"),
        "http://127.0.0.1:8080/v1"
    );
}

#[test]
fn arguments_with_blanks_or_quotes_are_single_quoted() {
    assert_eq!(shell_quote("Name a colour."), "'Name a colour.'");
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
    assert_eq!(shell_quote(""), "''");
}

#[test]
fn a_command_line_pastes_back_into_a_shell() {
    let mut command = Command::new("subagent");
    command.args(["run", "--task", "Why? Say $HOME"]);
    assert_eq!(shell_line(&command), "subagent run --task 'Why? Say $HOME'");
}

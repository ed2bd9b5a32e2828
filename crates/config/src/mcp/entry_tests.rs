use super::entry::{check_env_name, check_server_name};

#[test]
fn server_names_are_letters_digits_dash_underscore_without_the_separator() {
    for good in [
        "time",
        "sequential-thinking",
        "context7",
        "my_server",
        "A-1",
    ] {
        assert!(check_server_name(good).is_ok(), "{good}");
    }
    for bad in ["", "my server", "a.b", "fs__x", "__", "é"] {
        let err = check_server_name(bad).err().unwrap_or_default();
        assert!(err.contains("MCP server name"), "{bad}: {err}");
    }
    assert!(
        check_server_name("fs__x")
            .err()
            .unwrap_or_default()
            .contains("`__`")
    );
}

#[test]
fn variable_names_follow_the_shell_rule() {
    assert!(check_env_name("GITHUB_TOKEN").is_ok());
    assert!(check_env_name("_X1").is_ok());
    assert!(check_env_name("1X").is_err());
    assert!(check_env_name("A-B").is_err());
    assert!(check_env_name("").is_err());
}

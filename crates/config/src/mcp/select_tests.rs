use super::select::{mcp_covered, split_mcp_tools};

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn mcp_names_leave_the_builtin_list_and_select_servers() {
    let (builtins, selection) = split_mcp_tools(&names(&[
        "bash",
        "mcp__time__get_current_time",
        "mcp__fs",
        "mcp__fs__read_file",
        "mcp__time__convert_time",
        "mcp__time__get_current_time",
    ]));
    assert_eq!(builtins, ["bash"]);
    assert_eq!(selection.get("fs"), Some(&None), "the whole server wins");
    assert_eq!(
        selection.get("time"),
        Some(&Some(names(&["get_current_time", "convert_time"])))
    );
}

#[test]
fn a_ceiling_covers_its_names_and_every_tool_of_a_whole_server() {
    let ceiling = names(&["bash", "mcp__time", "mcp__fs__read_file"]);
    assert!(mcp_covered(&ceiling, "mcp__time"));
    assert!(mcp_covered(&ceiling, "mcp__time__convert_time"));
    assert!(mcp_covered(&ceiling, "mcp__fs__read_file"));
    assert!(
        !mcp_covered(&ceiling, "mcp__fs"),
        "one tool does not give the server"
    );
    assert!(!mcp_covered(&ceiling, "mcp__fs__write_file"));
    assert!(!mcp_covered(&ceiling, "mcp__other"));
}

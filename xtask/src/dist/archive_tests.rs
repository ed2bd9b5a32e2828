use pretty_assertions::assert_eq;

use super::*;

#[test]
fn the_archive_holds_binaries_completions_pages_and_the_repo_files_under_one_directory() {
    let pages = vec!["subagent.1".to_owned(), "subagent-run.1".to_owned()];
    assert_eq!(
        expected_entries("subagent-1.2.3-x86_64-unknown-linux-gnu", &pages),
        [
            "LICENSE-APACHE",
            "LICENSE-MIT",
            "README.md",
            "complete/_subagent",
            "complete/_subagent.ps1",
            "complete/subagent.bash",
            "complete/subagent.elv",
            "complete/subagent.fish",
            "man/subagent-run.1",
            "man/subagent.1",
            "subagent",
            "subagent-render-page",
            "subagent-worker",
        ]
        .map(|f| format!("subagent-1.2.3-x86_64-unknown-linux-gnu/{f}"))
    );
}

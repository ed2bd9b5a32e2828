use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::test_tree::{call, escapes, failure, root_of, tree};

const PROJECT: &[(&str, &str)] = &[
    ("Cargo.toml", ""),
    ("src/lib.rs", ""),
    ("src/main.rs", ""),
    ("src/x/deep.rs", ""),
    ("src/x/notes.md", ""),
    ("tests/x/it.rs", ""),
    ("README.md", ""),
];

async fn find(dir: &tempfile::TempDir, arguments: serde_json::Value) -> String {
    call(&BashFind, dir.path(), arguments).await.unwrap()
}

#[tokio::test]
async fn a_pattern_without_a_slash_matches_file_names_anywhere() {
    let dir = tree(PROJECT);
    assert_eq!(
        find(&dir, json!({"pattern": "*.rs"})).await,
        "src/lib.rs\nsrc/main.rs\nsrc/x/deep.rs\ntests/x/it.rs\n"
    );
    assert_eq!(
        find(&dir, json!({"pattern": "Cargo.toml"})).await,
        "Cargo.toml\n"
    );
}

#[tokio::test]
async fn a_pattern_with_a_slash_matches_the_root_relative_path() {
    let dir = tree(PROJECT);
    assert_eq!(
        find(&dir, json!({"pattern": "src/*.rs"})).await,
        "src/lib.rs\nsrc/main.rs\n"
    );
    assert_eq!(
        find(&dir, json!({"pattern": "src/**/*.rs"})).await,
        "src/lib.rs\nsrc/main.rs\nsrc/x/deep.rs\n"
    );
    assert_eq!(
        find(&dir, json!({"pattern": "**/x/*.rs"})).await,
        "src/x/deep.rs\ntests/x/it.rs\n"
    );
    assert_eq!(
        find(&dir, json!({"pattern": "./src/x/*"})).await,
        "src/x/deep.rs\nsrc/x/notes.md\n"
    );
}

#[tokio::test]
async fn path_limits_the_search_and_output_stays_root_relative() {
    let dir = tree(PROJECT);
    assert_eq!(
        find(&dir, json!({"pattern": "*", "path": "src/x"})).await,
        "src/x/deep.rs\nsrc/x/notes.md\n"
    );
    assert_eq!(
        find(&dir, json!({"pattern": "*.md", "path": "src/x/notes.md"})).await,
        "src/x/notes.md\n"
    );
}

#[tokio::test]
async fn gitignore_is_honoured_without_a_git_repository_and_so_is_dot_ignore() {
    let dir = tree(&[
        (".gitignore", "target/\n*.log\n"),
        ("src/.ignore", "generated.rs\n"),
        ("src/lib.rs", ""),
        ("src/generated.rs", ""),
        ("target/debug/out.rs", ""),
        ("run.log", ""),
        ("keep.txt", ""),
    ]);
    assert_eq!(
        find(&dir, json!({"pattern": "*"})).await,
        "keep.txt\nsrc/lib.rs\n"
    );
    // The rules of the root apply to a search that starts below it.
    assert_eq!(
        find(&dir, json!({"pattern": "*", "path": "src"})).await,
        "src/lib.rs\n"
    );
}

#[tokio::test]
async fn hidden_directories_are_skipped_unless_named_as_path() {
    let dir = tree(&[
        (".git/config", ""),
        (".github/workflows/ci.yml", ""),
        (".env", ""),
        ("ci.yml", ""),
    ]);
    assert_eq!(find(&dir, json!({"pattern": "*"})).await, "ci.yml\n");
    assert_eq!(
        find(&dir, json!({"pattern": "*.yml", "path": ".github"})).await,
        ".github/workflows/ci.yml\n"
    );
}

#[tokio::test]
async fn results_past_the_cap_are_counted_on_a_last_line() {
    let files: Vec<(String, &str)> = (0..7).map(|i| (format!("f{i}.txt"), "")).collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    let dir = tree(&files);
    assert_eq!(
        find(&dir, json!({"pattern": "*.txt", "max_results": 3})).await,
        "f0.txt\nf1.txt\nf2.txt\n... and 4 more (raise max_results, at most 1000, or narrow the pattern or path)\n"
    );
}

#[tokio::test]
async fn no_match_is_a_sentence_naming_the_pattern_and_path() {
    let dir = tree(PROJECT);
    assert_eq!(
        find(&dir, json!({"pattern": "*.zig", "path": "src"})).await,
        "no files match `*.zig` under src (hidden and ignored files are skipped)\n"
    );
    assert_eq!(
        find(&dir, json!({"pattern": "*.zig"})).await,
        "no files match `*.zig` under . (hidden and ignored files are skipped)\n"
    );
}

#[tokio::test]
async fn unicode_file_names_are_matched_and_shown() {
    let dir = tree(&[
        ("données/résumé.md", ""),
        ("文档/说明.md", ""),
        ("a.md", ""),
    ]);
    assert_eq!(
        find(&dir, json!({"pattern": "*.md"})).await,
        "a.md\ndonnées/résumé.md\n文档/说明.md\n"
    );
    assert_eq!(
        find(&dir, json!({"pattern": "résumé.*"})).await,
        "données/résumé.md\n"
    );
}

#[tokio::test]
async fn an_invalid_glob_is_an_argument_error_quoting_the_glob_error() {
    let dir = tree(PROJECT);
    let message = failure(call(&BashFind, dir.path(), json!({"pattern": "src/[a"})).await);
    assert_eq!(
        message,
        "invalid arguments: `pattern` is not a valid glob: error parsing glob 'src/[a': unclosed character class; missing ']'"
    );
}

#[tokio::test]
async fn bad_arguments_are_refused_readably() {
    let dir = tree(PROJECT);
    for (arguments, expected) in [
        (
            json!({"pattern": "*", "max_results": 0}),
            "invalid arguments: max_results must be between 1 and 1000, got 0",
        ),
        (
            json!({"pattern": "*", "max_results": 5000}),
            "invalid arguments: max_results must be between 1 and 1000, got 5000",
        ),
        (
            json!({"pattern": "*", "glob": "*.rs"}),
            "invalid arguments: unknown field `glob`, expected one of `pattern`, `path`, `max_results`",
        ),
        (
            json!({"path": "src"}),
            "invalid arguments: missing field `pattern`",
        ),
    ] {
        assert_eq!(
            failure(call(&BashFind, dir.path(), arguments).await),
            expected
        );
    }
}

#[tokio::test]
async fn a_missing_path_is_named_with_the_workspace_root() {
    let dir = tree(PROJECT);
    assert_eq!(
        failure(
            call(
                &BashFind,
                dir.path(),
                json!({"pattern": "*", "path": "nope"})
            )
            .await
        ),
        format!(
            "no such file or directory: `nope` (relative to the workspace root {})",
            root_of(&dir).display()
        )
    );
}

#[tokio::test]
async fn every_path_out_of_the_workspace_is_refused() {
    let dir = tree(PROJECT);
    let outside = tree(&[]);
    for (path, expected) in escapes(&dir, &outside) {
        let result = call(&BashFind, dir.path(), json!({"pattern": "*", "path": path})).await;
        assert_eq!(failure(result), expected, "path {path}");
    }
    // The links themselves are never followed by the walk either.
    assert_eq!(
        find(&dir, json!({"pattern": "*.txt"})).await,
        "no files match `*.txt` under . (hidden and ignored files are skipped)\n"
    );
}

#[test]
fn the_schema_names_every_argument_the_parser_accepts() {
    let schema = BashFind.parameters();
    let mut properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    properties.sort();
    assert_eq!(properties, vec!["max_results", "path", "pattern"]);
    assert_eq!(schema["required"], json!(["pattern"]));
    assert_eq!(BashFind.name(), "bash_find");
}

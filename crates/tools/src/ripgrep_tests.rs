use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::test_tree::{call, escapes, failure, root_of, tree, write, write_huge};

async fn rg(dir: &tempfile::TempDir, arguments: serde_json::Value) -> String {
    call(&BashRipgrep, dir.path(), arguments).await.unwrap()
}

const NO_MATCH_TAIL: &str = "(hidden, ignored and binary files are skipped)";

#[tokio::test]
async fn matches_are_printed_as_path_line_text_in_path_order() {
    let dir = tree(&[
        ("src/b.rs", "fn b() {}\n// TODO: b\n"),
        ("src/a.rs", "// TODO: first\nfn a() {}\n// TODO: second\n"),
        ("notes.txt", "nothing here\n"),
    ]);
    assert_eq!(
        rg(&dir, json!({"pattern": "TODO: \\w+"})).await,
        "src/a.rs:1:// TODO: first\nsrc/a.rs:3:// TODO: second\nsrc/b.rs:2:// TODO: b\n"
    );
}

#[tokio::test]
async fn context_lines_use_dashes_and_groups_are_separated() {
    let text: String = (1..=12)
        .map(|i| format!("l{i}{}\n", if i == 3 || i == 10 { " hit" } else { "" }))
        .collect();
    let dir = tree(&[("a.txt", &text), ("b.txt", "x\nhit\n")]);
    assert_eq!(
        rg(&dir, json!({"pattern": "hit", "context": 1})).await,
        "a.txt-2-l2\na.txt:3:l3 hit\na.txt-4-l4\n--\na.txt-9-l9\na.txt:10:l10 hit\na.txt-11-l11\n--\nb.txt-1-x\nb.txt:2:hit\n"
    );
}

#[tokio::test]
async fn adjacent_context_groups_are_merged() {
    let dir = tree(&[("a.txt", "1\nhit\n3\nhit\n5\n")]);
    assert_eq!(
        rg(&dir, json!({"pattern": "hit", "context": 1})).await,
        "a.txt-1-1\na.txt:2:hit\na.txt-3-3\na.txt:4:hit\na.txt-5-5\n"
    );
}

#[tokio::test]
async fn ignore_case_and_fixed_strings() {
    let dir = tree(&[("a.txt", "Hello World\na.b\naxb\n")]);
    assert_eq!(
        rg(&dir, json!({"pattern": "hello"})).await,
        format!("no matches for `hello` under . {NO_MATCH_TAIL}\n")
    );
    assert_eq!(
        rg(&dir, json!({"pattern": "hello", "ignore_case": true})).await,
        "a.txt:1:Hello World\n"
    );
    assert_eq!(
        rg(&dir, json!({"pattern": "a.b"})).await,
        "a.txt:2:a.b\na.txt:3:axb\n"
    );
    assert_eq!(
        rg(&dir, json!({"pattern": "a.b", "fixed_strings": true})).await,
        "a.txt:2:a.b\n"
    );
}

#[tokio::test]
async fn glob_limits_the_files_searched() {
    let dir = tree(&[
        ("app.py", "import os\n"),
        ("lib/util.py", "import sys\n"),
        ("lib/util.rs", "// import\n"),
    ]);
    assert_eq!(
        rg(&dir, json!({"pattern": "import", "glob": "*.py"})).await,
        "app.py:1:import os\nlib/util.py:1:import sys\n"
    );
    assert_eq!(
        rg(&dir, json!({"pattern": "import", "glob": "lib/*"})).await,
        "lib/util.py:1:import sys\nlib/util.rs:1:// import\n"
    );
    assert_eq!(
        rg(&dir, json!({"pattern": "import", "glob": "*.go"})).await,
        format!("no matches for `import` under . in files matching `*.go` {NO_MATCH_TAIL}\n")
    );
    assert_eq!(
        failure(
            call(
                &BashRipgrep,
                dir.path(),
                json!({"pattern": "x", "glob": "{a"})
            )
            .await
        ),
        "invalid arguments: `glob` is not a valid glob: error parsing glob '{a': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"
    );
}

#[tokio::test]
async fn ignored_and_hidden_files_are_skipped() {
    let dir = tree(&[
        (".gitignore", "build/\n"),
        (".ignore", "*.min.js\n"),
        ("build/out.txt", "needle\n"),
        ("app.min.js", "needle\n"),
        (".hidden/x.txt", "needle\n"),
        (".env", "needle\n"),
        ("src/a.txt", "needle\n"),
    ]);
    assert_eq!(
        rg(&dir, json!({"pattern": "needle"})).await,
        "src/a.txt:1:needle\n"
    );
    // Named explicitly, a hidden directory is searched.
    assert_eq!(
        rg(&dir, json!({"pattern": "needle", "path": ".hidden"})).await,
        ".hidden/x.txt:1:needle\n"
    );
}

#[tokio::test]
async fn binary_files_are_skipped_whole_and_counted() {
    let dir = tree(&[("a.txt", "needle\n")]);
    let mut binary = b"needle\n".to_vec();
    binary.extend_from_slice(&[0, 1, 2, 3]);
    binary.extend_from_slice(b"\nneedle\n");
    write(dir.path(), "blob.bin", &binary);
    assert_eq!(
        rg(&dir, json!({"pattern": "needle"})).await,
        "a.txt:1:needle\n(1 binary files skipped)\n"
    );
    assert_eq!(
        rg(&dir, json!({"pattern": "needle", "path": "blob.bin"})).await,
        format!(
            "no matches for `needle` under blob.bin {NO_MATCH_TAIL}\n(1 binary files skipped)\n"
        )
    );
}

#[tokio::test]
async fn a_single_file_is_searched_whatever_the_glob() {
    let dir = tree(&[
        ("src/main.rs", "fn main() {}\n"),
        ("src/lib.rs", "fn lib() {}\n"),
    ]);
    assert_eq!(
        rg(
            &dir,
            json!({"pattern": "fn", "path": "src/main.rs", "glob": "*.py"})
        )
        .await,
        "src/main.rs:1:fn main() {}\n"
    );
}

#[tokio::test]
async fn matches_past_the_cap_are_counted_and_context_stays_with_shown_matches() {
    let text: String = (1..=10).map(|i| format!("hit {i}\nctx {i}\n")).collect();
    let dir = tree(&[("a.txt", &text), ("b.txt", "hit b\n")]);
    assert_eq!(
        rg(&dir, json!({"pattern": "hit", "max_matches": 2})).await,
        "a.txt:1:hit 1\na.txt:3:hit 2\n... 9 more matching lines not shown (raise max_matches, at most 2000, or narrow the pattern, path or glob)\n"
    );
    // The last shown match keeps its after-context; the next (hidden) match
    // brings no before-context and no separator.
    assert_eq!(
        rg(
            &dir,
            json!({"pattern": "hit", "max_matches": 2, "context": 1})
        )
        .await,
        "a.txt:1:hit 1\na.txt-2-ctx 1\na.txt:3:hit 2\na.txt-4-ctx 2\n... 9 more matching lines not shown (raise max_matches, at most 2000, or narrow the pattern, path or glob)\n"
    );
}

#[tokio::test]
async fn a_huge_file_is_searched_incrementally_and_the_count_stops() {
    let dir = tree(&[]);
    // About 50 MB, a million lines.
    write_huge(&dir.path().join("huge.txt"), 1_000_000);
    let started = Instant::now();
    let out = rg(&dir, json!({"pattern": "filler"})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 201, "{out}");
    assert_eq!(
        lines[0],
        "huge.txt:1:line 1 of filler text, the same on every line"
    );
    assert_eq!(
        lines[199],
        "huge.txt:200:line 200 of filler text, the same on every line"
    );
    assert_eq!(
        lines[200],
        "... at least 100000 more matching lines not shown (raise max_matches, at most 2000, or narrow the pattern, path or glob)"
    );
    // A line near the end is found too, without holding the file.
    let out = rg(&dir, json!({"pattern": "^line 999999 "})).await;
    assert_eq!(
        out,
        "huge.txt:999999:line 999999 of filler text, the same on every line\n"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn unicode_text_and_file_names() {
    let dir = tree(&[
        ("文档/说明.md", "第一行\n包含 ünïcödé 的行\n"),
        ("é.txt", "café ☕\n"),
    ]);
    assert_eq!(
        rg(&dir, json!({"pattern": "ünïcödé|☕"})).await,
        "é.txt:1:café ☕\n文档/说明.md:2:包含 ünïcödé 的行\n"
    );
    assert_eq!(
        rg(&dir, json!({"pattern": "CAFÉ", "ignore_case": true})).await,
        "é.txt:1:café ☕\n"
    );
}

#[tokio::test]
async fn invalid_utf8_is_shown_replaced_and_long_lines_are_cut() {
    let dir = tree(&[]);
    write(dir.path(), "latin1.txt", b"caf\xe9 needle\n");
    let long = format!("needle {}\n", "é".repeat(600));
    write(dir.path(), "long.txt", long.as_bytes());
    let out = rg(&dir, json!({"pattern": "needle"})).await;
    let expected_long = format!(
        "long.txt:1:needle {} [... {} more bytes of this line]",
        "é".repeat(496),
        long.len() - 1 - 7 - 2 * 496
    );
    assert_eq!(
        out,
        format!("latin1.txt:1:caf\u{fffd} needle\n{expected_long}\n")
    );
}

#[tokio::test]
async fn an_invalid_regex_is_an_argument_error_quoting_the_regex_error() {
    let dir = tree(&[("a.txt", "x\n")]);
    let message = failure(call(&BashRipgrep, dir.path(), json!({"pattern": "fn (a"})).await);
    assert!(
        message
            .starts_with("invalid arguments: `pattern` is not a valid regex: regex parse error:"),
        "{message}"
    );
    assert!(message.contains("fn (a"), "{message}");
    assert!(message.contains("unclosed group"), "{message}");
}

#[tokio::test]
async fn bad_arguments_are_refused_readably() {
    let dir = tree(&[("a.txt", "x\n")]);
    for (arguments, expected) in [
        (
            json!({"pattern": "x", "context": 21}),
            "invalid arguments: context must be between 0 and 20, got 21",
        ),
        (
            json!({"pattern": "x", "max_matches": 2001}),
            "invalid arguments: max_matches must be between 1 and 2000, got 2001",
        ),
        (
            json!({"pattern": "x", "case_insensitive": true}),
            "invalid arguments: unknown field `case_insensitive`, expected one of `pattern`, `path`, `glob`, `ignore_case`, `fixed_strings`, `context`, `max_matches`",
        ),
        (
            json!({"pattern": 3}),
            "invalid arguments: invalid type: integer `3`, expected a string",
        ),
    ] {
        assert_eq!(
            failure(call(&BashRipgrep, dir.path(), arguments).await),
            expected
        );
    }
}

#[tokio::test]
async fn a_missing_path_is_named_with_the_workspace_root() {
    let dir = tree(&[]);
    assert_eq!(
        failure(
            call(
                &BashRipgrep,
                dir.path(),
                json!({"pattern": "x", "path": "src"})
            )
            .await
        ),
        format!(
            "no such file or directory: `src` (relative to the workspace root {})",
            root_of(&dir).display()
        )
    );
}

#[tokio::test]
async fn every_path_out_of_the_workspace_is_refused() {
    let dir = tree(&[("a.txt", "nothing\n")]);
    let outside = tree(&[]);
    for (path, expected) in escapes(&dir, &outside) {
        let result = call(
            &BashRipgrep,
            dir.path(),
            json!({"pattern": "secret", "path": path}),
        )
        .await;
        assert_eq!(failure(result), expected, "path {path}");
    }
    // Links inside the workspace are not followed by the walk.
    assert_eq!(
        rg(&dir, json!({"pattern": "secret"})).await,
        format!("no matches for `secret` under . {NO_MATCH_TAIL}\n")
    );
}

#[test]
fn the_schema_names_every_argument_the_parser_accepts() {
    let schema = BashRipgrep.parameters();
    let mut properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    properties.sort();
    assert_eq!(
        properties,
        vec![
            "context",
            "fixed_strings",
            "glob",
            "ignore_case",
            "max_matches",
            "path",
            "pattern"
        ]
    );
    assert_eq!(schema["required"], json!(["pattern"]));
    assert_eq!(BashRipgrep.name(), "bash_ripgrep");
}

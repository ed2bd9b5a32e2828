use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::test_tree::{
    call, call_in, escapes, failure, root_of, symlink, tree, write, write_huge,
};

async fn read(dir: &tempfile::TempDir, arguments: serde_json::Value) -> String {
    call(&BashRead, dir.path(), arguments).await.unwrap()
}

/// A context whose output caps are `max_bytes` / `max_lines`.
fn capped(dir: &tempfile::TempDir, max_bytes: usize, max_lines: usize) -> ToolContext {
    let mut ctx = ToolContext::new(dir.path());
    ctx.output_caps = OutputCaps {
        max_bytes,
        max_lines,
    };
    ctx
}

fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|i| format!("{i:>6}\tline {i}\n")).collect()
}

fn lines_file(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn a_file_is_shown_with_right_aligned_line_numbers() {
    let dir = tree(&[("src/a.rs", "fn main() {\n    println!(\"hi\");\n}")]);
    assert_eq!(
        read(&dir, json!({"path": "src/a.rs"})).await,
        "     1\tfn main() {\n     2\t    println!(\"hi\");\n     3\t}\n"
    );
}

#[tokio::test]
async fn offset_and_limit_select_a_range_and_say_how_to_read_on() {
    let dir = tree(&[("a.txt", &lines_file(20))]);
    assert_eq!(
        read(&dir, json!({"path": "a.txt", "offset": 5, "limit": 3})).await,
        format!(
            "{}[lines 5-7 shown; the file goes on: call bash_read with offset=8 to read more]\n",
            numbered(5..=7)
        )
    );
    // The range that reaches the end says nothing more.
    assert_eq!(
        read(&dir, json!({"path": "a.txt", "offset": 18, "limit": 5})).await,
        numbered(18..=20)
    );
    assert_eq!(
        read(&dir, json!({"path": "a.txt", "offset": 18, "limit": 3})).await,
        numbered(18..=20)
    );
}

#[tokio::test]
async fn an_offset_past_the_end_says_how_long_the_file_is() {
    let dir = tree(&[("a.txt", &lines_file(3)), ("b.txt", "one\ntwo")]);
    for (path, offset, lines) in [("a.txt", 4, 3), ("a.txt", 100, 3), ("b.txt", 3, 2)] {
        assert_eq!(
            failure(
                call(
                    &BashRead,
                    dir.path(),
                    json!({"path": path, "offset": offset})
                )
                .await
            ),
            format!("offset {offset} is past the end of `{path}`, which has {lines} lines")
        );
    }
}

#[tokio::test]
async fn crlf_line_ends_are_not_shown() {
    let dir = tree(&[("w.txt", "one\r\ntwo\r\n")]);
    assert_eq!(
        read(&dir, json!({"path": "w.txt"})).await,
        "     1\tone\n     2\ttwo\n"
    );
}

#[tokio::test]
async fn the_output_caps_bound_what_is_read() {
    let dir = tree(&[("a.txt", &lines_file(100))]);
    // Lines: one line of the cap is kept for the closing line.
    let out = call_in(
        &BashRead,
        &capped(&dir, 100_000, 11),
        json!({"path": "a.txt"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        format!(
            "{}[lines 1-10 shown; the file goes on: call bash_read with offset=11 to read more]\n",
            numbered(1..=10)
        )
    );
    // Bytes: each numbered line here is 14 bytes; 256 bytes of the cap are
    // kept for the closing line, so 300 bytes leave room for 3 lines.
    let out = call_in(
        &BashRead,
        &capped(&dir, 300, 1_000),
        json!({"path": "a.txt"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        format!(
            "{}[lines 1-3 shown, stopped at the output limit of 44 bytes; call bash_read with offset=4 to read more]\n",
            numbered(1..=3)
        )
    );
}

#[tokio::test]
async fn a_line_longer_than_the_cap_is_cut_and_the_next_offset_given() {
    let dir = tree(&[]);
    // A 10 MB single line of multi-byte characters, no newline.
    let long = "é".repeat(5 * 1024 * 1024);
    write(dir.path(), "one_line.txt", long.as_bytes());
    let out = read(&dir, json!({"path": "one_line.txt"})).await;
    let (first, footer) = out.split_once('\n').unwrap();
    assert!(first.starts_with("     1\téé"), "{}", &first[..20]);
    assert!(first.len() <= 50 * 1024, "{}", first.len());
    // Cut on a character boundary: nothing but whole 'é's.
    assert!(first["     1\t".len()..].chars().all(|c| c == 'é'));
    assert_eq!(
        footer,
        format!(
            "[line 1 is longer than {} bytes and was cut; call bash_read with offset=2 to read on after it]\n",
            50 * 1024 - 256 - "     1\t".len() - 1
        )
    );
}

#[tokio::test]
async fn line_ten_of_a_huge_file_is_read_without_reading_the_file() {
    let dir = tree(&[]);
    // About 50 MB, a million lines.
    write_huge(&dir.path().join("huge.txt"), 1_000_000);
    let started = Instant::now();
    let out = read(&dir, json!({"path": "huge.txt", "offset": 10, "limit": 1})).await;
    let took = started.elapsed();
    assert_eq!(
        out,
        "    10\tline 10 of filler text, the same on every line\n[lines 10-10 shown; the file goes on: call bash_read with offset=11 to read more]\n"
    );
    assert!(took < Duration::from_millis(500), "took {took:?}");
    // Far into the file works too: skipped, not kept.
    let out = read(&dir, json!({"path": "huge.txt", "offset": 999_999})).await;
    assert_eq!(
        out,
        "999999\tline 999999 of filler text, the same on every line\n1000000\tline 1000000 of filler text, the same on every line\n"
    );
    // Without a range, the output cap bounds what is read.
    let out = read(&dir, json!({"path": "huge.txt"})).await;
    assert!(out.len() <= 50 * 1024, "{}", out.len());
    assert_eq!(
        out.lines().last().unwrap(),
        "[lines 1-928 shown, stopped at the output limit of 50944 bytes; call bash_read with offset=929 to read more]"
    );
}

#[tokio::test]
async fn a_directory_is_listed_sorted_with_markers() {
    let dir = tree(&[
        ("d/b.txt", ""),
        ("d/.hidden", ""),
        ("d/a_dir/", ""),
        ("d/Z.md", ""),
        ("d/ü.txt", ""),
    ]);
    symlink(&dir.path().join("d/b.txt"), &dir.path().join("d"), "link");
    assert_eq!(
        read(&dir, json!({"path": "d"})).await,
        "`d` is a directory with 6 entries (`/` marks a directory, `@` a symlink; hidden entries included):\n.hidden\nZ.md\na_dir/\nb.txt\nlink@\nü.txt\n"
    );
    assert_eq!(
        read(&dir, json!({"path": "d/a_dir"})).await,
        "(`d/a_dir` is an empty directory)\n"
    );
    assert!(
        read(&dir, json!({"path": "."}))
            .await
            .starts_with("`.` is a directory with 1 entries")
    );
}

#[tokio::test]
async fn an_empty_file_says_so() {
    let dir = tree(&[("empty.txt", "")]);
    assert_eq!(
        read(&dir, json!({"path": "empty.txt"})).await,
        "(`empty.txt` is empty)\n"
    );
}

#[tokio::test]
async fn binary_files_are_refused_with_type_and_size() {
    let dir = tree(&[]);
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.resize(12_345, 7);
    write(dir.path(), "img.png", &png);
    write(dir.path(), "blob", &[1, 2, 0, 3]);
    // No NUL, but mostly invalid UTF-8.
    write(dir.path(), "noise", &[0xff; 100]);
    for (path, description) in [
        ("img.png", "PNG image, 12,345 bytes"),
        ("blob", "binary data, 4 bytes"),
        ("noise", "binary data, 100 bytes"),
    ] {
        assert_eq!(
            failure(call(&BashRead, dir.path(), json!({"path": path})).await),
            format!("`{path}` is a binary file ({description}); bash_read shows text files only")
        );
    }
}

#[tokio::test]
async fn invalid_utf8_in_a_text_file_is_shown_replaced() {
    let dir = tree(&[]);
    write(dir.path(), "latin1.txt", b"caf\xe9 cr\xe8me\nna\xefve\n");
    assert_eq!(
        read(&dir, json!({"path": "latin1.txt"})).await,
        "     1\tcaf\u{fffd} cr\u{fffd}me\n     2\tna\u{fffd}ve\n"
    );
}

#[tokio::test]
async fn unicode_text_and_file_names() {
    let dir = tree(&[("文档/说明 ü.md", "第一行\nemoji 😀 line\n")]);
    assert_eq!(
        read(&dir, json!({"path": "文档/说明 ü.md", "offset": 2})).await,
        "     2\temoji 😀 line\n"
    );
}

#[tokio::test]
async fn a_fifo_is_refused_instead_of_blocking() {
    let dir = tree(&[]);
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        failure(call(&BashRead, dir.path(), json!({"path": "pipe"})).await),
        "`pipe` is a FIFO, not a regular file or directory; bash_read reads files and lists directories"
    );
}

#[tokio::test]
async fn bad_arguments_are_refused_readably() {
    let dir = tree(&[("a.txt", "x\n")]);
    for (arguments, expected) in [
        (
            json!({"path": "a.txt", "offset": 0}),
            "invalid arguments: offset must be at least 1, got 0",
        ),
        (
            json!({"path": "a.txt", "limit": 0}),
            "invalid arguments: limit must be between 1 and 10000, got 0",
        ),
        (
            json!({"path": "a.txt", "lines": 3}),
            "invalid arguments: unknown field `lines`, expected one of `path`, `offset`, `limit`",
        ),
        (json!({}), "invalid arguments: missing field `path`"),
        (
            json!({"path": "a.txt", "offset": -1}),
            "invalid arguments: invalid value: integer `-1`, expected u64",
        ),
    ] {
        assert_eq!(
            failure(call(&BashRead, dir.path(), arguments).await),
            expected
        );
    }
}

#[tokio::test]
async fn a_missing_path_is_named_with_the_workspace_root() {
    let dir = tree(&[]);
    assert_eq!(
        failure(call(&BashRead, dir.path(), json!({"path": "src/nope.rs"})).await),
        format!(
            "no such file or directory: `src/nope.rs` (relative to the workspace root {})",
            root_of(&dir).display()
        )
    );
}

#[tokio::test]
async fn every_path_out_of_the_workspace_is_refused() {
    let dir = tree(&[("a.txt", "x\n")]);
    let outside = tree(&[]);
    for (path, expected) in escapes(&dir, &outside) {
        let result = call(&BashRead, dir.path(), json!({"path": path})).await;
        assert_eq!(failure(result), expected, "path {path}");
    }
}

#[test]
fn sizes_get_thousands_separators() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(12_345), "12,345");
    assert_eq!(thousands(1_234_567_890), "1,234,567,890");
}

#[test]
fn magic_numbers_name_common_formats() {
    let mut tar = vec![0u8; 300];
    tar[257..262].copy_from_slice(b"ustar");
    for (head, expected) in [
        (b"\x7fELF\x02\x01".as_slice(), "ELF executable"),
        (b"%PDF-1.7\n", "PDF document"),
        (b"PK\x03\x04\x14\0", "ZIP archive"),
        (b"RIFF\0\0\0\0WEBPVP8 ", "WebP image"),
        (tar.as_slice(), "tar archive"),
        (b"\x01\x02\x03", "binary data"),
    ] {
        assert_eq!(guess_binary_type(head), expected);
    }
}

#[test]
fn legacy_8_bit_text_is_not_binary() {
    assert!(!looks_binary("Grüße aus Köln, ça va très bien".as_bytes()));
    assert!(!looks_binary(
        b"Gr\xfc\xdfe aus K\xf6ln, \xe7a va tr\xe8s bien"
    ));
    assert!(looks_binary(b"text\0more"));
    assert!(looks_binary(&[0xc3; 64]));
    // A character cut by the end of the sample is not invalid.
    assert!(!looks_binary("abcé".as_bytes().split_last().unwrap().1));
}

#[test]
fn the_schema_names_every_argument_the_parser_accepts() {
    let schema = BashRead.parameters();
    let mut properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    properties.sort();
    assert_eq!(properties, vec!["limit", "offset", "path"]);
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(BashRead.name(), "bash_read");
}

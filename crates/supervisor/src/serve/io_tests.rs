use pretty_assertions::assert_eq;

use super::{ReadLine, RequestLines};

/// Every read of `input` through a reader capped at `max` bytes.
async fn read_all(input: &[u8], max: usize) -> Vec<ReadLine> {
    let mut lines = RequestLines::new(input, max);
    let mut out = Vec::new();
    loop {
        let next = lines.next().await.unwrap();
        let end = next == ReadLine::Eof;
        out.push(next);
        if end {
            return out;
        }
    }
}

fn line(text: &str) -> ReadLine {
    ReadLine::Line(text.as_bytes().to_vec())
}

#[tokio::test]
async fn lines_come_without_their_newline_and_a_last_one_without_any() {
    assert_eq!(
        read_all(b"one\ntwo\n\nthree", 16).await,
        vec![
            line("one"),
            line("two"),
            line(""),
            line("three"),
            ReadLine::Eof
        ]
    );
}

#[tokio::test]
async fn a_line_over_the_cap_is_skipped_to_its_newline_and_reading_goes_on() {
    let mut input = b"ok\n".to_vec();
    input.extend(vec![b'x'; 100]);
    input.extend(b"\nnext\n");
    assert_eq!(
        read_all(&input, 10).await,
        vec![
            line("ok"),
            ReadLine::TooLong { bytes: 100 },
            line("next"),
            ReadLine::Eof
        ]
    );
}

#[tokio::test]
async fn a_line_of_exactly_the_cap_is_kept() {
    assert_eq!(
        read_all(b"0123456789\n", 10).await,
        vec![line("0123456789"), ReadLine::Eof]
    );
}

#[tokio::test]
async fn a_long_line_cut_by_the_end_of_input_is_reported_once() {
    let input = vec![b'y'; 50];
    assert_eq!(
        read_all(&input, 10).await,
        vec![ReadLine::TooLong { bytes: 50 }, ReadLine::Eof]
    );
}

#[tokio::test]
async fn bytes_that_are_not_utf8_are_passed_on_for_the_caller_to_refuse() {
    assert_eq!(
        read_all(b"\xff\xfe{}\n{}\n", 16).await,
        vec![
            ReadLine::Line(b"\xff\xfe{}".to_vec()),
            line("{}"),
            ReadLine::Eof
        ]
    );
}

#[tokio::test]
async fn a_skipped_line_is_never_kept_in_memory() {
    // 64 MiB without a newline through a 1 KiB cap: the reader's own buffer
    // never grows past the cap (the test's input is the only big thing).
    let input = vec![b'z'; 64 * 1024 * 1024];
    let mut lines = RequestLines::new(input.as_slice(), 1024);
    assert_eq!(
        lines.next().await.unwrap(),
        ReadLine::TooLong {
            bytes: 64 * 1024 * 1024
        }
    );
    assert!(lines.line.capacity() <= 1024, "{}", lines.line.capacity());
}

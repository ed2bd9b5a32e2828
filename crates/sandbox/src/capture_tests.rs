use super::*;

fn capture(head: usize, tail: usize, chunks: &[&[u8]]) -> Captured {
    let mut kept = HeadTail::new(head, tail);
    for chunk in chunks {
        kept.push(chunk);
    }
    kept.finish()
}

#[test]
fn short_stream_is_kept_whole() {
    let got = capture(8, 8, &[b"abc", b"def"]);
    assert_eq!(got.head, b"abcdef");
    assert!(got.tail.is_empty());
    assert_eq!(
        (got.bytes_seen, got.bytes_kept, got.truncated),
        (6, 6, false)
    );
    assert_eq!(got.lossy_text(), "abcdef");
}

#[test]
fn stream_that_fits_head_plus_tail_is_not_truncated() {
    let got = capture(4, 4, &[b"abcdefgh"]);
    assert_eq!(
        (got.head.as_slice(), got.tail.as_slice()),
        (&b"abcd"[..], &b"efgh"[..])
    );
    assert!(!got.truncated);
    assert_eq!(got.lossy_text(), "abcdefgh");
}

#[test]
fn long_stream_keeps_head_and_rolling_tail() {
    let got = capture(3, 4, &[b"012", b"3456", b"78", b"9abc", b"d"]);
    assert_eq!(got.head, b"012");
    assert_eq!(got.tail, b"abcd");
    assert_eq!(
        (got.bytes_seen, got.bytes_kept, got.truncated),
        (14, 7, true)
    );
    assert_eq!(got.lossy_text(), "012\n[... 7 bytes omitted ...]\nabcd");
}

#[test]
fn one_huge_chunk_keeps_only_its_end_in_the_tail() {
    let big: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let got = capture(2, 5, &[b"xx", &big]);
    assert_eq!(got.head, b"xx");
    assert_eq!(got.tail, &big[big.len() - 5..]);
    assert_eq!(got.bytes_seen, 10_002);
}

#[test]
fn zero_tail_keeps_head_only() {
    let got = capture(2, 0, &[b"hello"]);
    assert_eq!(got.head, b"he");
    assert!(got.tail.is_empty());
    assert!(got.truncated);
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let got = capture(8, 0, &[&[0x66, 0xff, 0x6f]]);
    assert_eq!(got.lossy_text(), "f\u{fffd}o");
}

use super::*;

fn all(bytes: &[u8], cap: usize) -> (Vec<String>, u64) {
    let mut lines = CappedLines::new(bytes, cap);
    let mut seen = Vec::new();
    while let Some(line) = lines.next_line().unwrap() {
        seen.push(match line {
            CappedLine::Line { number, bytes } => {
                format!("{number}:{}", String::from_utf8_lossy(bytes))
            }
            CappedLine::TooLong { number } => format!("{number}:too long"),
            CappedLine::Torn { len } => format!("torn {len}"),
        });
    }
    (seen, lines.complete_len())
}

#[test]
fn complete_lines_then_a_torn_tail_with_its_length() {
    let (seen, complete) = all(b"a\n\nbc\npartial", 16);
    assert_eq!(seen, ["1:a", "2:", "3:bc", "torn 7"]);
    assert_eq!(complete, 6);
}

#[test]
fn a_line_over_the_cap_is_reported_and_the_next_one_read() {
    let (seen, complete) = all(b"12345\n123456\n1\n", 5);
    assert_eq!(seen, ["1:12345", "2:too long", "3:1"]);
    assert_eq!(complete, 15);
}

#[test]
fn a_line_longer_than_the_read_buffer_is_capped_without_being_held() {
    // Several BufReader fills: the cap holds across them.
    let mut bytes = vec![b'x'; 100_000];
    bytes.push(b'\n');
    bytes.extend_from_slice(b"ok\n");
    let mut lines = CappedLines::new(bytes.as_slice(), 50_000);
    assert_eq!(
        lines.next_line().unwrap(),
        Some(CappedLine::TooLong { number: 1 })
    );
    assert!(lines.line.capacity() <= 50_000, "{}", lines.line.capacity());
    assert_eq!(
        lines.next_line().unwrap(),
        Some(CappedLine::Line {
            number: 2,
            bytes: b"ok"
        })
    );
}

#[test]
fn a_line_at_the_cap_holds_the_cap_not_twice_it() {
    let mut bytes = vec![b'y'; 40_000];
    bytes.push(b'\n');
    let mut lines = CappedLines::new(bytes.as_slice(), 40_000);
    let Some(CappedLine::Line { bytes, .. }) = lines.next_line().unwrap() else {
        panic!("not a line");
    };
    assert_eq!(bytes.len(), 40_000);
    assert!(lines.line.capacity() <= 40_000, "{}", lines.line.capacity());
}

#[test]
fn an_empty_reader_has_no_lines() {
    assert_eq!(all(b"", 4), (vec![], 0));
}

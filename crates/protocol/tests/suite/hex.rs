//! The golden-file text format: `#` comment lines, then lowercase hex, 32
//! bytes per line, so a changed byte shows up as a one-line diff.

/// Bytes per hex line.
const BYTES_PER_LINE: usize = 32;

/// Renders `bytes` as a golden file with a leading comment.
pub fn render(comment: &str, bytes: &[u8]) -> String {
    let mut out = String::new();
    for line in comment.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    for chunk in bytes.chunks(BYTES_PER_LINE) {
        for b in chunk {
            out.push_str(&format!("{b:02x}"));
        }
        out.push('\n');
    }
    out
}

/// Parses a golden file back into bytes; `Err` names the offending line.
pub fn parse(text: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.len() % 2 != 0 {
            return Err(format!("line {}: odd number of hex digits", n + 1));
        }
        for pair in line.as_bytes().chunks(2) {
            let pair = std::str::from_utf8(pair).map_err(|e| format!("line {}: {e}", n + 1))?;
            let byte = u8::from_str_radix(pair, 16)
                .map_err(|e| format!("line {}: {pair:?}: {e}", n + 1))?;
            bytes.push(byte);
        }
    }
    Ok(bytes)
}

#[test]
fn render_then_parse_is_identity() {
    let bytes: Vec<u8> = (0..=255u8).chain(0..7).collect();
    let text = render("a comment\nover two lines", &bytes);
    assert!(text.starts_with("# a comment\n# over two lines\n"));
    assert_eq!(parse(&text), Ok(bytes));
}

#[test]
fn parse_rejects_bad_digits() {
    assert!(parse("0g\n").is_err());
    assert!(parse("abc\n").is_err());
}

use super::*;

fn key() -> SessionKey {
    SessionKey::fixed(7)
}

/// `lines` (JSON objects) sealed one after the other into a file's text.
fn file_of(lines: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut prev = GENESIS;
    for line in lines {
        let (sealed, value) = seal(&key(), &prev, &[], line.as_bytes()).unwrap();
        out.extend_from_slice(&sealed);
        prev = value;
    }
    out
}

const A: &str = r#"{"type":"session","runId":"r1","timestamp":"t"}"#;
const B: &str = r#"{"type":"message","text":"hi","timestamp":"t"}"#;
const C: &str = r#"{"type":"log","message":"done","timestamp":"t"}"#;

#[test]
fn a_sealed_line_is_the_object_with_one_more_member() {
    let (line, value) = seal(&key(), &GENESIS, &[], A.as_bytes()).unwrap();
    let text = std::str::from_utf8(&line).unwrap();
    assert!(text.ends_with("\"}\n"), "{text}");
    let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(parsed["runId"], "r1");
    assert_eq!(parsed["chain"], hex_encode(&value));
    let (head, carried) = split(text.trim_end().as_bytes()).unwrap();
    assert_eq!(carried, value);
    assert_eq!([head, b"}"].concat(), A.as_bytes());
}

#[test]
fn an_untouched_file_verifies() {
    let bytes = file_of(&[A, B, C]);
    let verified = verify(&key(), &bytes).unwrap();
    assert_eq!(verified.lines, 3);
    assert_eq!(verified.torn_tail, None);
    assert!(verified.covered.is_empty());
}

#[test]
fn every_kind_of_tampering_names_the_first_bad_line() {
    let good = String::from_utf8(file_of(&[A, B, C])).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let join = |ls: &[&str]| format!("{}\n", ls.join("\n"));
    let changed = good.replace("\"hi\"", "\"ho\"");
    let inserted = join(&[lines[0], B, lines[1], lines[2]]);
    let removed = join(&[lines[0], lines[2]]);
    let reordered = join(&[lines[0], lines[2], lines[1]]);
    let other_key = {
        let mut prev = GENESIS;
        let mut out = Vec::new();
        for l in [A, B] {
            let (s, v) = seal(&SessionKey::fixed(8), &prev, &[], l.as_bytes()).unwrap();
            out.extend_from_slice(&s);
            prev = v;
        }
        String::from_utf8(out).unwrap()
    };
    let unchained = format!("{A}\n{B}\n");
    let cases = [
        (changed, 2, BreakKind::Mismatch),
        (inserted, 2, BreakKind::Unchained),
        (removed, 2, BreakKind::Mismatch),
        (reordered, 2, BreakKind::Mismatch),
        (other_key, 1, BreakKind::Mismatch),
        (unchained, 1, BreakKind::Unchained),
    ];
    for (text, line_no, kind) in cases {
        assert_eq!(
            verify(&key(), text.as_bytes()),
            Err(ChainBreak { line_no, kind }),
            "{text}"
        );
    }
}

#[test]
fn a_torn_last_line_passes_only_when_it_does_not_parse() {
    let mut bytes = file_of(&[A, B]);
    bytes.extend_from_slice(br#"{"type":"mess"#);
    let verified = verify(&key(), &bytes).unwrap();
    assert_eq!(verified.lines, 2);
    assert_eq!(verified.torn_tail, Some((3, 13)));

    // A whole line without its newline is no crash's leftover.
    let mut planted = file_of(&[A, B]);
    planted.extend_from_slice(C.as_bytes());
    assert_eq!(
        verify(&key(), &planted),
        Err(ChainBreak {
            line_no: 3,
            kind: BreakKind::Unchained
        })
    );
}

#[test]
fn a_chained_last_line_that_lost_only_its_newline_verifies() {
    let mut bytes = file_of(&[A, B]);
    bytes.pop();
    let verified = verify(&key(), &bytes).unwrap();
    assert_eq!((verified.lines, verified.torn_tail), (2, None));
}

#[test]
fn a_torn_line_is_covered_by_the_line_appended_after_it() {
    let mut bytes = file_of(&[A]);
    let (_, first) = split(bytes.strip_suffix(b"\n").unwrap()).unwrap();
    let torn = br#"{"type":"mess"#;
    bytes.extend_from_slice(torn);
    let covered = [torn.as_slice(), b"\n"].concat();
    let (sealed, _) = seal(&key(), &first, &covered, C.as_bytes()).unwrap();
    bytes.push(b'\n');
    bytes.extend_from_slice(&sealed);
    let verified = verify(&key(), &bytes).unwrap();
    assert_eq!(verified.covered, vec![2]);
    assert_eq!(verified.lines, 2);

    // A whole line slipped in before it is not a torn one, covered or not.
    let mut planted = file_of(&[A]);
    planted.extend_from_slice(B.as_bytes());
    planted.push(b'\n');
    let covered = [B.as_bytes(), b"\n"].concat();
    let (sealed, _) = seal(&key(), &first, &covered, C.as_bytes()).unwrap();
    planted.extend_from_slice(&sealed);
    assert_eq!(
        verify(&key(), &planted),
        Err(ChainBreak {
            line_no: 2,
            kind: BreakKind::Unchained
        })
    );
}

#[test]
fn reseal_chains_a_hand_built_file_anew() {
    let text = format!("{A}\n{B}\n");
    let sealed = reseal(&key(), &text).unwrap();
    assert_eq!(verify(&key(), sealed.as_bytes()).unwrap().lines, 2);
    // Resealing a sealed file replaces its members rather than adding more.
    let again = reseal(&key(), &sealed).unwrap();
    assert_eq!(again, sealed);
}

#[test]
fn only_objects_with_members_are_sealed() {
    for body in ["{}", "[1]", "\"x\"", ""] {
        assert_eq!(
            seal(&key(), &GENESIS, &[], body.as_bytes()),
            Err(NotAnObject)
        );
    }
}

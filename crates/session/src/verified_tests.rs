use super::*;
use crate::chain::reseal;
use crate::key::SessionKey;

const HEADER: &str =
    r#"{"type":"session","version":1,"runId":"r1","timestamp":"2026-01-01T00:00:00Z"}"#;
const LOG: &str = r#"{"type":"log","message":"x","timestamp":"2026-01-01T00:00:01Z"}"#;

fn sealed(text: &str) -> String {
    reseal(&SessionKey::fixed(7), text).unwrap()
}

#[test]
fn a_file_subagent_wrote_is_believed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r1.jsonl");
    std::fs::write(&path, sealed(&format!("{HEADER}\n{LOG}\n"))).unwrap();
    let file = read_verified(&path).unwrap();
    assert_eq!(file.verified.lines, 2);
    assert!(file.text().starts_with("{\"type\":\"session\""));
}

#[test]
fn an_edited_an_unchained_and_an_empty_file_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r1.jsonl");
    let good = sealed(&format!("{HEADER}\n{LOG}\n"));
    std::fs::write(&path, good.replace("\"x\"", "\"y\"")).unwrap();
    let shown = read_verified(&path).unwrap_err().to_string();
    assert!(shown.contains("line 2 does not match"), "{shown}");
    std::fs::write(&path, format!("{HEADER}\n")).unwrap();
    let shown = read_verified(&path).unwrap_err().to_string();
    assert!(shown.contains("line 1 carries no chain value"), "{shown}");
    assert!(shown.contains("sessions verify"), "{shown}");
    std::fs::write(&path, "").unwrap();
    assert!(matches!(
        read_verified(&path),
        Err(VerifyError::Empty { .. })
    ));
}

#[test]
fn a_header_is_vouched_for_alone() {
    let good = sealed(&format!("{HEADER}\n{LOG}\n"));
    let first = good.lines().next().unwrap();
    assert_eq!(
        verified_first_line(format!("{first}\n").as_bytes()),
        Some(first.as_bytes())
    );
    assert_eq!(verified_first_line(HEADER.as_bytes()), None);
    let second = good.lines().nth(1).unwrap();
    assert_eq!(verified_first_line(second.as_bytes()), None);
}

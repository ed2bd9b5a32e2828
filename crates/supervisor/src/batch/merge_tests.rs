use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::batch::results::scan;

fn file(ids: &[&str]) -> Scan {
    let text: String = ids
        .iter()
        .map(|id| format!("{{\"id\":\"{id}\"}}\n"))
        .collect();
    scan(Path::new("x"), text.as_bytes()).unwrap()
}

#[test]
fn shards_join_into_every_id_once() {
    let expected: Vec<String> = ["a", "b", "c"].iter().map(|s| (*s).to_owned()).collect();
    let report = merge_results(&[file(&["b"]), file(&["a", "c"])], Some(&expected));
    assert!(report.is_complete(), "{report:?}");
    let lines: Vec<String> = report
        .lines
        .iter()
        .map(|l| String::from_utf8(l.clone()).unwrap())
        .collect();
    assert_eq!(
        lines,
        vec![r#"{"id":"b"}"#, r#"{"id":"a"}"#, r#"{"id":"c"}"#]
    );
}

#[test]
fn missing_duplicate_and_unknown_ids_are_reported() {
    let expected: Vec<String> = ["a", "b", "c"].iter().map(|s| (*s).to_owned()).collect();
    let report = merge_results(&[file(&["a", "z"]), file(&["a"])], Some(&expected));
    assert!(!report.is_complete());
    assert_eq!(report.duplicates, vec![("a".to_owned(), 2)]);
    assert_eq!(report.missing, vec!["b".to_owned(), "c".to_owned()]);
    assert_eq!(report.unknown, vec!["z".to_owned()]);
    assert_eq!(report.lines.len(), 2);
}

#[test]
fn without_a_tasks_file_only_duplicates_count() {
    let report = merge_results(&[file(&["a"]), file(&["b"])], None);
    assert!(report.is_complete());
}

use super::*;

#[test]
fn listed_files_reads_text_and_binary_mode_lines() {
    let text = "ab12  subagent-0.1.0.tar.gz\ncd34 *subagent_0.1.0-1_amd64.deb\n";
    assert_eq!(
        listed_files(text),
        ["subagent-0.1.0.tar.gz", "subagent_0.1.0-1_amd64.deb"]
    );
}

#[test]
fn a_file_changed_after_the_sums_were_written_fails_the_check() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.deb"), "one").unwrap();
    let artifacts = vec!["a.deb".to_owned()];
    write(dir.path(), &artifacts).unwrap();
    verify(dir.path(), &artifacts).unwrap();
    std::fs::write(dir.path().join("a.deb"), "two").unwrap();
    assert!(verify(dir.path(), &artifacts).is_err());
}

#[test]
fn an_artifact_missing_from_the_sums_fails_the_check() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.deb"), "one").unwrap();
    write(dir.path(), &["a.deb".to_owned()]).unwrap();
    std::fs::write(dir.path().join("b.whl"), "two").unwrap();
    let err = verify(dir.path(), &["a.deb".to_owned(), "b.whl".to_owned()]).unwrap_err();
    assert!(err.to_string().contains("b.whl"), "{err}");
}

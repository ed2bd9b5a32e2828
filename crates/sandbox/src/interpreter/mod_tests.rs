//! Reading the interpreter probe's answer; the probe itself needs a real
//! python3 and runs wherever python_execute does.

use std::path::Path;

use super::*;

#[test]
fn the_interpreter_probe_answer_is_parsed_and_deduplicated() {
    let parsed =
        parse_probe(r#"["/opt/py/bin/python3.11", "/venv", "/opt/py", "/venv", "/opt/py"]"#)
            .unwrap();
    assert_eq!(parsed.executable, Path::new("/opt/py/bin/python3.11"));
    assert_eq!(
        parsed.prefixes,
        vec![
            Path::new("/venv").to_owned(),
            Path::new("/opt/py").to_owned()
        ]
    );
    assert!(parse_probe("not json").unwrap_err().contains("unreadable"));
    assert!(parse_probe("[]").unwrap_err().contains("sys.executable"));
}

//! The reach of the interpreter question and the check of its answer, on
//! directory trees made for the test (no process is started).

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use super::*;

/// An executable `python3` script in `dir`.
fn launcher_in(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("python3");
    std::fs::write(&file, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    file
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

#[test]
fn a_shim_below_home_reaches_the_home_entry_it_lies_in_and_not_home() {
    let top = tempfile::tempdir().unwrap();
    let home = top.path().join("home");
    launcher_in(&home.join(".pyenv/plugins/virtualenv/shims"));
    launcher_in(&home.join(".pyenv/shims"));
    let path = std::env::join_paths([
        home.join("not-there"),
        PathBuf::from("relative/bin"),
        home.join(".pyenv/plugins/virtualenv/shims"),
        home.join(".pyenv/shims"),
    ])
    .unwrap();
    let found = find(Some(&path), Some(&home)).unwrap();
    let home = canonical(&home);
    assert_eq!(
        found.program,
        home.join(".pyenv/plugins/virtualenv/shims/python3")
    );
    assert_eq!(found.reach, vec![home.join(".pyenv")]);
    assert_eq!(found.read_only, vec![home.join(".pyenv")]);
}

#[test]
fn a_directory_in_home_itself_reaches_only_that_directory() {
    let top = tempfile::tempdir().unwrap();
    let home = top.path().join("home");
    launcher_in(&home.join("bin"));
    let found = find(Some(home.join("bin").as_os_str()), Some(&home)).unwrap();
    assert_eq!(found.reach, vec![canonical(&home).join("bin")]);
}

#[test]
fn outside_home_the_parent_is_the_root_unless_it_is_world_writable() {
    let top = tempfile::tempdir().unwrap();
    let opt = top.path().join("opt");
    launcher_in(&opt.join("conda/bin"));
    let found = find(Some(opt.join("conda/bin").as_os_str()), None).unwrap();
    assert_eq!(found.reach, vec![canonical(&opt).join("conda")]);

    let open = top.path().join("open");
    launcher_in(&open.join("shims"));
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let found = find(Some(open.join("shims").as_os_str()), None).unwrap();
    assert_eq!(found.reach, vec![canonical(&open).join("shims")]);
}

#[test]
fn a_symlinked_python3_adds_the_root_of_what_it_links_to() {
    let top = tempfile::tempdir().unwrap();
    let home = top.path().join("home");
    let real = launcher_in(&top.path().join("pythons/3.12/bin"));
    std::fs::create_dir_all(home.join("venv/bin")).unwrap();
    symlink(&real, home.join("venv/bin/python3")).unwrap();
    let found = find(Some(home.join("venv/bin").as_os_str()), Some(&home)).unwrap();
    assert_eq!(
        found.reach,
        vec![
            canonical(&home).join("venv"),
            canonical(&top.path().join("pythons/3.12"))
        ]
    );
}

#[test]
fn no_python3_on_path_is_said() {
    let top = tempfile::tempdir().unwrap();
    let error = find(Some(top.path().as_os_str()), None).unwrap_err();
    assert!(error.contains("not on the supervisor's PATH"), "{error}");
    assert!(find(None, None).is_err());
}

#[test]
fn an_answer_outside_the_reach_is_refused_and_one_inside_is_kept() {
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("pyenv");
    let executable = launcher_in(&root.join("versions/3.12/bin"));
    let found = find(Some(root.join("versions/3.12/bin").as_os_str()), None).unwrap();
    let inside = Interpreter {
        executable: executable.clone(),
        prefixes: vec![root.join("versions/3.12"), PathBuf::from("/usr")],
    };
    assert_eq!(found.check(inside.clone()), Ok(inside));

    for prefix in ["/", "/etc", "/root"] {
        let answer = Interpreter {
            executable: executable.clone(),
            prefixes: vec![PathBuf::from(prefix)],
        };
        let error = found.check(answer).unwrap_err();
        assert!(
            error.contains("outside what it was given to read"),
            "{prefix}: {error}"
        );
    }
    // A symlink inside the reach that leads out is judged by where it leads.
    symlink("/etc", root.join("versions/3.12/escape")).unwrap();
    let answer = Interpreter {
        executable,
        prefixes: vec![root.join("versions/3.12/escape")],
    };
    let error = found.check(answer).unwrap_err();
    assert!(error.contains("leading to /etc"), "{error}");
}

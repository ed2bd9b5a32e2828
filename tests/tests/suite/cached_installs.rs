//! Programs the tests install from package registries on first use and keep
//! under the cache root (like the local model): a Python venv with pinned
//! requirements, an npm prefix with pinned packages. Each entry is built in
//! a temp dir beside it and renamed into place, so it is whole or absent
//! (a half-done install never looks done). When one cannot be made, the
//! test is skipped with one line, except under CI, where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use subagent_test_support::skip::cannot_run;

/// The cache root, by the rule of xtask's `cache_root`.
pub fn cache_root() -> PathBuf {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = env("SUBAGENT_CACHE_DIR") {
        PathBuf::from(dir)
    } else if let Some(dir) = env("XDG_CACHE_HOME") {
        PathBuf::from(dir).join("subagent")
    } else {
        PathBuf::from(env("HOME").expect("HOME or SUBAGENT_CACHE_DIR")).join(".cache/subagent")
    }
}

/// A venv `<cache root>/<name>` with `requirements` (pip specifiers,
/// pinned) installed; its directory.
pub fn python_venv(test: &str, name: &str, requirements: &[&str]) -> Option<PathBuf> {
    cached(test, name, "bin/python", |staged| {
        let python = staged.join("bin/python").display().to_string();
        let mut install = vec![
            "-m".to_owned(),
            "pip".into(),
            "install".into(),
            "--quiet".into(),
            "--disable-pip-version-check".into(),
        ];
        install.extend(requirements.iter().map(|r| (*r).to_owned()));
        vec![
            (
                "python3".to_owned(),
                vec!["-m".into(), "venv".into(), staged.display().to_string()],
            ),
            (python, install),
        ]
    })
}

/// An npm prefix `<cache root>/<name>` with `packages` (`name@version`)
/// installed under its `node_modules`; its directory.
pub fn npm_packages(test: &str, name: &str, packages: &[&str]) -> Option<PathBuf> {
    cached(test, name, "node_modules", |staged| {
        let mut install = vec![
            "install".to_owned(),
            "--no-audit".into(),
            "--no-fund".into(),
            "--silent".into(),
            "--prefix".into(),
            staged.display().to_string(),
        ];
        install.extend(packages.iter().map(|p| (*p).to_owned()));
        vec![("npm".to_owned(), install)]
    })
}

/// `<cache root>/<name>`, made by `steps(staged dir)` when `done` (a path
/// inside it) is absent.
fn cached(
    test: &str,
    name: &str,
    done: &str,
    steps: impl FnOnce(&Path) -> Vec<(String, Vec<String>)>,
) -> Option<PathBuf> {
    let root = cache_root();
    let entry = root.join(name);
    if entry.join(done).exists() {
        return Some(entry);
    }
    let fail = |why: String| -> Option<PathBuf> {
        cannot_run(test, &why);
        None
    };
    if let Err(e) = std::fs::create_dir_all(&root) {
        return fail(format!(
            "cannot create the cache dir {}: {e}",
            root.display()
        ));
    }
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}-"))
        .tempdir_in(&root)
        .unwrap();
    let staged = tmp.path().join("entry");
    std::fs::create_dir(&staged).unwrap();
    for (program, args) in steps(&staged) {
        match Command::new(&program).args(&args).output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                return fail(format!(
                    "{program} {args:?} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            Err(e) => return fail(format!("cannot run {program}: {e}")),
        }
    }
    // Another test may have won the race; its entry is as good as ours.
    if std::fs::rename(&staged, &entry).is_err() && !entry.join(done).exists() {
        return fail(format!("cannot move the install into {}", entry.display()));
    }
    Some(entry)
}

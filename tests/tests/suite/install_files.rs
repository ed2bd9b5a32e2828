//! `subagent completions SHELL` and `subagent man --out DIR` as a packager
//! or a user runs them: each completion script is parsed (and bash's
//! loaded) by its own shell, and there is one man page per command of the
//! `--help` tree, each rendered by `man -l` without a complaint; and
//! `subagent --version` names the commit and the worker protocol.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::docs_text::help_tree;
use super::support::*;

/// `subagent ARGS` with nothing on stdin.
fn subagent(args: &[&str]) -> Output {
    Command::new(binary("subagent"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Whether `program` runs here; under CI it must (.ci/run and `cargo xtask
/// ci` install zsh, fish and man-db), elsewhere a missing one is skipped
/// with a line saying so.
fn installed(program: &str) -> bool {
    let package = if program == "man" { "man-db" } else { program };
    program_or_skip("install_files", program, "--version", package)
}

/// The completion script of `shell`, written to `dir`.
fn script(shell: &str, dir: &Path) -> std::path::PathBuf {
    let out = subagent(&["completions", shell]);
    assert_exit(&out, 0);
    let text = String::from_utf8(out.stdout).unwrap();
    // Every subcommand is completed, the newest ones too.
    for command in ["run", "sessions", "completions", "man"] {
        assert!(
            text.contains(command),
            "{shell}: no {command} in the script"
        );
    }
    let path = dir.join(format!("subagent.{shell}"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn bash_loads_its_completion_script_and_completes_subagent() {
    let dir = tempfile::tempdir().unwrap();
    let path = script("bash", dir.path());
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#"set -e; source "$1"; complete -p subagent"#)
        .arg("bash")
        .arg(&path)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("subagent"),
        "{out:?}"
    );
}

#[test]
fn zsh_and_fish_parse_their_completion_scripts() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, check) in [("zsh", "-n"), ("fish", "--no-execute")] {
        if !installed(shell) {
            continue;
        }
        let path = script(shell, dir.path());
        let out = Command::new(shell).arg(check).arg(&path).output().unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{shell} rejects its script: {}",
            stderr(&out)
        );
    }
}

#[test]
fn elvish_and_powershell_scripts_are_made() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["elvish", "powershell"] {
        let path = script(shell, dir.path());
        assert!(std::fs::metadata(path).unwrap().len() > 1000);
    }
}

#[test]
fn an_unknown_shell_is_refused_with_the_list_of_shells() {
    let out = subagent(&["completions", "tcsh"]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("bash") && err.contains("powershell"), "{err}");
}

#[test]
fn man_writes_one_page_per_command_and_man_renders_each() {
    let dir = tempfile::tempdir().unwrap();
    // A directory not there yet: made.
    let out_dir = dir.path().join("share/man/man1");
    let out = subagent(&["man", "--out", out_dir.to_str().unwrap()]);
    assert_exit(&out, 0);
    let written: BTreeSet<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let wanted: BTreeSet<String> = help_tree(&binary("subagent"))
        .iter()
        .map(|help| format!("{}.1", help.command().replace(' ', "-")))
        .collect();
    assert_eq!(written, wanted);
    // It says what it wrote, one path a line.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        wanted.len()
    );
    if !installed("man") {
        return;
    }
    for page in &written {
        let out = Command::new("man")
            .arg("-l")
            .arg(out_dir.join(page))
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "80")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && out.stderr.is_empty() && text.contains("NAME"),
            "man -l {page}: {}\n{text}",
            stderr(&out)
        );
    }
    let run = Command::new("man")
        .arg("-l")
        .arg(out_dir.join("subagent-run.1"))
        .env("MANPAGER", "cat")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        text.contains("--agent") && text.contains("EXIT STATUS"),
        "{text}"
    );
}

#[test]
fn man_into_a_place_that_cannot_be_a_directory_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = subagent(&["man", "--out", file.to_str().unwrap()]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("pass --out a directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn version_names_the_commit_and_the_worker_protocol() {
    let out = subagent(&["--version"]);
    assert_exit(&out, 0);
    let text = String::from_utf8(out.stdout).unwrap();
    let protocol = format!(", worker protocol {})", subagent_protocol::PROTOCOL_VERSION);
    assert!(
        text.starts_with(&format!("subagent {} (commit ", env!("CARGO_PKG_VERSION")))
            && text.trim_end().ends_with(&protocol),
        "{text}"
    );
    // Built from this checkout: its HEAD (a source tree without git says
    // `unknown`, which only the format check above covers).
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|h| h.status.success());
    if let Some(head) = head {
        let head = String::from_utf8_lossy(&head.stdout);
        assert!(
            text.contains(&format!("(commit {},", head.trim())),
            "{text} vs HEAD {head}"
        );
    }
}

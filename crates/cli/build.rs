//! Records the commit the CLI is built from, for `subagent --version`, as
//! `SUBAGENT_COMMIT`: `$SUBAGENT_BUILD_COMMIT` when set (a build from a
//! source archive, which has no git), else `git rev-parse HEAD` of the
//! checkout (a clone, or cargo's checkout for `cargo install --git`), else
//! `unknown`. It must not fail the build: the commit is informative only.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-env-changed=SUBAGENT_BUILD_COMMIT");
    let commit = std::env::var("SUBAGENT_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo::rustc-env=SUBAGENT_COMMIT={}", commit.trim());
}

/// HEAD's commit (12 hex digits), and the files whose change moves it
/// registered as the build's inputs.
fn git_commit() -> Option<String> {
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    // HEAD names the branch (or the commit when detached); the branch's
    // ref is a loose file or a line of packed-refs.
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &branch])?);
    }
    watched.push(git(&["rev-parse", "--git-path", "packed-refs"])?);
    for path in watched {
        if Path::new(&path).exists() {
            println!("cargo::rerun-if-changed={path}");
        }
    }
    Some(commit)
}

/// `git ARGS` in this package's directory: its stdout's first line, if it
/// ran and succeeded. The directory is read when the script runs, not when
/// it is compiled: cargo shares a compiled build script between checkouts of
/// the workspace at other paths (its hashes leave the path out), and a
/// compiled-in path would ask another checkout's git.
fn git(args: &[&str]) -> Option<String> {
    let package = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let out = Command::new("git")
        .args(args)
        .current_dir(package)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().next()?.trim().to_owned();
    (!line.is_empty()).then_some(line)
}

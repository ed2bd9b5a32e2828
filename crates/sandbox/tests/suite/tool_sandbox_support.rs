//! What the tool sandbox tests share: a workspace, a private tmp dir and a
//! directory outside both, a real python3 under a chosen [`Isolation`], and
//! probes that print `ESCAPED` or `DENIED <error>`.

use std::path::Path;
use std::time::Duration;

use subagent_sandbox::{ChildExit, Isolation, Layers, SandboxSpec, spawn};
use tempfile::TempDir;

use super::support::{MARKER_VAR, Marker, assert_nothing_alive, finish, marker};

pub const PYTHON: &str = "/usr/bin/python3";

/// A workspace, a private tmp dir, and a directory outside both.
pub struct Dirs {
    pub workspace: TempDir,
    pub tmp: TempDir,
    pub outside: TempDir,
}

pub fn dirs() -> Dirs {
    Dirs {
        workspace: tempfile::tempdir().unwrap(),
        tmp: tempfile::tempdir().unwrap(),
        outside: tempfile::tempdir().unwrap(),
    }
}

/// Every layer, the workspace and the private tmp dir writable (as
/// python_execute asks: with the filesystem view, the tmp dir is one of the
/// view's private tmpfs).
pub fn strict(dirs: &Dirs) -> Isolation {
    let mut isolation = Isolation::strict(vec![
        dirs.workspace.path().to_owned(),
        dirs.tmp.path().to_owned(),
    ]);
    isolation.private_tmp = Some(dirs.tmp.path().to_owned());
    isolation
}

pub fn python_spec(code: &str, dirs: &Dirs, marker: &Marker, isolation: Isolation) -> SandboxSpec {
    python_spec_in(code, dirs.workspace.path(), dirs, marker, isolation)
}

/// [`python_spec`] working in `cwd` (one of the writable roots).
pub fn python_spec_in(
    code: &str,
    cwd: &Path,
    dirs: &Dirs,
    marker: &Marker,
    isolation: Isolation,
) -> SandboxSpec {
    let mut spec = SandboxSpec::new(PYTHON, cwd);
    spec.args = vec!["-B".into(), "-u".into(), "-c".into(), code.into()];
    spec.env = vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("HOME".into(), dirs.tmp.path().into()),
        ("TMPDIR".into(), dirs.tmp.path().into()),
        (MARKER_VAR.into(), marker.to_string().into()),
    ];
    spec.grace = Duration::from_millis(300);
    spec.isolation = Some(isolation);
    spec
}

/// Runs `code` under `isolation` and returns its exit, after checking that
/// nothing it started is alive.
pub async fn run(code: &str, dirs: &Dirs, isolation: Isolation) -> ChildExit {
    run_in(code, dirs.workspace.path(), dirs, isolation).await
}

/// [`run`] working in `cwd`.
pub async fn run_in(code: &str, cwd: &Path, dirs: &Dirs, isolation: Isolation) -> ChildExit {
    let marker = marker().await;
    run_spec(python_spec_in(code, cwd, dirs, &marker, isolation), &marker).await
}

/// Spawns `spec` (made with `marker`) and returns its exit, after checking
/// that nothing it started is alive.
pub async fn run_spec(spec: SandboxSpec, marker: &Marker) -> ChildExit {
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_nothing_alive(marker, &[pid]);
    exit
}

pub fn stdout(exit: &ChildExit) -> String {
    exit.stdout.lossy_text()
}

pub fn without(isolation: Isolation, change: impl FnOnce(&mut Layers)) -> Isolation {
    let mut isolation = isolation;
    change(&mut isolation.layers);
    isolation
}

/// Python that tries `attempt` and prints `ESCAPED` or `DENIED <error>`.
pub fn probe(attempt: &str) -> String {
    format!(
        "try:\n{}\n    print('ESCAPED')\nexcept Exception as e:\n    print('DENIED', type(e).__name__, e)\n",
        attempt
            .lines()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

pub fn assert_denied(exit: &ChildExit, what: &str) {
    assert_probe_said(exit, "DENIED", &format!("{what} was not denied"));
}

pub fn assert_escaped(exit: &ChildExit, what: &str) {
    assert_probe_said(
        exit,
        "ESCAPED",
        &format!("control: {what} should succeed without the layer"),
    );
}

/// Asserts that a [`probe`]'s output starts with `word`, showing its whole
/// output otherwise.
fn assert_probe_said(exit: &ChildExit, word: &str, failure: &str) {
    let out = stdout(exit);
    assert!(
        out.starts_with(word),
        "{failure}: stdout {out:?}, stderr {:?}",
        exit.stderr.lossy_text()
    );
}

/// Runs `attempt` with every layer on and asserts it is denied, hands that
/// run to `check` (before the control can undo what it checks), then runs
/// the same attempt with `layer_off` applied and asserts it gets through,
/// so the denial is the layer's doing and not an accident of the probe.
pub async fn assert_layer_stops(
    attempt: &str,
    dirs: &Dirs,
    what: &str,
    layer_off: impl FnOnce(&mut Layers),
    check: impl FnOnce(&ChildExit),
) {
    let exit = run(attempt, dirs, strict(dirs)).await;
    assert_denied(&exit, what);
    check(&exit);
    let control = run(attempt, dirs, without(strict(dirs), layer_off)).await;
    assert_escaped(&control, what);
}

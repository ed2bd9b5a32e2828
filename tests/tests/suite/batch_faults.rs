//! `subagent batch` on a faulty machine, with real faults: a sessions dir on
//! a tmpfs that fills up (then resumed with room), a read-only sessions dir,
//! a worker that does not exist, and `batch merge` into a results file a
//! running batch holds. Nothing is recorded that was not written, and a
//! fault of the machine is never recorded as a task's result.
//!
//! Mounting needs root: where the tests are not root they say so and skip,
//! except under CI (which runs as root), where that is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::batch_cmd::{BatchDir, assert_workers_gone, ids, ok_task, stderr};
use super::support::*;

/// `subagent`'s exit status for a lost session file (`exit_codes.rs`).
const EXIT_SESSION_LOST: i32 = 9;

/// True when this process may mount; otherwise says why the test is
/// skipped (and fails under CI, which runs as root).
pub(super) fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test} needs root to mount a tmpfs; CI runs as root"
    );
    eprintln!("{test}: skipped: mounting a tmpfs needs root");
    false
}

/// A tmpfs mounted by the test, unmounted when dropped.
struct Tmpfs {
    at: PathBuf,
}

impl Tmpfs {
    fn mount(at: &Path, options: &str) -> Self {
        std::fs::create_dir_all(at).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "subagent-test"])
            .arg(at)
            .status()
            .unwrap();
        assert!(status.success(), "mount -o {options} {}", at.display());
        Self { at: at.to_owned() }
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.at)
            .status()
            .unwrap();
        assert!(status.success(), "remount -o {options}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

/// Fills `dir`'s filesystem until only about `keep` bytes are free.
fn fill_leaving(dir: &Path, keep: u64) {
    let (fragment, fragments) = statvfs(dir);
    let free = fragment * fragments;
    let filler = free.saturating_sub(keep);
    std::fs::write(dir.join("filler"), vec![0u8; filler as usize]).unwrap();
}

/// (fragment size, free fragments) of the filesystem of `dir`.
fn statvfs(dir: &Path) -> (u64, u64) {
    let out = Command::new("stat")
        .args(["-f", "-c", "%S %a"])
        .arg(dir)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.split_whitespace().map(|n| n.parse::<u64>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap())
}

/// Every `ok` line's session file is whole: every line parses, the last is
/// an ending lifecycle line.
fn assert_ok_sessions_complete(results: &[Value]) {
    for r in results.iter().filter(|r| r["status"] == "ok") {
        let file = r["sessionFile"]
            .as_str()
            .unwrap_or_else(|| panic!("ok result without a session file: {r}"));
        check_session_file(Path::new(file));
    }
}

#[test]
fn a_sessions_disk_that_fills_up_stops_the_batch_and_a_resume_with_room_finishes_it() {
    if !root_or_skip("sessions_disk_fills_up") {
        return;
    }
    let dir = BatchDir::new();
    let tmpfs = Tmpfs::mount(&dir.path("sessions"), "size=256k");
    // Room for the probe and a handful of session files, not fifty.
    fill_leaving(&dir.path("sessions"), 48 * 1024);
    let tasks: Vec<String> = (0..50).map(|n| ok_task(&format!("t{n:02}"))).collect();
    dir.write_tasks(&tasks);

    let out = dir.batch("results.jsonl", &["-j", "4"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(EXIT_SESSION_LOST), "{err}");
    assert!(err.contains("batch stopped: task `"), "{err}");
    assert!(err.contains("the session file was lost"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let first = dir.results("results.jsonl");
    assert!(first.len() < 50, "the disk filled before the end: {err}");
    for r in &first {
        assert_ne!(r["errorCode"], "SUBAGENT_SESSION_LOST", "recorded: {r}");
        assert_eq!(r["status"], "ok", "{r}");
    }
    assert_ok_sessions_complete(&first);
    assert_workers_gone(&dir);

    // The same dir with room: the resume runs what is missing, once.
    tmpfs.remount("size=64m");
    let out = dir.batch("results.jsonl", &["-j", "4"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let all = dir.results("results.jsonl");
    let mut got = ids(&all);
    got.sort();
    let want: Vec<String> = (0..50).map(|n| format!("t{n:02}")).collect();
    assert_eq!(got, want, "every task exactly once");
    assert_ok_sessions_complete(&all);
    assert!(all.iter().all(|r| r["status"] == "ok"));
    assert_workers_gone(&dir);
}

#[test]
fn a_read_only_sessions_dir_or_a_missing_worker_refuses_the_batch_and_records_nothing() {
    let dir = BatchDir::new();
    dir.write_tasks(&[ok_task("a"), ok_task("b")]);

    // `BatchDir::batch` names the fixture as the worker; this one names a
    // program that is not there.
    let out = Command::new(binary("subagent"))
        .arg("batch")
        .arg(dir.path("tasks.jsonl"))
        .arg("--results")
        .arg(dir.path("results.jsonl"))
        .arg("--sessions-dir")
        .arg(dir.path("sessions"))
        .arg("--workspace")
        .arg(dir.workspace())
        .args(["--model", "m", "--base-url", "http://127.0.0.1:9/v1"])
        .arg("--worker")
        .arg(dir.path("no-such-worker"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("batch not started"), "{err}");
    assert!(err.contains("no-such-worker cannot be started"), "{err}");
    assert!(!dir.path("results.jsonl").exists(), "{err}");
    assert_workers_gone(&dir);

    if !root_or_skip("read_only_sessions_dir") {
        return;
    }
    let _tmpfs = Tmpfs::mount(&dir.path("sessions"), "ro,size=64k");
    let out = dir.batch("results.jsonl", &[]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(EXIT_SESSION_LOST), "{err}");
    assert!(err.contains("batch not started"), "{err}");
    assert!(err.contains("cannot be written"), "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
    assert!(
        !dir.path("results.jsonl").exists(),
        "nothing recorded: {err}"
    );
    assert!(dir.session_files().is_empty());
    assert_workers_gone(&dir);
}

/// A child killed when dropped, so a failed assertion leaves no batch
/// running.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn merge_into_a_results_file_a_batch_is_writing_is_refused_and_dead_merges_temp_files_go() {
    let dir = BatchDir::new();
    std::fs::write(
        dir.path("shard.jsonl"),
        "{\"id\":\"x\",\"status\":\"ok\"}\n",
    )
    .unwrap();
    // A batch that holds results.jsonl while its one task sleeps.
    dir.write_tasks(&[r#"{"id":"slow","task":"fixture:sleep"}"#.to_owned()]);
    let mut batch = KillOnDrop(
        dir.batch("results.jsonl", &[])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("the batch's task to start", || {
        !dir.session_files().is_empty()
    });
    let before = std::fs::read(dir.path("results.jsonl")).unwrap();

    let merge = |out: &str| {
        Command::new(binary("subagent"))
            .args(["batch", "merge"])
            .arg(dir.path("shard.jsonl"))
            .arg("-o")
            .arg(dir.path(out))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = merge("results.jsonl");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("is being written by pid {}", batch.0.id())),
        "{err}"
    );
    assert!(err.contains("subagent batch"), "{err}");
    assert_eq!(std::fs::read(dir.path("results.jsonl")).unwrap(), before);

    // SIGINT ends the batch (130); then the file is free.
    // SAFETY: kill sends a signal to the child we started.
    unsafe { libc::kill(batch.0.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(batch.0.wait().unwrap().code(), Some(130));

    // A merge killed before its rename left its temporary file.
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let leftover = dir.path(&format!(".results.jsonl.merge-{dead}.tmp"));
    std::fs::write(&leftover, vec![b'x'; 64 * 1024]).unwrap();
    let out = merge("results.jsonl");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!leftover.exists(), "{err}");
    assert!(err.contains("left by a merge that did not finish"), "{err}");
    assert_eq!(ids(&dir.results("results.jsonl")), vec!["x".to_owned()]);
    assert_workers_gone(&dir);
}

#[test]
fn every_bad_line_and_a_negative_flag_value_are_named_before_anything_runs() {
    let dir = BatchDir::new();
    let mut text = [
        ok_task("a"),
        r#"{"id":"b","task":"x","agent":"no-such-agent"}"#.to_owned(),
        r#"{"id":"c","task":"x","provider":"no-such-provider"}"#.to_owned(),
    ]
    .join("\n")
    .into_bytes();
    text.extend(b"\n{\"id\":\"d\",\"task\":\"caf\xff\"}\n");
    text.extend(br#"{"id":"e","task":"x","agent":"no-such-agent"}"#);
    text.push(b'\n');
    std::fs::write(dir.path("tasks.jsonl"), text).unwrap();
    let out = dir.batch("results.jsonl", &[]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for needle in [
        "line 2: task `b`: Unknown agent: no-such-agent",
        "line 3: task `c`: ",
        "no-such-provider",
        "line 4: not UTF-8",
        "line 5: task `e`: Unknown agent: no-such-agent",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert!(!dir.path("results.jsonl").exists(), "{err}");
    assert!(dir.session_files().is_empty());

    dir.write_tasks(&[ok_task("a")]);
    for (flags, needle) in [
        (&["--timeout", "-5"][..], "'--timeout <DURATION>'"),
        (&["--memory", "-1G"][..], "'--memory <SIZE>'"),
        (&["-j", "-2"][..], "'--jobs <N>'"),
    ] {
        let out = dir.batch("results.jsonl", flags).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(needle), "{flags:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{flags:?}: {err}");
    }
    assert!(dir.session_files().is_empty());
    assert_workers_gone(&dir);
}

/// `cmd` with its open-files limit set to `soft`/`hard` before it starts.
fn with_open_files(cmd: &mut Command, soft: u64, hard: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// 100 subagents at once need about 464 fds in the supervisor: under a
/// hard limit of 200 the batch is refused before anything is recorded,
/// naming the limit and how many fit; with the hard limit at 4,096 the
/// soft 200 is raised at start and the batch runs.
#[test]
fn a_batch_that_cannot_fit_in_the_open_files_limit_is_refused_and_a_low_soft_limit_is_raised() {
    let dir = BatchDir::new();
    let tasks: Vec<String> = (0..100).map(|i| ok_task(&format!("t{i}"))).collect();
    dir.write_tasks(&tasks);
    let jobs = ["-j", "100", "--max-concurrent", "100"];

    let mut refused = dir.batch("results.jsonl", &jobs);
    with_open_files(&mut refused, 200, 200);
    let out = refused.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for part in [
        "batch not started: -j 100: 100 subagents at a time need about 464 open files",
        "may open 200 (hard limit 200)",
        "Run at most 34 at a time",
    ] {
        assert!(err.contains(part), "{part:?} not in {err}");
    }
    assert!(!dir.path("results.jsonl").exists(), "{err}");
    assert!(dir.session_files().is_empty());
    assert_workers_gone(&dir);

    let mut raised = dir.batch("results.jsonl", &jobs);
    with_open_files(&mut raised, 200, 4_096);
    let out = raised.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(dir.results("results.jsonl").len(), 100, "{err}");
    assert_workers_gone(&dir);

    // doctor says what the raise made of the limit.
    let mut doctor = Command::new(binary("subagent"));
    doctor.arg("doctor").stdin(Stdio::null());
    with_open_files(&mut doctor, 200, 4_096);
    let out = doctor.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "open files: 4096 (hard limit 4096, raised from 200): room for 1258 live subagents"
        ),
        "{text}"
    );
}

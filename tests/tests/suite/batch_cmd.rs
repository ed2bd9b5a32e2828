//! `subagent batch` as a user runs it, with the fixture worker: a whole
//! batch, SIGKILL mid-run and resume (every id once, no finished task run
//! twice, nothing left running), SIGINT (exit 130, aborted children,
//! results flushed), shards as separate processes joined by `batch merge`,
//! and the refusals of bad task files and flags.
//!
//! Success tasks carry unique texts (`fixture:ok-<id>`, which the fixture
//! answers like `fixture:success`), so each task's runs can be counted by
//! the `task` in the session files' headers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

use super::support::*;

/// A batch's directory: tasks, results, sessions and the workspace.
pub(super) struct BatchDir {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl BatchDir {
    pub(super) fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_owned();
        std::fs::create_dir(root.join("ws")).unwrap();
        Self { _tmp: tmp, root }
    }
    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
    pub(super) fn workspace(&self) -> PathBuf {
        self.path("ws")
    }
    pub(super) fn write_tasks(&self, lines: &[String]) -> PathBuf {
        let path = self.path("tasks.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    }
    /// `subagent batch tasks.jsonl --results <results>` with the fixture.
    pub(super) fn batch(&self, results: &str, extra: &[&str]) -> Command {
        let mut c = self.batch_with(results, "fixture-model", "http://127.0.0.1:9/v1");
        c.arg("--worker").arg(FIXTURE).args(extra);
        c
    }
    /// The same with the real worker against an OpenAI-chat server: no
    /// tools, no API key.
    fn real_batch(&self, model: &str, base_url: &str, extra: &[&str]) -> Command {
        let _ = binary("subagent-worker");
        let mut c = self.batch_with("results.jsonl", model, base_url);
        c.args(["--tools", "none", "--provider", "openai-chat"])
            .args(extra)
            .env_remove("OPENAI_API_KEY");
        c
    }
    fn batch_with(&self, results: &str, model: &str, base_url: &str) -> Command {
        let mut c = Command::new(binary("subagent"));
        c.arg("batch")
            .arg(self.path("tasks.jsonl"))
            .arg("--results")
            .arg(self.path(results))
            .arg("--sessions-dir")
            .arg(self.path("sessions"))
            .arg("--workspace")
            .arg(self.workspace())
            .args(["--model", model, "--base-url", base_url])
            .stdin(Stdio::null());
        c
    }
    /// The complete lines of a results file.
    pub(super) fn results(&self, name: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.path(name)).unwrap_or_default();
        let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
        complete
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
    pub(super) fn session_files(&self) -> Vec<PathBuf> {
        jsonl_files(&self.path("sessions"))
    }
    /// How many session files each task text has.
    fn runs_per_task(&self) -> BTreeMap<String, usize> {
        let mut runs = BTreeMap::new();
        for file in self.session_files() {
            // A file the kill caught before its header was written counts too.
            let task = header(&file).map_or_else(
                || "<no header>".to_owned(),
                |h| h["task"].as_str().unwrap().to_owned(),
            );
            *runs.entry(task).or_insert(0) += 1;
        }
        runs
    }
}

/// A session file's first line, when it has one.
fn header(file: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .next()
        .map(|l| serde_json::from_str(l).unwrap())
}

pub(super) fn ok_task(id: &str) -> String {
    format!(r#"{{"id":"{id}","task":"fixture:ok-{id}"}}"#)
}

pub(super) fn ids(results: &[Value]) -> Vec<String> {
    results
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

pub(super) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every worker named by a session file is gone (reaped, not a zombie).
pub(super) fn assert_workers_gone(dir: &BatchDir) {
    for file in dir.session_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        wait_until("the worker to leave the process table", || {
            unreaped_leader(&lines).is_none()
        });
    }
    assert_nothing_runs_in(&dir.workspace());
}

#[test]
fn batch_of_twenty_runs_four_at_a_time_with_complete_results_and_a_summary() {
    let dir = BatchDir::new();
    let mut tasks: Vec<String> = (0..19).map(|n| ok_task(&format!("t{n:02}"))).collect();
    tasks.push(r#"{"id":"bad","task":"fixture:fail"}"#.to_owned());
    dir.write_tasks(&tasks);
    let out = dir.batch("results.jsonl", &["-j", "4"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "one task failed: {err}");
    assert!(out.stdout.is_empty(), "batch writes nothing to stdout");
    assert!(
        err.contains("batch: 19 ok, 1 failed, 0 timed out (20 run, 0 already in results)"),
        "{err}"
    );
    assert!(err.contains("tokens: 200 in, 100 out"), "{err}");
    assert!(err.contains("slowest: "), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "no progress bar when stderr is not a terminal: {err}"
    );

    let results = dir.results("results.jsonl");
    let mut got = ids(&results);
    got.sort();
    let mut want: Vec<String> = (0..19).map(|n| format!("t{n:02}")).collect();
    want.push("bad".to_owned());
    want.sort();
    assert_eq!(got, want);
    for r in &results {
        let session = Path::new(r["sessionFile"].as_str().unwrap());
        assert_reaped(&check_session_file(session));
        assert!(r["durationMs"].is_u64(), "{r}");
        assert_eq!(r["usage"]["input"], 10, "{r}");
        if r["id"] == "bad" {
            assert_eq!(
                (r["status"].as_str(), r["cliExit"].as_i64()),
                (Some("failed"), Some(1))
            );
            assert_eq!(r["errorCode"], "SUBAGENT_FAILED");
        } else {
            assert_eq!(
                (r["status"].as_str(), r["cliExit"].as_i64()),
                (Some("ok"), Some(0))
            );
            let id = r["id"].as_str().unwrap();
            assert_eq!(r["output"], format!("fixture done: fixture:ok-{id}"));
        }
    }
    assert_eq!(dir.session_files().len(), 20);
    assert_nothing_runs_in(&dir.workspace());
}

#[test]
fn batch_killed_with_sigkill_resumes_without_losing_or_repeating_a_task() {
    let dir = BatchDir::new();
    // Three sleepers hold three of the four slots while the successes pass
    // through the fourth; in the resumed run they time out (3 s) and end.
    let mut tasks: Vec<String> = (0..3)
        .map(|n| {
            format!(r#"{{"id":"sleep{n}","task":"fixture:sleep","limits":{{"timeout":"3s"}}}}"#)
        })
        .collect();
    tasks.extend((0..12).map(|n| ok_task(&format!("t{n:02}"))));
    dir.write_tasks(&tasks);

    let mut first: Child = dir
        .batch("results.jsonl", &["-j", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("five results lines", || {
        dir.results("results.jsonl").len() >= 5
    });
    first.kill().unwrap();
    first.wait().unwrap();
    // The workers die with their supervisor (parent-death signal).
    assert_workers_gone(&dir);

    let finished = ids(&dir.results("results.jsonl"));
    let before = dir.runs_per_task();
    let sessions_before = dir.session_files().len();
    assert!(
        finished.len() < tasks.len(),
        "the kill came after every task had finished: {finished:?}"
    );

    let out = dir.batch("results.jsonl", &["-j", "4"]).output().unwrap();
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{} already in results", finished.len())),
        "{err}"
    );
    let results = dir.results("results.jsonl");
    let all = ids(&results);
    let unique: BTreeSet<&String> = all.iter().collect();
    assert_eq!(all.len(), tasks.len(), "every id exactly once: {all:?}");
    assert_eq!(unique.len(), tasks.len(), "every id exactly once: {all:?}");
    assert_eq!(
        all[..finished.len()],
        finished[..],
        "finished lines kept as they were"
    );
    // Only the unfinished tasks ran again: one new session file each.
    assert_eq!(
        dir.session_files().len(),
        sessions_before + tasks.len() - finished.len()
    );
    let after = dir.runs_per_task();
    for id in finished.iter().filter(|id| id.starts_with('t')) {
        let task = format!("fixture:ok-{id}");
        assert_eq!(
            after[&task], 1,
            "{id} finished before the kill and ran again"
        );
        assert_eq!(before[&task], 1);
    }
    for r in results
        .iter()
        .filter(|r| r["id"].as_str().unwrap().starts_with("sleep"))
    {
        assert_eq!(r["status"], "timeout", "{r}");
        assert_eq!(r["cliExit"], 3, "{r}");
    }
    assert_eq!(out.status.code(), Some(1), "the sleepers timed out: {err}");
    assert_workers_gone(&dir);
}

#[test]
fn sigint_cancels_running_tasks_flushes_results_and_exits_130() {
    signal_cancels_running_tasks_and_keeps_finished_results(libc::SIGINT);
}

#[test]
fn sigterm_cancels_running_tasks_flushes_results_and_exits_130() {
    signal_cancels_running_tasks_and_keeps_finished_results(libc::SIGTERM);
}

fn signal_cancels_running_tasks_and_keeps_finished_results(signal: libc::c_int) {
    let dir = BatchDir::new();
    let tasks = vec![
        r#"{"id":"s1","task":"fixture:sleep","limits":{"timeout":"60s"}}"#.to_owned(),
        r#"{"id":"s2","task":"fixture:sleep","limits":{"timeout":"60s"}}"#.to_owned(),
        ok_task("a"),
        ok_task("b"),
    ];
    dir.write_tasks(&tasks);
    let child = dir
        .batch("results.jsonl", &["-j", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleepers_started = || {
        dir.session_files()
            .iter()
            .filter(|f| {
                let text = std::fs::read_to_string(f).unwrap_or_default();
                text.contains("\"task\":\"fixture:sleep\"") && text.contains("subagent:start")
            })
            .count()
            == 2
    };
    wait_until(
        "both sleepers to start and both successes to finish",
        || sleepers_started() && dir.results("results.jsonl").len() == 2,
    );
    // A second batch on the same results file would run the same tasks.
    let second = dir.batch("results.jsonl", &[]).output().unwrap();
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(
        stderr(&second).contains(&format!("is being written by pid {}", child.id())),
        "{}",
        stderr(&second)
    );
    // SAFETY: kill takes no pointers; the pid is our own unreaped child.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("2 not run: cancelled"), "{err}");
    let mut done = ids(&dir.results("results.jsonl"));
    done.sort();
    assert_eq!(
        done,
        vec!["a", "b"],
        "cancelled tasks are not recorded, so they run again"
    );
    let mut aborted = 0;
    for file in dir.session_files() {
        let lines = check_session_file(&file);
        assert_reaped(&lines);
        if header(&file).unwrap()["task"] == "fixture:sleep" {
            assert_eq!(lines.last().unwrap()["eventType"], "subagent:aborted");
            aborted += 1;
        }
    }
    assert_eq!(aborted, 2);
    assert_nothing_runs_in(&dir.workspace());
}

#[test]
fn three_shards_merged_equal_a_single_run_and_merge_reports_gaps() {
    let dir = BatchDir::new();
    let tasks: Vec<String> = (0..12).map(|n| ok_task(&format!("id-{n}"))).collect();
    let tasks_file = dir.write_tasks(&tasks);

    // -j above --max-concurrent queues instead of being refused.
    let single = dir
        .batch("single.jsonl", &["-j", "8", "--max-concurrent", "2"])
        .output()
        .unwrap();
    assert_eq!(single.status.code(), Some(0), "{}", stderr(&single));
    let mut single_ids = ids(&dir.results("single.jsonl"));
    single_ids.sort();
    assert_eq!(single_ids.len(), 12);

    // Shard 1 by the Kubernetes variable, the others by i/n.
    let shards: Vec<Child> = (0..3)
        .map(|i| {
            let results = format!("shard-{i}.jsonl");
            let mut c = if i == 1 {
                let mut c = dir.batch(&results, &["--shard", "auto", "--shards", "3"]);
                c.env("JOB_COMPLETION_INDEX", "1");
                c
            } else {
                dir.batch(&results, &["--shard", &format!("{i}/3")])
            };
            c.stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut sizes = Vec::new();
    for (i, shard) in shards.into_iter().enumerate() {
        let out = shard.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "shard {i}");
        sizes.push(dir.results(&format!("shard-{i}.jsonl")).len());
    }
    assert_eq!(sizes.iter().sum::<usize>(), 12, "{sizes:?}");

    let merge = |inputs: &[&str], output: &str| {
        let mut c = Command::new(binary("subagent"));
        c.args(["batch", "merge"]);
        for input in inputs {
            c.arg(dir.path(input));
        }
        c.arg("--tasks")
            .arg(&tasks_file)
            .arg("-o")
            .arg(dir.path(output));
        c.output().unwrap()
    };
    let out = merge(
        &["shard-0.jsonl", "shard-1.jsonl", "shard-2.jsonl"],
        "all.jsonl",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut merged = ids(&dir.results("all.jsonl"));
    merged.sort();
    assert_eq!(merged, single_ids);

    // Shard 0 twice and shard 2 left out: duplicates and missing ids.
    let out = merge(
        &["shard-0.jsonl", "shard-0.jsonl", "shard-1.jsonl"],
        "gappy.jsonl",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let shard2 = ids(&dir.results("shard-2.jsonl"));
    let shard0 = ids(&dir.results("shard-0.jsonl"));
    assert!(
        err.contains(&format!("missing {} id(s): ", shard2.len())),
        "{err}"
    );
    assert!(
        err.contains(&format!("duplicate {} id(s): ", shard0.len())),
        "{err}"
    );
    assert!(shard2.iter().all(|id| err.contains(id.as_str())), "{err}");
    assert_eq!(dir.results("gappy.jsonl").len(), shard0.len() + sizes[1]);
    assert_nothing_runs_in(&dir.workspace());
}

#[test]
fn bad_task_lines_and_bad_flags_are_refused_before_anything_runs() {
    let dir = BatchDir::new();
    dir.write_tasks(&[
        ok_task("a"),
        r#"{"id":"b","task":"#.to_owned(),
        r#"{"id":"c"}"#.to_owned(),
        ok_task("a"),
        r#"{"id":"d","task":"x","limits":{"timeout":"soon"}}"#.to_owned(),
    ]);
    let out = dir.batch("results.jsonl", &[]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("4 bad line(s); nothing was run"), "{err}");
    for needle in [
        "line 2: ",
        "line 3: missing field `task`",
        "line 4: duplicate id `a` (first on line 1)",
        "line 5: task `d`: limits.timeout: `soon` is not a duration",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert!(
        !dir.path("results.jsonl").exists(),
        "a refused batch writes no results file"
    );
    assert!(dir.session_files().is_empty());

    dir.write_tasks(&[ok_task("a")]);
    for (flags, needle) in [
        (&["--shard", "3/3"][..], "--shard `3/3`"),
        (
            &["--shard", "auto", "--shards", "2"][..],
            "JOB_COMPLETION_INDEX",
        ),
        (
            &["--shards", "2"][..],
            "--shards only goes with --shard auto",
        ),
        (&["-j", "0"][..], "-j"),
    ] {
        let out = dir
            .batch("results.jsonl", flags)
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(needle), "{flags:?}: {err}");
    }
    std::fs::write(dir.path("broken.jsonl"), "{\"id\":\"a\"}\nnot json\n").unwrap();
    let out = dir.batch("broken.jsonl", &[]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("broken.jsonl, line 2: not a result line"),
        "{err}"
    );
    assert!(dir.session_files().is_empty());
}

#[test]
fn a_batch_against_a_real_provider_records_text_and_structured_output() {
    use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
    let capital = serde_json::json!({"capital": "Paris"});
    // -j 1: the scripted replies go to the tasks in file order.
    let model = ScriptedModel::start(vec![
        text_turn("Two, three and five."),
        tool_call_turn("call_1", "report_back", &capital),
    ]);
    let dir = BatchDir::new();
    dir.write_tasks(&[
        r#"{"id":"primes","task":"Name three primes"}"#.to_owned(),
        r#"{"id":"capital","task":"Capital of France?","outputSchema":{"type":"object","properties":{"capital":{"type":"string"}},"required":["capital"]}}"#.to_owned(),
    ]);
    let out = dir
        .real_batch("scripted", &model.base_url(), &["-j", "1"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("batch: 2 ok, 0 failed, 0 timed out"), "{err}");
    assert!(err.contains("tokens: 40 in, 10 out"), "{err}");
    let results = dir.results("results.jsonl");
    assert_eq!(ids(&results), vec!["primes", "capital"]);
    assert_eq!(results[0]["output"], "Two, three and five.");
    assert_eq!(results[0]["model"], "scripted");
    assert_eq!(results[1]["structuredOutput"], capital);
    for r in &results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_reaped(&check_session_file(Path::new(
            r["sessionFile"].as_str().unwrap(),
        )));
    }
    // The line's outputSchema reached the provider as the report_back tool;
    // the line without one offered no tools at all.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        offered_tools(&requests[0]).is_empty(),
        "{:?}",
        offered_tools(&requests[0])
    );
    assert_eq!(offered_tools(&requests[1]), vec!["report_back"]);
    assert_nothing_runs_in(&dir.workspace());
}

#[test]
fn on_a_terminal_a_progress_bar_counts_tasks_and_is_cleared_before_the_summary() {
    // `script` (util-linux) runs the batch with stderr on a pseudo-terminal
    // and copies everything written to it to stdout.
    let found = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "script is missing; install util-linux"
        );
        eprintln!("progress bar test skipped: `script` is not installed");
        return;
    }
    let dir = BatchDir::new();
    // The sleeper keeps the bar up past its first tick, then times out.
    let mut tasks: Vec<String> = (0..3).map(|n| ok_task(&format!("t{n}"))).collect();
    tasks.push(r#"{"id":"slow","task":"fixture:sleep","limits":{"timeout":"1s"}}"#.to_owned());
    dir.write_tasks(&tasks);
    let batch = dir.batch("results.jsonl", &["-j", "2"]);
    let line: Vec<String> = std::iter::once(batch.get_program())
        .chain(batch.get_args())
        .map(|a| format!("'{}'", a.to_str().unwrap()))
        .collect();
    let out = Command::new("script")
        .args(["-qfec", &line.join(" "), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the sleeper timed out: {screen}"
    );
    let bar = "3/4 · ok 3 · failed 0 · running 1 · 45 tok";
    let summary = "batch: 3 ok, 0 failed, 1 timed out";
    let (Some(bar_at), Some(summary_at)) = (screen.rfind(bar), screen.find(summary)) else {
        panic!("no bar or no summary on the terminal: {screen}");
    };
    assert!(bar_at < summary_at, "{screen}");
    // The bar's line is erased (ESC [2K) between its last frame and the summary.
    assert!(screen[bar_at..summary_at].contains("\u{1b}[2K"), "{screen}");
    assert_eq!(dir.results("results.jsonl").len(), 4);
    assert_workers_gone(&dir);
}

#[test]
fn a_batch_against_the_local_llama_server_answers_every_task() {
    let Some(server) = super::llama::LlamaServer::start_or_skip("batch_llama") else {
        return;
    };
    let dir = BatchDir::new();
    dir.write_tasks(&[
        r#"{"id":"hello","task":"Say hello in five words."}"#.to_owned(),
        r#"{"id":"colour","task":"Name one colour."}"#.to_owned(),
        r#"{"id":"prime","task":"Name one prime number.","limits":{"max_turns":2}}"#.to_owned(),
    ]);
    let out = dir
        .real_batch(
            "smollm2",
            &server.base_url(),
            &[
                "-j",
                "2",
                "--temperature",
                "0",
                "--max-tokens",
                "48",
                "--timeout",
                "120s",
            ],
        )
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("batch: 3 ok, 0 failed, 0 timed out"), "{err}");
    let results = dir.results("results.jsonl");
    let mut got = ids(&results);
    got.sort();
    assert_eq!(got, vec!["colour", "hello", "prime"]);
    for r in &results {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(!r["output"].as_str().unwrap_or("").trim().is_empty(), "{r}");
        assert!(r["usage"]["output"].as_u64().unwrap() > 0, "{r}");
        assert_reaped(&check_session_file(Path::new(
            r["sessionFile"].as_str().unwrap(),
        )));
    }
    assert_nothing_runs_in(&dir.workspace());
}

//! The sbatch script of docs/scale-out.md on a real single-node Slurm: the
//! script and the merge command are taken from the doc as written (so the
//! doc and this test cannot drift), submitted as a 4-task array against a
//! gated model, one array task requeued with `scontrol requeue` while its
//! batch has a task in flight, the shards merged, and then: every id
//! exactly once, the requeued shard ran only what it had not finished,
//! and nothing left running (no daemon, no subagent process, no cgroup).
//!
//! Needs root and Debian's `slurm-wlm` and `munge` (`.ci/run` installs
//! them); without them it says why and passes, except under CI
//! (`CI=true`), where it fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use subagent_supervisor::batch::Shard;

use super::gated_model::{GatedModel, answer_for};
use super::slurm_cluster::{Cluster, WAIT, unavailable};
use super::stale_cgroups::cgroups_of;
use super::support::*;

/// The array's size in the doc's script (`--array=0-3`).
const SHARDS: usize = 4;
/// Tasks per shard: the requeued shard has finished all but one when it is
/// requeued.
const TASKS_PER_SHARD: usize = 3;
/// The array task that is requeued.
const REQUEUED: usize = 2;

#[test]
fn the_documented_sbatch_array_survives_a_requeue_and_merges_every_id_once() {
    if let Some(reason) = unavailable() {
        // `CI` as xtask reads it: set, and neither empty, `false` nor `0`.
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(!ci, "the Slurm test must run under CI, but: {reason}");
        eprintln!("slurm array test: skipped: {reason}");
        return;
    }
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/scale-out.md"))
            .unwrap();
    let script = sh_block_after(&doc, "## Slurm: a job array");
    let merge = sh_block_after(&doc, "## Joining the shards");
    assert!(
        script.contains("#SBATCH --array=0-3") && script.contains("--shard auto"),
        "the doc's script changed; adjust this test: {script}"
    );

    let cluster = Cluster::start();
    let job_dir = cluster.root().join("job");
    let home = cluster.root().join("home");
    // `mkdir -p logs`, as the doc says: Slurm does not make it.
    std::fs::create_dir_all(job_dir.join("logs")).unwrap();
    std::fs::create_dir(&home).unwrap();
    let ids = ids_per_shard();
    let hold = ids[REQUEUED][0].clone();
    let all: Vec<&String> = ids.iter().flatten().collect();
    let tasks: Vec<String> = all
        .iter()
        .map(|id| format!(r#"{{"id":"{id}","task":"Answer for task-id={id}."}}"#))
        .collect();
    std::fs::write(job_dir.join("tasks.jsonl"), tasks.join("\n") + "\n").unwrap();
    std::fs::write(job_dir.join("batch.sbatch"), &script).unwrap();

    let model = GatedModel::start();
    let subagent = binary("subagent");
    let _ = binary("subagent-worker");
    let path = format!(
        "{}:{}",
        subagent.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The job gets the submitter's environment (sbatch's default): the
    // binaries on PATH, the model's URL and key, a home of its own.
    let job_env = |c: &mut std::process::Command| {
        c.current_dir(&job_dir)
            .env("PATH", &path)
            .env("HOME", &home)
            .env("SUBAGENT_HOME", home.join("subagent"))
            .env("OPENAI_BASE_URL", model.base_url())
            .env("OPENAI_API_KEY", TEST_API_KEY)
            .env_remove("SUBAGENT_WORKER")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME");
    };
    let mut sbatch = cluster.command("sbatch");
    job_env(sbatch.args(["--parsable", "batch.sbatch"]));
    let out = sbatch.output().unwrap();
    assert!(out.status.success(), "sbatch: {}", stderr_of(&out));
    let job = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_owned();

    // Every shard's batch is up, each with its first turns at the closed gate.
    cluster.wait_until("all four array tasks' batches", |c| {
        let up = batches(&subagent, &job_dir).len() == SHARDS;
        // An array task that ended before its batch was seen (its launch
        // failed) ends the wait; a failed squeue call does not.
        let queued = c.output("squeue", &["-h", "-r", "-j", &job, "-o", "%T"]);
        let all_queued = queued.is_none_or(|s| {
            s.lines().count() == SHARDS && s.lines().all(|l| l == "PENDING" || l == "RUNNING")
        });
        assert!(up || all_queued, "an array task ended early\n{}", c.logs());
        up
    });
    let first = batches(&subagent, &job_dir);
    // Each batch's pid and array task, for the cgroup check at the end.
    let mut supervisors = first.clone();
    let requeued_pid = shard_pid(&first, REQUEUED);
    // All but one task of the requeued shard finish; that one stays in flight.
    model.open_except(&[&hold]);
    let results_2 = job_dir.join(format!("results/results-{REQUEUED}.jsonl"));
    cluster.wait_until("the shard to finish all but its held task", |_| {
        results_lines(&results_2).len() == TASKS_PER_SHARD - 1
    });
    assert!(model.wait_for_requests(&hold, 1, WAIT));

    let requeue = cluster
        .output("scontrol", &["requeue", &format!("{job}_{REQUEUED}")])
        .is_some();
    assert!(requeue, "scontrol requeue failed\n{}", cluster.logs());
    // Slurm stops the shard (SIGTERM) and starts it again; its held task is
    // asked once more, by a new batch process.
    let asked_again = || model.requests().get(&hold).copied().unwrap_or(0) >= 2;
    cluster.wait_until("the requeued task to run again, or the array to end", |c| {
        asked_again()
            || c.output("squeue", &["-h", "-j", &job])
                .is_some_and(|s| s.trim().is_empty())
    });
    assert!(
        asked_again(),
        "the requeued shard did not run its interrupted task again; its results file:\n{}\nits log:\n{}",
        std::fs::read_to_string(&results_2).unwrap_or_default(),
        std::fs::read_to_string(job_dir.join(format!("logs/subagent-batch-{job}_{REQUEUED}.out")))
            .unwrap_or_default()
    );
    let again = batches(&subagent, &job_dir);
    let restarted = shard_pid(&again, REQUEUED);
    assert_ne!(
        restarted, requeued_pid,
        "a new batch runs the requeued shard"
    );
    assert!(!Path::new(&format!("/proc/{requeued_pid}")).exists());
    supervisors.extend(again.clone());
    model.release(&hold);

    cluster.wait_until("the array to finish", |c| {
        c.output("squeue", &["-h", "-j", &job])
            .is_some_and(|s| s.trim().is_empty())
    });
    let states = cluster
        .output("scontrol", &["show", "job", &job, "-o"])
        .unwrap();
    assert_array_completed(&states);
    let log =
        std::fs::read_to_string(job_dir.join(format!("logs/subagent-batch-{job}_{REQUEUED}.out")))
            .unwrap();
    assert!(
        log.contains(&format!(
            "(1 run, {} already in results)",
            TASKS_PER_SHARD - 1
        )),
        "the requeued shard resumed from its results file: {log}"
    );

    // The doc's merge, as written.
    let mut sh = std::process::Command::new("sh");
    job_env(sh.args(["-c", &merge]).stdin(std::process::Stdio::null()));
    let out = sh.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "merge: {}", stderr_of(&out));
    let merged = results_lines(&job_dir.join("results.jsonl"));
    let mut merged_ids: Vec<&str> = merged.iter().map(|r| r["id"].as_str().unwrap()).collect();
    merged_ids.sort_unstable();
    let mut want: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
    want.sort_unstable();
    assert_eq!(merged_ids, want, "every id exactly once");
    for r in &merged {
        let id = r["id"].as_str().unwrap();
        assert_eq!(
            (r["status"].as_str(), r["output"].as_str()),
            (Some("ok"), Some(answer_for(id).as_str())),
            "{r}"
        );
    }
    // Only the requeued task's turn was asked twice: no finished task ran again.
    let asked = model.requests();
    let want_asked: BTreeMap<String, usize> = all
        .iter()
        .map(|id| ((*id).clone(), if **id == hold { 2 } else { 1 }))
        .collect();
    assert_eq!(asked, want_asked);

    // Nothing of the job is left: no process in its dir, no worker in the
    // process table, no cgroup of any batch or worker.
    cluster.wait_until("the job's processes to end", |_| {
        processes_in(&job_dir).is_empty()
    });
    let sessions = jsonl_files(&home.join("subagent/sessions"));
    assert_eq!(sessions.len(), all.len() + 1, "one session per turn asked");
    let mut workers = BTreeSet::new();
    for file in &sessions {
        let lines = check_session_file(file);
        assert_reaped(&lines);
        workers.extend(
            lines
                .iter()
                .filter_map(|l| l["pid"].as_u64())
                .map(|p| p as u32),
        );
    }
    let pids: Vec<u32> = supervisors.keys().chain(&workers).copied().collect();
    let stale = cgroups_of(&pids);
    assert!(
        stale.is_empty(),
        "cgroups left behind: {stale:#?}\nbatches (pid: array task): {supervisors:?}\nworkers: {workers:?}"
    );
    assert_no_secret(&[&job_dir, &home]);

    let mut cluster = cluster;
    let daemons = cluster.stop();
    cluster.wait_until("nothing of the cluster to run", |c| {
        processes_in(c.root()).is_empty()
    });
    for pid in daemons {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "daemon {pid} still here"
        );
    }
}

/// The body of the first ```sh block after `heading` in `doc`.
fn sh_block_after(doc: &str, heading: &str) -> String {
    let after = &doc[doc
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?} in the doc"))..];
    let start = after.find("```sh\n").unwrap() + "```sh\n".len();
    let len = after[start..].find("```").unwrap();
    after[start..start + len].to_owned()
}

/// Ids `t00`, `t01`, ... in file order, the first [`TASKS_PER_SHARD`] each
/// shard owns (by the same hash the batch uses), per shard.
fn ids_per_shard() -> Vec<Vec<String>> {
    let shards: Vec<Shard> = (0..SHARDS)
        .map(|i| Shard::parse(&format!("{i}/{SHARDS}")).unwrap())
        .collect();
    let mut ids = vec![Vec::new(); SHARDS];
    for n in 0.. {
        let id = format!("t{n:02}");
        let owner = shards.iter().position(|s| s.owns(&id)).unwrap();
        if ids[owner].len() < TASKS_PER_SHARD {
            ids[owner].push(id);
        }
        if ids.iter().all(|s| s.len() == TASKS_PER_SHARD) {
            break;
        }
    }
    ids
}

/// The live `subagent` processes running in `dir` (the array tasks'
/// batches: the script `exec`s it), with their `SLURM_ARRAY_TASK_ID`.
fn batches(subagent: &Path, dir: &Path) -> BTreeMap<u32, String> {
    let (subagent, dir) = (
        subagent.canonicalize().unwrap(),
        dir.canonicalize().unwrap(),
    );
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let proc = entry.path();
        let is =
            |link: &str, want: &Path| std::fs::read_link(proc.join(link)).is_ok_and(|p| p == want);
        // The script's own process, not a child the batch forked that has
        // not exec'd its worker yet.
        let parent = std::fs::read_to_string(proc.join("stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(") ")?
                    .1
                    .split(' ')
                    .nth(1)?
                    .parse::<u32>()
                    .ok()
            });
        let under_slurmstepd = parent.is_some_and(|ppid| {
            std::fs::read_to_string(format!("/proc/{ppid}/comm"))
                .is_ok_and(|c| c.trim() == "slurmstepd")
        });
        if !(is("exe", &subagent) && is("cwd", &dir) && under_slurmstepd) {
            continue;
        }
        let environ = std::fs::read(proc.join("environ")).unwrap_or_default();
        let task = environ
            .split(|b| *b == 0)
            .find_map(|v| v.strip_prefix(b"SLURM_ARRAY_TASK_ID="))
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        found.insert(pid, task);
    }
    found
}

/// The pid of array task `index`'s batch in `batches`.
fn shard_pid(batches: &BTreeMap<u32, String>, index: usize) -> u32 {
    let index = index.to_string();
    let pids: Vec<u32> = batches
        .iter()
        .filter(|(_, t)| **t == index)
        .map(|(p, _)| *p)
        .collect();
    assert_eq!(
        pids.len(),
        1,
        "one batch for array task {index}: {batches:?}"
    );
    pids[0]
}

/// The complete lines of a results file.
fn results_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    complete
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every array task of `scontrol show job -o` completed with exit 0, and
/// only the requeued one restarted, once.
fn assert_array_completed(states: &str) {
    let field = |line: &str, name: &str| {
        line.split(' ')
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or("")
            .to_owned()
    };
    let mut seen: Vec<(String, String, String, String)> = states
        .lines()
        .map(|l| {
            (
                field(l, "ArrayTaskId"),
                field(l, "JobState"),
                field(l, "ExitCode"),
                field(l, "Restarts"),
            )
        })
        .collect();
    seen.sort();
    let want: Vec<(String, String, String, String)> = (0..SHARDS)
        .map(|i| {
            let restarts = if i == REQUEUED { "1" } else { "0" };
            (
                i.to_string(),
                "COMPLETED".into(),
                "0:0".into(),
                restarts.into(),
            )
        })
        .collect();
    assert_eq!(seen, want, "{states}");
}

/// The test key is in no file under `dirs` (logs, results, sessions).
fn assert_no_secret(dirs: &[&Path]) {
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let text = String::from_utf8_lossy(&bytes);
                assert!(
                    !text.contains(TEST_API_KEY),
                    "the API key is in {}",
                    path.display()
                );
            }
        }
    }
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

//! Every shell example in README.md and docs/*.md runs, as written, against
//! the built binaries and the docs model ([`super::docs_model`]).
//!
//! Each ```sh / ```console block is cut into its logical commands (see
//! [`super::docs_text::shell_commands`]); each runs in `bash` in a scratch
//! directory of its doc, one after another (a doc's later commands see what
//! its earlier ones made: session files, `tasks.jsonl`), and must exit as
//! the doc says: 0 unless [`EXPECTED_EXIT`] names the documented other
//! outcome. In a ```console block, the lines after a `$ ` command are its
//! output, matched with snapbox's wildcards (`...` a run of lines, `[..]`
//! part of a line). What cannot run here is in [`SKIPPED`] with the
//! reason; the few rewrites that point an example at this test's model and
//! binaries are in [`REWRITES`]. After each command nothing it started may
//! still run, and at the end every session file the doc's runs left must
//! validate against the schema. `SUBAGENT_DOCS_MODEL=local` runs the same
//! examples against the real local model instead (exits only; not in CI:
//! a 135M model's runs are slow and its answers are not the docs').

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use snapbox::Assert;

use super::docs_model::{DocsModel, MODEL};
use super::docs_text::{
    Block, Doc, ShellCommand, docs, fenced_blocks, is_incomplete, shell_commands, words,
};
use super::llama::LlamaServer;
use super::support::{assert_nothing_runs_in, binary, check_session_file, jsonl_files};

/// Examples that cannot run here, by their doc and the start of the command.
const SKIPPED: [(&str, &str, &str); 15] = [
    (
        "README.md",
        "subagent ps --watch",
        "runs until q or Ctrl-C: tests/tests/suite/ps.rs runs it in a terminal (tmux) and piped",
    ),
    (
        "README.md",
        "cargo install --locked --path crates/cli",
        "tests/tests/suite/install.rs runs it as written (into a temporary root, reusing this \
         build) and runs doctor and a run of the installed subagent",
    ),
    (
        "README.md",
        "cargo xtask dist",
        "a release build with fat LTO (many minutes on 2 cores); `cargo xtask ci` runs \
         `cargo xtask dist --profile dev` as its last step",
    ),
    (
        "README.md",
        "cd target/dist && sha256sum -c SHA256SUMS",
        "needs the artifacts of `cargo xtask dist`: `cargo xtask dist-check` (in `cargo xtask \
         ci`) runs `sha256sum -c SHA256SUMS` in target/dist",
    ),
    (
        "README.md",
        "tar -xzf subagent-",
        "needs the archive of `cargo xtask dist`: `cargo xtask dist-check` unpacks it, \
         compares its file list and runs doctor from it",
    ),
    (
        "README.md",
        "sudo dpkg -i subagent_",
        "needs the .deb of `cargo xtask dist` and root: `cargo xtask dist-check` installs it \
         with dpkg -i, runs doctor and man from it and removes it",
    ),
    (
        "README.md",
        "pip install subagent-",
        "needs the wheel of `cargo xtask dist`: `cargo xtask dist-check` installs it into a \
         fresh venv and runs the venv's subagent doctor",
    ),
    (
        "README.md",
        "cargo xtask demo",
        "builds llama.cpp and the model and runs three real runs: minutes of CPU; run by hand",
    ),
    (
        "README.md",
        "cargo xtask ci",
        "CI itself: this test runs inside it",
    ),
    (
        "docs/call.md",
        "export VERTEX_TOKEN=",
        "needs Google Cloud credentials (gcloud) and the network",
    ),
    (
        "docs/call.md",
        "echo '{\"prompt\": \"Summarise README.md\", \"provider\": \"vertexai-anthropic\"",
        "Claude on Vertex AI: needs a Google Cloud project and the network",
    ),
    (
        "docs/fuzzing.md",
        "cargo xtask fuzz",
        "builds the fuzz target with libFuzzer and fuzzes for a minute or more; run by hand",
    ),
    (
        "docs/scale-out.md",
        "subagent batch merge results/results-*.jsonl",
        "merges the Slurm shards' results files: tests/tests/suite/slurm.rs runs it as \
         written after the sbatch script",
    ),
    (
        "docs/tool-sandbox.md",
        "subagent diff ",
        "needs kept changes, which the docs' model (text answers, no tool writes) never \
         leaves: tests/tests/suite/cow_kept.rs runs diff and apply on a run that wrote",
    ),
    (
        "docs/tool-sandbox.md",
        "subagent apply ",
        "as `subagent diff`: needs kept changes (tests/tests/suite/cow_kept.rs)",
    ),
];

/// A script file in a block (its first line `#!...`) is listed here by that
/// line and skipped whole: it is for another program to run, not typed.
const SKIPPED_SCRIPTS: [(&str, &str, &str); 1] = [(
    "docs/scale-out.md",
    "#!/bin/bash",
    "an sbatch script: tests/tests/suite/slurm.rs runs it as written on a real one-node Slurm",
)];

/// Commands whose documented outcome is not exit 0, each by its doc and its
/// words (comments and spacing aside), as written.
const EXPECTED_EXIT: [(&str, &str, &[i32], &str); 2] = [
    (
        "README.md",
        "subagent run --resume 3f2a9c1e",
        &[2],
        "without --task only an interrupted run continues; the run it names here completed, \
         so this is the documented refusal",
    ),
    (
        "README.md",
        "subagent doctor",
        &[0, 7],
        "7 when this machine lacks a protection (each MISSING line says how to get it)",
    ),
];

/// Rewrites that point an example at this test's model and binaries, each
/// `(as written, as run)`.
const REWRITES: [(&str, &str); 4] = [
    // The docs' local llama-server address: this test's model instead.
    ("http://127.0.0.1:8080/v1", MODEL_URL),
    // docs/serve.md starts the local model first: this test already serves one.
    ("cargo xtask local-model serve --port 8080 &", "true"),
    // README builds the binaries: they are built (support::binary) and on PATH.
    ("cargo build -p subagent-cli", "true"),
    ("target/debug/subagent ", "subagent "),
];

/// What an example's program reads on stdin where the doc means a client
/// on the other end (every other example gets an empty stdin).
const STDIN: [(&str, &str, &str); 1] = [(
    // A harness mounting the MCP server: handshake, list the tools, close.
    "docs/mcp.md",
    "subagent serve --mcp",
    concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"docs-examples","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n",
    ),
)];

/// Stands for the docs model's base URL in [`REWRITES`] (written into
/// quoted JSON too, so it is replaced before the shell sees it).
const MODEL_URL: &str = "{docs model url}";

/// Run ids the docs write for "a run you made": each becomes the id of the
/// doc's latest run so far.
const RUN_ID_PLACEHOLDERS: [&str; 2] = ["4f5660af", "3f2a9c1e"];

/// Longest one example may take (60 s): a docs-model run takes about a
/// second; the margin covers a loaded 2-core CI machine.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a timed-out example gets to end after SIGTERM (10 s): the
/// supervisor's own TERM-then-KILL of its workers takes a few seconds.
const KILL_GRACE: Duration = Duration::from_secs(10);

/// `SUBAGENT_DOCS_MODEL=local` runs the examples against the real local
/// model (`cargo xtask local-model`, its paths exported) instead of the
/// docs model: what a reader running the docs sees. Its answers differ from
/// the docs' (a 135M model), so outputs are not compared then, only exits.
const MODEL_CHOICE_VAR: &str = "SUBAGENT_DOCS_MODEL";

/// Where in a scratch dir the examples run, beside (not above) its home and
/// XDG dirs: a workspace holding the user's config dir is refused.
const WORK_DIR: &str = "work";

/// Files the examples take as already there, in each doc's work dir.
const SCRATCH_FILES: [(&str, &str); 3] = [
    // `--workspace ./project`
    ("project/src/main.rs", "fn main() {}\n"),
    // `subagent run --parallel --tasks tasks.txt`
    ("tasks.txt", "Name a prime\n\nName a colour\n"),
    // docs/scale-out.md's "keep only the successes" of a shard's results file
    (
        "results-0.jsonl",
        "{\"id\":\"q1\",\"status\":\"ok\",\"exitCode\":0}\n{\"id\":\"q2\",\"status\":\"failed\",\"exitCode\":1}\n",
    ),
];

/// One command to run: where it is written, its text, its expected output
/// (console blocks only).
struct Example {
    at: String,
    doc: String,
    command: String,
    output: Option<String>,
}

fn examples_of(doc: &Doc) -> Vec<Example> {
    let mut examples = Vec::new();
    for block in fenced_blocks(doc) {
        let script = SKIPPED_SCRIPTS.iter().find(|(name, first, _)| {
            doc.name == *name && block.body.first().is_some_and(|l| l.starts_with(first))
        });
        if let Some((_, _, why)) = script {
            eprintln!("{}:{}: skipped: {why}", doc.name, block.line);
            continue;
        }
        match block.lang.as_str() {
            "sh" | "bash" => {
                for ShellCommand { line, text } in shell_commands(&block.body, block.line) {
                    examples.push(Example {
                        at: format!("{}:{line}", doc.name),
                        doc: doc.name.clone(),
                        command: text,
                        output: None,
                    });
                }
            }
            "console" => examples.extend(console_examples(&block)),
            _ => {}
        }
    }
    examples
}

/// A console block's commands (`$ ` lines, continued while the command is
/// open) and the output lines after each.
fn console_examples(block: &Block) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut open = false;
    for (i, line) in block.body.iter().enumerate() {
        if let Some(command) = line.strip_prefix("$ ") {
            examples.push(Example {
                at: format!("{}:{}", block.doc, block.line + i),
                doc: block.doc.clone(),
                command: command.to_owned(),
                output: Some(String::new()),
            });
            open = is_incomplete(command);
            continue;
        }
        let Some(example) = examples.last_mut() else {
            continue;
        };
        if open {
            example.command.push('\n');
            example.command.push_str(line);
            open = is_incomplete(&example.command);
        } else if let Some(output) = example.output.as_mut() {
            output.push_str(line);
            output.push('\n');
        }
    }
    examples
}

fn skip_reason(example: &Example) -> Option<&'static str> {
    SKIPPED
        .iter()
        .find(|(doc, start, _)| example.doc == *doc && example.command.starts_with(start))
        .map(|(_, _, why)| *why)
}

fn stdin_of(example: &Example) -> &'static str {
    STDIN
        .iter()
        .find(|(doc, start, _)| example.doc == *doc && example.command.starts_with(start))
        .map_or("", |(_, _, input)| input)
}

/// The exit codes `example` may end with, and why when not just 0.
fn expected_exits(example: &Example) -> (&'static [i32], &'static str) {
    let command = words(&example.command).join(" ");
    EXPECTED_EXIT
        .iter()
        .find(|(doc, written, _, _)| example.doc == *doc && command == *written)
        .map_or((&[0], ""), |(_, _, codes, why)| (codes, why))
}

/// A doc's scratch dir: the files examples expect, and a user config that
/// makes the docs model the default provider (as README's Configuration
/// shows), so examples without `--base-url` run against it too.
fn scratch_dir(base_url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in SCRATCH_FILES {
        let path = dir.path().join(WORK_DIR).join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let config = dir.path().join("xdg-config/subagent/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        config,
        format!(
            "default_provider = \"local\"\n\n[providers.local]\nkind = \"openai-chat\"\n\
             base_url = \"{base_url}\"\nmodel = \"{MODEL}\"\n",
        ),
    )
    .unwrap();
    dir
}

/// The id of the newest run in `sessions` (from its file name,
/// `<runId>-<agent>.jsonl`).
fn latest_run_id(sessions: &Path) -> Option<String> {
    let newest = jsonl_files(sessions)
        .into_iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "serve"))
        .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())?;
    let name = newest.file_stem()?.to_str()?;
    Some(name.split('-').next()?.to_owned())
}

/// What `bash` did with one command.
struct Ran {
    /// Stopped after [`COMMAND_TIMEOUT`].
    timed_out: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `command` in `bash` in `dir` with the examples' environment, killed
/// with its whole process group after [`COMMAND_TIMEOUT`].
fn run_in(dir: &Path, command: &str, stdin: &str) -> Ran {
    use std::os::unix::process::CommandExt;
    let bin_dir = binary("subagent").parent().unwrap().to_owned();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("set -o pipefail\n{command}"))
        .current_dir(dir.join(WORK_DIR))
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.join("home"))
        .env("XDG_CONFIG_HOME", dir.join("xdg-config"))
        .env("XDG_STATE_HOME", dir.join("xdg-state"))
        .env("XDG_CACHE_HOME", dir.join("xdg-cache"))
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = child.id() as libc::pid_t;
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        // A command that exits without reading all of it is judged by its exit.
        let _ = input.write_all(stdin.as_bytes());
    }
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let mut timed_out = false;
    let out = match finished.recv_timeout(COMMAND_TIMEOUT) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            timed_out = true;
            // SIGTERM first: `subagent` then cancels its runs and reaps their
            // workers (each in a process group of its own, which a SIGKILL of
            // this group would leave to die by their parent-death signal, a
            // moment later); SIGKILL only if it does not end within the grace.
            // SAFETY: killpg only sends a signal to the group this test made.
            unsafe { libc::killpg(pgid, libc::SIGTERM) };
            match finished.recv_timeout(KILL_GRACE) {
                Ok(out) => out.unwrap(),
                Err(_) => {
                    // SAFETY: as above.
                    unsafe { libc::killpg(pgid, libc::SIGKILL) };
                    finished.recv().unwrap().unwrap()
                }
            }
        }
    };
    Ran {
        timed_out,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs one doc's examples in order; returns what failed.
fn run_doc(doc: &Doc, base_url: &str, local_model: bool) -> (usize, Vec<String>) {
    let scratch = scratch_dir(base_url);
    let sessions = scratch.path().join("xdg-state/subagent/sessions");
    let mut ran = 0;
    let mut failures = Vec::new();
    for example in examples_of(doc) {
        if let Some(why) = skip_reason(&example) {
            eprintln!("{}: skipped: {why}", example.at);
            continue;
        }
        let mut command = example.command.clone();
        for (written, run) in REWRITES {
            command = command.replace(written, &run.replace(MODEL_URL, base_url));
        }
        if let Some(id) = latest_run_id(&sessions) {
            for placeholder in RUN_ID_PLACEHOLDERS {
                command = command.replace(placeholder, &id);
            }
        }
        let out = run_in(scratch.path(), &command, stdin_of(&example));
        ran += 1;
        eprintln!(
            "{}: exit {:?} {}",
            example.at,
            out.code,
            out.stderr.lines().last().unwrap_or("")
        );
        assert_nothing_runs_in(scratch.path());
        let (wanted, why) = expected_exits(&example);
        if out.timed_out {
            failures.push(format!(
                "{}: still running after {COMMAND_TIMEOUT:?}, stopped\n$ {command}\nstderr: {}",
                example.at,
                tail(&out.stderr)
            ));
            continue;
        }
        if !out.code.is_some_and(|c| wanted.contains(&c)) {
            failures.push(format!(
                "{}: exited {:?}, the doc means {wanted:?} {why}\n$ {command}\nstdout: {}\n\
                 stderr: {}",
                example.at,
                out.code,
                tail(&out.stdout),
                tail(&out.stderr)
            ));
            continue;
        }
        if let (Some(expected), false) = (&example.output, local_model) {
            // A block cannot show the blank line an output may end with.
            let check = Assert::new().try_eq(
                Some(&example.at),
                out.stdout.trim_end().into(),
                expected.trim_end().into(),
            );
            if let Err(diff) = check {
                failures.push(format!(
                    "{}: output differs from the doc:\n{diff}",
                    example.at
                ));
            }
        }
    }
    for file in jsonl_files(&sessions) {
        if !file.components().any(|c| c.as_os_str() == "serve") {
            check_session_file(&file);
        }
    }
    (ran, failures)
}

/// The last 2,000 bytes of `text` (whole characters), for failure messages.
fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(2000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[test]
fn every_shell_example_in_the_docs_runs_as_documented() {
    let model = DocsModel::start();
    let local = std::env::var(MODEL_CHOICE_VAR)
        .is_ok_and(|v| v == "local")
        .then(LlamaServer::start);
    let base_url = local
        .as_ref()
        .map_or_else(|| model.base_url(), LlamaServer::base_url);
    let mut ran = 0;
    let mut failures = Vec::new();
    for doc in docs() {
        let (n, failed) = run_doc(&doc, &base_url, local.is_some());
        ran += n;
        failures.extend(failed);
    }
    eprintln!("{ran} doc examples ran");
    assert!(
        ran >= 20,
        "only {ran} doc examples ran: is the parser still finding the sh blocks?"
    );
    assert!(
        failures.is_empty(),
        "doc examples that do not do what the doc says ({}); fix the doc, or the binary \
         (and say so), or, for what cannot run here, add it to SKIPPED with the reason:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

//! `subagent sessions export --html` end to end: a real CLI run against
//! the scripted loopback model leaves a session file with tool calls, a
//! hostile payload in the model's text and a tool's output, and a wall
//! timeout hit during a sleeping tool call; the export of that file is
//! loaded in headless Chromium, and its dumped DOM must show the rendered
//! timeline, with nothing of the payload run or turned into markup.
//!
//! Chromium is the Debian package `chromium`. Without it the test is
//! skipped with one line, unless `CI` is set: there it fails, because CI
//! installs it (`.ci/run`).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, tool_call_turn};
use super::support::*;

/// Text that runs script or adds elements if anything lets it through
/// unescaped: it closes a script element, opens one that renames the page,
/// and adds an image whose error handler would too.
const PAYLOAD: &str = "</script><script>document.title='pwned'</script>\
                       <img src=x onerror=\"document.title='pwned'\">";

/// Longest Chromium may take to load and dump a local page; it takes a
/// second or two, but the machine is shared with parallel builds.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);

/// How long the processes of a killed Chromium group get to disappear:
/// SIGKILL is delivered asynchronously, so the kill returns before they go.
const GROUP_EXIT_WAIT: Duration = Duration::from_secs(10);

/// One streamed SSE event of an OpenAI chat completion chunk.
fn event(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-html", "object": "chat.completion.chunk", "created": 1_744_112_711,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        "usage": null,
    });
    format!("data: {chunk}\n\n")
}

/// A turn with assistant text *and* a tool call (the shared script helpers
/// send one or the other), with its own usage figures so the chart's bars
/// differ.
pub(super) fn text_and_tool_call_turn(
    text: &str,
    call_id: &str,
    name: &str,
    args: &Value,
) -> Vec<u8> {
    let mut sse = event(json!({"role": "assistant", "content": ""}), None);
    sse.push_str(&event(json!({"content": text}), None));
    sse.push_str(&event(
        json!({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]}),
        None,
    ));
    sse.push_str(&event(json!({}), Some("tool_calls")));
    let usage = json!({
        "id": "chatcmpl-html", "object": "chat.completion.chunk", "created": 1_744_112_711,
        "model": "scripted", "choices": [],
        "usage": {"prompt_tokens": 400, "completion_tokens": 60, "total_tokens": 460},
    });
    sse.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    sse.into_bytes()
}

/// Whether CI is set the way CI systems set it.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// `chromium` on PATH; `None` (after one line) when missing outside CI.
pub(super) fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            !in_ci(),
            "{test}: chromium not found on PATH; install the Debian package chromium"
        );
        eprintln!("{test}: skipped: chromium not found (install the Debian package chromium)");
    }
    found
}

/// The live (not zombie) processes of process group `pgid`, as
/// "pid: cmdline".
fn group_members(pgid: i32) -> Vec<String> {
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state, ppid, pgrp, ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            alive.push(format!(
                "{:?}: {}",
                entry.file_name(),
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    alive
}

/// Loads `page` in headless Chromium and returns the DOM it dumps.
pub(super) fn dump_dom(chromium: &Path, page: &Path) -> String {
    headless(chromium, page, &["--dump-dom".to_owned()])
}

/// Loads `page` in headless Chromium with `args` (`--dump-dom`,
/// `--screenshot=FILE`) and returns what it printed. Chromium runs in a
/// process group of its own with a throwaway profile and home; the group is
/// killed when it is done or out of time, and no process of it, nor any
/// process naming the profile, may survive.
pub(super) fn headless(chromium: &Path, page: &Path, args: &[String]) -> String {
    let home = tempfile::tempdir().unwrap();
    let profile = home.path().join("profile");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-extensions",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = i32::try_from(child.id()).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        let _ = stderr.read_to_end(&mut err);
        let status = child.wait();
        let _ = tx.send(());
        (status, out, err)
    });
    let timed_out = rx.recv_timeout(CHROMIUM_TIMEOUT).is_err();
    // Helpers (zygote, GPU, renderer) may outlive the browser process:
    // the whole group goes, finished or not.
    // SAFETY: killpg with a group id this test created; no memory involved.
    unsafe { libc::killpg(pgid, libc::SIGKILL) };
    let (status, out, err) = waiter.join().unwrap();
    let deadline = Instant::now() + GROUP_EXIT_WAIT;
    while !group_members(pgid).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = group_members(pgid);
    assert!(left.is_empty(), "chromium processes survived: {left:#?}");
    assert_no_survivors(&profile.display().to_string());
    let err = String::from_utf8_lossy(&err);
    assert!(
        !timed_out,
        "chromium took over {CHROMIUM_TIMEOUT:?}; stderr: {err}"
    );
    let status = status.unwrap();
    assert!(status.success(), "chromium: {status}; stderr: {err}");
    String::from_utf8(out).unwrap()
}

/// The tags of `html` that load something (`src`, `href`, `srcset`,
/// `<link>`, `<script>`, `<iframe>`, `<object>`, `<embed>`) and the style
/// rules that do (`url(`, `@import`). Only markup is looked at: text
/// between tags is escaped, so session text that *mentions* `src=` is no
/// reference.
fn external_references(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for piece in html.split('<').skip(1) {
        let tag = piece.split('>').next().unwrap_or("").to_ascii_lowercase();
        let name = tag.split_whitespace().next().unwrap_or("");
        let loads = ["script", "link", "iframe", "object", "embed"].contains(&name)
            || [" src=", " href=", " srcset=", "xlink:href"]
                .iter()
                .any(|a| tag.contains(a));
        if loads {
            found.push(format!("<{tag}>"));
        }
        if name == "style" {
            let sheet = piece.split_once('>').map_or("", |(_, rest)| rest);
            if sheet.contains("url(") || sheet.contains("@import") {
                found.push(format!("style sheet: {sheet}"));
            }
        }
    }
    found
}

/// The text between `<title>` and `</title>`.
fn title(dom: &str) -> &str {
    let start = dom.find("<title>").map(|i| i + "<title>".len()).unwrap();
    &dom[start..start + dom[start..].find("</title>").unwrap()]
}

pub(super) fn export(sessions: &Path, args: &[&str]) -> Output {
    Command::new(binary("subagent"))
        .args(["sessions", "export", "--html", "--sessions-dir"])
        .arg(sessions)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A run of three tool-calling turns that the wall timeout ends during the
/// third call; returns the run id and its session lines.
fn timed_out_run(workspace: &Path, sessions: &Path) -> (String, Vec<Value>) {
    std::fs::write(workspace.join("payload.txt"), format!("{PAYLOAD}\n")).unwrap();
    let model = ScriptedModel::start(vec![
        text_and_tool_call_turn(
            &format!("Reading the notes. {PAYLOAD}"),
            "call_read",
            "bash_read",
            &json!({"path": "payload.txt"}),
        ),
        tool_call_turn("call_find", "bash_find", &json!({"pattern": "*.txt"})),
        tool_call_turn(
            "call_sleep",
            "python_execute",
            &json!({"code": "import time\ntime.sleep(30)"}),
        ),
    ]);
    let out = model
        .run_command(workspace, sessions)
        .args(["--timeout", "4s", "--json"])
        .args(["--tools", "bash_read,bash_find,python_execute"])
        .args(["--task", &format!("Read the notes {PAYLOAD}")])
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let result: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is no JSON result ({e}); stderr: {stderr}"));
    assert_valid_result(&result);
    assert_children_reaped(&result);
    assert_eq!(
        out.status.code(),
        Some(super::exit_codes::TIMEOUT),
        "{result:#}"
    );
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned();
    let lines = check_session_file(Path::new(&file));
    let run_id = lines[0]["runId"].as_str().unwrap().to_owned();
    (run_id, lines)
}

#[test]
fn an_exported_run_renders_its_timeline_in_chromium_and_runs_nothing_from_the_session() {
    let test = "an_exported_run_renders_its_timeline_in_chromium";
    let Some(chromium) = chromium_or_skip(test) else {
        return;
    };
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (run_id, lines) = timed_out_run(workspace.path(), sessions.path());

    // What the session file holds, so the page is checked against it.
    let mut turns: Vec<u64> = lines
        .iter()
        .filter(|l| l["type"] == "message" || l["type"] == "tool_call")
        .filter_map(|l| l["turn"].as_u64())
        .filter(|&t| t > 0)
        .collect();
    turns.dedup();
    assert_eq!(turns, vec![1, 2, 3], "three turns recorded");
    let limits: Vec<&Value> = lines.iter().filter(|l| l["type"] == "limit").collect();
    assert!(
        limits.iter().any(|l| l["limit"] == "wall_timeout"),
        "{limits:#?}"
    );

    let out_dir = tempfile::tempdir().unwrap();
    let page = out_dir.path().join("run.html");
    let written = export(
        sessions.path(),
        &[&run_id[..6], "-o", page.to_str().unwrap()],
    );
    assert_eq!(
        written.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // Only the page is left in the directory: the temporary file was renamed.
    let names: Vec<_> = std::fs::read_dir(out_dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("run.html")]);
    // `-o -` prints the same page.
    let printed = export(sessions.path(), &[&run_id, "-o", "-"]);
    assert_eq!(printed.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&printed.stdout), html);

    let dom = dump_dom(&chromium, &page);

    // Nothing of the payload ran or became markup.
    assert_eq!(title(&dom), format!("subagent run {run_id} (general)"));
    assert!(!dom.contains("<img"), "the payload added an image");
    assert!(!dom.contains("<script"), "the payload added a script");
    assert!(
        dom.contains("&lt;img src=x onerror="),
        "the payload is shown as text"
    );

    // The timeline: one entry per turn, each tool by name, the limit hit,
    // and one chart bar per turn.
    assert_eq!(dom.matches("<li class=\"turn\"").count(), 3, "{dom}");
    for tool in ["bash_read", "bash_find", "python_execute"] {
        assert!(
            dom.contains(&format!("<code class=\"tool-name\">{tool}</code>")),
            "{tool} missing"
        );
    }
    assert!(dom.contains("<strong class=\"limit-kind\">wall_timeout</strong>"));
    assert!(dom.contains("<svg id=\"usage-chart\""));
    assert_eq!(dom.matches("<g class=\"bar\"").count(), 3);
    assert!(dom.contains("Reading the notes."));
    assert!(dom.contains("<footer id=\"closing\">"));

    // Self-contained: no tag or style rule loads anything, and the only
    // URL is the SVG namespace name (an identifier, never fetched).
    let references = external_references(&html);
    assert!(
        references.is_empty(),
        "external references: {references:#?}"
    );
    let stripped = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    let urls: Vec<&str> = stripped
        .match_indices("://")
        .map(|(i, _)| {
            stripped
                .get(i.saturating_sub(40)..(i + 40).min(stripped.len()))
                .unwrap_or("(not on a character boundary)")
        })
        .collect();
    assert!(urls.is_empty(), "URLs in the page: {urls:#?}");
}

#[test]
fn exporting_an_unknown_run_says_where_it_looked_and_what_to_do() {
    let sessions = tempfile::tempdir().unwrap();
    let never = sessions.path().join("never.html");
    let out = export(
        sessions.path(),
        &["nosuchrun", "-o", never.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(super::exit_codes::INVALID_INPUT),
        "{stderr}"
    );
    assert!(
        stderr.contains("no session file for run \"nosuchrun\""),
        "{stderr}"
    );
    assert!(stderr.contains("subagent sessions ls"), "{stderr}");
    assert!(!never.exists());
}

#[test]
fn export_help_teaches_with_an_example() {
    let out = Command::new(binary("subagent"))
        .args(["sessions", "export", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        help.contains("subagent sessions export --html 3f9c2a -o run-3f9c2a.html"),
        "{help}"
    );
}

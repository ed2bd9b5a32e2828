//! Web tools end to end: the real `subagent` CLI, supervisor and worker; a
//! scripted model ([`super::scripted_model`]) calls `search_web` against a
//! loopback SearXNG-format server named in the project's config.toml, then
//! `scrape_webpage` on the page the search found. Asserts the session file's
//! calls and results, that the SSRF defence refuses the loopback page
//! without `--allow-private-networks` (the page server never sees a
//! request), and that no process of the run survives it. Nothing leaves
//! 127.0.0.1.

use std::path::Path;
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use subagent_test_support::http::{LoopbackHttp, Request, Response};

use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
use super::support::*;

const PAGE: &str = "<!doctype html><html><head><title>Otter facts</title></head><body>\
<article><h1>Otter facts</h1><p>Sea otters hold hands while they sleep so that they do not \
drift apart; a group floating together is called a raft.</p>\
<p>See the <a href=\"/more\">longer guide</a> for every species.</p></article></body></html>";

/// A loopback web server (the test support's stub): `/search?...` answers
/// a search whose one result is this server's `/page`, `/page` answers
/// [`PAGE`]. Every request's target is recorded.
struct WebServer {
    server: LoopbackHttp,
}

impl WebServer {
    fn start() -> Self {
        Self {
            server: LoopbackHttp::start(serve),
        }
    }

    fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    fn targets(&self) -> Vec<String> {
        self.server
            .requests()
            .into_iter()
            .map(|r| r.target)
            .collect()
    }
}

fn serve(request: &Request) -> Response {
    if request.target.starts_with("/search?") {
        // The page is on this server: the one the request was sent to.
        let host = request.header("host").unwrap_or_default();
        let answer = json!({"query": "otters", "results": [{
            "title": "Otter facts",
            "url": format!("http://{host}/page"),
            "content": "Why sea otters hold hands."
        }]});
        Response::json(200, answer.to_string())
    } else {
        Response::new(200, "text/html; charset=utf-8", PAGE)
    }
}

/// A workspace that is its own repository root, with a project config
/// pointing `[search]` at `server`; a home with no user config.
struct Project {
    workspace: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Project {
    fn new(server: &WebServer) -> Self {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir(workspace.path().join(".git")).unwrap();
        std::fs::create_dir(workspace.path().join(".subagent")).unwrap();
        std::fs::write(
            workspace.path().join(".subagent/config.toml"),
            format!(
                "[search]\nbackend = \"searxng\"\nurl = \"{}\"\n",
                server.url("")
            ),
        )
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        trust_project(workspace.path(), home.path());
        Self { workspace, home }
    }
}

fn run_cli(model: &ScriptedModel, project: &Project, sessions: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["--tools", "search_web,scrape_webpage"];
    args.extend_from_slice(extra);
    run_cli_with(model, project, sessions, &args)
}

/// `subagent run` on the scripted model in `project`, with `args` (which
/// name the tools).
fn run_cli_with(
    model: &ScriptedModel,
    project: &Project,
    sessions: &Path,
    args: &[&str],
) -> Output {
    let out = model
        .run_command(project.workspace.path(), sessions)
        .args(["--timeout", "60", "--json"])
        .args(["--task", "Find out why otters hold hands."])
        .args(args)
        .env("HOME", project.home.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_nothing_runs_in(project.workspace.path());
    out
}

/// Exit 0, a valid result, a valid session file whose worker was reaped;
/// returns the session lines.
fn checked(out: &Output) -> Vec<Value> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is no JSON result ({e}); stderr: {stderr}"));
    assert_valid_result(&json);
    assert_children_reaped(&json);
    let file = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap_or_else(|| panic!("no session file in {json:#}"));
    let lines = check_session_file(Path::new(file));
    assert_reaped(&lines);
    lines
}

/// `(callId, name, isError, output)` of each tool_result line.
fn tool_results(lines: &[Value]) -> Vec<(String, String, bool, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| {
            (
                l["callId"].as_str().unwrap().to_owned(),
                l["name"].as_str().unwrap().to_owned(),
                l["isError"].as_bool().unwrap(),
                l["output"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn script(server: &WebServer) -> ScriptedModel {
    ScriptedModel::start(vec![
        tool_call_turn(
            "call_search",
            "search_web",
            &json!({"query": "otters hands"}),
        ),
        tool_call_turn(
            "call_scrape",
            "scrape_webpage",
            &json!({"url": server.url("/page")}),
        ),
        text_turn("They hold hands so they do not drift apart."),
    ])
}

#[test]
fn search_and_scrape_through_the_real_cli_with_private_networks_allowed() {
    let server = WebServer::start();
    let project = Project::new(&server);
    let sessions = tempfile::tempdir().unwrap();
    let model = script(&server);
    let out = run_cli(
        &model,
        &project,
        sessions.path(),
        &["--allow-private-networks"],
    );
    let lines = checked(&out);
    assert_eq!(model.replies_left(), 0);
    let requests = model.requests();
    assert_eq!(
        offered_tools(&requests[0]),
        ["scrape_webpage", "search_web"]
    );

    let calls: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["type"] == "tool_call")
        .map(|l| (l["callId"].as_str().unwrap(), l["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_search", "search_web"),
            ("call_scrape", "scrape_webpage")
        ]
    );
    let results = tool_results(&lines);
    assert_eq!(results.len(), 2, "{results:#?}");
    let (_, _, search_error, search) = &results[0];
    assert!(!search_error, "{search}");
    assert_eq!(
        search,
        &format!(
            "1. Otter facts\n   {}\n   Why sea otters hold hands.\n",
            server.url("/page")
        )
    );
    let (_, _, scrape_error, page) = &results[1];
    assert!(!scrape_error, "{page}");
    assert!(
        page.starts_with(&format!("URL: {}", server.url("/page"))),
        "{page}"
    );
    assert!(page.contains("Sea otters hold hands"), "{page}");
    assert!(
        page.contains(&format!("[longer guide]({})", server.url("/more"))),
        "links are kept as Markdown links: {page}"
    );
    let targets = server.targets();
    assert_eq!(targets.len(), 2, "{targets:?}");
    assert_eq!(targets[0], "/search?q=otters+hands&format=json");
    assert_eq!(targets[1], "/page");
}

#[test]
fn without_the_flag_the_loopback_page_is_refused_and_never_asked_for() {
    let server = WebServer::start();
    let project = Project::new(&server);
    let sessions = tempfile::tempdir().unwrap();
    let model = script(&server);
    let out = run_cli(&model, &project, sessions.path(), &[]);
    let lines = checked(&out);
    let results = tool_results(&lines);
    assert_eq!(results.len(), 2, "{results:#?}");
    // The search backend is operator configuration: loopback is fine there.
    assert!(!results[0].2, "{}", results[0].3);
    let (_, name, is_error, output) = &results[1];
    assert_eq!(name, "scrape_webpage");
    assert!(is_error, "{output}");
    assert!(
        output.contains("refusing to connect to 127.0.0.1 (loopback)"),
        "{output}"
    );
    let targets = server.targets();
    assert_eq!(
        targets.len(),
        1,
        "only the search reached the server: {targets:?}"
    );
    assert!(targets[0].starts_with("/search?"), "{targets:?}");
}

/// The whole picture: `--tools search_web,scrape_webpage,subagent
/// --max-depth 2`. The root delegates to a researcher, which searches and
/// scrapes the loopback web and answers; its answer is the root's tool
/// result. Requests reach the scripted model strictly in turn (the root
/// waits on its subagent), so one script serves both.
#[test]
fn a_subagent_uses_the_web_tools_for_its_parent_at_depth_two() {
    let server = WebServer::start();
    let project = Project::new(&server);
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn(
            "call_delegate",
            "subagent",
            &json!({"agent": "researcher", "task": "Why do otters hold hands? Search the web."}),
        ),
        tool_call_turn(
            "call_search",
            "search_web",
            &json!({"query": "otters hands"}),
        ),
        tool_call_turn(
            "call_scrape",
            "scrape_webpage",
            &json!({"url": server.url("/page")}),
        ),
        text_turn("Otters hold hands so that they do not drift apart."),
        text_turn("My researcher says: otters hold hands so that they do not drift apart."),
    ]);
    let out = run_cli_with(
        &model,
        &project,
        sessions.path(),
        &[
            "--tools",
            "search_web,scrape_webpage,subagent",
            "--max-depth",
            "2",
            "--allow-private-networks",
        ],
    );
    let root_lines = checked(&out);
    assert_eq!(model.replies_left(), 0);
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(
        offered_tools(&requests[0]),
        ["scrape_webpage", "search_web", "subagent"]
    );
    // The researcher at depth 2 = the limit: its own tools, no subagent tool.
    let grandchild_tools = offered_tools(&requests[1]);
    assert!(
        grandchild_tools.contains(&"search_web".to_owned()),
        "{grandchild_tools:?}"
    );
    assert!(
        !grandchild_tools.contains(&"subagent".to_owned()),
        "{grandchild_tools:?}"
    );

    let root_results = tool_results(&root_lines);
    assert_eq!(root_results.len(), 1, "{root_results:#?}");
    let (call, name, is_error, output) = &root_results[0];
    assert_eq!(
        (call.as_str(), name.as_str(), *is_error),
        ("call_delegate", "subagent", false)
    );
    assert!(output.contains("do not drift apart"), "{output}");

    // The researcher's own file, named by its lifecycle lines in the root's.
    let grandchild_file = root_lines
        .iter()
        .filter(|l| l["type"] == "agent_event" && l["agentName"] == "researcher")
        .find_map(|l| l["sessionFile"].as_str())
        .unwrap_or_else(|| panic!("no researcher lifecycle line in the root's file"))
        .to_owned();
    let grandchild_lines = check_session_file(Path::new(&grandchild_file));
    assert_reaped(&grandchild_lines);
    assert_eq!(grandchild_lines[0]["depth"], 2);
    let results = tool_results(&grandchild_lines);
    let names: Vec<(&str, bool)> = results.iter().map(|r| (r.1.as_str(), r.2)).collect();
    assert_eq!(
        names,
        [("search_web", false), ("scrape_webpage", false)],
        "{results:#?}"
    );
    assert!(
        results[1].3.contains("Sea otters hold hands"),
        "{}",
        results[1].3
    );
    let targets = server.targets();
    assert_eq!(targets, ["/search?q=otters+hands&format=json", "/page"]);
}

#[test]
fn a_search_backend_that_redirects_to_another_host_is_refused_and_the_key_stays_with_it() {
    // The operator's Brave backend (on loopback here) answers 302 to
    // another host:port, as an open redirect on it could. The search must
    // stop there: the other host never sees a request, let alone the key.
    let elsewhere_server = LoopbackHttp::start(|_| Response::json(200, "{}"));
    let elsewhere = elsewhere_server.port();
    let backend_server = LoopbackHttp::start(move |_| {
        Response::new(302, "text/plain", "").with_header(
            "Location",
            &format!("http://127.0.0.1:{elsewhere}/res/v1/web/search?q=x"),
        )
    });
    let backend = backend_server.port();
    let heads = |server: &LoopbackHttp| -> Vec<String> {
        server.requests().iter().map(Request::head).collect()
    };
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".git")).unwrap();
    std::fs::create_dir(workspace.path().join(".subagent")).unwrap();
    std::fs::write(
        workspace.path().join(".subagent/config.toml"),
        format!(
            "[search]\nbackend = \"brave\"\nurl = \"http://127.0.0.1:{backend}\"\napi_key_env = \"BRAVE_TEST_KEY\"\n"
        ),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    trust_project(workspace.path(), home.path());
    let project = Project { workspace, home };
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_search", "search_web", &json!({"query": "otters"})),
        text_turn("done"),
    ]);
    let key = "brave-key-that-must-stay-0123456789";
    let out = model
        .run_command(project.workspace.path(), sessions.path())
        .args([
            "--timeout",
            "60",
            "--json",
            "--task",
            "Search.",
            "--tools",
            "search_web",
        ])
        .env("HOME", project.home.path())
        .env_remove("XDG_CONFIG_HOME")
        .env("BRAVE_TEST_KEY", key)
        .output()
        .unwrap();
    assert_nothing_runs_in(project.workspace.path());
    let lines = checked(&out);
    let results = tool_results(&lines);
    assert_eq!(results.len(), 1, "{results:#?}");
    let (_, _, is_error, output) = &results[0];
    assert!(is_error, "{output}");
    assert!(output.contains("another host"), "{output}");
    let backend_heads = heads(&backend_server);
    assert_eq!(backend_heads.len(), 1, "{backend_heads:?}");
    assert!(
        backend_heads[0].contains(key),
        "the backend itself gets the key"
    );
    assert_eq!(
        heads(&elsewhere_server),
        Vec::<String>::new(),
        "the other host was asked"
    );
}

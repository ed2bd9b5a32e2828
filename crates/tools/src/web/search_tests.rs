use pretty_assertions::assert_eq;
use subagent_protocol::ApiKey;

use super::*;
use crate::web::test_server::{Reply, TestServer};

const SEARXNG_ANSWER: &str = r#"{"query": "otters", "results": [
  {"title": "Sea otter", "url": "https://en.example.org/Sea_otter", "content": "The sea otter is a marine mammal."},
  {"title": "River otter", "url": "https://en.example.org/River_otter", "content": "River otters live in rivers."},
  {"title": "Otter &amp; kelp", "url": "https://kelp.example.net/", "content": ""}
]}"#;

const BRAVE_ANSWER: &str = r#"{"type": "search", "web": {"results": [
  {"title": "Sea <strong>otter</strong>", "url": "https://en.example.org/Sea_otter", "description": "The sea <strong>otter</strong> is a marine mammal."}
]}}"#;

fn backend(kind: SearchKind, server: &TestServer, key: Option<&str>) -> SearchBackend {
    SearchBackend {
        kind,
        url: server.url("/"),
        api_key: key.map(ApiKey::new),
    }
}

/// One `search_web` call with `backend` configured.
async fn search(
    backend: Option<SearchBackend>,
    arguments: serde_json::Value,
) -> Result<ToolOutput, ToolError> {
    let mut ctx = ToolContext::new(std::env::temp_dir());
    ctx.web.search = backend;
    SearchWeb.call(arguments, &ctx).await
}

/// The message of a search for "otter" that must fail.
async fn search_failure(backend: Option<SearchBackend>) -> String {
    let result = search(backend, serde_json::json!({"query": "otter"})).await;
    let Err(ToolError::Failed(message)) = result else {
        panic!("expected a failure, got {result:?}");
    };
    message
}

#[tokio::test]
async fn searxng_results_come_back_numbered_with_title_url_and_snippet() {
    let server = TestServer::start(|_| Reply::ok("application/json", SEARXNG_ANSWER)).await;
    let output = search(
        Some(backend(SearchKind::Searxng, &server, None)),
        serde_json::json!({"query": "sea otters", "max_results": 2}),
    )
    .await
    .unwrap();
    assert_eq!(
        output.text,
        "1. Sea otter\n   https://en.example.org/Sea_otter\n   The sea otter is a marine mammal.\n\
         2. River otter\n   https://en.example.org/River_otter\n   River otters live in rivers.\n"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].target, "/search?q=sea+otters&format=json");
}

#[tokio::test]
async fn brave_gets_its_token_header_and_count_and_its_markup_is_stripped() {
    let server = TestServer::start(|_| Reply::ok("application/json", BRAVE_ANSWER)).await;
    let output = search(
        Some(backend(SearchKind::Brave, &server, Some("brave-key-123"))),
        serde_json::json!({"query": "otter"}),
    )
    .await
    .unwrap();
    assert_eq!(
        output.text,
        "1. Sea otter\n   https://en.example.org/Sea_otter\n   The sea otter is a marine mammal.\n"
    );
    let requests = server.requests();
    assert_eq!(requests[0].target, "/res/v1/web/search?q=otter&count=5");
    assert_eq!(
        requests[0].header("x-subscription-token"),
        Some("brave-key-123")
    );
}

/// The attack of issue 25 item 5: a backend (or an open redirect on it)
/// sends the search to another loopback service. Refused, and that
/// service never sees the request, let alone the key.
#[tokio::test]
async fn a_redirect_to_another_port_is_refused_and_the_key_stays_with_the_backend() {
    let internal = TestServer::start(|_| Reply::ok("application/json", BRAVE_ANSWER)).await;
    let elsewhere = internal.url("/internal-admin");
    let server = TestServer::start(move |_| Reply::redirect(&elsewhere)).await;
    let message = search_failure(Some(backend(
        SearchKind::Brave,
        &server,
        Some("brave-key-123"),
    )))
    .await;
    assert!(
        message.contains("another host") && message.contains(&internal.addr.to_string()),
        "{message}"
    );
    assert!(!message.contains("brave-key-123"), "{message}");
    assert_eq!(server.requests().len(), 1);
    assert!(internal.requests().is_empty(), "{:?}", internal.requests());
}

#[tokio::test]
async fn a_redirect_within_the_backend_is_followed_with_the_key() {
    let server = TestServer::start(|target| {
        if target.starts_with("/v2/") {
            Reply::ok("application/json", BRAVE_ANSWER)
        } else {
            Reply::redirect(&format!("/v2{target}"))
        }
    })
    .await;
    let output = search(
        Some(backend(SearchKind::Brave, &server, Some("brave-key-123"))),
        serde_json::json!({"query": "otter"}),
    )
    .await
    .unwrap();
    assert!(output.text.starts_with("1. Sea otter"), "{}", output.text);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].target, "/v2/res/v1/web/search?q=otter&count=5");
    assert_eq!(
        requests[1].header("x-subscription-token"),
        Some("brave-key-123")
    );
}

#[tokio::test]
async fn a_redirect_loop_within_the_backend_ends_after_the_limit() {
    let server = TestServer::start(|_| Reply::redirect("/search?again")).await;
    let message = search_failure(Some(backend(SearchKind::Searxng, &server, None))).await;
    assert!(message.contains("redirected more than"), "{message}");
    assert_eq!(server.requests().len(), SEARCH_MAX_REDIRECTS + 1);
}

#[tokio::test]
async fn without_a_backend_the_error_names_the_setting_to_add() {
    let message = search_failure(None).await;
    assert!(
        message.contains("[search] backend = \"searxng\""),
        "{message}"
    );
    assert!(message.contains(".subagent/config.toml"), "{message}");
}

#[tokio::test]
async fn brave_without_a_key_is_refused_before_any_request() {
    let server = TestServer::start(|_| Reply::ok("application/json", BRAVE_ANSWER)).await;
    let message = search_failure(Some(backend(SearchKind::Brave, &server, None))).await;
    assert!(message.contains("api_key_env"), "{message}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn an_error_status_is_reported_with_the_start_of_the_answer() {
    let server = TestServer::start(|_| Reply::Page {
        status: 429,
        headers: vec![],
        body: b"rate limited".to_vec(),
    })
    .await;
    let message = search_failure(Some(backend(SearchKind::Searxng, &server, None))).await;
    assert!(
        message.contains("429") && message.contains("rate limited"),
        "{message}"
    );
}

#[test]
fn entities_in_titles_are_decoded_and_empty_snippets_left_out() {
    let results = parse_results(SearchKind::Searxng, SEARXNG_ANSWER.as_bytes()).unwrap();
    assert_eq!(results[2].title, "Otter & kelp");
    assert_eq!(
        format_results("q", &results[2..]),
        "1. Otter & kelp\n   https://kelp.example.net/\n"
    );
}

#[test]
fn no_results_say_so() {
    let results = parse_results(SearchKind::Brave, br#"{"type": "search"}"#).unwrap();
    assert_eq!(format_results("zzz", &results), "no results for `zzz`");
}

#[test]
fn an_answer_that_is_not_json_is_an_error() {
    let result = parse_results(SearchKind::Searxng, b"<html>");
    assert!(matches!(result, Err(ToolError::Failed(ref m)) if m.contains("not the expected JSON")));
}

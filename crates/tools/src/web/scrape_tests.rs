use std::io::Write;
use std::time::{Duration, Instant};

use super::*;
use crate::web::AddressPolicy;
use crate::web::test_server::{Reply, TestServer};

const ARTICLE: &str = r#"<!doctype html><html><head><title>Otters</title></head><body>
<nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<article><h1>Otters</h1>
<p>Sea otters hold hands while they sleep so that they do not drift apart. This is called
rafting, and a group of otters floating together is called a raft. They can stay like this
for hours, wrapped in kelp so that the current does not carry them off.</p>
<p>Read more in the <a href="/guide">field guide</a>, which lists every species and where it
lives, from the rivers of South America to the coasts of the North Pacific.</p>
<p>Otters have the densest fur of any animal, up to a million hairs per square inch, which
keeps them warm in cold water without a layer of blubber like seals and whales have.</p>
</article><footer>Copyright nobody</footer></body></html>"#;

/// A context whose address policy lets exactly `server` through.
fn ctx_for(server: &TestServer) -> ToolContext {
    let mut ctx = ToolContext::new(std::env::temp_dir());
    ctx.web.addresses = AddressPolicy::public_only().allow_socket(server.addr);
    ctx
}

async fn scrape(ctx: &ToolContext, arguments: serde_json::Value) -> Result<String, ToolError> {
    ScrapeWebpage::in_process()
        .call(arguments, ctx)
        .await
        .map(|output| output.text)
}

fn failure(result: Result<String, ToolError>) -> String {
    match result {
        Err(ToolError::Failed(message)) => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn an_html_page_becomes_markdown_with_its_links_kept() {
    let server = TestServer::start(|_| Reply::ok("text/html; charset=utf-8", ARTICLE)).await;
    let ctx = ctx_for(&server);
    let url = server.url("/otters");
    let text = scrape(&ctx, serde_json::json!({"url": url})).await.unwrap();
    assert!(text.starts_with(&format!("URL: {url}\n")), "{text}");
    assert!(text.contains("Sea otters hold hands"), "{text}");
    let guide = format!("[field guide]({})", server.url("/guide"));
    assert!(text.contains(&guide), "{text}");
    assert!(!text.contains("<p>"), "{text}");
}

#[tokio::test]
async fn format_text_gives_plain_text_without_markdown_links() {
    let server = TestServer::start(|_| Reply::ok("text/html", ARTICLE)).await;
    let ctx = ctx_for(&server);
    let arguments = serde_json::json!({"url": server.url("/"), "format": "text"});
    let text = scrape(&ctx, arguments).await.unwrap();
    assert!(text.contains("field guide"), "{text}");
    assert!(!text.contains("]("), "{text}");
}

fn redirect_chain(target: &str) -> Reply {
    // /hop/N redirects to /hop/N-1; /hop/0 is the page.
    match target
        .strip_prefix("/hop/")
        .and_then(|n| n.parse::<u32>().ok())
    {
        Some(0) => Reply::ok("text/plain", "arrived"),
        Some(n) => Reply::redirect(&format!("/hop/{}", n - 1)),
        None => Reply::ok("text/plain", "unexpected"),
    }
}

#[tokio::test]
async fn five_redirects_are_followed() {
    let server = TestServer::start(redirect_chain).await;
    let ctx = ctx_for(&server);
    let text = scrape(&ctx, serde_json::json!({"url": server.url("/hop/5")}))
        .await
        .unwrap();
    assert!(
        text.starts_with(&format!("URL: {}\n", server.url("/hop/0"))),
        "{text}"
    );
    assert!(text.ends_with("arrived"), "{text}");
    assert_eq!(server.requests().len(), 6);
}

#[tokio::test]
async fn a_sixth_redirect_is_refused_without_following_it() {
    let server = TestServer::start(redirect_chain).await;
    let ctx = ctx_for(&server);
    let message = failure(scrape(&ctx, serde_json::json!({"url": server.url("/hop/6")})).await);
    assert!(message.contains("too many redirects"), "{message}");
    assert!(message.contains("/hop/0"), "{message}");
    assert_eq!(
        server.requests().len(),
        6,
        "the sixth redirect's target is never asked"
    );
}

#[tokio::test]
async fn a_huge_body_is_cut_at_max_bytes() {
    let server = TestServer::start(|_| Reply::Endless {
        content_type: "text/plain".to_owned(),
    })
    .await;
    let ctx = ctx_for(&server);
    let arguments = serde_json::json!({"url": server.url("/big"), "max_bytes": 100_000});
    let text = scrape(&ctx, arguments).await.unwrap();
    assert!(
        text.contains("[page cut after 100000 bytes"),
        "{}",
        &text[..200]
    );
    let (_, body) = text.split_once("\n\n").unwrap();
    assert_eq!(body.len(), 100_000);
    assert!(body.bytes().all(|b| b == b'a'));
}

#[tokio::test]
async fn max_bytes_past_the_maximum_is_an_argument_error() {
    let ctx = ToolContext::new(std::env::temp_dir());
    let arguments =
        serde_json::json!({"url": "http://example.com/", "max_bytes": SCRAPE_MAX_BYTES + 1});
    let result = scrape(&ctx, arguments).await;
    assert!(
        matches!(result, Err(ToolError::InvalidArguments(ref m)) if m.contains("max_bytes")),
        "{result:?}"
    );
}

#[tokio::test]
async fn an_image_is_refused_naming_its_type() {
    let server = TestServer::start(|_| Reply::ok("image/png", vec![0x89, b'P', b'N', b'G'])).await;
    let ctx = ctx_for(&server);
    let message = failure(scrape(&ctx, serde_json::json!({"url": server.url("/a.png")})).await);
    assert!(message.contains("`image/png`"), "{message}");
}

#[tokio::test]
async fn a_windows_1252_page_is_decoded() {
    let body = b"<html><body><p>Caf\xe9 cr\xe8me \x93br\xfbl\xe9e\x94</p></body></html>".to_vec();
    let server =
        TestServer::start(move |_| Reply::ok("text/html; charset=windows-1252", body.clone()))
            .await;
    let ctx = ctx_for(&server);
    let text = scrape(&ctx, serde_json::json!({"url": server.url("/")}))
        .await
        .unwrap();
    assert!(text.contains("Café crème “brûlée”"), "{text}");
}

#[tokio::test]
async fn a_shift_jis_page_declared_by_meta_is_decoded() {
    let (encoded, _, _) = encoding_rs::SHIFT_JIS.encode("<p>日本語のページです</p>");
    let mut body = b"<html><head><meta charset=\"Shift_JIS\"></head><body>".to_vec();
    body.extend_from_slice(&encoded);
    body.extend_from_slice(b"</body></html>");
    let server = TestServer::start(move |_| Reply::ok("text/html", body.clone())).await;
    let ctx = ctx_for(&server);
    let text = scrape(&ctx, serde_json::json!({"url": server.url("/")}))
        .await
        .unwrap();
    assert!(text.contains("日本語のページです"), "{text}");
}

fn compressed_reply(encoding: &str, body: Vec<u8>) -> Reply {
    Reply::Page {
        status: 200,
        headers: vec![
            ("Content-Type".to_owned(), "text/plain".to_owned()),
            ("Content-Encoding".to_owned(), encoding.to_owned()),
        ],
        body,
    }
}

#[tokio::test]
async fn gzip_and_brotli_bodies_are_decompressed() {
    let plain = "compressed words ".repeat(100);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(plain.as_bytes()).unwrap();
    let gzip = gzip.finish().unwrap();
    let mut brotli = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut brotli, 4096, 5, 22);
        writer.write_all(plain.as_bytes()).unwrap();
    }
    let server = TestServer::start(move |target| match target {
        "/gz" => compressed_reply("gzip", gzip.clone()),
        _ => compressed_reply("br", brotli.clone()),
    })
    .await;
    let ctx = ctx_for(&server);
    for path in ["/gz", "/br"] {
        let text = scrape(&ctx, serde_json::json!({"url": server.url(path)}))
            .await
            .unwrap();
        assert!(text.ends_with(&plain), "{path}: {text}");
    }
    let asked = server.requests();
    let accept = asked[0].header("accept-encoding").unwrap_or("");
    assert!(accept.contains("gzip") && accept.contains("br"), "{accept}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_in_bounded_time() {
    let server = TestServer::start(|_| Reply::Silent).await;
    let mut ctx = ctx_for(&server);
    ctx.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let message = failure(scrape(&ctx, serde_json::json!({"url": server.url("/slow")})).await);
    assert!(message.contains("timed out after 300 ms"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 1, "the request did arrive");
}

#[tokio::test]
async fn a_non_success_status_is_an_error_naming_it() {
    let server = TestServer::start(|_| Reply::Page {
        status: 404,
        headers: vec![("Content-Type".to_owned(), "text/html".to_owned())],
        body: b"<p>gone</p>".to_vec(),
    })
    .await;
    let ctx = ctx_for(&server);
    let message = failure(scrape(&ctx, serde_json::json!({"url": server.url("/gone")})).await);
    assert!(message.starts_with("HTTP 404"), "{message}");
}

#[tokio::test]
async fn non_http_schemes_are_refused() {
    let ctx = ToolContext::new(std::env::temp_dir());
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com/",
    ] {
        let message = failure(scrape(&ctx, serde_json::json!({ "url": url })).await);
        assert!(message.contains("http and https only"), "{url}: {message}");
    }
}

/// The SSRF refusals. Each fetch is refused before any connection, so no
/// packet leaves this host: the refused private and metadata addresses are
/// never contacted at all, and the loopback server proves it got nothing.
mod ssrf {
    use super::*;

    async fn refused(ctx: &ToolContext, url: &str) -> String {
        let message = failure(scrape(ctx, serde_json::json!({ "url": url })).await);
        assert!(
            message.contains("refusing to connect to"),
            "{url}: {message}"
        );
        message
    }

    #[tokio::test]
    async fn loopback_is_refused_by_default_and_the_server_sees_nothing() {
        let server = TestServer::start(|_| Reply::ok("text/plain", "secret")).await;
        let ctx = ToolContext::new(std::env::temp_dir());
        let message = refused(&ctx, &server.url("/")).await;
        assert!(message.contains("127.0.0.1 (loopback)"), "{message}");
        assert!(server.requests().is_empty());
    }

    #[tokio::test]
    async fn literal_non_public_addresses_are_refused() {
        let ctx = ToolContext::new(std::env::temp_dir());
        let cases = [
            ("http://[::1]:9/", "::1 (loopback)"),
            (
                "http://169.254.169.254/latest/meta-data/",
                "169.254.169.254 (cloud metadata endpoint)",
            ),
            (
                "http://10.0.0.1/",
                "10.0.0.1 (private network (10.0.0.0/8))",
            ),
            (
                "http://[::ffff:127.0.0.1]:9/",
                "::ffff:127.0.0.1 (loopback)",
            ),
            (
                "http://[fd00:ec2::254]/",
                "fd00:ec2::254 (cloud metadata endpoint)",
            ),
            ("http://100.64.1.1/", "carrier-grade NAT"),
            ("http://0.0.0.0:9/", "0.0.0.0 (unspecified)"),
        ];
        for (url, expected) in cases {
            let message = refused(&ctx, url).await;
            assert!(message.contains(expected), "{url}: {message}");
        }
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused() {
        let server = TestServer::start(|_| Reply::ok("text/plain", "secret")).await;
        let ctx = ToolContext::new(std::env::temp_dir());
        let url = format!("http://localhost:{}/", server.addr.port());
        let message = refused(&ctx, &url).await;
        assert!(message.contains("(loopback)"), "{message}");
        assert!(server.requests().is_empty());
    }

    #[tokio::test]
    async fn a_redirect_from_an_allowed_address_to_a_private_one_is_refused() {
        let inner = TestServer::start(|_| Reply::ok("text/plain", "internal secret")).await;
        let inner_url = inner.url("/admin");
        let outer = TestServer::start(move |_| Reply::redirect(&inner_url)).await;
        let ctx = ctx_for(&outer);
        let message = refused(&ctx, &outer.url("/")).await;
        assert!(message.contains(&inner.url("/admin")), "{message}");
        assert_eq!(outer.requests().len(), 1);
        assert!(
            inner.requests().is_empty(),
            "the private server was never contacted"
        );
    }

    #[tokio::test]
    async fn allowing_private_networks_lets_loopback_through() {
        let server = TestServer::start(|_| Reply::ok("text/plain", "local page")).await;
        let mut ctx = ToolContext::new(std::env::temp_dir());
        ctx.web.addresses = AddressPolicy::allowing_private_networks(true);
        let text = scrape(&ctx, serde_json::json!({"url": server.url("/")}))
            .await
            .unwrap();
        assert!(text.ends_with("local page"), "{text}");
        assert_eq!(server.requests().len(), 1);
    }
}

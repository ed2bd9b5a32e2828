//! `subagent doctor --model` against servers that do not list the model
//! they serve: a warning on an OpenAI-compatible server, settled by
//! `--probe-model`'s 1-token request, against a loopback server and the
//! real llama-server (which answers to any model name).

use std::io::{Read, Write};
use std::net::TcpListener;

use super::exit_codes;

use super::doctor::{doctor, probe, report, serve_one_model_list};
use super::support::assert_nothing_runs_in;

/// Answers `GET /v1/models` with a list naming only `m`, then one POST
/// with `post_status`; returns the requests it saw.
fn serve_list_then_post(
    listener: TcpListener,
    post_status: &'static str,
) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..2 {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // Headers, then the body its Content-Length announces.
            loop {
                let n = conn.read(&mut buf).unwrap();
                assert!(n > 0, "the request ended early");
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).into_owned();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let wanted = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .map_or(0, |n| n.trim().parse::<usize>().unwrap());
                    if body.len() >= wanted {
                        break;
                    }
                }
            }
            let text = String::from_utf8_lossy(&request).into_owned();
            let (status, body) = if text.starts_with("GET ") {
                ("200 OK", r#"{"object":"list","data":[{"id":"m"}]}"#)
            } else {
                (
                    post_status,
                    r#"{"error":{"message":"model 'other' not found"}}"#,
                )
            };
            write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            seen.push(text);
        }
        seen
    })
}

#[test]
fn an_unlisted_model_on_an_openai_compatible_server_is_a_warning_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = serve_one_model_list(listener);
    let args = ["--base-url", &url, "--model", "other"];
    let out = doctor(dir.path(), &[&["--json"][..], &args].concat());
    server.join().unwrap();
    let report = report(&out);
    let model = probe(&report, "model");
    assert_eq!(model["ok"], true, "{model}");
    assert_eq!(model["warning"], true, "{model}");
    assert!(
        model["fix"].as_str().unwrap().contains("--probe-model"),
        "{model}"
    );
    // The exit code is that of the other probes of this machine.
    let others_ok = report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["ok"] == true);
    let expected = if others_ok {
        exit_codes::OK
    } else {
        exit_codes::DOCTOR_MISSING
    };
    assert_eq!(out.status.code(), Some(expected), "{report}");
    assert_nothing_runs_in(dir.path());
}

#[test]
fn probe_model_settles_an_unlisted_model_with_a_one_token_request() {
    for (status, ok) in [("200 OK", true), ("404 Not Found", false)] {
        let dir = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let server = serve_list_then_post(listener, status);
        let out = doctor(
            dir.path(),
            &[
                "--json",
                "--base-url",
                &url,
                "--model",
                "other",
                "--probe-model",
            ],
        );
        let seen = server.join().unwrap();
        assert_eq!(seen.len(), 2, "{seen:#?}");
        let post = &seen[1];
        assert!(post.starts_with("POST /v1/chat/completions "), "{post}");
        assert!(
            post.contains(r#""max_tokens":1"#) && post.contains(r#""model":"other""#),
            "{post}"
        );
        assert!(
            !post.to_ascii_lowercase().contains("authorization"),
            "{post}"
        );
        let report = report(&out);
        let model = probe(&report, "model");
        assert_eq!(model["ok"], ok, "{model}");
        assert!(model.get("warning").is_none(), "{model}");
        if !ok {
            assert!(
                model["detail"].as_str().unwrap().contains("not found"),
                "{model}"
            );
            assert_eq!(out.status.code(), Some(exit_codes::DOCTOR_MISSING));
        }
        assert_nothing_runs_in(dir.path());
    }
}

#[test]
fn doctor_against_llama_server_warns_about_an_unlisted_name_and_probe_model_settles_it() {
    let Some(server) = super::llama::LlamaServer::start_or_skip("doctor_llama") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.base_url();
    let model = |extra: &[&str]| {
        let args = [
            &["--json", "--base-url", &url, "--model", "smol"][..],
            extra,
        ]
        .concat();
        let report = report(&doctor(dir.path(), &args));
        probe(&report, "model").clone()
    };
    let listed = model(&[]);
    assert_eq!(listed["ok"], true, "{listed}");
    assert_eq!(listed["warning"], true, "{listed}");
    let asked = model(&["--probe-model"]);
    assert_eq!(asked["ok"], true, "{asked}");
    assert!(asked.get("warning").is_none(), "{asked}");
    assert!(
        asked["detail"]
            .as_str()
            .unwrap()
            .contains("answered a 1-token request"),
        "{asked}"
    );
    assert_nothing_runs_in(dir.path());
}

//! `subagent doctor --model` against servers that do not list the model
//! they serve: a warning on an OpenAI-compatible server, settled by
//! `--probe-model`'s 1-token request, against a loopback server and the
//! real llama-server (which answers to any model name).

use subagent_test_support::http::{LoopbackHttp, Request, Response};

use super::doctor::{doctor, model_list_server, probe, report, the_request};
use super::exit_codes;
use super::support::assert_nothing_runs_in;

/// A model server (the test support's stub) answering `GET /v1/models`
/// with a list naming only `m`, and a POST with `post_status`.
fn list_then_post_server(post_status: u16) -> LoopbackHttp {
    LoopbackHttp::start(move |request| {
        if request.method == "GET" {
            Response::json(200, r#"{"object":"list","data":[{"id":"m"}]}"#)
        } else {
            Response::json(
                post_status,
                r#"{"error":{"message":"model 'other' not found"}}"#,
            )
        }
    })
}

#[test]
fn an_unlisted_model_on_an_openai_compatible_server_is_a_warning_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let server = model_list_server();
    let url = server.url("/v1");
    let args = ["--base-url", &url, "--model", "other"];
    let out = doctor(dir.path(), &[&["--json"][..], &args].concat());
    the_request(&server);
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
    for (status, ok) in [(200, true), (404, false)] {
        let dir = tempfile::tempdir().unwrap();
        let server = list_then_post_server(status);
        let url = server.url("/v1");
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
        let seen: Vec<String> = server.requests().iter().map(Request::text).collect();
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

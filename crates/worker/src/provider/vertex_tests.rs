use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn stream_url_names_project_region_and_model() {
    let base = location_url("p-1", "europe-west1");
    assert_eq!(
        stream_url(&base, "claude-sonnet-4@20250514").unwrap(),
        "https://europe-west1-aiplatform.googleapis.com/v1/projects/p-1/locations/europe-west1\
         /publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict"
    );
    assert_eq!(
        stream_url("http://127.0.0.1:9/v1/projects/p/locations/r/", "m").unwrap(),
        "http://127.0.0.1:9/v1/projects/p/locations/r/publishers/anthropic/models/m:streamRawPredict"
    );
}

#[test]
fn stream_url_refuses_a_model_with_a_slash_and_a_bad_base() {
    assert!(stream_url("http://127.0.0.1:9", "a/b").is_err());
    assert!(stream_url("http://127.0.0.1:9", "").is_err());
    assert!(stream_url("ftp://x", "m").is_err());
}

#[test]
fn body_loses_model_and_gains_the_vertex_version() {
    let body = into_vertex_body(json!({"model": "m", "max_tokens": 5, "stream": true}));
    assert_eq!(
        body,
        json!({"max_tokens": 5, "stream": true, "anthropic_version": "vertex-2023-10-16"})
    );
}

use super::*;

fn s() -> Sanitizer {
    Sanitizer::new(
        vec!["my-very-own-key-123".to_owned()],
        Some("/home/alice".to_owned()),
    )
}

#[test]
fn every_pattern_compiles() {
    assert!(subagent_redact::pattern_errors().is_empty());
    assert!(HOME_PATH.is_some());
    assert!(NUMBERED_FRAME.is_some() && PYTHON_FRAME.is_some() && AT_FRAME.is_some());
}

#[test]
fn known_secret_values_are_masked_anywhere() {
    let out = s().mask_secrets("key=my-very-own-key-123;x my-very-own-key-123");
    assert!(!out.contains("my-very-own-key-123"), "{out}");
}

#[test]
fn secret_shapes_are_masked_in_session_text_and_returned_text() {
    let cases = [
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdefghij",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "https://admin:hunter2@db.internal/app",
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\n-----END EC PRIVATE KEY-----",
    ];
    for secret in cases {
        let text = format!("token {secret} end");
        let session = s().mask_secrets(&text);
        let returned = s().sanitize_returned(&text);
        for out in [session, returned] {
            assert!(!out.contains(secret), "{secret} survived: {out}");
            assert!(out.contains("***"), "{out}");
        }
    }
}

#[test]
fn headers_bearer_and_query_tokens_are_masked() {
    let text = "Authorization: Bearer abc.def.ghi-jkl\n\
                x-api-key: zzzzzzzzzzzz\n\
                export OPENAI_API_KEY=abc123secretvalue\n\
                GET https://api.example.com/v1?user=bob&access_token=tok123456&x=1\n\
                curl -H 'authorization: token qqqqqqqqqq'\n\
                DB_PASSWORD=correcthorse";
    let out = s().mask_secrets(text);
    for leaked in [
        "abc.def.ghi-jkl",
        "zzzzzzzzzzzz",
        "abc123secretvalue",
        "tok123456",
        "qqqqqqqqqq",
        "correcthorse",
    ] {
        assert!(!out.contains(leaked), "{leaked} survived:\n{out}");
    }
    assert!(out.contains("user=bob"), "non-secret query kept: {out}");
    assert!(out.contains("&x=1"), "{out}");
}

#[test]
fn environment_secret_values_are_masked_by_value() {
    let redactor = subagent_redact::Redactor::with_env_vars(
        Vec::new(),
        vec![(
            "MY_SERVICE_TOKEN".to_owned(),
            "zq8-Frobnicate-Wibble".to_owned(),
        )],
    );
    let s = Sanitizer::with_redactor(redactor, None);
    assert_eq!(
        s.sanitize_returned("the answer is zq8-Frobnicate-Wibble"),
        "the answer is ***"
    );
}

#[test]
fn ordinary_text_is_untouched() {
    let text = "The key insight is that tokens are counted per turn.\n\
                exported 3 files\n\
                max_tokens: 4096, token_count=12, tokens: 100\n\
                export PATH=/usr/local/bin:/usr/bin";
    assert_eq!(s().mask_secrets(text), text);
}

#[test]
fn home_paths_become_tilde_in_returned_text_only() {
    let text = "see /home/alice/src/main.rs and /home/bob/x and /root/.bashrc";
    let out = s().sanitize_returned(text);
    assert_eq!(out, "see ~/src/main.rs and ~/x and ~/.bashrc");
    assert_eq!(s().mask_secrets(text), text);
}

#[test]
fn stack_traces_are_cut_to_five_frames() {
    let mut trace = String::from("thread 'main' panicked at src/x.rs:1:1\nstack backtrace:\n");
    for i in 0..20 {
        trace.push_str(&format!(
            "  {i}: crate::f{i}\n             at ./src/f{i}.rs:{i}:1\n"
        ));
    }
    trace.push_str("note: run with RUST_BACKTRACE=full\n");
    let out = cut_stack_traces(&trace, 5);
    assert!(out.contains("crate::f4\n"), "{out}");
    assert!(out.contains("at ./src/f4.rs"), "{out}");
    assert!(!out.contains("crate::f5\n"), "{out}");
    assert!(!out.contains("f19"), "{out}");
    assert!(out.contains("[... 15 more frames omitted ...]"), "{out}");
    assert!(
        out.ends_with("note: run with RUST_BACKTRACE=full\n"),
        "{out}"
    );
}

#[test]
fn python_and_js_traces_are_cut_too() {
    let mut py = String::from("Traceback (most recent call last):\n");
    for i in 0..8 {
        py.push_str(&format!("  File \"m{i}.py\", line {i}, in f\n    call()\n"));
    }
    py.push_str("ValueError: boom\n");
    let out = cut_stack_traces(&py, 5);
    assert!(out.contains("m4.py") && !out.contains("m5.py"), "{out}");
    assert!(
        out.contains("[... 3 more frames omitted ...]\nValueError: boom"),
        "{out}"
    );

    let mut js = String::from("Error: x\n");
    for i in 0..7 {
        js.push_str(&format!("    at f{i} (file.js:{i}:1)\n"));
    }
    let out = cut_stack_traces(&js, 5);
    assert!(out.contains("f4 (") && !out.contains("f5 ("), "{out}");
    assert!(out.ends_with("[... 2 more frames omitted ...]\n"), "{out}");
}

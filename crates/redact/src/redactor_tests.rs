use std::borrow::Cow;
use std::time::Instant;

use pretty_assertions::assert_eq;
use proptest::prelude::*;

use super::*;

const KEY: &str = "run-key-0123456789";

/// About 5 MB of ordinary text: prose, JSON with counts, code, URLs
/// without credentials, non-ASCII.
fn clean_text(bytes: usize) -> String {
    let block = "The model answered in 3 turns; max_tokens: 4096, token_count=12.\n\
                 {\"usage\": {\"prompt_tokens\": 120, \"completion_tokens\": 7}, \"primary_key\": \"id\"}\n\
                 See https://example.com:8443/docs?q=rust&page=2 and ssh://git@github.com/org/repo.\n\
                 fn main() { let key = map.get(&k); println!(\"{key:?}\"); } // ключ, 鍵, clé\n\
                 -----BEGIN PUBLIC KEY----- is not a secret; bearer tokens are short-lived.\n";
    block.repeat(bytes / block.len() + 1)
}

#[test]
fn clean_text_is_returned_borrowed() {
    let text = clean_text(10_000);
    assert!(matches!(
        Redactor::new([KEY.to_owned()]).redact(&text),
        Cow::Borrowed(_)
    ));
}

#[test]
fn five_megabytes_without_secrets_pass_untouched() {
    let text = clean_text(5 * 1024 * 1024);
    let started = Instant::now();
    let out = Redactor::new([KEY.to_owned()]).redact(&text);
    let took = started.elapsed();
    eprintln!("5 MB clean: {took:?}");
    assert!(matches!(out, Cow::Borrowed(_)), "something was masked");
}

#[test]
fn five_megabytes_with_many_secrets_lose_every_one() {
    let secrets = [
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "xoxb-1234567890-abcdefghij",
        "hunter2hunter2",
        "MIIEowIBAAKCAQEA7xq",
        KEY,
    ];
    let block = format!(
        "key {} and {} then {} / {} / {}\n{} DB_PASSWORD={} and {}\n\
         -----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n\
         ordinary text: max_tokens: 4096, ключ\n",
        secrets[0],
        secrets[1],
        secrets[2],
        secrets[3],
        secrets[4],
        secrets[5],
        secrets[6],
        secrets[8],
        secrets[7],
    );
    let text = block.repeat(5 * 1024 * 1024 / block.len() + 1);
    let blocks = text.matches("ordinary text").count();
    let started = Instant::now();
    let out = Redactor::new([KEY.to_owned()]).redact(&text);
    let took = started.elapsed();
    eprintln!("5 MB with {} secrets: {took:?}", blocks * secrets.len());
    for secret in secrets {
        assert!(!out.contains(secret), "{secret} survived");
    }
    assert_eq!(out.matches("max_tokens: 4096").count(), blocks);
    assert_eq!(out.matches(MASK).count(), blocks * secrets.len());
}

#[test]
fn known_values_are_masked_anywhere_and_longest_first() {
    let r = Redactor::new(["abcdefgh".to_owned(), "abcdefgh-ijkl".to_owned()]);
    assert_eq!(r.redact("x=abcdefgh-ijkl;y abcdefgh"), "x=***;y ***");
}

#[test]
fn short_known_values_are_ignored() {
    let r = Redactor::new(["x".to_owned(), "abcde".to_owned()]);
    assert_eq!(r.known_values(), 0);
    assert_eq!(
        r.redact("max_tokens exceeded abcde"),
        "max_tokens exceeded abcde"
    );
    assert_eq!(mask_literal("xx", "x"), "xx");
}

#[test]
fn redact_known_leaves_shapes_alone() {
    let r = Redactor::new([KEY.to_owned()]);
    assert_eq!(
        r.redact_known(&format!("{KEY} sk-proj-abcdefghijklmnopqrstuvwx")),
        "*** sk-proj-abcdefghijklmnopqrstuvwx"
    );
}

#[test]
fn debug_never_shows_a_known_value() {
    let shown = format!("{:?}", Redactor::new([KEY.to_owned()]));
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("known_values: 1"), "{shown}");
}

#[test]
fn edge_inputs_do_not_panic() {
    let r = Redactor::new([KEY.to_owned()]);
    for text in [
        "",
        "-----BEGIN PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----\n",
        "password=",
        "\"password\": \"",
        "https://u:@h",
        "é sk-proj-abcdefghijklmnopqrstuvwxé",
        "Authorization: Bearer ",
    ] {
        let _ = r.redact(text);
    }
}

proptest! {
    #[test]
    fn a_known_value_never_survives_whatever_surrounds_it(
        before in "\\PC{0,40}",
        after in "\\PC{0,40}",
    ) {
        let r = Redactor::new([KEY.to_owned()]);
        let text = format!("{before}{KEY}{after}");
        let out = r.redact(&text);
        prop_assert!(!out.contains(KEY), "{}", out);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = Redactor::default().redact(&text);
    }
}

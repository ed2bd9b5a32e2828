use pretty_assertions::assert_eq;
use subagent_protocol::ProviderKind;

use super::*;

fn spec(model: &str, base_url: &str) -> ProviderSpec {
    ProviderSpec::new(ProviderKind::OpenaiChat, base_url, model)
}

#[test]
fn dated_snapshots_match_their_family() {
    assert_eq!(price_for("gpt-4o-2024-08-06").price.input, 2.50);
    assert_eq!(price_for("gpt-4o-mini-2024-07-18").price.input, 0.15);
    assert_eq!(price_for("claude-sonnet-4-5-20250929").price.output, 15.00);
    assert_eq!(price_for("claude-opus-4-1-20250805").price.input, 15.00);
    assert_eq!(price_for("claude-opus-4-5-20251101").price.input, 5.00);
    assert_eq!(price_for("claude-3-5-haiku-latest").price.input, 0.80);
    assert!(price_for("openai/gpt-4.1-mini").known);
}

#[test]
fn unlisted_versions_and_variants_are_unknown_not_mispriced() {
    for model in [
        "claude-opus-4-6",
        "gpt-4o-audio-preview",
        "gpt-4.1-turbo",
        "SmolLM2-135M-Instruct",
        "",
    ] {
        let lookup = price_for(model);
        assert!(!lookup.known, "{model}");
        assert_eq!(lookup.price, ModelPrice::default(), "{model}");
    }
}

#[test]
fn cost_uses_all_four_prices() {
    let usage = Usage {
        input: 1_000_000,
        output: 100_000,
        cache_read: 2_000_000,
        cache_write: 1_000_000,
        ..Usage::default()
    };
    // 3.00 + 1.50 + 0.60 + 3.75
    let cost = price_for("claude-sonnet-4").cost_of(&usage);
    assert!((cost - 8.85).abs() < 1e-9, "{cost}");
}

#[test]
fn override_wins_over_the_table() {
    let mut spec = spec("gpt-4o", "https://api.openai.com/v1");
    spec.price = Some(ModelPrice {
        input: 1.0,
        output: 2.0,
        cache_read: 0.5,
        cache_write: 1.0,
    });
    let lookup = price_for_spec(&spec);
    assert!(lookup.known);
    assert_eq!(lookup.price.output, 2.0);
}

#[test]
fn unknown_model_on_loopback_is_free_and_known() {
    for base_url in [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8080/v1",
    ] {
        let lookup = price_for_spec(&spec("SmolLM2-135M-Instruct", base_url));
        assert!(lookup.known, "{base_url}");
        assert_eq!(lookup.price, ModelPrice::default());
    }
    assert!(!price_for_spec(&spec("SmolLM2", "https://example.com/v1")).known);
}

#[test]
fn known_model_through_a_local_proxy_keeps_its_price() {
    let lookup = price_for_spec(&spec("gpt-4o", "http://127.0.0.1:4000/v1"));
    assert_eq!(lookup.price.input, 2.50);
}

#[test]
fn every_table_entry_is_reachable_by_its_own_name() {
    for (family, price) in BUILTIN_PRICES {
        assert_eq!(price_for(family).price, *price, "{family}");
    }
}

//! What a turn costs: token usage times a per-model price table.
//!
//! Prices are US dollars per million tokens ([`ModelPrice`]). A
//! `ProviderSpec::price` overrides the built-in table; a model found in
//! neither costs 0 and is reported as unknown ([`PriceLookup::known`]) so
//! the caller can say "cost unknown for model X" instead of pretending it
//! was free. A model served on this machine (loopback base URL) that the
//! table does not know costs 0 and is known: local tokens are free.
//!
//! The table is a snapshot and must never be fetched at run time.

use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{ProviderSpec, Usage};

/// When [`BUILTIN_PRICES`] was written down (list prices as published by
/// OpenAI and Anthropic for standard, non-batch use; 5-minute cache writes).
/// Prices change: override with `ProviderSpec::price` when they do.
pub const PRICE_TABLE_DATE: &str = "2026-11-22";

const fn price(input: f64, output: f64, cache_read: f64, cache_write: f64) -> ModelPrice {
    ModelPrice {
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// Built-in prices by model family. A model id matches an entry when it is
/// the entry itself, or the entry followed by a snapshot date
/// (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`) or `-latest`. Any
/// other suffix is another model (`claude-opus-4-6` is not
/// `claude-opus-4`) and stays unknown rather than mispriced. OpenAI reports
/// no cache writes, so its cache-write price is the input price.
pub const BUILTIN_PRICES: &[(&str, ModelPrice)] = &[
    ("gpt-4o", price(2.50, 10.00, 1.25, 2.50)),
    ("gpt-4o-mini", price(0.15, 0.60, 0.075, 0.15)),
    ("gpt-4.1", price(2.00, 8.00, 0.50, 2.00)),
    ("gpt-4.1-mini", price(0.40, 1.60, 0.10, 0.40)),
    ("gpt-4.1-nano", price(0.10, 0.40, 0.025, 0.10)),
    ("gpt-5", price(1.25, 10.00, 0.125, 1.25)),
    ("gpt-5-mini", price(0.25, 2.00, 0.025, 0.25)),
    ("gpt-5-nano", price(0.05, 0.40, 0.005, 0.05)),
    ("o1", price(15.00, 60.00, 7.50, 15.00)),
    ("o3", price(2.00, 8.00, 0.50, 2.00)),
    ("o3-mini", price(1.10, 4.40, 0.55, 1.10)),
    ("o4-mini", price(1.10, 4.40, 0.275, 1.10)),
    ("claude-opus-4", price(15.00, 75.00, 1.50, 18.75)),
    ("claude-opus-4-1", price(15.00, 75.00, 1.50, 18.75)),
    ("claude-opus-4-5", price(5.00, 25.00, 0.50, 6.25)),
    ("claude-sonnet-4", price(3.00, 15.00, 0.30, 3.75)),
    ("claude-sonnet-4-5", price(3.00, 15.00, 0.30, 3.75)),
    ("claude-haiku-4-5", price(1.00, 5.00, 0.10, 1.25)),
    ("claude-3-opus", price(15.00, 75.00, 1.50, 18.75)),
    ("claude-3-7-sonnet", price(3.00, 15.00, 0.30, 3.75)),
    ("claude-3-5-sonnet", price(3.00, 15.00, 0.30, 3.75)),
    ("claude-3-5-haiku", price(0.80, 4.00, 0.08, 1.00)),
    ("claude-3-haiku", price(0.25, 1.25, 0.03, 0.30)),
];

/// A model's price and whether it came from a table or an override.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceLookup {
    /// The price; all zero when unknown.
    pub price: ModelPrice,
    /// False when the model is in no table: its cost is reported as 0 but
    /// is really unknown.
    pub known: bool,
}

impl PriceLookup {
    /// The cost of `usage` at this price.
    pub fn cost_of(&self, usage: &Usage) -> f64 {
        self.price.cost_of(usage)
    }
}

/// The built-in price of `model` (a vendor prefix such as `openai/` is
/// ignored).
pub fn price_for(model: &str) -> PriceLookup {
    let model = model.rsplit('/').next().unwrap_or(model);
    BUILTIN_PRICES
        .iter()
        .filter(|(family, _)| is_member(model, family))
        .max_by_key(|(family, _)| family.len())
        .map_or(
            PriceLookup {
                price: ModelPrice::default(),
                known: false,
            },
            |(_, price)| PriceLookup {
                price: *price,
                known: true,
            },
        )
}

/// The price of `spec`'s model: its override, else the built-in table,
/// else free when served from this machine, else unknown.
pub fn price_for_spec(spec: &ProviderSpec) -> PriceLookup {
    if let Some(price) = spec.price {
        return PriceLookup { price, known: true };
    }
    let lookup = price_for(&spec.model);
    if !lookup.known && is_loopback(&spec.base_url) {
        return PriceLookup {
            price: ModelPrice::default(),
            known: true,
        };
    }
    lookup
}

fn is_member(model: &str, family: &str) -> bool {
    let Some(suffix) = model.strip_prefix(family) else {
        return false;
    };
    suffix.is_empty() || suffix == "-latest" || suffix.strip_prefix('-').is_some_and(is_date)
}

/// `20250929` or `2024-08-06`.
fn is_date(text: &str) -> bool {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    match text.split('-').collect::<Vec<_>>().as_slice() {
        [compact] => digits(compact, 8),
        [year, month, day] => digits(year, 4) && digits(month, 2) && digits(day, 2),
        _ => false,
    }
}

fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    match url.host_str() {
        Some("localhost") => true,
        Some(host) => host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

#[cfg(test)]
#[path = "pricing_tests.rs"]
mod tests;

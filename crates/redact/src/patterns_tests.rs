use std::collections::HashSet;

use pretty_assertions::assert_eq;

use super::*;
use crate::redactor::{mask_with, prefilter_built};
use crate::{Redactor, pattern_errors};

#[test]
fn every_pattern_compiles_and_the_prefilter_builds() {
    let errors: Vec<String> = pattern_errors()
        .iter()
        .map(|e| format!("{e}: {}", e.source))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(prefilter_built(), "the RegexSet prefilter did not build");
}

#[test]
fn every_family_has_a_unique_name_and_examples_both_ways() {
    let mut names = HashSet::new();
    for entry in SECRET_PATTERNS {
        assert!(names.insert(entry.name), "{} twice", entry.name);
        assert!(
            !entry.positives.is_empty(),
            "{} has no positive",
            entry.name
        );
        assert!(
            !entry.negatives.is_empty(),
            "{} has no negative",
            entry.name
        );
    }
}

#[test]
fn every_positive_example_is_masked_by_its_own_pattern_and_by_the_table() {
    let redactor = Redactor::default();
    for entry in SECRET_PATTERNS {
        for (input, expected) in entry.positives {
            assert_ne!(input, expected, "{}: example masks nothing", entry.name);
            assert_eq!(
                mask_with(entry, input).as_deref(),
                Some(*expected),
                "{} alone, on {input:?}",
                entry.name
            );
            assert_eq!(
                redactor.redact(input),
                *expected,
                "{} in the table, on {input:?}",
                entry.name
            );
        }
    }
}

#[test]
fn every_negative_example_is_untouched_by_the_whole_table() {
    let redactor = Redactor::default();
    for entry in SECRET_PATTERNS {
        for input in entry.negatives {
            assert_eq!(redactor.redact(input), *input, "{} negative", entry.name);
        }
    }
}

#[test]
fn masked_json_stays_valid_json() {
    let redactor = Redactor::default();
    for entry in SECRET_PATTERNS {
        for (input, _) in entry.positives {
            if input.starts_with('{') {
                let masked = redactor.redact(input);
                assert!(
                    is_balanced_json_strings(&masked),
                    "{}: {masked}",
                    entry.name
                );
            }
        }
    }
}

/// Quotes still pair up (no escape eaten by a mask): enough to know a
/// JSON object's strings end where they did, without a JSON parser here.
fn is_balanced_json_strings(text: &str) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_string = !in_string,
            _ => {}
        }
    }
    !in_string
}

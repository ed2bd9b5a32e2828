use std::collections::HashSet;

use pretty_assertions::assert_eq;
use proptest::prelude::*;

use super::*;

#[test]
fn a_run_id_is_128_bits_in_32_hex_digits() {
    let id = new_run_id();
    assert_eq!(id.len(), 32, "{id}");
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "{id}"
    );
    // A file name's id ends at the first `-`: an id must hold none.
    assert_eq!(run_id_of_file_name(&format!("{id}-general.jsonl")), id);
}

#[test]
fn ids_made_one_after_another_sort_in_that_order() {
    let ids: Vec<String> = (0..10_000).map(|_| new_run_id()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
}

/// A batch of 300,000 runs: with the old 32-bit ids, two equal ones are
/// all but certain (1 - e^(-300000^2 / 2^33) > 0.9999).
#[test]
fn a_batch_of_300000_ids_made_on_8_threads_has_no_two_alike() {
    let ids: Vec<String> = std::thread::scope(|scope| {
        let makers: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| (0..37_500).map(|_| new_run_id()).collect::<Vec<_>>()))
            .collect();
        makers
            .into_iter()
            .flat_map(|maker| maker.join().unwrap())
            .collect()
    });
    let distinct: HashSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// However a batch is spread over threads, its ids are all distinct.
    #[test]
    fn batch_ids_are_unique_however_the_batch_is_split(
        per_thread in proptest::collection::vec(1usize..2_000, 1..12),
    ) {
        let ids: Vec<String> = std::thread::scope(|scope| {
            let makers: Vec<_> = per_thread
                .iter()
                .map(|&n| scope.spawn(move || (0..n).map(|_| new_run_id()).collect::<Vec<_>>()))
                .collect();
            makers.into_iter().flat_map(|m| m.join().unwrap()).collect()
        });
        let distinct: HashSet<&String> = ids.iter().collect();
        prop_assert_eq!(distinct.len(), per_thread.iter().sum::<usize>());
    }

    /// Every abbreviation is at least 8 long, a prefix of its id, and
    /// names that id alone among all of them.
    #[test]
    fn an_abbreviation_names_its_id_alone(
        ids in proptest::collection::hash_set("[0-9a-f]{8}([0-9a-f]{24})?", 1..40),
        common in "[0-9a-f]{0,12}",
    ) {
        // A shared head, as ids of one minute have.
        let ids: Vec<String> = ids.into_iter().map(|id| format!("{common}{id}")).collect();
        let all: Vec<&str> = ids.iter().map(String::as_str).collect();
        for (id, short) in all.iter().zip(abbreviate(&all, &all)) {
            prop_assert!(short.len() >= MIN_SHOWN.min(id.len()));
            prop_assert!(id.starts_with(&short));
            let named: Vec<&&str> = all.iter().filter(|other| other.starts_with(&short)).collect();
            // An id that is a prefix of another is shown whole: it names
            // itself exactly, and the longer one needs more digits.
            prop_assert!(named.len() == 1 || short == *id, "{short} names {named:?}");
        }
    }
}

#[test]
fn ids_of_one_minute_are_shown_as_long_as_they_must_be_and_old_ids_whole() {
    let all = [
        "0190a1b2c3d47aaa8bbbccccddddeeee",
        "0190a1b2c3d47aab8bbbccccddddeeee",
        "0190a1b2ffff7000800000000000aaaa",
        "3f9c2a10",
    ];
    assert_eq!(
        abbreviate(&all, &all),
        [
            "0190a1b2c3d47aaa",
            "0190a1b2c3d47aab",
            "0190a1b2f",
            "3f9c2a10"
        ]
    );
    // Alone, an id is shown by its first 8 digits.
    assert_eq!(abbreviate(&all[..1], &all[..1]), ["0190a1b2"]);
}

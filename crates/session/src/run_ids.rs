//! Run ids: how they are made, and how they are shown short.
//!
//! A run id is a UUIDv7 written as 32 lowercase hex digits: 48 bits of
//! start time (milliseconds), then 74 bits drawn at random (within one
//! process, a counter seeded at random keeps its ids apart and ordered), so
//! ids sort by start and two processes' batches of a million runs each
//! meet an equal id about once in 10^10 (the 8-digit ids before had 32
//! random bits: a 100,000-run batch met a duplicate about 69% of the time). Session files of the older
//! 8-digit ids are read as before: an id is whatever precedes the first
//! `-` of a session file's name, whatever its length.
//!
//! Like git's abbreviated hashes, an id is shown as its shortest prefix of
//! at least [`MIN_SHOWN`] digits that no other run of the same sessions
//! dir shares, and looked up by any such prefix
//! ([`super::read::find_session`]). Nothing here reads or writes files.

/// Fewest digits of a run id shown or worth typing: as long as the old
/// ids, so one of those is shown whole.
pub const MIN_SHOWN: usize = 8;

/// A fresh run id: a UUIDv7 as 32 hex digits.
pub fn new_run_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

/// The run id of a session file named `file_name` (`<runId>-<agent>.jsonl`).
pub fn run_id_of_file_name(file_name: &str) -> &str {
    file_name.split_once('-').map_or(file_name, |(id, _)| id)
}

/// Each of `shown` as its shortest prefix of at least [`MIN_SHOWN`]
/// characters that no other id of `all` (which may hold `shown`'s own ids,
/// and more) starts with; an id that is a prefix of another is shown whole.
pub fn abbreviate(shown: &[&str], all: &[&str]) -> Vec<String> {
    let mut sorted: Vec<&str> = all.iter().chain(shown).copied().collect();
    sorted.sort_unstable();
    sorted.dedup();
    shown
        .iter()
        .map(|id| {
            // Only the neighbours in sorted order can share the longest
            // prefix with `id`.
            let at = sorted.partition_point(|other| other < id);
            let shared = [at.checked_sub(1), Some(at + 1)]
                .into_iter()
                .flatten()
                .filter_map(|i| sorted.get(i))
                .map(|other| common_prefix(id, other))
                .max()
                .unwrap_or(0);
            let len = (shared + 1).max(MIN_SHOWN).min(id.len());
            id.get(..len).unwrap_or(id).to_owned()
        })
        .collect()
}

/// Bytes `a` and `b` share at the start.
fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
#[path = "run_ids_tests.rs"]
mod tests;

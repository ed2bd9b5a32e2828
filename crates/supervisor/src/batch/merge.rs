//! `subagent batch merge`: joins the results files of a batch's shards
//! into one and says what is wrong with the set: ids missing (given the
//! tasks file), ids present more than once, ids the tasks file does not
//! have.
//!
//! The first line of each id is kept, byte for byte, in input order, so
//! the merged file has every id once and is itself a valid results file
//! (a resumable one, too). Pure: the caller reads the files and writes the
//! output.

use std::collections::{BTreeMap, HashSet};

use super::results::Scan;

/// The join of several results files.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MergeReport {
    /// The kept lines (no newline), first occurrence of each id.
    pub lines: Vec<Vec<u8>>,
    /// Ids found more than once, with how many times, sorted by id.
    pub duplicates: Vec<(String, usize)>,
    /// Ids of the tasks file with no result, in tasks-file order.
    pub missing: Vec<String>,
    /// Ids with a result that the tasks file does not have, sorted.
    pub unknown: Vec<String>,
}

impl MergeReport {
    /// True when every expected id is there exactly once and nothing else.
    pub fn is_complete(&self) -> bool {
        self.duplicates.is_empty() && self.missing.is_empty() && self.unknown.is_empty()
    }
}

/// Joins `inputs` (in order); `expected` is the tasks file's ids, when
/// given, for the missing and unknown checks.
pub fn merge_results(inputs: &[Scan], expected: Option<&[String]>) -> MergeReport {
    let mut report = MergeReport::default();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for scan in inputs {
        for (id, line) in &scan.lines {
            let count = counts.entry(id.as_str()).or_insert(0);
            *count += 1;
            if *count == 1 {
                report.lines.push(line.clone());
            }
        }
    }
    report.duplicates = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, n)| ((*id).to_owned(), *n))
        .collect();
    if let Some(expected) = expected {
        let wanted: HashSet<&str> = expected.iter().map(String::as_str).collect();
        report.missing = expected
            .iter()
            .filter(|id| !counts.contains_key(id.as_str()))
            .cloned()
            .collect();
        report.unknown = counts
            .keys()
            .filter(|id| !wanted.contains(*id))
            .map(|id| (*id).to_owned())
            .collect();
    }
    report
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;

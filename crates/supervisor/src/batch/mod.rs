//! Batch runs from a JSONL tasks file: the pieces `subagent batch` is made
//! of, each a pure or file-level step that is tested on its own.
//!
//! In: the tasks file's text ([`task`]), an existing results file
//! ([`results`]), a shard spec and its environment ([`shard`]). Out: the
//! task lines this process must run, a durable results writer, the end
//! summary ([`summary`]) and the join of several shards' results
//! ([`merge`]).
//!
//! Nothing here starts a process or talks to a provider: running the tasks
//! is the supervisor's job, wired together by the CLI.

pub mod merge;
pub mod results;
pub mod shard;
pub mod summary;
pub mod task;

pub use merge::{MergeReport, merge_results};
pub use results::{ResultLine, ResultsError, ResultsFile, ResultsWriter, TaskStatus};
pub use shard::{Shard, ShardError};
pub use summary::Tally;
pub use task::{TaskFileError, TaskLine, parse_tasks};

//! Batch runs from a JSONL tasks file: the pieces `subagent batch` is made
//! of, each a pure or file-level step that is tested on its own.
//!
//! In: the tasks file's text ([`task`]), an existing results file
//! ([`results`]), a shard spec and its environment ([`shard`]). Out: the
//! task lines this process must run, a durable results writer, the end
//! summary ([`summary`]) and the join of several shards' results
//! ([`merge`], written by [`merge_output`]). One process writes a results
//! file at a time ([`lock`]); faults of the machine, as opposed to the
//! task's, are checked before a batch and told apart after a run
//! ([`fault`]).
//!
//! Every line's settings are prepared and checked before anything runs
//! ([`plan`]); running the pending tasks ([`execute`]) goes through the
//! supervisor, like every run; the caller owns the runtime, the signals and the
//! display.

pub mod execute;
pub mod fault;
pub mod in_flight;
pub mod lock;
pub mod merge;
pub mod merge_output;
pub mod plan;
mod result_line;
pub mod results;
mod results_error;
mod results_writer;
pub mod shard;
pub mod summary;
pub mod task;

pub use execute::{BatchOutcome, BatchProgress, BatchStop, BatchStopCause, execute};
pub use fault::{PreflightError, machine_fault, preflight};
pub use in_flight::{InFlight, continue_in_flight};
pub use merge::{MergeReport, merge_results};
pub use merge_output::{MergeWritten, write_merged};
pub use plan::{BatchPlan, CheckedSettings, check_settings, plan, task_overrides};
pub use results::{CliExitOf, ResultLine, ResultsError, ResultsFile, ResultsWriter, TaskStatus};
pub use shard::{Shard, ShardError};
pub use summary::Tally;
pub use task::{TaskFileError, TaskLine, parse_task_bytes, parse_tasks, read_task_bytes};

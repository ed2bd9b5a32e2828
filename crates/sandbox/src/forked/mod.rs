//! What a forked child of this (multi-threaded) process may do before it
//! execs: a bare fork and a one-write file (`raw.rs`), and the numbered
//! steps a child's set-up can fail at (`step.rs`), which is what it exits
//! with and what the operator is told the kernel refused. Shared by the
//! tool sandbox's namespace set-up (`isolation`) and the per-run network
//! holder (`net`), so neither imports the other for them.
//!
//! Must not allocate or take a lock in anything a child calls, and must
//! not know what a namespace or a network is.

pub(crate) mod raw;
pub(crate) mod step;

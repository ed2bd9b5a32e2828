//! What one run is asked to be, and how far it may ask: the request
//! ([`RunRequest`]), what one way in's request changes of a template
//! ([`RequestPatch`], `overrides.rs`), and the ceilings that hold a request
//! under the operator's settings ([`Ceilings`], `ceilings.rs`, with its
//! typed error in `ceiling_error.rs`). Deciding only: it runs nothing, and
//! imports no module that does.
//!
//! Declares and re-exports only.

mod ceiling_error;
mod ceilings;
mod overrides;
mod run_request;

pub use ceiling_error::{CeilingError, Owner};
pub use ceilings::{Asked, Ceilings};
pub use overrides::RequestPatch;
pub(crate) use run_request::new_run_id;
pub use run_request::{ResumeFrom, RunRequest, WorkerCommand};

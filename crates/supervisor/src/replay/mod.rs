//! `sessions replay`: a recorded run made again with the recorded model
//! turns served by a loopback provider instead of a model, and the first
//! place where the replay differs from the recording.
//!
//! Declares and re-exports only; see [`recording`] (the turns of a session
//! file), [`server`] (the replay provider), [`divergence`] (the comparison)
//! and [`driver`] (one replay from start to report).

pub mod divergence;
pub mod driver;
pub mod recording;
pub mod server;

pub use divergence::{Divergence, DivergenceKind, first_divergence};
pub use driver::{
    ReplayError, ReplayInvocation, ReplayReport, read_recording, replay, replay_request,
    replay_warnings,
};
pub use recording::{RecordedTurn, Recording, RecordingError};
pub use server::ReplayServer;

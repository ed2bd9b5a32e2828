//! The worker's exit codes, in one place. The supervisor reads the run's
//! result from the `Done` frame, not from these; they tell an operator (and
//! the supervisor's leak checks) how the process ended.

/// The run ended and `Done` was delivered.
pub const SUCCESS: u8 = 0;

/// The protocol socket could not be set up (fd missing or not a socket):
/// the worker was not started by a supervisor.
pub const NO_PROTOCOL_SOCKET: u8 = 2;

/// The supervisor went away (end of stream or a broken frame on the
/// protocol socket); the worker stopped at once.
pub const SUPERVISOR_GONE: u8 = 3;

/// The async runtime could not be started.
pub const RUNTIME_FAILED: u8 = 4;

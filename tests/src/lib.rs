//! Workspace integration tests live in `tests/`; this crate's library is
//! empty. Its binary `fixture-worker` speaks the real worker protocol and
//! misbehaves on request, so the supervisor's handling of hangs, floods,
//! crashes, leaks and protocol abuse is tested against real processes.

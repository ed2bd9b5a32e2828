//! The contracts between subagent's processes and with its users.
//!
//! This crate is pure data and codec: the frames that cross the worker's fd 3
//! ([`frame`]), the messages inside them ([`message`], [`task_spec`]), the
//! result object a parent gets back ([`result`]), the error codes
//! ([`error_code`]), the default limits ([`limits`]) and the lines of a
//! session file ([`session`]).
//!
//! It must never do I/O beyond `Read`/`Write` and `AsyncRead`/`AsyncWrite`
//! handed to it, never spawn, and never log: every other crate depends on it,
//! so it stays small and predictable.
//!
//! Two families of types live here and must not be mixed:
//! - **wire types** ([`message`], [`task_spec`], [`history`], [`limits`], [`usage`]) are
//!   encoded with bincode, which is not self-describing: they must not use
//!   `skip_serializing_if`, `flatten`, `untagged` or internally tagged enums,
//!   and JSON values travel in them as JSON *strings*;
//! - **JSON types** ([`result`], [`session`], [`changes`]) are what users read; they use
//!   exactly those attributes to produce the documented shapes.

#![forbid(unsafe_code)]

mod api_key;
pub mod changes;
pub mod codec;
pub mod error_code;
pub mod frame;
pub mod history;
mod limit_reached;
pub mod limits;
pub mod mcp_server;
pub mod message;
mod mode;
pub mod result;
pub mod session;
pub mod task_spec;
pub mod text;
pub mod time;
pub mod tool_names;
pub mod usage;

pub use error_code::ErrorCode;
pub use frame::{FrameError, FrameReader, FrameWriter, MaxPayload};
pub use history::{HistoryMessage, HistoryToolCall};
pub use limits::Limits;
pub use mcp_server::{McpEnvVar, McpServerSpec, McpToolSelection};
pub use message::{
    FromWorker, Hello, Outcome, SpawnRequest, StopReason, SubagentReply, ToWorker, WorkerEvent,
};
pub use mode::RunMode;
pub use task_spec::{
    ApiKey, Budget, OutputMode, ProviderKind, ProviderSpec, PythonInterpreter, SearchBackend,
    SearchKind, TaskSpec, WebSettings,
};
pub use usage::Usage;

/// Version of the worker protocol. Bumped whenever a wire type changes shape;
/// the supervisor refuses a worker whose `Hello` announces another version.
/// 3: `TaskSpec::web`, `FromWorker::SpawnSubagent`, `ToWorker::SubagentResult`.
/// 4: `ProviderKind::VertexaiAnthropic`.
/// 5: `Limits::tool_disk_bytes`, `TaskSpec::python`, `TaskSpec::protected_paths`,
/// `SpawnRequest::tools` and `SpawnRequest::limits_json`.
/// 6: `TaskSpec::history` (resumed runs), `WorkerEvent::UserMessage`.
/// 7: `PythonInterpreter::Pending`, `ToWorker::Python`.
/// 8: `WebSettings::allow_link_local_networks`.
/// 9: `TaskSpec::mcp_servers`.
pub const PROTOCOL_VERSION: u32 = 10;

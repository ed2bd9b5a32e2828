//! How much of each file the supervisor reads back it will read: the one
//! place these caps are written (docs/decisions.md, "Files the supervisor
//! reads back", says why each is what it is).
//!
//! A file over its cap is not read at all: an agent file is skipped with a
//! warning naming it, a config file or the trust record refuses the run.
//!
//! Numbers only, for the files of the config module's concern: the
//! reading is [`subagent_session::untrusted_file`]'s, and session files keep their
//! cap with the session code ([`subagent_session::SESSION_FILE_CAP`]).

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// One agent file (a project's, the user's), 256 KiB: the longest real
/// agent files are a few tens of KiB of prompt.
pub const AGENT_FILE_CAP: u64 = 256 * KIB;

/// One `config.toml` (the user's, a project's) or a JSON Schema file an
/// agent file names, 1 MiB: a config is a few KiB.
pub const CONFIG_FILE_CAP: u64 = MIB;

/// The trust record, 4 MiB: about 25,000 trusted files at ~160 bytes each.
pub const TRUST_RECORD_CAP: u64 = 4 * MIB;

/// Every project file of one workspace together, 8 MiB: with the caps
/// above, what a tool that writes many files just under them can make the
/// supervisor hold before the trust check (the files are read to be hashed).
pub const PROJECT_FILES_CAP: u64 = 8 * MIB;

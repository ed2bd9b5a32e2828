//! Command-line parsing and dispatch: one module per subcommand, this one
//! only declares the command tree and routes to them.
//!
//! Every subcommand returns how it ended ([`Ending`]) or the error that
//! ended it ([`CliError`]), which [`crate::exit::exit_status`] maps to the
//! exit status, and writes to the terminal only through [`crate::console`].

use std::sync::OnceLock;

use clap::{CommandFactory, Parser, Subcommand};

use crate::error::CliError;
use crate::exit::{Ending, exit_status};
use crate::{
    agents, batch, call, config, doctor, install_files, kept_changes, ps, run, serve_cmd, sessions,
    status, trust,
};

#[derive(Debug, Parser)]
#[command(
    name = "subagent",
    version = version_text(),
    about = "Run LLM subagents as process-isolated, resource-capped workers.",
    long_about = "Run LLM subagents as process-isolated, resource-capped workers.\n\n\
        Each run starts a worker process under hard limits (process group, rlimits, \
        cgroup memory/pids caps where available), talks to a real LLM provider, and \
        returns one result object. Every run leaves a JSONL session file."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a subagent on a task (or several: --parallel, --chain) and print the result.
    #[command(after_help = "EXAMPLES:\n  \
        # a local llama-server (cargo xtask local-model serve --port 8080)\n  \
        subagent run --agent general --task 'Name three primes' \\\n      \
        --provider openai-chat --base-url http://127.0.0.1:8080/v1 --model smollm2\n\n  \
        # OpenAI, structured output, machine-readable result\n  \
        subagent run --agent researcher --task 'Capital of France?' \\\n      \
        --provider openai-responses --model gpt-4o-mini --api-key-env OPENAI_API_KEY \\\n      \
        --output-schema capital.schema.json --json\n\n  \
        # tools confined to a checkout: search and read only, no Python\n  \
        subagent run --agent general --workspace ./project --tools bash_find,bash_ripgrep,bash_read \\\n      \
        --task 'Where is the config file parsed?' --model smollm2 --base-url http://127.0.0.1:8080/v1\n\n  \
        # three tasks at once, two running at a time; one summary, one session file each\n  \
        subagent run --parallel --concurrency 2 --task 'Name a prime' --task 'Name a colour' \\\n      \
        --task 'Name a river' --model smollm2 --base-url http://127.0.0.1:8080/v1\n\n  \
        # tasks from a file, one per non-empty line\n  \
        subagent run --parallel --tasks questions.txt --model smollm2 --base-url http://127.0.0.1:8080/v1\n\n  \
        # a chain: {previous} is replaced by the previous step's output\n  \
        subagent run --chain --task 'List three facts about Mars' \\\n      \
        --task 'Pick the most surprising of these: {previous}' \\\n      \
        --model smollm2 --base-url http://127.0.0.1:8080/v1\n\n\
        EXIT STATUS:\n  0 success, 1 subagent failed, 2 invalid input, 3 timeout,\n  \
        4 budget exceeded, 5 output truncated, 6 sandbox unavailable,\n  \
        9 the session file or the result could not be written, 130 cancelled\n  \
        --parallel: 0 when every task succeeded, else the code of the first failing task (in task order)\n  \
        --chain: the code of the failing step; later steps are not run")]
    Run(run::RunArgs),
    /// Run a JSONL file of tasks, resumably, N at a time, optionally one shard of it.
    #[command(after_help = "EXAMPLES:\n  \
        # tasks.jsonl: {\"id\": \"q1\", \"task\": \"Name three primes\"} one per line\n  \
        subagent batch tasks.jsonl -j 4 --results results.jsonl \\\n      \
        --model smollm2 --base-url http://127.0.0.1:8080/v1\n\n  \
        # run it again to resume: ids already in results.jsonl are skipped\n\n  \
        # shard 1 of 3 (Kubernetes Indexed Job: --shard auto --shards 3)\n  \
        subagent batch tasks.jsonl --shard 1/3 --results results-1.jsonl --model smollm2\n\n  \
        # join the shards; report missing and duplicate ids\n  \
        subagent batch merge results-*.jsonl --tasks tasks.jsonl -o results.jsonl\n\n\
        EXIT STATUS:\n  0 every task ok, 1 a task failed or timed out (or merge found missing,\n  \
        duplicate or unknown ids), 2 invalid input (nothing ran), 9 the results file or\n  \
        a session file could not be written (the batch stopped), 130 cancelled")]
    Batch(batch::BatchArgs),
    /// Run one call_subagent request read as JSON on stdin; print the answer (--sse: as events).
    #[command(after_help = "EXAMPLES:\n  \
        # the seed's call_subagent request; prints the answer, a blank line, === [ DONE ] ===\n  \
        echo '{\"prompt\": \"Name three primes\", \"model\": \"smollm2\", \"provider\": \"openai-chat\", \\\n      \
        \"url\": \"http://127.0.0.1:8080/v1\", \"tool_subset\": []}' | subagent call\n\n  \
        # the same as Server-Sent Events (output_text deltas, tool_call, ..., response_end)\n  \
        subagent call --sse < request.json\n\n\
        STDIN:\n  {model, provider, url, api_key_name, prompt, system_prompt, tool_subset, think,\n  \
        temperature, max_tokens, output_schema}; only prompt is required (see docs/call.md)\n\n\
        EXIT STATUS:\n  as for run; a failure also writes `Error: <message>` on stdout")]
    Call(call::CallArgs),
    /// Check what this machine can enforce and reach, one line per probe.
    #[command(after_help = "EXAMPLES:\n  \
        # sandbox layers, cgroup caps, python3, sessions dir, worker binary, config and\n  \
        # agent files, and every provider of config.toml (reachable, model listed)\n  \
        subagent doctor\n\n  \
        # also a local llama-server and whether it serves the model (not listed is a\n  \
        # warning; --probe-model settles it with a 1-token request)\n  \
        subagent doctor --base-url http://127.0.0.1:8080/v1 --model smollm2 --probe-model --json\n\n\
        OUTPUT:\n  ok  <probe>: <detail>\n  warning  <probe>: <what is doubtful> -- <how to settle it>\n  \
        MISSING  <probe>: <what is missing> -- <the fix>\n\n\
        EXIT STATUS:\n  0 every probe ok, 7 something is missing")]
    Doctor(doctor::DoctorArgs),
    /// Browse session files: list runs, show or follow one, remove old ones.
    Sessions(sessions::SessionsArgs),
    /// List every live run of this user (run, serve, batch, nested): what it
    /// does now, for how long, how long its worker has been silent.
    #[command(after_help = "EXAMPLES:\n  \
        # what every live run does now\n  \
        subagent ps\n\n  \
        # the runs whose worker has sent nothing for 2 minutes, for a script\n  \
        subagent ps --json --silent-after 2m | jq '.[] | select(.silent)'\n\n  \
        # a live view, redrawn every second; q or Ctrl-C quits\n  \
        subagent ps --watch\n\n\
        STATES:\n  queued, starting, waiting for the model, streaming, running tool NAME,\n  \
        working (between a model turn and the next step), finishing\n\n\
        A run is listed while the supervisor running it lives: a run that ended, or\n\
        whose supervisor was killed, is gone from the list. The list is read from\n\
        <sessions dir>/.live/, where each run keeps a small record sealed with this\n\
        user's session key; a file put there by anything else is not listed.\n\n\
        EXIT STATUS:\n  0 listed (also when nothing runs), 2 the sessions dir cannot be read")]
    Ps(ps::PsArgs),
    /// List agents and where each is defined (agent files, built-ins).
    Agents(agents::AgentsArgs),
    /// Show the merged configuration and where each value came from, or
    /// where the config files are.
    Config(config::ConfigArgs),
    /// Trust a project's .subagent/config.toml and agent files as they are now
    /// (until then runs ignore them), or revoke or list trust.
    Trust(trust::TrustArgs),
    /// Serve runs to a program: MCP (--mcp) or JSON-lines (--stdio) on stdin/stdout, with these flags as every run's defaults.
    ///
    /// Every run of the server shares config.toml's max_concurrent (16 by
    /// default): runs beyond it wait for a slot instead of being refused,
    /// and a waiting job's state is `queued` until it has one.
    #[command(after_help = "EXAMPLES:\n  \
        # an MCP server for Claude Code, Claude Desktop or Codex (see README, MCP)\n  \
        subagent serve --mcp --model smollm2 --base-url http://127.0.0.1:8080/v1\n\n  \
        # JSON-lines with ids for any program (see README, JSON-lines server; docs/serve.md)\n  \
        echo '{\"id\": 1, \"method\": \"spawn\", \"params\": {\"task\": \"Name a prime\", \"background\": true}}' | \\\n      \
        subagent serve --stdio --model smollm2 --base-url http://127.0.0.1:8080/v1\n\n  \
        # wake a harness when a background run ends: CMD gets the lifecycle line on stdin\n  \
        subagent serve --stdio --notify-cmd 'my-harness wake' --model smollm2 \\\n      \
        --base-url http://127.0.0.1:8080/v1\n\n\
        EXIT STATUS:\n  0 the client closed stdin or a signal stopped the server, 2 invalid flags,\n  \
        9 the server's own session file could not be kept")]
    Serve(serve_cmd::ServeArgs),
    /// Apply the changes a run's copy-on-write layer kept (--apply never, or
    /// conflicts), file by file with the rules of a run's end.
    Apply(kept_changes::ApplyArgs),
    /// Print the changes a run's layer kept as a unified diff against the
    /// workspace as it is now.
    Diff(kept_changes::DiffArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(install_files::CompletionsArgs),
    /// Write man pages: subagent.1 and subagent-<command>.1 for every subcommand.
    Man(install_files::ManArgs),
}

/// What `--version` prints after the name: the package version, the commit
/// it was built from (see build.rs) and the protocol the worker must speak,
/// e.g. `0.1.0 (commit 3feb733a1b2c, worker protocol 7)`.
fn version_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        format!(
            "{} (commit {}, worker protocol {})",
            env!("CARGO_PKG_VERSION"),
            env!("SUBAGENT_COMMIT"),
            subagent_protocol::PROTOCOL_VERSION
        )
    })
}

/// Parses arguments, runs, prints; returns the exit code.
pub fn main() -> i32 {
    status::init_logs();
    let ended = Cli::try_parse().map_err(CliError::Usage).and_then(dispatch);
    if let Err(e) = &ended {
        e.report();
    }
    exit_status(&ended)
}

/// Runs the command; how it ended, or the error that ended it.
fn dispatch(cli: Cli) -> Result<Ending, CliError> {
    match cli.command {
        Command::Run(args) => run::run(args).map_err(CliError::from),
        Command::Batch(args) => batch::run(args).map_err(CliError::from),
        Command::Call(args) => call::run(args).map_err(CliError::from),
        Command::Doctor(args) => doctor::run(args).map_err(CliError::Doctor),
        Command::Sessions(args) => sessions::run(args).map_err(CliError::from),
        Command::Ps(args) => ps::run(args).map_err(CliError::from),
        Command::Agents(args) => agents::run(args).map_err(CliError::from),
        Command::Config(args) => config::run(args).map_err(CliError::from),
        Command::Trust(args) => trust::run(args).map_err(CliError::from),
        Command::Serve(args) => serve_cmd::serve(args).map_err(CliError::from),
        Command::Apply(args) => kept_changes::apply(args).map_err(CliError::from),
        Command::Diff(args) => kept_changes::diff(args).map_err(CliError::from),
        Command::Completions(args) => {
            install_files::completions(args, Cli::command()).map_err(CliError::from)
        }
        Command::Man(args) => install_files::man(args, Cli::command()).map_err(CliError::from),
    }
}

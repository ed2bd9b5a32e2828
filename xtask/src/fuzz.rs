//! `cargo xtask fuzz`: builds the libFuzzer target in `fuzz/` on the stable
//! toolchain and runs it for a bounded time.
//!
//! No nightly and no cargo-fuzz: coverage instrumentation comes from stable
//! codegen flags (`-Cpasses=sancov-module` plus LLVM sanitizer-coverage
//! options, exactly what cargo-fuzz passes), and libfuzzer-sys builds
//! libFuzzer itself with the system C++ compiler. The target is safe Rust, so
//! the AddressSanitizer that would need nightly adds little. See
//! docs/fuzzing.md.
//!
//! The corpus is seeded from the protocol's golden frames. A crash fails the
//! command and leaves its input in `fuzz/artifacts/`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::{cmd, deps, paths};

/// Default fuzzing time, seconds.
pub const DEFAULT_SECONDS: u64 = 60;

/// The fuzz target (a `[[bin]]` of `fuzz/Cargo.toml`).
const TARGET: &str = "frame_decoder";

/// Stable rustc flags that instrument the code for libFuzzer, as cargo-fuzz
/// sets them, plus `--cfg fuzzing` and runtime checks that turn silent
/// arithmetic bugs into findings.
const RUSTFLAGS: &str = "-Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares \
    --cfg fuzzing -Cdebug-assertions -Coverflow-checks";

/// Longest a single input may run before libFuzzer reports a hang, seconds.
const UNIT_TIMEOUT_SECONDS: u32 = 10;
/// Memory cap before libFuzzer reports an out-of-memory finding, MiB: far
/// above what decoding a 4 KiB input should need.
const RSS_LIMIT_MB: u32 = 1024;

fn host_triple() -> Result<String> {
    let info = cmd::stdout_of(Command::new("rustc").arg("-vV"))?;
    info.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .context("`rustc -vV` printed no host triple")
}

/// Writes each golden frame of the protocol tests into `corpus` as a seed.
fn seed_corpus(root: &Path, corpus: &Path) -> Result<usize> {
    let golden = root.join("crates/protocol/tests/golden");
    let mut seeds = 0;
    for entry in std::fs::read_dir(&golden)
        .with_context(|| format!("list golden frames in {}", golden.display()))?
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "hex") {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
        let hex: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
            .collect();
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("zz"), 16))
            .collect::<Result<Vec<u8>, _>>()
            .with_context(|| format!("{} is not hex", path.display()))?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let name = format!("golden-{}", stem.unwrap_or_default());
        std::fs::write(corpus.join(name), bytes)?;
        seeds += 1;
    }
    Ok(seeds)
}

/// Builds and runs the fuzz target for `seconds`.
pub fn run(seconds: u64, policy: deps::Policy) -> Result<()> {
    // libfuzzer-sys compiles libFuzzer's C++ sources.
    deps::ensure(&[deps::CXX], policy)?;
    let root = paths::repo_root();
    let fuzz_dir = root.join("fuzz");
    let triple = host_triple()?;

    cmd::run(
        cmd::cargo()
            .current_dir(&fuzz_dir)
            .env("RUSTFLAGS", RUSTFLAGS)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .args(["build", "--release", "--bin", TARGET, "--target", &triple]),
    )
    .context("build the fuzz target")?;
    let binary = fuzz_dir
        .join("target")
        .join(&triple)
        .join("release")
        .join(TARGET);

    let corpus = fuzz_dir.join("corpus").join(TARGET);
    let artifacts = fuzz_dir.join("artifacts").join(TARGET);
    for dir in [&corpus, &artifacts] {
        std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }
    let seeds = seed_corpus(&root, &corpus)?;
    eprintln!(
        "xtask: fuzzing {TARGET} for {seconds} s ({seeds} golden seeds, corpus {})",
        corpus.display()
    );

    let mut fuzzer = Command::new(&binary);
    fuzzer
        .arg(&corpus)
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-timeout={UNIT_TIMEOUT_SECONDS}"))
        .arg(format!("-rss_limit_mb={RSS_LIMIT_MB}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg("-print_final_stats=1")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    eprintln!("$ {}", cmd::describe(&fuzzer));
    let mut child = fuzzer
        .spawn()
        .with_context(|| format!("start {}", binary.display()))?;
    // libFuzzer reports on stderr: pass it through, keeping the figures.
    let mut execs = None;
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines() {
            let line = line.context("read the fuzzer's output")?;
            if let Some(n) = line.strip_prefix("stat::number_of_executed_units:") {
                execs = n.trim().parse::<u64>().ok();
            }
            eprintln!("{line}");
        }
    }
    let status = child.wait().context("wait for the fuzzer")?;
    if !status.success() {
        bail!(
            "the fuzzer found a failing input ({status}); it is saved under {} \
             (reproduce with `{} <file>`)",
            artifacts.display(),
            binary.display()
        );
    }
    match execs {
        Some(n) => eprintln!("xtask: fuzz passed: {n} inputs in {seconds} s, no crash"),
        None => eprintln!("xtask: fuzz passed: no crash (libFuzzer printed no exec count)"),
    }
    Ok(())
}

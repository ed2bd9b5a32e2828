//! The local model runs on CPUs other than this machine's: the llama-server
//! `cargo xtask local-model` built, run under Debian's `qemu-user`
//! emulating older x86-64 CPUs, answers a completion and loads the CPU
//! backend variant that CPU allows. A native build (`GGML_NATIVE=ON`) fails
//! here: on an AVX-512 machine it uses AVX-512, which the emulated CPUs
//! lack (seen: SIGILL under `-cpu Haswell`).
//!
//! Needs `qemu-x86_64` (`.ci/run` installs `qemu-user`) and the local
//! model; without them it says why and passes, except under CI, where it
//! fails.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use super::llama::LlamaServer;

/// Longest wait for the emulated server to load the model: emulation runs
/// the loader about 20 times slower than the machine.
const EMULATED_STARTUP: Duration = Duration::from_secs(300);

/// Whether `qemu-x86_64` runs here.
fn qemu_available() -> bool {
    std::process::Command::new("qemu-x86_64")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `None` when the test can run, else why not; under CI, a reason fails it.
fn skip_reason(test: &str) -> Option<String> {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    let reason = if !cfg!(target_arch = "x86_64") {
        Some("the emulated CPUs are x86-64".to_owned())
    } else if !qemu_available() {
        Some("qemu-x86_64 is not installed (apt-get install qemu-user)".to_owned())
    } else if std::env::var_os("SUBAGENT_LLAMA_SERVER").is_none() {
        Some(
            "SUBAGENT_LLAMA_SERVER is not set: run `cargo xtask ci`, or `cargo xtask \
             local-model` and export what it prints"
                .to_owned(),
        )
    } else {
        None
    };
    if let Some(reason) = &reason {
        assert!(!ci || !cfg!(target_arch = "x86_64"), "{test}: {reason}");
        eprintln!("skipping {test}: {reason}");
    }
    reason
}

/// Serves the model under `qemu-x86_64 -cpu CPU`, asks for 4 tokens, and
/// returns the CPU backend library the server says it loaded.
fn variant_loaded_under(cpu: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let output = std::fs::File::create(&log).unwrap();
    // `-lv 4`: the server names the CPU backend library it loaded.
    let server = LlamaServer::start_under(
        &["qemu-x86_64", "-cpu", cpu],
        &["-lv", "4"],
        Stdio::from(output),
        EMULATED_STARTUP,
    );
    let pid = server.pid();
    let answer = server.complete("The capital of France is", 4);
    assert_eq!(answer["tokens_predicted"], 4, "{answer}");
    assert!(
        !answer["content"].as_str().unwrap_or_default().is_empty(),
        "{answer}"
    );
    drop(server);
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the emulated server {pid} survived"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    text.lines()
        .find_map(|line| {
            let (_, path) = line.split_once("loaded CPU backend from ")?;
            Path::new(path.trim())
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| panic!("the server named no CPU backend it loaded:\n{text}"))
}

#[test]
fn the_local_model_answers_on_an_emulated_haswell_with_its_avx2_variant() {
    if skip_reason("portable_model haswell").is_some() {
        return;
    }
    assert_eq!(variant_loaded_under("Haswell"), "libggml-cpu-haswell.so");
}

#[test]
fn the_local_model_answers_on_an_emulated_cpu_without_avx() {
    if skip_reason("portable_model nehalem").is_some() {
        return;
    }
    assert_eq!(variant_loaded_under("Nehalem"), "libggml-cpu-sse42.so");
}

#[test]
fn the_local_model_answers_on_the_x86_64_baseline() {
    if skip_reason("portable_model qemu64").is_some() {
        return;
    }
    assert_eq!(variant_loaded_under("qemu64"), "libggml-cpu-x64.so");
}

/// The case of a VM whose cpuid claims more than its kernel enables: this
/// emulated Haswell says AVX2 in cpuid but has no XSAVE, so no AVX state.
/// ggml's stock variant score reads cpuid only and loads the AVX2 variant,
/// which dies of SIGILL here; the score as xtask edits it checks XCR0.
#[test]
fn a_cpu_that_claims_avx2_the_os_has_not_enabled_gets_a_variant_without_avx() {
    if skip_reason("portable_model haswell without xsave").is_some() {
        return;
    }
    assert_eq!(
        variant_loaded_under("Haswell,-xsave"),
        "libggml-cpu-sse42.so"
    );
}

//! How llama-server is built so that one binary runs on every CPU of its
//! architecture: what CMake is told, the two edits made to the pinned
//! source before it builds, and the name that says what the build is for.
//!
//! llama.cpp's default (`GGML_NATIVE=ON`) compiles for whatever the build
//! machine's cpuid claims, so a cache made on one machine crashes with
//! SIGILL on another, and even on the same machine when cpuid claims more
//! than the kernel enables (AMX on a VM whose kernel leaves it off). We use
//! llama.cpp's runtime dispatch instead (`GGML_BACKEND_DL` with
//! `GGML_CPU_ALL_VARIANTS`, as its own release builds do): the CPU backend
//! is built once per instruction-set level, as libraries beside the server,
//! and the server loads the best one this CPU scores. docs/decisions.md
//! ("The local model runs on every x86-64 machine") has the measurements.
//!
//! This module only describes the build; running it is
//! [`crate::local_model`]'s job.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// What the build is for, part of the cache entry's name: a cache made for
/// another architecture, or by an older recipe (the native builds before
/// this one), is never taken for this one. Bump the recipe number when the
/// flags or the edits change.
pub fn build_label() -> String {
    format!("{}-cpu-dispatch-r1", std::env::consts::ARCH)
}

/// CMake flags that make the build portable.
pub const PORTABLE_FLAGS: &[&str] = &[
    // Nothing compiled for the build machine's own CPU.
    "-DGGML_NATIVE=OFF",
    // The CPU backend as loadable libraries, one per instruction-set level,
    // chosen at start by the running CPU (needs shared libraries).
    "-DGGML_BACKEND_DL=ON",
    "-DGGML_CPU_ALL_VARIANTS=ON",
    "-DBUILD_SHARED_LIBS=ON",
    // The libraries are found beside the server wherever the cache entry
    // is, not in the build tree that is removed after the build.
    "-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON",
];

/// One edit of the pinned source: `anchor` must occur exactly once in
/// `file` (relative to llama.cpp's root) and is replaced by `replacement`.
#[derive(Debug)]
pub struct SourceEdit {
    /// The file, relative to the llama.cpp source root.
    pub file: &'static str,
    /// Text that must occur exactly once.
    pub anchor: &'static str,
    /// What it becomes.
    pub replacement: &'static str,
    /// Why, for the build log and error messages.
    pub why: &'static str,
}

/// ggml scores each x86 variant by cpuid alone ("FIXME: this does not check
/// for OS support"), so on a machine whose cpuid claims AVX-512 that the
/// kernel has not enabled in XCR0 it would load a variant that dies of
/// SIGILL. The edit makes a variant score 0 unless XCR0 enables the
/// register state its instructions need.
const X86_SCORE_CHECKS_XCR0: SourceEdit = SourceEdit {
    file: "ggml/src/ggml-cpu/arch/x86/cpu-feats.cpp",
    anchor: "    // FIXME: this does not check for OS support\n\n    int score = 1;\n    cpuid_x86 is;\n",
    replacement: r#"    int score = 1;
    cpuid_x86 is;

    // Edited by subagent's xtask: what the kernel enables (XCR0), not only
    // what cpuid claims, decides whether a variant can run here.
    unsigned long long xcr0 = 0;
    if (is.OSXSAVE()) {
        unsigned int xcr0_low, xcr0_high;
        __asm__ __volatile__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
        xcr0 = ((unsigned long long) xcr0_high << 32) | xcr0_low;
    }
    (void) xcr0;
#if defined(GGML_AVX) || defined(GGML_AVX2) || defined(GGML_FMA) || defined(GGML_F16C) || defined(GGML_AVX_VNNI)
    // XMM and YMM state.
    if ((xcr0 & 0x6) != 0x6) { return 0; }
#endif
#if defined(GGML_AVX512)
    // XMM, YMM, opmask, ZMM_Hi256 and Hi16_ZMM state.
    if ((xcr0 & 0xe6) != 0xe6) { return 0; }
#endif
"#,
    why: "the x86 variant score checks what the kernel enables (XCR0)",
};

/// The AMX variant is not built: AMX needs the kernel's per-process
/// permission as well as cpuid and XCR0, it is the instruction set that
/// crashed the native build on a VM whose kernel leaves it off, no machine
/// here can exercise it, and a 135M-parameter test model gains nothing
/// from it (the AVX-512 variants serve those CPUs).
const NO_AMX_VARIANT: SourceEdit = SourceEdit {
    file: "ggml/src/CMakeLists.txt",
    anchor: "            ggml_add_cpu_backend_variant(sapphirerapids SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16 AMX_TILE AMX_INT8)\n",
    replacement: "            # sapphirerapids (AMX) left out by subagent's xtask\n",
    why: "the AMX variant is not built",
};

/// The edits for the architecture this xtask runs on.
pub fn source_edits() -> &'static [SourceEdit] {
    if cfg!(target_arch = "x86_64") {
        &[X86_SCORE_CHECKS_XCR0, NO_AMX_VARIANT]
    } else {
        // Other architectures score their variants from the kernel's own
        // hardware capabilities (getauxval), which honour what it enables.
        &[]
    }
}

/// `text` with `edit` applied, or why it cannot be.
pub fn apply_to_text(text: &str, edit: &SourceEdit) -> Result<String> {
    match text.matches(edit.anchor).count() {
        1 => Ok(text.replacen(edit.anchor, edit.replacement, 1)),
        0 => bail!(
            "{} no longer holds the text this edit replaces ({}); \
             has the pinned llama.cpp version changed? Update the edit in xtask/src/llama_portable.rs",
            edit.file,
            edit.why
        ),
        n => bail!(
            "{} holds the text this edit replaces {n} times, expected once ({})",
            edit.file,
            edit.why
        ),
    }
}

/// Applies every edit to the llama.cpp source tree at `source`.
pub fn apply_all(source: &Path) -> Result<()> {
    for edit in source_edits() {
        let path = source.join(edit.file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("read {} to edit it", path.display()))?;
        let edited = apply_to_text(&text, edit)?;
        std::fs::write(&path, edited).with_context(|| format!("write {}", path.display()))?;
        eprintln!("xtask: edited {}: {}", edit.file, edit.why);
    }
    Ok(())
}

#[cfg(test)]
#[path = "llama_portable_tests.rs"]
mod tests;

//! `cargo xtask ci`: every check CI runs, in order, stopping at the first
//! failure with a message that names the step and what to do about it.
//!
//! The last step packages the debug build (`cargo xtask dist --profile
//! dev`) and installs and runs each package (`cargo xtask dist-check`).
//!
//! The same command is what a developer runs before pushing; `.ci/run` only
//! installs tools and then calls it. It must not skip a step silently: a
//! missing tool is installed (CI) or reported (developer machine).

use std::process::Command;

use anyhow::{Context, Result};

use crate::{cmd, deps, local_model};

/// A step: what it checks, and what to do when it fails.
struct Step {
    name: &'static str,
    on_failure: &'static str,
}

const STEPS: [Step; 7] = [
    Step {
        name: "rustfmt",
        on_failure: "run `cargo fmt --all` and commit the result",
    },
    Step {
        name: "clippy",
        on_failure: "fix the lints reported above",
    },
    Step {
        name: "import cycles",
        on_failure: "break the cycles listed above: move the shared type into the lower module, or reach upward through a trait (`cargo xtask cycles` reruns this step alone)",
    },
    Step {
        name: "local model",
        on_failure: "see the build output above; `cargo xtask local-model install` retries it alone",
    },
    Step {
        name: "tests (nextest)",
        on_failure: "the failing tests are listed above; rerun one with `cargo nextest run -E 'test(NAME)'`",
    },
    Step {
        name: "doctests",
        on_failure: "fix the failing doc examples reported above",
    },
    Step {
        name: "dist (dev profile) and dist-check",
        on_failure: "see the packaging or install error above; `cargo xtask dist --profile dev && cargo xtask dist-check` reruns this step alone",
    },
];

fn announce(index: usize) {
    eprintln!(
        "\n==> ci step {}/{}: {}",
        index + 1,
        STEPS.len(),
        STEPS[index].name
    );
}

fn step<T>(index: usize, result: Result<T>) -> Result<T> {
    let step = &STEPS[index];
    result.with_context(|| {
        format!(
            "ci step {}/{} ({}) failed: {}",
            index + 1,
            STEPS.len(),
            step.name,
            step.on_failure
        )
    })
}

/// Runs every step.
pub fn run(policy: deps::Policy) -> Result<()> {
    let root = crate::paths::repo_root();
    let in_repo = |mut c: Command| {
        c.current_dir(&root);
        c
    };

    announce(0);
    step(
        0,
        cmd::run(in_repo(cmd::cargo()).args(["fmt", "--all", "--", "--check"])),
    )?;

    announce(1);
    step(
        1,
        cmd::run(in_repo(cmd::cargo()).args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ])),
    )?;

    announce(2);
    step(2, crate::cycles::run(&root))?;

    announce(3);
    let model = step(3, local_model::ensure(policy))?;
    eprintln!(
        "xtask: SUBAGENT_LLAMA_SERVER={}\nxtask: SUBAGENT_LLAMA_MODEL={}",
        model.server.display(),
        model.model.display()
    );
    let with_model = |mut c: Command| {
        c.env("SUBAGENT_LLAMA_SERVER", &model.server)
            .env("SUBAGENT_LLAMA_MODEL", &model.model);
        c
    };

    announce(4);
    step(
        4,
        deps::ensure_nextest()
            // The shells that parse the completion scripts and the man
            // that renders the man pages (tests/tests/suite/install_files.rs).
            .and_then(|()| deps::ensure(&[deps::ZSH, deps::FISH, deps::MAN], policy))
            .and_then(|()| {
                // README's install, into a root in the target dir, whose
                // result tests/tests/suite/install.rs checks and runs (the
                // test never installs itself: a build of the CLI package
                // alone resolves other features than the test run). The
                // tests run copies of the binaries that Cargo builds with
                // them (crates/test-support/src/bins.rs), so this build's
                // re-link of target/debug/subagent* touches nothing they run.
                let install_root = crate::paths::target_dir(&root)?.join("ci-install");
                cmd::run(
                    in_repo(cmd::cargo())
                        .args(["install", "--locked", "--offline", "--debug", "--force"])
                        .arg("--root")
                        .arg(&install_root)
                        .arg("--path")
                        .arg(root.join("crates/cli")),
                )?;
                let mut nextest = with_model(in_repo(cmd::cargo()));
                nextest.env("SUBAGENT_TEST_INSTALL_ROOT", &install_root);
                cmd::run(nextest.args([
                    "nextest",
                    "run",
                    "--workspace",
                    "--no-fail-fast",
                    "--profile",
                    "ci",
                ]))
            }),
    )?;

    announce(5);
    step(
        5,
        cmd::run(with_model(in_repo(cmd::cargo())).args(["test", "--workspace", "--doc"])),
    )?;

    announce(6);
    // The packaging of the debug build the tests used (a release build,
    // fat LTO, would take many minutes more on 2 cores), then each artifact
    // installed and run. Last: its build of the CLI package alone re-links
    // target/debug/subagent*, which the tests above run.
    let started = std::time::Instant::now();
    step(
        6,
        crate::dist::run(crate::dist::Profile::Dev, policy)
            .and_then(|()| crate::dist::check(policy)),
    )?;
    eprintln!(
        "xtask: dist and dist-check took {:.0} s",
        started.elapsed().as_secs_f64()
    );

    eprintln!("\nxtask: ci passed: all {} steps", STEPS.len());
    Ok(())
}

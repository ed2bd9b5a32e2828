//! The interpreter a server's program names on its `#!` line: a console
//! script (`uv tool install`, `pipx`, a venv's `bin/`) runs under a Python
//! that often lives outside the system directories (a uv- or
//! pyenv-managed Python), and the tool sandbox shows only what it is
//! given, so the interpreter's installation must be given too. The same
//! interpreter inside the workspace would let the model replace the
//! server's code, so the caller refuses it like a program there.
//!
//! Reads at most the first line (capped) of a file the operator's config
//! named; never runs anything. `#!/usr/bin/env NAME` is looked up on the
//! run's `PATH` as the kernel's `env` would; a relative `#!` path is where
//! the kernel finds it, under the server's working directory (the
//! workspace), so it is refused.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::env_lookup::EnvLookup;

/// The longest `#!` line read; the kernel itself reads 256 bytes.
const SHEBANG_CAP: u64 = 256;

/// The interpreter `program` names on its `#!` line, as an absolute path,
/// or `None`: not a script, unreadable, or an interpreter not found. A
/// relative interpreter is the kernel's to resolve against the server's
/// working directory, `cwd`, so it is returned there (for the caller to
/// refuse when that is the workspace).
pub(super) fn script_interpreter(
    program: &Path,
    cwd: &Path,
    env: EnvLookup<'_>,
) -> Option<PathBuf> {
    let mut head = Vec::new();
    std::fs::File::open(program)
        .ok()?
        .take(SHEBANG_CAP)
        .read_to_end(&mut head)
        .ok()?;
    match shebang_program(&head)? {
        Shebang::Path(path) if Path::new(&path).is_absolute() => Some(PathBuf::from(path)),
        Shebang::Path(path) => Some(cwd.join(path)),
        Shebang::OnPath(name) => super::program::find_program(&name, env).ok(),
    }
}

/// What a `#!` line names to run.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Shebang {
    /// A path, as written: the kernel runs it (relative: from the working
    /// directory, never from `PATH`).
    Path(String),
    /// A name `env` looks up on `PATH` (`#!/usr/bin/env -S python3 -u`).
    OnPath(String),
}

/// The program a `#!` line starts: its interpreter, or for `env` the
/// first word after `env`'s flags and assignments.
pub(super) fn shebang_program(head: &[u8]) -> Option<Shebang> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let interpreter = words.next()?;
    if Path::new(interpreter).file_name()? != "env" {
        return Some(Shebang::Path(interpreter.to_owned()));
    }
    words
        .find(|word| !word.starts_with('-') && !word.contains('='))
        .map(|name| Shebang::OnPath(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interpreter_is_the_first_word_or_envs_program() {
        let path = |p: &str| Some(Shebang::Path(p.to_owned()));
        let on_path = |p: &str| Some(Shebang::OnPath(p.to_owned()));
        let cases: [(&[u8], Option<Shebang>); 9] = [
            (
                b"#!/opt/py/bin/python3.12\nimport x\n",
                path("/opt/py/bin/python3.12"),
            ),
            (b"#! /opt/py/bin/python -u\n", path("/opt/py/bin/python")),
            (b"#!bin/python\n", path("bin/python")),
            (b"#!/usr/bin/env python3\n", on_path("python3")),
            (b"#!/usr/bin/env -S node --flag\n", on_path("node")),
            (
                b"#!/usr/bin/env PYTHONSAFEPATH=1 python3\n",
                on_path("python3"),
            ),
            (b"#!/usr/bin/env\n", None),
            (b"\x7fELF\x02\x01", None),
            (b"#!\xff\xfe\n", None),
        ];
        for (head, expected) in cases {
            assert_eq!(
                shebang_program(head),
                expected,
                "{}",
                String::from_utf8_lossy(head)
            );
        }
    }
}

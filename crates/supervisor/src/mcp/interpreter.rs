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
//! run's `PATH` as the kernel's `env` would.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::env_lookup::EnvLookup;

/// The longest `#!` line read; the kernel itself reads 256 bytes.
const SHEBANG_CAP: u64 = 256;

/// The interpreter `program` names on its `#!` line, as an absolute path,
/// or `None`: not a script, unreadable, or an interpreter not found.
pub(super) fn script_interpreter(program: &Path, env: EnvLookup<'_>) -> Option<PathBuf> {
    let mut head = Vec::new();
    std::fs::File::open(program)
        .ok()?
        .take(SHEBANG_CAP)
        .read_to_end(&mut head)
        .ok()?;
    let named = shebang_program(&head)?;
    super::program::find_program(&named, env).ok()
}

/// The program a `#!` line starts: its interpreter, or for `env` the
/// first word after `env`'s flags (`#!/usr/bin/env -S python3 -u`).
pub(super) fn shebang_program(head: &[u8]) -> Option<String> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let interpreter = words.next()?;
    if Path::new(interpreter).file_name()? != "env" {
        return Some(interpreter.to_owned());
    }
    words
        .find(|word| !word.starts_with('-') && !word.contains('='))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interpreter_is_the_first_word_or_envs_program() {
        let cases: [(&[u8], Option<&str>); 8] = [
            (
                b"#!/opt/py/bin/python3.12\nimport x\n",
                Some("/opt/py/bin/python3.12"),
            ),
            (b"#! /opt/py/bin/python -u\n", Some("/opt/py/bin/python")),
            (b"#!/usr/bin/env python3\n", Some("python3")),
            (b"#!/usr/bin/env -S node --flag\n", Some("node")),
            (
                b"#!/usr/bin/env PYTHONSAFEPATH=1 python3\n",
                Some("python3"),
            ),
            (b"#!/usr/bin/env\n", None),
            (b"\x7fELF\x02\x01", None),
            (b"#!\xff\xfe\n", None),
        ];
        for (head, expected) in cases {
            assert_eq!(
                shebang_program(head).as_deref(),
                expected,
                "{}",
                String::from_utf8_lossy(head)
            );
        }
    }
}

//! Planting a link at a name that carries the pid of a process not yet
//! started, as an attacker who guesses pids would: the link is made in
//! the child itself, between fork and exec, so its pid is known and the
//! link is there before the program's first instruction.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// Makes `command`'s child, before it execs, create a link to `target`
/// named `<prefix><its pid><suffix>`.
pub fn plant_link_named_for_child(
    command: &mut Command,
    prefix: &Path,
    suffix: &str,
    target: &Path,
) {
    const MAX: usize = 4096;
    let prefix = prefix.as_os_str().as_bytes().to_vec();
    let suffix = suffix.as_bytes().to_vec();
    assert!(prefix.len() + suffix.len() + 11 < MAX, "name too long");
    let target = CString::new(target.as_os_str().as_bytes()).unwrap();
    // SAFETY: between fork and exec only async-signal-safe calls (getpid,
    // symlink) and writes into a buffer on the stack: no allocation.
    unsafe {
        command.pre_exec(move || {
            let mut name = [0u8; MAX];
            let mut len = prefix.len();
            name[..len].copy_from_slice(&prefix);
            let mut pid = libc::getpid().unsigned_abs();
            let mut digits = [0u8; 10];
            let mut count = 0;
            loop {
                digits[count] = b'0' + (pid % 10) as u8;
                count += 1;
                pid /= 10;
                if pid == 0 {
                    break;
                }
            }
            for digit in digits[..count].iter().rev() {
                name[len] = *digit;
                len += 1;
            }
            name[len..len + suffix.len()].copy_from_slice(&suffix);
            // The name stays NUL-terminated: the buffer started zeroed.
            if libc::symlink(target.as_ptr(), name.as_ptr().cast()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

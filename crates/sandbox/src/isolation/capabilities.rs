//! Dropping every capability before exec, so a tool process that is uid 0
//! (in its user namespace, or for real when the supervisor runs as root)
//! gets none: an empty bounding set and empty inheritable and ambient sets
//! leave exec nothing to grant.

use std::io;

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Highest capability number tried; the kernel stops us with EINVAL at the
/// first one it does not know.
const LAST_CAPABILITY_TRIED: libc::c_ulong = 63;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Empties the bounding, ambient, inheritable, permitted and effective sets.
/// Needs CAP_SETPCAP, which a fresh user namespace's first process has.
///
/// # Safety
/// Async-signal-safe; for the forked child, after every step that needs a
/// capability (mounting /proc).
pub(crate) unsafe fn drop_all() -> io::Result<()> {
    // SAFETY (whole block): prctl and capset with pointers to locals that
    // live for the call are async-signal-safe.
    unsafe {
        for cap in 0..=LAST_CAPABILITY_TRIED {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                let error = io::Error::last_os_error();
                if error.raw_os_error() == Some(libc::EINVAL) {
                    break;
                }
                return Err(error);
            }
        }
        // Kernels before 4.3 have no ambient set: nothing to clear there.
        let clear_ambient = libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong;
        if libc::prctl(libc::PR_CAP_AMBIENT, clear_ambient, 0, 0, 0) != 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EINVAL) {
                return Err(error);
            }
        }
        let header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

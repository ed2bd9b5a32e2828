//! Dropping every capability before exec, so a tool process that is uid 0
//! (in its user namespace, or for real when the supervisor runs as root)
//! gets none: an empty bounding set and empty inheritable and ambient sets
//! leave exec nothing to grant. [`drop_own`] does the same for a running
//! process (the worker, which holds every capability when the supervisor
//! runs as root and needs one: see [`raise_setfcap`]).

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

impl CapData {
    const EMPTY: Self = Self {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    };
}

/// The header that names this thread, in the version of two words a set.
fn own_header() -> CapHeader {
    CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    }
}

/// This thread's capability sets (both words of each), by `capget`.
/// Async-signal-safe: one syscall on locals, no allocation.
fn capget_own() -> io::Result<[CapData; 2]> {
    let header = own_header();
    let mut data = [CapData::EMPTY; 2];
    // SAFETY: capget reads the header and writes two CapData, which `data`
    // holds; both live for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &header as *const CapHeader,
            data.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(data)
}

/// Sets this thread's capability sets to `data`, by `capset`.
/// Async-signal-safe, as [`capget_own`].
fn capset_own(data: &[CapData; 2]) -> io::Result<()> {
    let header = own_header();
    // SAFETY: capset reads the header and two CapData; both live for the
    // call.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Empties the bounding, ambient, inheritable, permitted and effective sets.
/// The bounding set needs CAP_SETPCAP, which a fresh user namespace's
/// first process has.
///
/// # Safety
/// Async-signal-safe; for the forked child, after every step that needs a
/// capability (mounting /proc).
pub(crate) unsafe fn drop_all() -> io::Result<()> {
    // SAFETY: (the whole block) prctl and capset with pointers to locals that
    // live for the call are async-signal-safe.
    unsafe {
        match drop_bounding() {
            // Without CAP_SETPCAP (a child of the worker, which keeps none,
            // outside any user namespace) the bounding set stays as the
            // worker left it: empty when the worker is root, and
            // no_new_privs follows.
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
            other => other?,
        }
        clear_sets(0)?;
    }
    Ok(())
}

/// `CAP_SETFCAP`. Since Linux 5.12 a process that maps uid 0 of its parent
/// namespace into a new user namespace must have held it (effective) when
/// it created the namespace (`verify_root_map`): a root worker keeps it,
/// permitted only, for its tool processes to raise before `unshare`.
const CAP_SETFCAP: u32 = 31;

/// `CAP_SETPCAP`: needed to change the bounding set.
const CAP_SETPCAP: u32 = 8;

/// What [`drop_own`] left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnCapabilities {
    /// The bounding set was emptied (no later exec can grant a
    /// capability). Not for a process that is not root: emptying it needs
    /// CAP_SETPCAP, and such a process holds no capability to drop; with
    /// `no_new_privs` an exec cannot gain one anyway.
    pub bounding_emptied: bool,
    /// CAP_SETFCAP stays permitted, not effective (a root process, whose
    /// tool processes map uid 0 into their user namespaces: see
    /// [`raise_setfcap`]). No exec keeps it: the bounding and ambient sets
    /// are empty.
    pub setfcap_permitted: bool,
}

/// Empties this process's capability sets for a long-lived process (the
/// worker) that needs nothing privileged any more: the effective,
/// inheritable, ambient and (when it may: a root process) bounding sets
/// empty, the permitted set empty but, for a uid-0 process, CAP_SETFCAP.
/// Capability sets are per thread: call it before the process starts any
/// thread.
pub fn drop_own() -> io::Result<OwnCapabilities> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let (effective, permitted) = own_sets()?;
    let keep = if root && permitted & bit(CAP_SETFCAP) != 0 {
        bit(CAP_SETFCAP)
    } else {
        0
    };
    let bounding_emptied = effective & bit(CAP_SETPCAP) != 0;
    if bounding_emptied {
        // SAFETY: prctl with plain integers.
        unsafe { drop_bounding() }?;
    }
    // SAFETY: as in `drop_all`.
    unsafe { clear_sets(keep) }?;
    Ok(OwnCapabilities {
        bounding_emptied,
        setfcap_permitted: keep != 0,
    })
}

/// Raises CAP_SETFCAP into the effective set when it is permitted (a root
/// worker keeps it so, [`drop_own`]), for the `unshare(CLONE_NEWUSER)` that follows:
/// without it the kernel refuses to map uid 0 into the new namespace.
/// Failing is harmless: the map's write then says why.
///
/// # Safety
/// Async-signal-safe; for the forked child, before it unshares.
pub(crate) unsafe fn raise_setfcap() {
    let Ok(mut data) = capget_own() else {
        return;
    };
    if data[0].permitted & bit(CAP_SETFCAP) == 0 || data[0].effective & bit(CAP_SETFCAP) != 0 {
        return;
    }
    data[0].effective |= bit(CAP_SETFCAP);
    let _ = capset_own(&data);
}

fn bit(cap: u32) -> u32 {
    1 << cap
}

/// The low words of this thread's effective and permitted sets (every
/// capability below 32, which holds the two this module asks about).
fn own_sets() -> io::Result<(u32, u32)> {
    let data = capget_own()?;
    Ok((data[0].effective, data[0].permitted))
}

/// Drops every capability of the bounding set.
///
/// # Safety
/// Async-signal-safe.
unsafe fn drop_bounding() -> io::Result<()> {
    for cap in 0..=LAST_CAPABILITY_TRIED {
        // SAFETY: prctl with plain integers.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() == Some(libc::EINVAL) {
                break;
            }
            return Err(error);
        }
    }
    Ok(())
}

/// Empties the ambient, inheritable and effective sets, and the permitted
/// set but for `keep_permitted` (bits below 32): the part of [`drop_all`]
/// that needs no capability.
///
/// # Safety
/// Async-signal-safe, as [`drop_all`].
unsafe fn clear_sets(keep_permitted: u32) -> io::Result<()> {
    // SAFETY: (the whole block) as in `drop_all`.
    unsafe {
        // Kernels before 4.3 have no ambient set: nothing to clear there.
        let clear_ambient = libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong;
        if libc::prctl(libc::PR_CAP_AMBIENT, clear_ambient, 0, 0, 0) != 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EINVAL) {
                return Err(error);
            }
        }
    }
    capset_own(&[
        CapData {
            permitted: keep_permitted,
            ..CapData::EMPTY
        },
        CapData::EMPTY,
    ])
}

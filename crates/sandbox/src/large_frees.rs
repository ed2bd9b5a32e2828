//! This process's allocator told to give large freed blocks back to the
//! system at once, so that memory held briefly (a worker's maximal frame)
//! does not stay resident after it is freed.
//!
//! glibc serves a block above its mmap threshold with its own mapping and
//! unmaps it when freed, but it raises that threshold to the size of each
//! such block freed (up to 32 MiB): after the first 16 MiB frame, later
//! ones come from its heaps, one per thread up to eight per core, where a
//! freed block stays resident. Measured with a hundred workers sending
//! 16 MiB frames: the supervisor's peak RSS was 423-455 MiB with the
//! sliding threshold and 217 MiB with a fixed one, the frame budget being
//! 256 MiB. Setting the threshold fixes it (glibc then stops sliding it).
//! Other C libraries (musl) unmap large blocks already; nothing is done.

/// Blocks from this size up are mapped and unmapped on their own (1 MiB):
/// far above the small, frequent allocations a mapping would slow down,
/// below a frame's size.
pub const LARGE_BLOCK_BYTES: usize = 1024 * 1024;

/// Makes freed blocks of [`LARGE_BLOCK_BYTES`] or more leave this process's
/// resident memory at once; true when the allocator took the setting.
/// Call it at program start, before threads allocate.
pub fn return_large_frees_to_the_system() -> bool {
    set_mmap_threshold()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_mmap_threshold() -> bool {
    let bytes = libc::c_int::try_from(LARGE_BLOCK_BYTES).unwrap_or(libc::c_int::MAX);
    // SAFETY: mallopt only changes an allocator parameter; it takes plain
    // integers and returns 1 on success.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, bytes) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_mmap_threshold() -> bool {
    false
}

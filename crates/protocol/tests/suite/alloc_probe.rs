//! A counting global allocator for this test binary, and [`measure`], which
//! reports the peak bytes a closure held and the largest single request.
//!
//! Counting is per thread and only while [`measure`] runs, so tests running
//! in parallel in the same process (plain `cargo test`) do not pollute each
//! other's figures. It must never allocate itself: the tracker is a
//! const-initialised thread local of `Cell`s, which needs no allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to the system allocator and counts on the current thread.
pub struct CountingAllocator;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

struct Tracker {
    active: Cell<bool>,
    /// Bytes allocated minus bytes freed since measuring started; may go
    /// negative when memory allocated before the start is freed.
    live: Cell<isize>,
    peak: Cell<isize>,
    largest: Cell<usize>,
}

thread_local! {
    static TRACKER: Tracker = const {
        Tracker {
            active: Cell::new(false),
            live: Cell::new(0),
            peak: Cell::new(0),
            largest: Cell::new(0),
        }
    };
}

fn record(grown: usize, shrunk: usize, request: usize) {
    // `try_with`: during thread teardown the slot may be gone; not counting
    // then is fine because no measurement is running.
    let _ = TRACKER.try_with(|t| {
        if !t.active.get() {
            return;
        }
        let live = t.live.get() + grown as isize - shrunk as isize;
        t.live.set(live);
        t.peak.set(t.peak.get().max(live));
        t.largest.set(t.largest.get().max(request));
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; counting touches only thread-local cells and never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract of `GlobalAlloc::alloc`.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            record(layout.size(), 0, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract of `GlobalAlloc::alloc_zeroed`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            record(layout.size(), 0, layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract of `GlobalAlloc::dealloc`.
        unsafe { System.dealloc(ptr, layout) };
        record(0, layout.size(), 0);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract of `GlobalAlloc::realloc`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            record(new_size, layout.size(), new_size);
        }
        new
    }
}

/// What a measured closure allocated on its thread.
#[derive(Debug, Clone, Copy)]
pub struct Measurement {
    /// Most bytes held at once, above what was held when measuring started.
    pub peak_bytes: usize,
    /// The largest single allocation request, in bytes.
    pub largest_request: usize,
}

/// Runs `f` and reports what it allocated on this thread.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Measurement) {
    TRACKER.with(|t| {
        t.live.set(0);
        t.peak.set(0);
        t.largest.set(0);
        t.active.set(true);
    });
    let result = f();
    let measurement = TRACKER.with(|t| {
        t.active.set(false);
        Measurement {
            peak_bytes: t.peak.get().max(0) as usize,
            largest_request: t.largest.get(),
        }
    });
    (result, measurement)
}

#[test]
fn probe_sees_a_large_allocation() {
    // Proves the probe is live: without it every "stays small" assertion
    // elsewhere would pass vacuously.
    const TWO_MIB: usize = 2 * 1024 * 1024;
    let (len, m) = measure(|| std::hint::black_box(vec![7u8; TWO_MIB]).len());
    assert_eq!(len, TWO_MIB);
    assert!(m.peak_bytes >= TWO_MIB, "{m:?}");
    assert!(m.largest_request >= TWO_MIB, "{m:?}");
}

#[test]
fn probe_does_not_count_other_threads() {
    const EIGHT_MIB: usize = 8 * 1024 * 1024;
    let (_, m) = measure(|| {
        std::thread::scope(|s| {
            s.spawn(|| std::hint::black_box(vec![1u8; EIGHT_MIB]).len())
                .join()
                .expect("allocating thread")
        })
    });
    assert!(m.largest_request < EIGHT_MIB, "{m:?}");
}

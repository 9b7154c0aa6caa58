//! A global allocator wrapper that counts live heap bytes, so the engine target can report
//! the bytes each member costs as the allocator sees them.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Held by every test of this crate that allocates, so a test that measures
/// [`live_bytes`] sees only its own allocations (tests run on parallel threads, and the
/// count is the process's).
#[cfg(test)]
pub static TEST_SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds [`TEST_SERIAL`] for a test's length (whatever an earlier test's panic left).
#[cfg(test)]
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    TEST_SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Live heap bytes right now.
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Forwards to `A`, counting.
pub struct Counting<A>(A);

impl<A> Counting<A> {
    /// Wraps `inner`.
    pub const fn new(inner: A) -> Self {
        Self(inner)
    }
}

// Forwarding to the inner allocator is sound; `GlobalAlloc` is an unsafe trait by definition.
#[allow(unsafe_code)]
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on unchanged.
        unsafe { self.0.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on unchanged.
        unsafe { self.0.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on unchanged.
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

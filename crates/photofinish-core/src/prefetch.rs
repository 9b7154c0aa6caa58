//! Software prefetch: asking the CPU for a cache line before the code that reads it runs.
//!
//! A batch of lookups in a structure much larger than the cache waits for one memory load
//! after another when each is done in turn; when every address of the batch is known
//! first (a member's home slot from its hash, a record from its id, a leaf from a
//! descent), the batch asks for them all up front and the loads overlap, so it pays well
//! under one memory latency per lookup (docs/bench-history.md §13). A prefetch is only a
//! hint: it changes no value and never faults.

/// Asks the CPU to bring the cache line at `p` closer, without waiting for it.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: a prefetch is a hint. It reads nothing architecturally and never faults,
    // whatever the address (even one outside any allocation), so no pointer rule applies.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetches every cache line `value` lies on, wherever it starts.
#[inline(always)]
pub fn prefetch_value<T>(value: &T) {
    prefetch_bytes(std::ptr::from_ref(value).cast(), std::mem::size_of::<T>());
}

/// Prefetches every cache line of the `len` bytes from `p` (at least `p`'s own line). The
/// pointer need not point into an allocation: it is only a hint.
#[inline(always)]
pub fn prefetch_bytes(p: *const u8, len: usize) {
    const LINE: usize = 64;
    let len = len.max(1);
    let mut at = 0;
    while at < len {
        prefetch(p.wrapping_add(at));
        at += LINE;
    }
    // The last byte's line, when the bytes do not start on a line boundary.
    prefetch(p.wrapping_add(len - 1));
}

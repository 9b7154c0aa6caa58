//! Time for `reached_at`: an injected source wrapped so that it never goes backwards.
//!
//! The ranking never reads the time itself; the caller passes the instant of each write. The
//! server takes it from a [`MonotonicClock`], which turns any [`Clock`] (the system clock in
//! production, a [`ManualClock`] in tests) into one whose readings never decrease, so a
//! wall-clock step back cannot reorder who reached a score first.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// A source of "now" in microseconds since the Unix epoch, UTC.
pub trait Clock: Send + Sync {
    /// The current time, µs since the Unix epoch.
    fn now_us(&self) -> i64;

    /// How far ahead of the wall clock this clock is meant to run, µs: 0 but for an
    /// [`OffsetClock`]. A check against another machine's wall clock (the Redis node's
    /// bound on its skew from Redis's `TIME`) takes it off first.
    fn offset_us(&self) -> i64 {
        0
    }
}

impl<C: Clock + ?Sized> Clock for Box<C> {
    fn now_us(&self) -> i64 {
        (**self).now_us()
    }
    fn offset_us(&self) -> i64 {
        (**self).offset_us()
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now_us(&self) -> i64 {
        (**self).now_us()
    }
    fn offset_us(&self) -> i64 {
        (**self).offset_us()
    }
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_us(&self) -> i64 {
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
            // A clock set before 1970: report the epoch; MonotonicClock keeps order anyway.
            Err(_) => 0,
        }
    }
}

/// The system clock moved by a fixed offset: the real binary in a test that must cross a
/// period's end without waiting for midnight (`serve --clock-offset-us`, hidden).
#[derive(Debug, Clone, Copy)]
pub struct OffsetClock {
    offset_us: i64,
}

impl OffsetClock {
    /// The system clock plus `offset_us`.
    pub fn new(offset_us: i64) -> Self {
        Self { offset_us }
    }
}

impl Clock for OffsetClock {
    fn now_us(&self) -> i64 {
        SystemClock.now_us().saturating_add(self.offset_us)
    }
    fn offset_us(&self) -> i64 {
        self.offset_us
    }
}

/// A clock tests move by hand. Cloning shares the same time.
#[derive(Debug, Default, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock reading `now_us`.
    pub fn new(now_us: i64) -> Self {
        Self(Arc::new(AtomicI64::new(now_us)))
    }
    /// Sets the reading (it may go backwards: that is what tests check against).
    pub fn set(&self, now_us: i64) {
        self.0.store(now_us, Ordering::SeqCst);
    }
    /// Moves the reading forward by `delta_us`.
    pub fn advance(&self, delta_us: i64) {
        self.0.fetch_add(delta_us, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_us(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Wraps a clock so that readings never decrease, even across threads.
pub struct MonotonicClock<C> {
    source: C,
    last_us: AtomicI64,
}

impl<C: Clock> MonotonicClock<C> {
    /// A monotonic view of `source`.
    pub fn new(source: C) -> Self {
        Self {
            source,
            last_us: AtomicI64::new(i64::MIN),
        }
    }

    /// Raises the floor to `floor_us`, e.g. to the newest time found in recovered data, so
    /// that a restarted server never hands out an earlier time than it already used.
    pub fn observe(&self, floor_us: i64) {
        self.last_us.fetch_max(floor_us, Ordering::SeqCst);
    }
}

impl<C: Clock> Clock for MonotonicClock<C> {
    fn now_us(&self) -> i64 {
        let now = self.source.now_us();
        let prev = self.last_us.fetch_max(now, Ordering::SeqCst);
        prev.max(now)
    }
    fn offset_us(&self) -> i64 {
        self.source.offset_us()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_never_goes_backwards() {
        let manual = ManualClock::new(1_000);
        let clock = MonotonicClock::new(manual.clone());
        assert_eq!(clock.now_us(), 1_000);
        manual.set(500);
        assert_eq!(clock.now_us(), 1_000);
        manual.set(2_000);
        assert_eq!(clock.now_us(), 2_000);
        clock.observe(5_000);
        assert_eq!(clock.now_us(), 5_000);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_us() > 1_577_836_800_000_000);
    }
}

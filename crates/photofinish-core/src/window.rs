//! The period window: which periods of a board a reader sees and a write may name, by the
//! clock. Both backends ask it, so the rule lives once:
//!
//! - `current` is the period containing now; `previous` the one before; any other period
//!   is named by its id.
//! - A reader sees `retention` periods counted back from the current one, the current one
//!   included: older periods read as absent (`period_not_found`) whether or not their data
//!   has been dropped yet, and a write whose explicit `at` falls in one is refused
//!   (`period_not_retained`).
//!
//! What is *stored* is a different half of retention, and depends on the writes alone
//! ([`crate::Board`] drops periods when a newer one opens; the Redis keys expire), so log
//! replays never depend on when they run. This module never runs in a replay.
//!
//! The current period and its floor are cached until the clock leaves that period, so the
//! common case does no calendar work.

use std::sync::Mutex;

use crate::calendar::PeriodRef;
use crate::calendar::{validate_instant, Calendar, Period, MAX_INSTANT_US};
use crate::config::BoardConfig;
use crate::error::BoardError;

/// The current period and the start of the oldest period a reader sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visible {
    /// The period containing now.
    pub current: Period,
    /// Start of the oldest visible period (`retention` periods back, current included).
    pub floor_us: i64,
}

/// A period a read resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The period.
    pub period: Period,
    /// Whether it is the current period (which reads as empty before its first write;
    /// any other period without data is not found).
    pub is_current: bool,
}

/// A board's calendar with its retention, and the cached visible window. See the module
/// docs.
#[derive(Debug)]
pub struct PeriodWindow {
    calendar: Calendar,
    retention: u32,
    visible: Mutex<Option<Visible>>,
}

/// A copy starts with an empty cache (it is filled again by the first read).
impl Clone for PeriodWindow {
    fn clone(&self) -> Self {
        Self {
            calendar: self.calendar.clone(),
            retention: self.retention,
            visible: Mutex::new(None),
        }
    }
}

impl PeriodWindow {
    /// The window of a board with `config`.
    pub fn new(config: &BoardConfig) -> Result<Self, BoardError> {
        Ok(Self {
            calendar: config.calendar()?,
            retention: config.retention,
            visible: Mutex::new(None),
        })
    }

    /// The board's calendar.
    pub fn calendar(&self) -> &Calendar {
        &self.calendar
    }

    /// The current period at `now_us` and the visible floor.
    pub fn visible(&self, now_us: i64) -> Result<Visible, BoardError> {
        let now = now_us.clamp(0, MAX_INSTANT_US);
        let mut cache = self.visible.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = cache.as_ref().filter(|v| v.current.contains(now)) {
            return Ok(v.clone());
        }
        let current = self.calendar.period_at(now)?;
        let floor_us = self
            .calendar
            .retention_floor(&current, self.retention)
            .start_us;
        let v = Visible { current, floor_us };
        *cache = Some(v.clone());
        Ok(v)
    }

    /// The period `r` names at `now_us`, by the calendar alone: no retention check. (The
    /// embedded log resolves a member delete with this at the instant it logged, so a
    /// replay resolves it the same way.)
    pub fn period_of(&self, r: &PeriodRef, now_us: i64) -> Result<Period, BoardError> {
        let current = || self.calendar.period_at(now_us.clamp(0, MAX_INSTANT_US));
        match r {
            PeriodRef::Current => current(),
            PeriodRef::Previous => self.calendar.previous(&current()?),
            PeriodRef::Id(id) => self.calendar.parse(id),
        }
    }

    /// The period a read of `r` at `now_us` sees; `period_not_found` if it is older than
    /// the window (a malformed id is `invalid_period`).
    pub fn resolve(&self, r: &PeriodRef, now_us: i64) -> Result<Resolved, BoardError> {
        let Visible { current, floor_us } = self.visible(now_us)?;
        let period = match r {
            PeriodRef::Current => current.clone(),
            PeriodRef::Previous => self.calendar.previous(&current)?,
            PeriodRef::Id(id) => self.calendar.parse(id)?,
        };
        if period.start_us < floor_us {
            return Err(BoardError::PeriodNotFound(period.id));
        }
        let is_current = period == current;
        Ok(Resolved { period, is_current })
    }

    /// The period an import of `r` at `now_us` fills (docs/SPEC.md §11): one a reader sees
    /// (the current one or a retained closed one), never one that has not started.
    pub fn import_period(&self, r: &PeriodRef, now_us: i64) -> Result<Period, BoardError> {
        let period = self.resolve(r, now_us)?.period;
        if period.start_us > now_us {
            return Err(BoardError::FuturePeriod(period.id));
        }
        Ok(period)
    }

    /// The period a write with an explicit instant `at_us` lands in, checked against the
    /// window at `now_us`: `period_not_retained` if readers no longer see it.
    pub fn write_period(&self, at_us: i64, now_us: i64) -> Result<Period, BoardError> {
        validate_instant(at_us)?;
        let period = self.calendar.period_at(at_us)?;
        if period.start_us < self.visible(now_us)?.floor_us {
            return Err(BoardError::PeriodNotRetained(period.id));
        }
        Ok(period)
    }

    /// The period a write naming period `id` lands in at `now_us` (docs/SPEC.md §10):
    /// [`Self::check_named`] of the period `id` names — `current` and `previous` as a read
    /// takes them, else a period id (one of no schedule's shape is `invalid_period`, and
    /// so is a well-shaped one that is not one of this board's, as a rule of the board).
    pub fn named_write_period(
        &self,
        id: &str,
        now_us: i64,
        grace_s: u32,
    ) -> Result<Period, BoardError> {
        // A write names a period of this board's calendar or sent a bad id: no "not found".
        let period = self
            .period_of(&PeriodRef::parse(id), now_us)
            .map_err(|e| match e {
                BoardError::PeriodNotFound(id) => BoardError::ForeignPeriod(id),
                e => e,
            })?;
        self.check_named(&period, now_us, grace_s)?;
        Ok(period)
    }

    /// Whether a write at `now_us` may name `period`: the current one, or one that ended
    /// less than `grace_s` seconds ago (`period_closed` after that); one that has not
    /// started is refused (`invalid_period`, 422), one readers no longer see too
    /// (`period_not_retained`).
    pub fn check_named(
        &self,
        period: &Period,
        now_us: i64,
        grace_s: u32,
    ) -> Result<(), BoardError> {
        let now = now_us.clamp(0, MAX_INSTANT_US);
        if period.start_us > now {
            return Err(BoardError::FuturePeriod(period.id.clone()));
        }
        let grace_us = i64::from(grace_s) * 1_000_000;
        if period.end_us <= now && now - period.end_us >= grace_us {
            return Err(BoardError::PeriodClosed {
                period: period.id.clone(),
                ended_at: period.end_us,
                grace_s,
            });
        }
        if period.start_us < self.visible(now_us)?.floor_us {
            return Err(BoardError::PeriodNotRetained(period.id.clone()));
        }
        Ok(())
    }

    /// The oldest period retention keeps while `newest` is the newest period written.
    pub fn retention_floor(&self, newest: &Period) -> Period {
        self.calendar.retention_floor(newest, self.retention)
    }

    /// When `period` leaves the window (µs), or `None` if it never does.
    pub fn retention_end_us(&self, period: &Period) -> Option<i64> {
        self.calendar.retention_end_us(period, self.retention)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Reset;

    /// 2026-11-22T00:00:00Z.
    const T0: i64 = 1_795_305_600_000_000;
    const DAY: i64 = 86_400_000_000;

    fn daily(retention: u32) -> PeriodWindow {
        PeriodWindow::new(&BoardConfig {
            reset: Reset::Daily,
            retention,
            ..BoardConfig::default()
        })
        .expect("config")
    }

    #[test]
    fn the_window_counts_back_from_the_current_period() {
        let w = daily(2);
        let v = w.visible(T0 + 10).expect("visible");
        assert_eq!(
            (v.current.id.as_str(), v.floor_us),
            ("2026-11-22", T0 - DAY)
        );
        // The cache follows the clock into the next day.
        assert_eq!(w.visible(T0 + DAY).expect("next").floor_us, T0);
        assert_eq!(w.visible(T0 + 10).expect("back").floor_us, T0 - DAY);
    }

    #[test]
    fn reads_older_than_the_window_are_not_found() {
        let w = daily(2);
        let r = w.resolve(&PeriodRef::Previous, T0).expect("previous");
        assert_eq!((r.period.id.as_str(), r.is_current), ("2026-11-21", false));
        let cur = w
            .resolve(&PeriodRef::Id("2026-11-22".into()), T0)
            .expect("id");
        assert!(cur.is_current);
        assert_eq!(
            w.resolve(&PeriodRef::Id("2026-11-20".into()), T0),
            Err(BoardError::PeriodNotFound("2026-11-20".into()))
        );
        // A weekly id on a daily board: well formed, no such period; a stray word: malformed.
        assert!(matches!(
            w.resolve(&PeriodRef::Id("2026-W47".into()), T0),
            Err(BoardError::PeriodNotFound(_))
        ));
        assert!(matches!(
            w.resolve(&PeriodRef::Id("last-week".into()), T0),
            Err(BoardError::MalformedPeriod(_))
        ));
    }

    #[test]
    fn writes_older_than_the_window_are_not_retained() {
        let w = daily(2);
        assert_eq!(w.write_period(T0 - 1, T0).expect("kept").id, "2026-11-21");
        assert_eq!(
            w.write_period(T0 - DAY - 1, T0),
            Err(BoardError::PeriodNotRetained("2026-11-20".into()))
        );
        assert!(matches!(
            w.write_period(-1, T0),
            Err(BoardError::TimeOutOfRange(-1))
        ));
    }

    #[test]
    fn a_board_that_never_resets_sees_everything() {
        let w = PeriodWindow::new(&BoardConfig::default()).expect("config");
        let v = w.visible(T0).expect("visible");
        assert_eq!((v.current.id.as_str(), v.floor_us), ("all", i64::MIN));
        assert_eq!(w.write_period(0, T0).expect("all").id, "all");
    }
}

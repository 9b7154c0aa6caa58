//! The period calendar: pure functions from (board config, instant) to a period and back.
//!
//! A periodic board keeps one ranking per period: a local calendar day, a local week
//! (Monday or Sunday start) or a local calendar month in the board's time zone, computed
//! with jiff so that DST changes give 23- and 25-hour days. Ids follow docs/SPEC.md §2:
//! `2026-11-22`, `2026-W47` (ISO weeks), `2026-11-22~w` (Sunday weeks, the first day),
//! `2026-11`, and `all` for boards that never reset.

use jiff::civil::{Date, ISOWeekDate, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

use serde::{Deserialize, Serialize};

use crate::error::BoardError;

/// When a board starts a new, empty period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reset {
    /// One period forever, id `all`.
    #[default]
    Never,
    /// Each local calendar day.
    Daily,
    /// Each local week, starting on `week_start`.
    Weekly,
    /// Each local calendar month.
    Monthly,
}

/// The first day of a weekly board's week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WeekStart {
    /// ISO weeks; period ids like `2026-W47`.
    #[default]
    Monday,
    /// Weeks from Sunday; period ids like `2026-11-22~w` (the week's first day).
    Sunday,
}
name_table!(Reset { Never => "never", Daily => "daily", Weekly => "weekly", Monthly => "monthly" });
name_table!(WeekStart { Monday => "monday", Sunday => "sunday" });

/// Earliest instant a write may carry: the Unix epoch. Period ids have 4-digit years.
pub const MIN_INSTANT_US: i64 = 0;
/// Latest instant a write may carry: 9999-01-01T00:00:00Z, so every period ends in range.
pub const MAX_INSTANT_US: i64 = 253_370_764_800_000_000;
/// The RFC 3339 texts whose year is in 1970..=9998, a pattern for documents: the range of
/// [`validate_instant`] but for the edges an offset moves across it (1970-01-01 east of
/// UTC, 9998-12-31 west of it), which only the instant's check can see.
pub const INSTANT_YEAR_PATTERN: &str = "^(19[7-9][0-9]|[2-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9])-";

/// Whether RFC 3339 text `s` starts with a year [`INSTANT_YEAR_PATTERN`] takes: an
/// instant out of range with such a year was moved out by its offset, which the document
/// cannot state (a rule, 422); any other year the document rules out (400).
pub fn year_in_pattern(s: &str) -> bool {
    let year = s
        .get(..5)
        .filter(|y| y.ends_with('-'))
        .and_then(|y| y[..4].parse::<u16>().ok());
    year.is_some_and(|y| (1970..=9998).contains(&y))
}

/// One period: its id and the instants `[start_us, end_us)` it covers.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Period {
    /// First instant, µs since the epoch (`i64::MIN` for `all`).
    pub start_us: i64,
    /// First instant after the period (`i64::MAX` for `all`).
    pub end_us: i64,
    /// The period id.
    pub id: String,
}

impl Period {
    /// Whether the period covers `at_us`.
    pub fn contains(&self, at_us: i64) -> bool {
        self.start_us <= at_us && at_us < self.end_us
    }
}

/// Checks that `at_us` is an instant a write may carry.
pub fn validate_instant(at_us: i64) -> Result<(), BoardError> {
    if (MIN_INSTANT_US..=MAX_INSTANT_US).contains(&at_us) {
        Ok(())
    } else {
        Err(BoardError::TimeOutOfRange(at_us))
    }
}

/// How a period reference is written (the `period` parameter): `current`, `previous`,
/// `all`, or an id of a daily (`2026-11-23`), ISO-weekly (`2026-W48`), Sunday-weekly
/// (`2026-11-22~w`) or monthly (`2026-11`) board. A reference of this shape that names no
/// period of the board is not found; any other is malformed.
pub const PERIOD_ID_PATTERN: &str =
    "^(current|previous|all|[0-9]{4}-W[0-9]{2}|[0-9]{4}-[0-9]{2}(-[0-9]{2}(~w)?)?)$";

/// Whether `id` has the shape [`PERIOD_ID_PATTERN`] describes.
pub fn period_shaped(id: &str) -> bool {
    let b = id.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    matches!(id, "current" | "previous" | "all")
        || (b.len() == 8 && digits(0..4) && &b[4..6] == b"-W" && digits(6..8))
        || (b.len() == 7 && digits(0..4) && b[4] == b'-' && digits(5..7))
        || ((b.len() == 10 || (b.len() == 12 && &b[10..] == b"~w"))
            && digits(0..4)
            && b[4] == b'-'
            && digits(5..7)
            && b[7] == b'-'
            && digits(8..10))
}

/// A board's reset schedule, resolved once (the time zone lookup is not free).
#[derive(Debug, Clone)]
pub struct Calendar {
    reset: Reset,
    week_start: WeekStart,
    tz: TimeZone,
}

impl Calendar {
    /// The calendar of a board resetting by `reset` from `week_start` in time zone
    /// `timezone`; fails on an unknown time zone.
    pub fn new(reset: Reset, week_start: WeekStart, timezone: &str) -> Result<Self, BoardError> {
        let tz = TimeZone::get(timezone)
            .map_err(|_| BoardError::InvalidConfig(format!("unknown time zone {timezone:?}")))?;
        Ok(Self {
            reset,
            week_start,
            tz,
        })
    }

    /// The period that contains `at_us` (which must pass [`validate_instant`]).
    pub fn period_at(&self, at_us: i64) -> Result<Period, BoardError> {
        let ts =
            Timestamp::from_microsecond(at_us).map_err(|_| BoardError::TimeOutOfRange(at_us))?;
        let day = ts.to_zoned(self.tz.clone()).date();
        let first = match self.reset {
            Reset::Never => return Ok(all()),
            Reset::Daily => day,
            Reset::Weekly => week_first_day(day, self.week_start),
            Reset::Monthly => day.first_of_month(),
        };
        self.period_from_first_day(first)
            .ok_or(BoardError::TimeOutOfRange(at_us))
    }

    /// The period just before `period` (the same period for `all`).
    pub fn previous(&self, period: &Period) -> Result<Period, BoardError> {
        if self.reset == Reset::Never {
            return Ok(all());
        }
        self.period_at(period.start_us - 1)
    }

    /// The period just after `period` (the same period for `all`).
    pub fn next(&self, period: &Period) -> Result<Period, BoardError> {
        if self.reset == Reset::Never {
            return Ok(all());
        }
        self.period_at(period.end_us)
    }

    /// The oldest period a window of `retention` periods ending with `newest` keeps
    /// (`newest` itself for a retention of 1, `all` for boards that never reset).
    pub fn retention_floor(&self, newest: &Period, retention: u32) -> Period {
        let mut p = newest.clone();
        for _ in 1..retention {
            match self.previous(&p) {
                Ok(prev) if prev.start_us < p.start_us => p = prev,
                _ => break,
            }
        }
        p
    }

    /// When `period` leaves a window of `retention` periods that moves with the clock: the
    /// start of the period `retention` later, µs. `None` for a period that never ends (`all`)
    /// or one whose end lies past the calendar's range.
    pub fn retention_end_us(&self, period: &Period, retention: u32) -> Option<i64> {
        if period.end_us == i64::MAX {
            return None;
        }
        let mut p = period.clone();
        for _ in 0..retention {
            match self.next(&p) {
                Ok(next) if next.start_us > p.start_us => p = next,
                _ => return None,
            }
        }
        Some(p.start_us)
    }

    /// Parses a period id of this board's schedule.
    pub fn parse(&self, id: &str) -> Result<Period, BoardError> {
        let malformed = || {
            if period_shaped(id) {
                BoardError::PeriodNotFound(id.to_owned())
            } else {
                BoardError::MalformedPeriod(id.to_owned())
            }
        };
        let first = match (self.reset, self.week_start) {
            (Reset::Never, _) => {
                return if id == "all" {
                    Ok(all())
                } else {
                    Err(malformed())
                }
            }
            (Reset::Daily, _) => parse_date(id),
            (Reset::Monthly, _) => parse_month(id),
            (Reset::Weekly, WeekStart::Monday) => parse_iso_week(id),
            (Reset::Weekly, WeekStart::Sunday) => id
                .strip_suffix("~w")
                .and_then(parse_date)
                .filter(|d| d.weekday() == Weekday::Sunday),
        }
        .ok_or_else(malformed)?;
        let period = self.period_from_first_day(first).ok_or_else(malformed)?;
        // Round trip: rejects ids of a valid shape that name no period start.
        if period.id == id && validate_instant(period.start_us.max(0)).is_ok() {
            Ok(period)
        } else {
            Err(malformed())
        }
    }

    fn period_from_first_day(&self, first: Date) -> Option<Period> {
        let after = match self.reset {
            Reset::Never => return Some(all()),
            Reset::Daily => first.checked_add(1.day()).ok()?,
            Reset::Weekly => first.checked_add(1.week()).ok()?,
            Reset::Monthly => first.checked_add(1.month()).ok()?,
        };
        let id = match (self.reset, self.week_start) {
            (Reset::Daily, _) => first.to_string(),
            (Reset::Monthly, _) => format!("{:04}-{:02}", first.year(), first.month()),
            (Reset::Weekly, WeekStart::Monday) => {
                let w = first.iso_week_date();
                format!("{:04}-W{:02}", w.year(), w.week())
            }
            (Reset::Weekly, WeekStart::Sunday) => format!("{first}~w"),
            (Reset::Never, _) => return Some(all()),
        };
        Some(Period {
            start_us: self.local_midnight_us(first)?,
            end_us: self.local_midnight_us(after)?,
            id,
        })
    }

    /// The first instant of local day `d` (after the gap when midnight is skipped by DST).
    fn local_midnight_us(&self, d: Date) -> Option<i64> {
        let z = d.to_zoned(self.tz.clone()).ok()?;
        let z = z.start_of_day().ok()?;
        Some(z.timestamp().as_microsecond())
    }
}

fn all() -> Period {
    Period {
        start_us: i64::MIN,
        end_us: i64::MAX,
        id: "all".to_owned(),
    }
}

fn week_first_day(day: Date, start: WeekStart) -> Date {
    let back = match start {
        WeekStart::Monday => day.weekday().to_monday_zero_offset(),
        WeekStart::Sunday => day.weekday().to_sunday_zero_offset(),
    };
    day.checked_sub(i64::from(back).days()).unwrap_or(day)
}

/// `n` ASCII digits as a number.
fn digits(s: &str, n: usize) -> Option<i16> {
    if s.len() == n && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn parse_date(s: &str) -> Option<Date> {
    let mut parts = s.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    Date::new(digits(y, 4)?, digits(m, 2)? as i8, digits(d, 2)? as i8).ok()
}

fn parse_month(s: &str) -> Option<Date> {
    let (y, m) = s.split_once('-')?;
    Date::new(digits(y, 4)?, digits(m, 2)? as i8, 1).ok()
}

fn parse_iso_week(s: &str) -> Option<Date> {
    let (y, w) = s.split_once("-W")?;
    ISOWeekDate::new(digits(y, 4)?, digits(w, 2)? as i8, Weekday::Monday)
        .ok()
        .map(|w| w.date())
}

/// How a read names a period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeriodRef {
    /// The period containing the reader's "now".
    Current,
    /// The period before the current one.
    Previous,
    /// A period id such as `2026-W47`.
    Id(String),
}

impl PeriodRef {
    /// Parses the wire form: `current`, `previous`, or an id.
    pub fn parse(s: &str) -> Self {
        match s {
            "current" => Self::Current,
            "previous" => Self::Previous,
            id => Self::Id(id.to_owned()),
        }
    }

    /// The wire form: `current`, `previous`, or the id.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Current => "current",
            Self::Previous => "previous",
            Self::Id(id) => id,
        }
    }
}

#[cfg(test)]
mod tests;

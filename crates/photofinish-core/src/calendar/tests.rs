//! Calendar boundaries: DST in Berlin and New York, ISO week 53, Sunday weeks, month ends,
//! a leap day, Shanghai midnight, and id parsing.

use super::*;

fn us(rfc3339: &str) -> i64 {
    rfc3339
        .parse::<Timestamp>()
        .expect("test timestamp")
        .as_microsecond()
}

fn cal(reset: Reset, tz: &str, week_start: WeekStart) -> Calendar {
    Calendar::new(reset, week_start, tz).expect("valid config")
}

const HOUR: i64 = 3_600_000_000;

/// The period at `at`, checked against its id and UTC bounds, and with `at - 1µs` of the
/// start and `end` itself landing in the neighbours.
fn assert_period(c: &Calendar, at: &str, id: &str, start: &str, end: &str) -> Period {
    let p = c.period_at(us(at)).expect("period");
    assert_eq!(p.id, id, "id at {at}");
    assert_eq!(p.start_us, us(start), "start of {id}");
    assert_eq!(p.end_us, us(end), "end of {id}");
    assert_eq!(c.period_at(p.start_us).expect("start").id, id);
    assert_eq!(c.period_at(p.end_us - 1).expect("last µs").id, id);
    assert_ne!(c.period_at(p.start_us - 1).expect("before").id, id);
    assert_ne!(c.period_at(p.end_us).expect("after").id, id);
    assert_eq!(c.parse(id).expect("parse back"), p);
    p
}

#[test]
fn berlin_days_across_both_dst_changes() {
    let c = cal(Reset::Daily, "Europe/Berlin", WeekStart::Monday);
    let spring = assert_period(
        &c,
        "2026-03-29T12:00:00Z",
        "2026-03-29",
        "2026-03-28T23:00:00Z",
        "2026-03-29T22:00:00Z",
    );
    assert_eq!(spring.end_us - spring.start_us, 23 * HOUR);
    let autumn = assert_period(
        &c,
        "2026-10-25T12:00:00Z",
        "2026-10-25",
        "2026-10-24T22:00:00Z",
        "2026-10-25T23:00:00Z",
    );
    assert_eq!(autumn.end_us - autumn.start_us, 25 * HOUR);
}

#[test]
fn new_york_days_and_weeks_across_both_dst_changes() {
    let c = cal(Reset::Daily, "America/New_York", WeekStart::Monday);
    let spring = assert_period(
        &c,
        "2026-03-08T12:00:00Z",
        "2026-03-08",
        "2026-03-08T05:00:00Z",
        "2026-03-09T04:00:00Z",
    );
    assert_eq!(spring.end_us - spring.start_us, 23 * HOUR);
    let autumn = assert_period(
        &c,
        "2026-11-01T12:00:00Z",
        "2026-11-01",
        "2026-11-01T04:00:00Z",
        "2026-11-02T05:00:00Z",
    );
    assert_eq!(autumn.end_us - autumn.start_us, 25 * HOUR);
    // 23:30 local on Oct 31 is already Nov 1 in UTC, but still Oct 31 in New York.
    assert_eq!(
        c.period_at(us("2026-11-01T03:30:00Z")).expect("p").id,
        "2026-10-31"
    );
    let w = cal(Reset::Weekly, "America/New_York", WeekStart::Monday);
    let week = assert_period(
        &w,
        "2026-11-01T12:00:00Z",
        "2026-W44",
        "2026-10-26T04:00:00Z",
        "2026-11-02T05:00:00Z",
    );
    assert_eq!(week.end_us - week.start_us, (7 * 24 + 1) * HOUR);
}

#[test]
fn iso_week_53_spans_the_new_year() {
    let c = cal(Reset::Weekly, "UTC", WeekStart::Monday);
    assert_period(
        &c,
        "2027-01-01T00:00:00Z",
        "2026-W53",
        "2026-12-28T00:00:00Z",
        "2027-01-04T00:00:00Z",
    );
    assert_period(
        &c,
        "2026-11-22T10:00:00Z",
        "2026-W47",
        "2026-11-16T00:00:00Z",
        "2026-11-23T00:00:00Z",
    );
    // 2025 has 52 weeks: W53 is well formed but names no week; 2025-12-29 is in 2026-W01.
    assert!(matches!(
        c.parse("2025-W53"),
        Err(BoardError::PeriodNotFound(_))
    ));
    assert!(matches!(
        c.parse("2025-W5"),
        Err(BoardError::MalformedPeriod(_))
    ));
    assert_eq!(
        c.period_at(us("2025-12-29T00:00:00Z")).expect("p").id,
        "2026-W01"
    );
}

#[test]
fn sunday_weeks_are_named_by_their_first_day() {
    let c = cal(Reset::Weekly, "UTC", WeekStart::Sunday);
    assert_period(
        &c,
        "2026-11-22T00:00:00Z",
        "2026-11-22~w",
        "2026-11-22T00:00:00Z",
        "2026-11-29T00:00:00Z",
    );
    assert_period(
        &c,
        "2026-11-21T23:59:59Z",
        "2026-11-15~w",
        "2026-11-15T00:00:00Z",
        "2026-11-22T00:00:00Z",
    );
    // A Monday is not the first day of a Sunday week.
    assert!(c.parse("2026-11-23~w").is_err());
    assert!(c.parse("2026-11-22").is_err());
}

#[test]
fn months_end_right_including_a_leap_day() {
    let c = cal(Reset::Monthly, "UTC", WeekStart::Monday);
    assert_period(
        &c,
        "2028-02-29T23:59:59Z",
        "2028-02",
        "2028-02-01T00:00:00Z",
        "2028-03-01T00:00:00Z",
    );
    assert_period(
        &c,
        "2026-12-31T23:59:59Z",
        "2026-12",
        "2026-12-01T00:00:00Z",
        "2027-01-01T00:00:00Z",
    );
    assert_period(
        &c,
        "2026-04-30T12:00:00Z",
        "2026-04",
        "2026-04-01T00:00:00Z",
        "2026-05-01T00:00:00Z",
    );
    let d = cal(Reset::Daily, "UTC", WeekStart::Monday);
    assert_period(
        &d,
        "2028-02-29T06:00:00Z",
        "2028-02-29",
        "2028-02-29T00:00:00Z",
        "2028-03-01T00:00:00Z",
    );
    assert!(d.parse("2027-02-29").is_err());
}

#[test]
fn shanghai_midnight_is_16_00_utc() {
    let c = cal(Reset::Daily, "Asia/Shanghai", WeekStart::Monday);
    assert_period(
        &c,
        "2026-11-21T16:00:00Z",
        "2026-11-22",
        "2026-11-21T16:00:00Z",
        "2026-11-22T16:00:00Z",
    );
    assert_eq!(
        c.period_at(us("2026-11-21T15:59:59.999999Z"))
            .expect("p")
            .id,
        "2026-11-21"
    );
    let m = cal(Reset::Monthly, "Asia/Shanghai", WeekStart::Monday);
    assert_period(
        &m,
        "2026-11-30T16:00:00Z",
        "2026-12",
        "2026-11-30T16:00:00Z",
        "2026-12-31T16:00:00Z",
    );
}

#[test]
fn previous_and_next() {
    let c = cal(Reset::Weekly, "UTC", WeekStart::Monday);
    let p = c.period_at(us("2027-01-01T00:00:00Z")).expect("p");
    assert_eq!(c.previous(&p).expect("prev").id, "2026-W52");
    assert_eq!(c.next(&p).expect("next").id, "2027-W01");
    let never = cal(Reset::Never, "UTC", WeekStart::Monday);
    let all = never.period_at(us("2026-01-01T00:00:00Z")).expect("all");
    assert_eq!(all.id, "all");
    assert_eq!(never.previous(&all).expect("all"), all);
    assert_eq!(never.parse("all").expect("all"), all);
    assert!(never.parse("2026-01").is_err());
}

#[test]
fn malformed_ids_are_rejected() {
    let d = cal(Reset::Daily, "UTC", WeekStart::Monday);
    for bad in [
        "",
        "2026-1-01",
        "2026-01-1",
        "26-01-01",
        "2026-13-01",
        "2026-01-01x",
        "+2026-01-01",
        "2026-01-01-01",
        "２０２６-01-01",
    ] {
        assert!(d.parse(bad).is_err(), "{bad}");
    }
    let m = cal(Reset::Monthly, "UTC", WeekStart::Monday);
    for bad in ["2026-00", "2026-1", "2026-11-01", "2026"] {
        assert!(m.parse(bad).is_err(), "{bad}");
    }
    let w = cal(Reset::Weekly, "UTC", WeekStart::Monday);
    for bad in ["2026-W00", "2026-W54", "2026-W1", "2026W01"] {
        assert!(w.parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn instants_outside_the_supported_range_are_refused() {
    assert!(validate_instant(-1).is_err());
    assert!(validate_instant(MAX_INSTANT_US + 1).is_err());
    assert!(validate_instant(MAX_INSTANT_US).is_ok());
    let c = cal(Reset::Monthly, "Pacific/Kiritimati", WeekStart::Sunday);
    assert!(c.period_at(MAX_INSTANT_US).is_ok());
    assert!(c.period_at(MIN_INSTANT_US).is_ok());
}

#[test]
fn retention_windows_walk_whole_periods() {
    let c = cal(Reset::Daily, "Europe/Berlin", WeekStart::Monday);
    let day = c.parse("2026-11-21").expect("id");
    // Kept by a window of 2 ending on the 22nd; gone once the 23rd begins (Berlin time).
    assert_eq!(
        c.retention_floor(&c.parse("2026-11-22").expect("id"), 2).id,
        "2026-11-21"
    );
    assert_eq!(c.retention_floor(&day, 1).id, "2026-11-21");
    assert_eq!(
        c.retention_end_us(&day, 2),
        Some(us("2026-11-22T23:00:00Z"))
    );
    let never = cal(Reset::Never, "UTC", WeekStart::Monday);
    let all = never.period_at(0).expect("all");
    assert_eq!(never.retention_floor(&all, 8).id, "all");
    assert_eq!(never.retention_end_us(&all, 8), None);
}

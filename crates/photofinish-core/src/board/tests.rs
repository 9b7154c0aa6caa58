//! Board-level behaviour: writes land in their period, retention drops old periods, and
//! period references resolve against "now".

use super::*;
use crate::config::Reset;
use crate::ranking::RankStyle;

const DAY: i64 = 86_400_000_000;
/// 2026-11-22T00:00:00Z
const T0: i64 = 1_795_305_600_000_000;

fn daily(retention: u32) -> Board {
    Board::new(BoardConfig {
        reset: Reset::Daily,
        retention,
        ..BoardConfig::default()
    })
    .expect("board")
}

fn write(
    b: &mut Board,
    member: &str,
    value: i64,
    at_us: i64,
) -> Result<(Outcome, Period), BoardError> {
    b.submit(&BoardWrite {
        member,
        op: None,
        values: Operands::one(value),
        at_us,
        period_us: None,
        metadata: None,
        over_budget: None,
    })
}

#[test]
fn writes_land_in_the_period_of_their_instant() {
    let mut b = daily(8);
    let (_, p1) = write(&mut b, "a", 5, T0 - 1).expect("w");
    let (_, p2) = write(&mut b, "a", 7, T0).expect("w");
    assert_eq!(
        (p1.id.as_str(), p2.id.as_str()),
        ("2026-11-21", "2026-11-22")
    );
    let cur = b.resolve(&PeriodRef::Current, T0 + 5).expect("current");
    assert_eq!(
        b.ranking(&cur)
            .expect("r")
            .member("a", RankStyle::Ordinal)
            .expect("a")
            .score(),
        7
    );
    let prev = b.resolve(&PeriodRef::Previous, T0 + 5).expect("previous");
    assert_eq!(
        b.ranking(&prev)
            .expect("r")
            .member("a", RankStyle::Ordinal)
            .expect("a")
            .score(),
        5
    );
    let named = b
        .resolve(&PeriodRef::Id("2026-11-21".into()), T0)
        .expect("id");
    assert_eq!(named, prev);
    assert!(b.resolve(&PeriodRef::Id("2026-11".into()), T0).is_err());
    let ids: Vec<&str> = b.periods().map(|(p, _)| p.id.as_str()).collect();
    assert_eq!(ids, ["2026-11-22", "2026-11-21"]);
    // After the newer period exists, a write 1 µs before its start still lands in the older.
    let (_, p) = write(&mut b, "late", 1, T0 - 1).expect("w");
    assert_eq!(p.id, "2026-11-21");
    let (_, p) = write(&mut b, "next-day", 1, T0 + DAY).expect("w");
    assert_eq!(p.id, "2026-11-23");
}

#[test]
fn retention_drops_periods_counted_back_from_the_newest() {
    let mut b = daily(3);
    for d in 0..5 {
        write(&mut b, "a", 1, T0 + d * DAY).expect("w");
    }
    let ids: Vec<&str> = b.periods().map(|(p, _)| p.id.as_str()).collect();
    assert_eq!(ids, ["2026-11-26", "2026-11-25", "2026-11-24"]);
    // A write into a purged day is refused and changes nothing.
    assert_eq!(
        write(&mut b, "b", 1, T0).map(|_| ()),
        Err(BoardError::PeriodNotRetained("2026-11-22".into()))
    );
    assert_eq!(b.periods().count(), 3);
    // The oldest retained day still takes writes.
    write(&mut b, "b", 1, T0 + 2 * DAY).expect("oldest retained");
    assert_eq!(b.total_members(), 4);
}

#[test]
fn a_failed_first_write_leaves_no_empty_period() {
    let mut b = daily(8);
    let bad = b.submit(&BoardWrite {
        member: "",
        op: None,
        values: Operands::one(1),
        at_us: T0,
        period_us: None,
        metadata: None,
        over_budget: None,
    });
    assert!(bad.is_err());
    assert_eq!(b.periods().count(), 0);
    assert!(write(&mut b, "a", 1, -5).is_err());
}

#[test]
fn boards_that_never_reset_have_one_period() {
    let mut b = Board::new(BoardConfig::default()).expect("board");
    write(&mut b, "a", 1, 0).expect("w");
    write(&mut b, "a", 1, T0).expect("w");
    let ids: Vec<&str> = b.periods().map(|(p, _)| p.id.as_str()).collect();
    assert_eq!(ids, ["all"]);
    let prev = b
        .resolve(&PeriodRef::Previous, T0)
        .expect("previous of all");
    assert_eq!(prev.id, "all");
}

#[test]
fn readers_see_retention_counted_back_from_the_current_period() {
    let mut b = daily(2);
    write(&mut b, "a", 5, T0 + 3_600_000_000).expect("w");
    // The same day and the next: the period is among the last two.
    assert_eq!(
        b.window().visible(T0 + 10).map(|v| v.floor_us),
        Ok(T0 - DAY)
    );
    assert_eq!(
        b.window().visible(T0 + DAY + 10).map(|v| v.floor_us),
        Ok(T0)
    );
    // Two days on, nobody wrote since, yet readers no longer see it; the data is still
    // there until a newer write purges it.
    assert_eq!(
        b.window().visible(T0 + 2 * DAY).map(|v| v.floor_us),
        Ok(T0 + DAY)
    );
    assert_eq!(b.periods().count(), 1);
    // The cache follows the clock both ways.
    assert_eq!(
        b.window().visible(T0 + 10).map(|v| v.floor_us),
        Ok(T0 - DAY)
    );
    let never = Board::new(BoardConfig::default()).expect("board");
    assert_eq!(never.window().visible(T0).map(|v| v.floor_us), Ok(i64::MIN));
}

//! Board-level behaviour: writes land in their period, retention drops old periods, and
//! period references resolve against "now".

use super::*;
use crate::cohort::Place;
use crate::config::{Reset, MAX_HIDDEN_MEMBERS};
use crate::ranking::RankStyle;

const DAY: i64 = 86_400_000_000;
/// 2026-11-22T00:00:00Z
pub(crate) const T0: i64 = 1_795_305_600_000_000;

pub(crate) fn daily(retention: u32) -> Board {
    Board::checked(BoardConfig {
        reset: Reset::Daily,
        retention,
        ..BoardConfig::default()
    })
    .expect("board")
}

pub(crate) fn write(
    b: &mut Board,
    member: &str,
    value: i64,
    at_us: i64,
) -> Result<(Outcome, Period), BoardError> {
    write_op(b, member, None, value, at_us)
}

/// A write of `value` for `member` at `at_us` by `op` (`None`: the board's rule).
pub(super) fn write_op(
    b: &mut Board,
    member: &str,
    op: Option<crate::scoring::Op>,
    value: i64,
    at_us: i64,
) -> Result<(Outcome, Period), BoardError> {
    b.submit(&BoardWrite {
        member,
        op,
        values: Operands::one(value),
        at_us,
        period_us: None,
        metadata: None,
        over_budget: None,
        partition: None,
        team: None,
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
        partition: None,
        team: None,
    });
    assert!(bad.is_err());
    assert_eq!(b.periods().count(), 0);
    assert!(write(&mut b, "a", 1, -5).is_err());
}

#[test]
fn boards_that_never_reset_have_one_period() {
    let mut b = Board::checked(BoardConfig::default()).expect("board");
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
    let never = Board::checked(BoardConfig::default()).expect("board");
    assert_eq!(never.window().visible(T0).map(|v| v.floor_us), Ok(i64::MIN));
}

mod league {
    //! A league run over several periods against a model: arrivals fill cohorts per tier,
    //! each close moves the top and bottom of every cohort, waiting arrivals take their
    //! cohorts once the close they waited for ends, and a close in small steps ends
    //! where a close in one would.

    use super::*;
    use crate::config::Op;
    use crate::league::League;
    use proptest::prelude::*;
    use std::collections::HashMap;

    const SIZE: u32 = 3;

    fn league_board() -> Board {
        Board::checked(BoardConfig {
            reset: Reset::Daily,
            retention: 4,
            update: Op::Best,
            cohort_size: Some(SIZE),
            league: Some(League {
                tiers: vec!["bronze".into(), "silver".into(), "gold".into()],
                promote: 1,
                demote: 1,
            }),
            ..BoardConfig::default()
        })
        .expect("board")
    }

    /// What the model keeps of one period: per tier, arrivals in order; each member's
    /// best score and when it reached it; who waits.
    #[derive(Default)]
    struct ModelPeriod {
        arrivals: HashMap<u16, Vec<String>>,
        best: HashMap<String, (i64, i64)>,
        waiting: Vec<String>,
    }

    #[derive(Default)]
    struct Model {
        /// Hidden members (docs/SPEC.md §15): in no standing, never moved.
        hidden: Vec<String>,
        tiers: HashMap<String, u16>,
        periods: Vec<ModelPeriod>,
        /// The newest period whose close is done (index), if any.
        closed: Option<usize>,
    }

    impl Model {
        fn tier(&self, m: &str) -> u16 {
            self.tiers.get(m).copied().unwrap_or(0)
        }
        fn write(&mut self, p: usize, m: &str, v: i64, t: i64) {
            while self.periods.len() <= p {
                self.periods.push(ModelPeriod::default());
            }
            let open_before = (0..p)
                .any(|q| self.closed.is_none_or(|c| q > c) && !self.periods[q].best.is_empty());
            let tier = self.tier(m);
            let period = &mut self.periods[p];
            match period.best.get_mut(m) {
                Some(b) => {
                    if v > b.0 {
                        *b = (v, t);
                    }
                }
                None => {
                    period.best.insert(m.to_owned(), (v, t));
                    if open_before {
                        period.waiting.push(m.to_owned());
                    } else {
                        period.arrivals.entry(tier).or_default().push(m.to_owned());
                    }
                }
            }
        }
        /// Closes period `p`; its moves as (member, from, to, cohort, rank).
        fn close(&mut self, p: usize) -> Vec<(String, u16, u16, u32, u32)> {
            let mut moves = Vec::new();
            let period = &self.periods[p];
            let mut tiers: Vec<_> = period.arrivals.keys().copied().collect();
            tiers.sort_unstable();
            for t in tiers {
                for (k, chunk) in period.arrivals[&t].chunks(SIZE as usize).enumerate() {
                    let mut ranked: Vec<&String> =
                        chunk.iter().filter(|m| !self.hidden.contains(m)).collect();
                    ranked.sort_by_key(|m| {
                        let (v, at) = period.best[*m];
                        (std::cmp::Reverse(v), at)
                    });
                    let n = ranked.len();
                    let up = 1.min(n);
                    let down = 1.min(n - up);
                    for (i, m) in ranked.iter().enumerate() {
                        let to = if i < up && t < 2 {
                            t + 1
                        } else if i >= n - down && t > 0 {
                            t - 1
                        } else {
                            continue;
                        };
                        moves.push(((*m).clone(), t, to, k as u32 + 1, i as u32 + 1));
                    }
                }
            }
            for (m, _, to, _, _) in &moves {
                self.tiers.insert(m.clone(), *to);
            }
            self.closed = Some(p);
            if let Some(next) = self.periods.get_mut(p + 1) {
                for m in std::mem::take(&mut next.waiting) {
                    let t = self.tiers.get(&m).copied().unwrap_or(0);
                    next.arrivals.entry(t).or_default().push(m);
                }
            }
            moves
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn a_league_run_matches_the_model(
            days in proptest::collection::vec(
                (
                    proptest::collection::vec((0u8..10, -3i64..4), 0..25),
                    0usize..6,
                ),
                1..5,
            ),
            step in 1usize..8,
            hidden in proptest::collection::vec(0u8..10, 0..3),
        ) {
            let mut b = league_board();
            let mut model = Model::default();
            for m in hidden {
                let name = format!("m{m}");
                b.hide(&name, 0).expect("hide");
                model.hidden.push(name);
            }
            let mut clock = T0;
            for (d, (writes, late)) in days.iter().enumerate() {
                let day_start = T0 + d as i64 * DAY;
                // The first `late` writes of a day land before the previous day closes.
                for (i, &(m, v)) in writes.iter().enumerate() {
                    if i == *late.min(&writes.len()) && d > 0 {
                        close_all(&mut b, &mut model, d - 1, day_start + 500 * (i as i64 + 1), step);
                    }
                    clock = clock.max(day_start) + 1_000;
                    let name = format!("m{m}");
                    write(&mut b, &name, v, clock).expect("write");
                    model.write(d, &name, v, clock);
                }
                if d > 0 && *late >= writes.len() {
                    close_all(&mut b, &mut model, d - 1, day_start + DAY / 2, step);
                }
                if writes.is_empty() {
                    model.periods.resize_with(model.periods.len().max(d + 1), Default::default);
                }
                check_places(&b, &model, d, day_start);
            }
            let last = days.len() - 1;
            close_all(&mut b, &mut model, last, T0 + (last as i64 + 1) * DAY, step);
            for m in 0..10 {
                let name = format!("m{m}");
                prop_assert_eq!(b.tier_of(&name), model.tier(&name), "{}", name);
            }
        }
    }

    /// Closes period `p` of both in steps of `step` members at `now`, and compares.
    fn close_all(b: &mut Board, model: &mut Model, p: usize, now: i64, step: usize) {
        let period = b.calendar().period_at(T0 + p as i64 * DAY).expect("period");
        let owes = b.seats.get(&period.start_us).is_some_and(owes_close);
        let mut steps = 0;
        while let Some(s) = b.close_step(now, step) {
            steps += 1;
            assert_eq!(s.period, period.id);
            if s.done {
                break;
            }
        }
        assert!(
            b.close_step(now, step).is_none() || !owes,
            "a second close changes nothing"
        );
        let want = if p < model.periods.len() {
            model.close(p)
        } else {
            Vec::new()
        };
        let got: Vec<_> = b
            .closing(&period)
            .map(|c| {
                c.moves
                    .iter()
                    .map(|m| (m.member.to_string(), m.from, m.to, m.cohort, m.rank))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(got, want, "moves of day {p} ({steps} steps)");
        assert!(b.is_closed(&period, now));
    }

    /// Every member of day `d` sits where the model seats it.
    fn check_places(b: &Board, model: &Model, d: usize, day_start: i64) {
        let Some(mp) = model.periods.get(d) else {
            return;
        };
        let period = b.calendar().period_at(day_start).expect("period");
        for (t, list) in &mp.arrivals {
            for (i, m) in list.iter().enumerate() {
                let want = Place {
                    tier: *t,
                    cohort: i as u32 / SIZE + 1,
                };
                assert_eq!(b.place_of(&period, m), Some(want), "{m} on day {d}");
            }
        }
        for m in &mp.waiting {
            assert!(b.is_pending(&period, m), "{m} waits on day {d}");
        }
    }
}

#[test]
fn hidden_members_are_kept_counted_and_answered_as_they_would_rank() {
    let mut b = daily(3);
    for (i, m) in ["a", "b", "c", "d"].iter().enumerate() {
        write(&mut b, m, 40 - 10 * i as i64, T0 + i as i64).expect("write");
    }
    assert_eq!(b.hide("a", 0), Ok(true));
    assert_eq!(b.hide("a", 0), Ok(false), "hiding twice changes nothing");
    assert!(b.hide("nobody-yet", 0).expect("a name without an entry"));
    // A visible member's answer leaves the hidden one out; the hidden one's answer is the
    // rank it would have.
    let (o, _) = write(&mut b, "c", 0, T0 + 10).expect("write");
    assert_eq!(o.rank, 2, "c is third, second without a");
    let (o, _) = write(&mut b, "a", 0, T0 + 11).expect("write");
    assert_eq!(o.rank, 1, "a would be first");
    b.hide("b", 0).expect("hide");
    let (o, _) = write(&mut b, "a", 0, T0 + 12).expect("write");
    assert_eq!(
        o.rank, 1,
        "a's answer leaves the other hidden member out too"
    );
    let (o, _) = write(&mut b, "d", 0, T0 + 13).expect("write");
    assert_eq!(o.rank, 2, "d behind c alone");
    assert_eq!(b.hidden(), ["a", "b", "nobody-yet"]);
    assert!(b.unhide("a", 0));
    assert!(!b.unhide("a", 0));
    let (o, _) = write(&mut b, "d", 0, T0 + 14).expect("write");
    assert_eq!(o.rank, 3, "a is back above c");
    // The named limit.
    let mut b = daily(3);
    for i in 0..MAX_HIDDEN_MEMBERS {
        b.hide(&format!("h{i}"), 0).expect("under the limit");
    }
    assert_eq!(
        b.hide("one-more", 0).map_err(|e| e.code()),
        Err(crate::ErrorCode::TooManyHidden)
    );
    assert!(!b.is_hidden("one-more"), "a refused hide changes nothing");
    assert_eq!(
        b.hide("h0", 0),
        Ok(false),
        "a hidden member at the limit is fine"
    );
    assert!(b.unhide("h0", 0));
    assert_eq!(b.hide("one-more", 0), Ok(true));
}

mod erase {
    //! An erase takes every trace of one member from a board (docs/SPEC.md §16) and
    //! nothing of anyone else's.

    use super::*;
    use crate::league::League;
    use crate::rewards::RewardRow;

    const ZED: &str = "zelda-erased";

    fn board() -> Board {
        let mut c = BoardConfig {
            reset: Reset::Daily,
            retention: 4,
            cohort_size: Some(3),
            league: Some(League {
                tiers: vec!["low".into(), "high".into()],
                promote: 1,
                demote: 0,
            }),
            ..BoardConfig::default()
        };
        c.settings.entry.max_attempts = Some(5);
        c.settings.rewards = vec![RewardRow {
            from: Some(1),
            to: Some(3),
            top_hundredths: None,
            reward: "gold".into(),
            amount: 1,
            tier: None,
        }];
        Board::checked(c).expect("board")
    }

    /// Every close step due at `now_us`, run.
    fn close(b: &mut Board, now_us: i64) {
        while b.close_step(now_us, usize::MAX).is_some() {}
    }

    /// Day 1: zed tops the first cohort (zed, ann, bob) in two attempts, is promoted and
    /// paid; cid is alone in the second. Day 2: zed plays again, dan joins, zed is hidden.
    /// The board, day 1, and an instant of day 2.
    fn zed_everywhere() -> (Board, Period, i64) {
        let mut b = board();
        let day1 = T0 + 3_600_000_000;
        for (m, v) in [(ZED, 10), ("ann", 8), (ZED, 5), ("bob", 3), ("cid", 7)] {
            write(&mut b, m, v, day1).expect("write");
        }
        close(&mut b, T0 + DAY + 1);
        assert_eq!(b.tier_of(ZED), 1, "promoted");
        let (p1, _) = b
            .read(&PeriodRef::parse("2026-11-22"), T0 + DAY + 1)
            .expect("day 1");
        assert!(b.rewards().of_member(ZED).len() == 1, "paid");
        let day2 = T0 + DAY + 3_600_000_000;
        write(&mut b, ZED, 1, day2).expect("write");
        b.join("dan", day2, None).expect("join");
        b.hide(ZED, 0).expect("hide");
        (b, p1, day2)
    }

    /// (period start, score, reached_at) of each of `member`'s entries.
    fn entries_of(b: &Board, member: &str) -> Vec<(i64, i64, i64)> {
        b.periods()
            .filter_map(|(p, r)| {
                let (e, _) = r.whole().member_ranked(member, RankStyle::Ordinal)?;
                Some((p.start_us, e.score(), e.reached_at_us))
            })
            .collect()
    }

    #[test]
    fn an_erase_takes_every_trace_of_the_member() {
        let (mut b, _, day2) = zed_everywhere();
        let names = |b: &Board| {
            let mut all = std::collections::BTreeSet::new();
            b.for_each_name(&mut |m| {
                all.insert(m.to_owned());
            });
            all
        };
        assert!(names(&b).contains(ZED));
        // Two entries, two periods' seats, a tier, a hidden mark, a grant.
        assert_eq!(b.erase(ZED, day2), 7);
        assert!(!names(&b).contains(ZED) && names(&b).contains("ann"));
        // Its entries, attempts, seats, tier, moves, grants, hidden mark: gone.
        assert_eq!(entries_of(&b, ZED), []);
        for (p, _) in b.periods() {
            assert_eq!(b.attempts(p, ZED).unwrap_or(0), 0);
            assert!(b.place_of(p, ZED).is_none());
        }
        assert!(b.tiers().all(|(m, _)| m != ZED));
        assert!(!b.is_hidden(ZED) && b.hidden().is_empty());
        assert!(b.rewards().of_member(ZED).is_empty());
        let text = format!("{b:?}");
        assert!(!text.contains(ZED), "a trace is left: {text}");
        // Nothing left: a second erase changes nothing. A later write is a new member.
        assert_eq!(b.erase(ZED, day2), 0);
        write(&mut b, ZED, 2, day2).expect("write");
        let p2 = b.resolve(&PeriodRef::Current, day2).expect("day 2");
        assert_eq!(
            (b.attempts(&p2, ZED), b.tier_of(ZED), b.is_hidden(ZED)),
            (Some(1), 0, false)
        );
    }

    #[test]
    fn an_erase_leaves_everyone_else_as_they_were() {
        let (mut b, p1, day2) = zed_everywhere();
        let grants_before = b.rewards().periods[&p1.start_us].grants.clone();
        let ann_before = entries_of(&b, "ann");
        assert!(b.erase(ZED, day2) > 0);
        // The grant numbers: zed's stays, nameless.
        let grants = &b.rewards().periods[&p1.start_us].grants;
        assert_eq!(grants.len(), grants_before.len());
        for (now, before) in grants.iter().zip(&grants_before) {
            if before.member == ZED {
                assert!(now.is_erased());
            } else {
                assert_eq!(now, before);
            }
        }
        // The cohort seats: zed's still counted, under no name.
        assert_eq!(
            b.cohorts(&p1, Some(0)),
            [
                (Place { tier: 0, cohort: 1 }, 3),
                (Place { tier: 0, cohort: 2 }, 1)
            ]
        );
        let first = b.cohort_members(&p1, Place { tier: 0, cohort: 1 });
        assert_eq!(first[1..], ["ann", "bob"]);
        assert!(first[0].starts_with('\0'));
        // Entries, tiers, the join.
        assert_eq!(entries_of(&b, "ann"), ann_before);
        assert_eq!(b.tier_of("cid"), 1);
        let p2 = b.resolve(&PeriodRef::Current, day2).expect("day 2");
        assert!(b.is_waiting(&p2, "dan"));
    }
}

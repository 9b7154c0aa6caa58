//! A board's grants, tested: the rows in force at a close, closes at `closes_at`, the
//! limit, and a close made in steps against the same close made whole.

use crate::board::tests::write_op;
use crate::board::Board;
use crate::calendar::Reset;
use crate::config::BoardConfig;
use crate::rewards::tests::ranks as row;
use crate::rewards::{RewardRow, MAX_GRANTS_PER_PERIOD};
use crate::view::BoardPatch;

const DAY: i64 = 86_400_000_000;
/// 2026-11-22T00:00:00Z: the start of period 2026-11-22 of a daily UTC board.
const T0: i64 = 1_795_305_600_000_000;

fn board(reset: Reset, closes_at: Option<i64>, rows: Vec<RewardRow>) -> Board {
    let mut c = BoardConfig {
        reset,
        ..BoardConfig::default()
    };
    c.settings.entry.closes_at = closes_at;
    c.settings.rewards = rows;
    Board::checked(c).expect("board")
}

fn write(b: &mut Board, member: &str, value: i64, at_us: i64) {
    write_op(b, member, None, value, at_us).expect("write");
}

/// (member, reward) of each grant of the period starting at `start`.
fn paid(b: &Board, start: i64) -> Vec<(String, String)> {
    b.rewards().periods[&start]
        .grants
        .iter()
        .map(|g| (g.member.clone(), g.reward.clone()))
        .collect()
}

fn pay(member: &str, reward: &str) -> (String, String) {
    (member.into(), reward.into())
}

#[test]
fn the_rows_in_force_at_the_close_count() {
    let mut b = board(Reset::Daily, None, vec![row(1, 1, "old")]);
    write(&mut b, "a", 5, T0 + 1);
    // Patched before the close: the new rows pay.
    let new_rows = BoardPatch {
        rewards: Some(vec![row(1, 1, "new")]),
        ..BoardPatch::default()
    };
    b.patch(&new_rows, T0 + 2).expect("patch");
    assert!(b.grants_due(T0 + DAY - 1).is_none(), "not closed yet");
    assert!(b.close_step(T0 + DAY, 100).is_some());
    assert_eq!(paid(&b, T0), [pay("a", "new")]);
    // Day 2 closes; a patch logged after that close, before its step, settles the
    // close first with the rows it closed under.
    write(&mut b, "a", 5, T0 + DAY + 1);
    let later = BoardPatch {
        rewards: Some(vec![row(1, 1, "later")]),
        ..BoardPatch::default()
    };
    b.patch(&later, T0 + 2 * DAY + 5).expect("patch");
    assert_eq!(paid(&b, T0 + DAY), [pay("a", "new")]);
    assert!(
        b.close_step(T0 + 2 * DAY + 6, 100).is_none(),
        "granted once"
    );
}

#[test]
fn rows_set_after_a_close_leave_it_unpaid() {
    let mut b = board(Reset::Daily, None, Vec::new());
    write(&mut b, "a", 5, T0 + 1);
    let rows = BoardPatch {
        rewards: Some(vec![row(1, 1, "late")]),
        ..BoardPatch::default()
    };
    // Day 1 closed without rows: it owes nothing; day 2 is paid.
    b.patch(&rows, T0 + DAY + 10).expect("patch");
    write(&mut b, "b", 5, T0 + DAY + 11);
    assert!(b.grants_due(T0 + 2 * DAY).is_some());
    b.close_step(T0 + 2 * DAY, 100).expect("a step");
    assert!(!b.rewards().periods.contains_key(&T0));
    assert_eq!(paid(&b, T0 + DAY), [pay("b", "late")]);
}

#[test]
fn closes_at_closes_a_board_without_a_reset_and_only_stops_writes_on_one_with() {
    let closes = T0 + 3_600_000_000;
    let mut once = board(Reset::Never, Some(closes), vec![row(1, 1, "cup")]);
    write(&mut once, "a", 5, T0);
    assert!(once.grants_due(closes - 1).is_none());
    once.close_step(closes, 100).expect("closed at closes_at");
    assert_eq!(paid(&once, i64::MIN), [pay("a", "cup")]);
    // Without closes_at, `all` never closes.
    let mut never = board(Reset::Never, None, vec![row(1, 1, "cup")]);
    write(&mut never, "a", 5, T0);
    assert!(never.grants_due(i64::MAX - 1).is_none());
    // A daily board with closes_at pays at each period's end, not at closes_at.
    let mut daily = board(Reset::Daily, Some(closes), vec![row(1, 1, "cup")]);
    write(&mut daily, "a", 5, T0);
    assert!(daily.grants_due(closes).is_none());
    daily
        .close_step(T0 + DAY, 100)
        .expect("closed at the day's end");
    assert_eq!(paid(&daily, T0), [pay("a", "cup")]);
}

#[test]
fn a_league_close_pending_is_finished_before_a_patch_changes_the_rows() {
    let mut c = BoardConfig {
        reset: Reset::Daily,
        cohort_size: Some(2),
        league: Some(crate::league::League {
            tiers: vec!["low".into(), "high".into()],
            promote: 1,
            demote: 0,
        }),
        ..BoardConfig::default()
    };
    c.settings.rewards = vec![row(1, 1, "cup")];
    let mut b = Board::checked(c).expect("board");
    write(&mut b, "a", 5, T0 + 1);
    write(&mut b, "b", 3, T0 + 2);
    // Day 1 closed, neither its league close nor its grants made yet: a patch
    // removing the rows first finishes both, with the rows in force at the close.
    let none = BoardPatch {
        rewards: Some(Vec::new()),
        ..BoardPatch::default()
    };
    b.patch(&none, T0 + DAY + 5).expect("patch");
    assert_eq!(paid(&b, T0), [pay("a", "cup")]);
    assert_eq!(b.tier_of("a"), 1, "the league close ran");
}

#[test]
fn a_grace_patched_later_never_skips_a_close() {
    let mut c = BoardConfig {
        reset: Reset::Daily,
        ..BoardConfig::default()
    };
    c.settings.grace = 86_400;
    c.settings.rewards = vec![row(1, 1, "cup")];
    let mut b = Board::checked(c).expect("board");
    write(&mut b, "a", 5, T0 + 1);
    write(&mut b, "b", 3, T0 + DAY + 1);
    // Day 1 closes a day after its end, with its grace.
    b.close_step(T0 + 2 * DAY, 100).expect("day 1");
    assert_eq!(paid(&b, T0), [pay("a", "cup")]);
    // The grace drops to 0: day 2 closed at its end, which has passed.
    let no_grace = BoardPatch {
        grace: Some(0),
        ..BoardPatch::default()
    };
    b.patch(&no_grace, T0 + 2 * DAY + 1).expect("patch");
    b.close_step(T0 + 2 * DAY + 2, 100).expect("day 2");
    assert_eq!(paid(&b, T0 + DAY), [pay("b", "cup")]);
}

#[test]
fn a_close_pays_at_most_the_limit_and_counts_the_rest() {
    let mut rows = vec![row(1, 1, "first")];
    rows.push(RewardRow {
        from: None,
        to: None,
        top_hundredths: Some(10_000),
        reward: "all".into(),
        amount: 1,
        tier: None,
    });
    let mut b = board(Reset::Daily, None, rows);
    let n = MAX_GRANTS_PER_PERIOD as i64 + 7;
    for i in 0..n {
        write(&mut b, &format!("m{i}"), i, T0 + 1);
    }
    while b.close_step(T0 + DAY, 100).is_some() {}
    let p = &b.rewards().periods[&T0];
    assert_eq!((p.grants.len(), p.cut), (MAX_GRANTS_PER_PERIOD, 7));
    // Rank order: the best first, the last paid is rank 100,000.
    let last = n - 1 - (MAX_GRANTS_PER_PERIOD as i64 - 1);
    assert_eq!(
        (p.grants[0].member.as_str(), p.grants[0].reward.as_str()),
        (format!("m{}", n - 1).as_str(), "first")
    );
    let tail = p.grants.last().expect("grants");
    assert_eq!(
        (tail.member.clone(), tail.rank),
        (format!("m{last}"), 100_000)
    );
}

mod steps {
    //! A close's grants made in steps of a few members each — hides, snapshots and the
    //! next period's writes between them — come out as the same close made in one step.

    use proptest::prelude::*;

    use super::*;
    use crate::rewards::Rewards;

    /// Sets `member`'s score (the board's rule adds).
    fn set(b: &mut Board, member: &str, value: i64, at_us: i64) {
        write_op(b, member, Some(crate::scoring::Op::Set), value, at_us).expect("write");
    }

    /// A daily board, or with `cohort_size` none a board without a reset whose period
    /// `all` closes when the daily one's first does.
    fn board_of(cohort_size: Option<u32>, rows: Vec<RewardRow>) -> Board {
        let mut c = BoardConfig {
            reset: Reset::Daily,
            cohort_size,
            ..BoardConfig::default()
        };
        if cohort_size.is_none() {
            c.reset = Reset::Never;
            c.settings.entry.closes_at = Some(T0 + DAY);
        }
        c.settings.rewards = rows;
        Board::checked(c).expect("board")
    }

    /// The start of the period paid: the first day's, or `all`'s.
    fn paid_start(b: &Board) -> i64 {
        b.calendar().period_at(T0).expect("period").start_us
    }

    /// Runs close steps of `budget` at `now` until none is due, checking that no grant
    /// of the period is read before the last; how many steps it took.
    fn close_in_steps(b: &mut Board, now: i64, budget: usize) -> usize {
        let mut steps = 0;
        while let Some(step) = b.close_step(now, budget) {
            steps += 1;
            if !step.done {
                assert!(
                    !b.rewards().periods.contains_key(&paid_start(b)),
                    "read before made"
                );
                assert!(b.rewards().making().is_some());
            }
        }
        steps
    }

    fn any_row() -> impl Strategy<Value = RewardRow> {
        prop_oneof![
            (1u64..6, 0u64..6).prop_map(|(from, more)| row(from, from + more, "ranks")),
            (1u32..=10_000).prop_map(|h| RewardRow {
                from: None,
                to: None,
                top_hundredths: Some(h),
                ..row(1, 1, "top")
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn a_close_in_steps_pays_as_one_step_does(
            cohort in prop::option::of(2u32..5),
            rows in prop::collection::vec(any_row(), 1..4),
            writes in prop::collection::vec((0u8..24, -2i64..3), 1..60),
            budget in 1usize..8,
            hide in prop::option::of((0usize..6, 0u8..24, any::<bool>())),
        ) {
            let mut b = board_of(cohort, rows);
            for (i, (m, v)) in writes.iter().enumerate() {
                let v = match v { -2 => i64::MIN, 2 => i64::MAX, v => *v };
                set(&mut b, &format!("m{m}"), v, T0 + 1 + i as i64);
            }
            let mut whole = b.clone();
            let now = T0 + DAY + 5;
            // A step, maybe a hide (or an unhide) after it, then the rest.
            let mut stepped = 0;
            if let Some((after, m, hidden_before)) = hide {
                let name = format!("m{m}");
                if hidden_before {
                    b.hide(&name, 0).expect("hide");
                    whole.hide(&name, 0).expect("hide");
                }
                for _ in 0..after {
                    if b.close_step(now, budget).is_some() {
                        stepped += 1;
                    }
                }
                // Through a snapshot of the grants half made.
                let json = serde_json::to_string(b.rewards()).expect("json");
                let back: Rewards = serde_json::from_str(&json).expect("read back");
                prop_assert_eq!(&back, b.rewards());
                b.restore_rewards(back);
                // A hide sees a close begun whole: the one made in one step then hides.
                let begun = b.rewards().making().is_some()
                    || b.rewards().periods.contains_key(&paid_start(&b));
                if begun {
                    while whole.close_step(now, usize::MAX).is_some() {}
                }
                if hidden_before {
                    b.unhide(&name, 0);
                    whole.unhide(&name, 0);
                } else {
                    b.hide(&name, 0).expect("hide");
                    whole.hide(&name, 0).expect("hide");
                }
                prop_assert!(b.rewards().making().is_none(), "a hide finishes the grants");
            }
            if cohort.is_some() {
                write(&mut b, "next-day", 1, T0 + DAY + 1);
                write(&mut whole, "next-day", 1, T0 + DAY + 1);
            }
            stepped += close_in_steps(&mut b, now, budget);
            while whole.close_step(now, usize::MAX).is_some() {}
            prop_assert!(stepped >= 1);
            prop_assert_eq!(b.rewards(), whole.rewards());
            for m in 0..24 {
                let name = format!("m{m}");
                prop_assert_eq!(b.rewards().of_member(&name), whole.rewards().of_member(&name));
            }
        }
    }

    #[test]
    fn the_limit_cuts_alike_across_steps() {
        let mut rows = vec![row(1, 3, "first")];
        rows.push(RewardRow {
            from: None,
            to: None,
            top_hundredths: Some(10_000),
            ..row(1, 1, "all")
        });
        let mut b = board_of(None, rows);
        let n = MAX_GRANTS_PER_PERIOD as i64 + 7;
        for i in 0..n {
            write(&mut b, &format!("m{i}"), i % 1_000, T0 + 1 + i);
        }
        let mut whole = b.clone();
        let steps = close_in_steps(&mut b, T0 + DAY, 30_000);
        while whole.close_step(T0 + DAY, usize::MAX).is_some() {}
        assert_eq!(steps, 4, "30,000 a step");
        let p = &b.rewards().periods[&paid_start(&b)];
        assert_eq!((p.grants.len(), p.cut), (MAX_GRANTS_PER_PERIOD, 7));
        assert_eq!(b.rewards(), whole.rewards());
    }

    #[test]
    fn the_limit_cuts_by_cohort_then_rank() {
        // 100,007 members in cohorts of 1,000, all paid: cohorts 1 to 100 fill the limit,
        // and the 7 of cohort 101 are cut, in steps as whole.
        let all = RewardRow {
            from: None,
            to: None,
            top_hundredths: Some(10_000),
            ..row(1, 1, "all")
        };
        let mut b = board_of(Some(1_000), vec![all]);
        let n = MAX_GRANTS_PER_PERIOD as i64 + 7;
        for i in 0..n {
            write(&mut b, &format!("m{i}"), i % 1_000, T0 + 1 + i);
        }
        let mut whole = b.clone();
        close_in_steps(&mut b, T0 + DAY, 30_000);
        while whole.close_step(T0 + DAY, usize::MAX).is_some() {}
        assert_eq!(b.rewards(), whole.rewards());
        let p = &b.rewards().periods[&paid_start(&b)];
        assert_eq!((p.grants.len(), p.cut), (MAX_GRANTS_PER_PERIOD, 7));
        let order: Vec<(u32, u64)> = p
            .grants
            .iter()
            .map(|g| (g.cohort.as_ref().expect("a cohort").1, g.rank))
            .collect();
        assert!(
            order.windows(2).all(|w| w[0] < w[1]),
            "by cohort, then rank"
        );
        assert_eq!((order[0], order[order.len() - 1]), ((1, 1), (100, 1_000)));
    }

    #[test]
    fn an_erase_between_steps_finishes_the_grants_first() {
        let mut b = board_of(Some(2), vec![row(1, 1, "cup")]);
        for (i, m) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
            write(&mut b, m, i as i64, T0 + 1 + i as i64);
        }
        let step = b.close_step(T0 + DAY, 2).expect("a step");
        assert!(!step.done, "one cohort a step");
        b.erase("f", T0 + DAY + 1);
        assert!(b.rewards().making().is_none());
        // Cohorts (a, b), (c, d), (e, f): their firsts b, d and f, f's nameless.
        let paid: Vec<&str> = b.rewards().periods[&T0]
            .grants
            .iter()
            .map(|g| g.member.as_str())
            .collect();
        assert_eq!(paid, ["b", "d", ""]);
        assert!(b.close_step(T0 + DAY + 2, 2).is_none(), "nothing left");
    }
}

//! The ranking against a plain model: a map of members, sorted into a Vec on every check.
//! Random operation sequences over a few hundred members, with scores that collide often
//! and include the i64 extremes, in both orders; after every step every member's rank in
//! all three styles, the full listing, random pages, around windows and counts must agree.

use std::collections::BTreeMap;

use photofinish_core::error::ScoreLimit;
use photofinish_core::{BoardError, Op, Order, Outcome, RankStyle, Ranking, Write};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Action {
    Write {
        member: u16,
        op: Op,
        value: i64,
        at: i64,
    },
    Remove {
        member: u16,
    },
}

#[derive(Default)]
struct Model {
    /// member → (score, reached_at, seq)
    entries: BTreeMap<String, (i64, i64, u64)>,
    next_seq: u64,
}

impl Model {
    fn new() -> Self {
        Self {
            entries: BTreeMap::new(),
            next_seq: 1,
        }
    }

    fn write(
        &mut self,
        order: Order,
        member: &str,
        op: Op,
        value: i64,
        at: i64,
    ) -> Result<Outcome, BoardError> {
        let old = self.entries.get(member).map(|e| e.0);
        let new = match (op, old) {
            (Op::Incr, Some(o)) => o.checked_add(value).ok_or(BoardError::ScoreOverflow {
                old: o,
                delta: value,
                limit: ScoreLimit::I64,
            })?,
            (Op::Best, Some(o)) => {
                let better = match order {
                    Order::Desc => value > o,
                    Order::Asc => value < o,
                };
                if better {
                    value
                } else {
                    o
                }
            }
            _ => value,
        };
        let changed = old != Some(new);
        if changed {
            self.entries
                .insert(member.to_owned(), (new, at, self.next_seq));
            self.next_seq += 1;
        }
        let sorted = self.sorted(order);
        let rank = sorted.iter().position(|e| e.0 == member).expect("present") as u64 + 1;
        Ok(Outcome {
            score: new,
            rank,
            reached_at_us: self.entries[member].1,
            changed,
        })
    }

    /// (member, score, reached_at) in rank order.
    fn sorted(&self, order: Order) -> Vec<(String, i64, i64)> {
        let mut v: Vec<_> = self
            .entries
            .iter()
            .map(|(m, &(s, at, seq))| (order.normalize(s), at, seq, m.clone(), s))
            .collect();
        v.sort();
        v.into_iter().map(|(_, at, _, m, s)| (m, s, at)).collect()
    }

    /// Rank of each listed entry in `style`, computed the slow, obvious way.
    fn ranks(&self, order: Order, style: RankStyle) -> Vec<u64> {
        let sorted = self.sorted(order);
        sorted
            .iter()
            .enumerate()
            .map(|(i, (_, s, _))| match style {
                RankStyle::Ordinal => i as u64 + 1,
                RankStyle::Competition => {
                    1 + sorted.iter().filter(|e| order.is_better(e.1, *s)).count() as u64
                }
                RankStyle::Dense => {
                    let mut better: Vec<i64> = sorted
                        .iter()
                        .map(|e| e.1)
                        .filter(|&x| order.is_better(x, *s))
                        .collect();
                    better.dedup();
                    1 + better.len() as u64
                }
            })
            .collect()
    }
}

const STYLES: [RankStyle; 3] = [RankStyle::Ordinal, RankStyle::Competition, RankStyle::Dense];

fn name(m: u16) -> String {
    // Short names stay inline in the record; every seventh is long enough for the side table.
    if m.is_multiple_of(7) {
        format!("member-with-a-long-name-{m:05}")
    } else {
        format!("m{m}")
    }
}

fn check(r: &Ranking, model: &Model, order: Order, probes: &[(u64, usize, u16, u64, u64)]) {
    let sorted = model.sorted(order);
    assert_eq!(r.len(), sorted.len() as u64);
    for style in STYLES {
        let ranks = model.ranks(order, style);
        let listed = r.page(0, usize::MAX, style);
        assert_eq!(listed.len(), sorted.len());
        for (i, (e, (m, s, at))) in listed.iter().zip(&sorted).enumerate() {
            assert_eq!(
                (&e.member, e.score, e.reached_at_us, e.rank),
                (m, *s, *at, ranks[i]),
                "{style:?} at {i}"
            );
            let one = r.member(m, style).expect("member present");
            assert_eq!(one.rank, ranks[i], "{style:?} rank of {m}");
            let (ranked, ordinal) = r.member_ranked(m, style).expect("member present");
            assert_eq!((ranked.rank, ordinal), (ranks[i], i as u64 + 1));
            assert_eq!(r.at(i as u64), Some((m.clone(), *s)), "entry at {i}");
        }
        assert_eq!(r.at(sorted.len() as u64), None);
        // The rank a score would get, for every score held, its neighbours and the ends.
        let mut probes_scores: Vec<i64> = vec![i64::MIN, i64::MAX, 0];
        for (_, s, _) in &sorted {
            probes_scores.extend(
                [s.checked_sub(1), Some(*s), s.checked_add(1)]
                    .into_iter()
                    .flatten(),
            );
        }
        probes_scores.sort_unstable();
        probes_scores.dedup();
        for score in probes_scores {
            let better = sorted.iter().filter(|e| order.is_better(e.1, score));
            let mut distinct: Vec<i64> = better.clone().map(|e| e.1).collect();
            distinct.dedup();
            let equal = sorted.iter().filter(|e| e.1 == score).count();
            let want = 1 + match style {
                RankStyle::Ordinal => better.count() + equal,
                RankStyle::Competition => better.count(),
                RankStyle::Dense => distinct.len(),
            } as u64;
            assert_eq!(
                r.rank_of_score(score, style),
                want,
                "{style:?} rank of score {score}"
            );
        }
        // A set of members (every third probe's member, plus absent names), in rank order.
        let asked: Vec<String> = probes
            .iter()
            .map(|p| name(p.2))
            .chain(["absent".to_owned()])
            .collect();
        let (entries, missing) = r.members_of(&asked, style);
        let want: Vec<_> = listed
            .iter()
            .filter(|e| asked.contains(&e.member))
            .cloned()
            .collect();
        assert_eq!(entries, want, "{style:?} members_of");
        for (i, m) in asked.iter().enumerate() {
            let absent = !sorted.iter().any(|e| &e.0 == m);
            assert_eq!(missing.contains(&i), absent, "{style:?} {m} missing");
        }
        // Every member at once, with absent names and repeats between them: a list that
        // spans several of the batches members_of looks names up in (16 at a time).
        let mut asked: Vec<String> = Vec::new();
        for (i, (m, _, _)) in sorted.iter().enumerate() {
            asked.push(m.clone());
            if i % 5 == 0 {
                asked.push(format!("absent-{i}"));
                asked.push(m.clone());
            }
        }
        let (entries, missing) = r.members_of(&asked, style);
        assert_eq!(entries, listed, "{style:?} members_of every member");
        let absent: Vec<usize> = (0..asked.len())
            .filter(|&i| asked[i].starts_with("absent-"))
            .collect();
        assert_eq!(
            missing, absent,
            "{style:?} members_of every member: missing"
        );
        for &(offset, limit, member, before, after) in probes {
            let offset = offset % (sorted.len() as u64 + 2);
            let page = r.page(offset, limit, style);
            let want: Vec<_> = listed
                .iter()
                .skip(offset as usize)
                .take(limit)
                .cloned()
                .collect();
            assert_eq!(page, want, "{style:?} page {offset}+{limit}");
            let m = name(member);
            match sorted.iter().position(|e| e.0 == m) {
                None => assert!(r.around(&m, before, after, style).is_none()),
                Some(pos) => {
                    let n = sorted.len() as u64;
                    let size = (before + after + 1).min(n);
                    let start = (pos as u64).saturating_sub(before).min(n - size);
                    let got = r.around(&m, before, after, style).expect("around");
                    let want: Vec<_> = listed
                        .iter()
                        .skip(start as usize)
                        .take(size as usize)
                        .cloned()
                        .collect();
                    assert_eq!(got, want, "{style:?} around {m} -{before}+{after}");
                    assert!(got.iter().any(|e| e.member == m));
                }
            }
        }
    }
}

fn value() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -3i64..4,
        2 => Just(i64::MAX),
        2 => Just(i64::MIN),
        1 => Just(i64::MAX - 1),
        1 => Just(i64::MIN + 1),
        1 => any::<i64>(),
    ]
}

fn action(members: u16) -> impl Strategy<Value = Action> {
    let op = prop_oneof![Just(Op::Incr), Just(Op::Set), Just(Op::Best)];
    prop_oneof![
        8 => (0..members, op, value(), 0i64..6).prop_map(|(member, op, value, at)| Action::Write { member, op, value, at }),
        1 => (0..members).prop_map(|member| Action::Remove { member }),
    ]
}

fn run(order: Order, actions: Vec<Action>, probes: Vec<(u64, usize, u16, u64, u64)>) {
    let mut r = Ranking::new(order);
    // The same writes without ranks (as log replay applies them) must reach the same state.
    let mut unranked = Ranking::new(order);
    let mut model = Model::new();
    for (step, a) in actions.into_iter().enumerate() {
        match a {
            Action::Write {
                member,
                op,
                value,
                at,
            } => {
                let m = name(member);
                let got = r.submit(&Write {
                    member: &m,
                    op,
                    value,
                    at_us: at,
                    metadata: None,
                });
                let want = model.write(order, &m, op, value, at);
                let quiet = unranked.submit_unranked(&Write {
                    member: &m,
                    op,
                    value,
                    at_us: at,
                    metadata: None,
                });
                assert_eq!(
                    quiet,
                    want.clone().map(|o| Outcome { rank: 0, ..o }),
                    "unranked {a:?}"
                );
                assert_eq!(got, want, "{a:?}");
            }
            Action::Remove { member } => {
                let m = name(member);
                assert_eq!(r.remove(&m), model.entries.remove(&m).is_some());
                unranked.remove(&m);
            }
        }
        r.check_invariants();
        unranked.check_invariants();
        check(&r, &model, order, &probes);
        if step % 13 == 12 {
            // A replay's deferred index, rebuilt midway, must equal the maintained one;
            // later unranked writes defer it again.
            unranked.rebuild_index();
            unranked.check_invariants();
            assert_eq!(
                unranked.page(0, usize::MAX, RankStyle::Ordinal),
                r.page(0, usize::MAX, RankStyle::Ordinal)
            );
        }
    }
    unranked.rebuild_index();
    unranked.check_invariants();
    assert_eq!(unranked.len(), r.len());
    assert_eq!(unranked.next_seq(), r.next_seq());
    assert_eq!(
        unranked.page(0, usize::MAX, RankStyle::Dense),
        r.page(0, usize::MAX, RankStyle::Dense)
    );
}

fn probes() -> impl Strategy<Value = Vec<(u64, usize, u16, u64, u64)>> {
    prop::collection::vec((0u64..400, 0usize..12, 0u16..300, 0u64..7, 0u64..7), 3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Few members, many collisions: every step fully checked.
    #[test]
    fn small_boards_match_the_model(desc in any::<bool>(), actions in prop::collection::vec(action(24), 1..200), probes in probes()) {
        run(if desc { Order::Desc } else { Order::Asc }, actions, probes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// A few hundred members: enough entries for multi-level trees, splits and merges.
    #[test]
    fn larger_boards_match_the_model(desc in any::<bool>(), actions in prop::collection::vec(action(300), 300..700), probes in probes()) {
        run(if desc { Order::Desc } else { Order::Asc }, actions, probes);
    }
}

#[test]
fn overflow_is_an_error_that_changes_nothing() {
    let mut r = Ranking::new(Order::Desc);
    let w = |value, at| Write {
        member: "a",
        op: Op::Incr,
        value,
        at_us: at,
        metadata: None,
    };
    r.submit(&w(i64::MAX, 1)).expect("first");
    let before = r.member("a", RankStyle::Ordinal);
    assert_eq!(
        r.submit(&w(1, 2)),
        Err(BoardError::ScoreOverflow {
            old: i64::MAX,
            delta: 1,
            limit: ScoreLimit::I64,
        })
    );
    assert_eq!(r.member("a", RankStyle::Ordinal), before);
    r.submit(&Write {
        value: i64::MIN,
        ..w(0, 3)
    })
    .expect("back to -1");
    assert_eq!(r.member("a", RankStyle::Ordinal).expect("a").score, -1);
    assert_eq!(
        r.submit(&w(i64::MIN, 4)),
        Err(BoardError::ScoreOverflow {
            old: -1,
            delta: i64::MIN,
            limit: ScoreLimit::I64,
        })
    );
}

#[test]
fn reached_at_moves_only_when_the_score_changes() {
    let mut r = Ranking::new(Order::Desc);
    let w = |op, value, at| Write {
        member: "a",
        op,
        value,
        at_us: at,
        metadata: None,
    };
    assert!(r.submit(&w(Op::Set, 10, 100)).expect("w").changed);
    for (op, value) in [(Op::Incr, 0), (Op::Set, 10), (Op::Best, 9), (Op::Best, 10)] {
        let o = r.submit(&w(op, value, 200)).expect("w");
        assert_eq!(
            (o.score, o.reached_at_us, o.changed),
            (10, 100, false),
            "{op:?} {value}"
        );
    }
    let o = r.submit(&w(Op::Best, 11, 300)).expect("w");
    assert_eq!((o.score, o.reached_at_us, o.changed), (11, 300, true));
}

#[test]
fn equal_scores_and_equal_times_order_by_sequence() {
    let mut r = Ranking::new(Order::Desc);
    for m in ["c", "a", "b"] {
        r.submit(&Write {
            member: m,
            op: Op::Set,
            value: 7,
            at_us: 50,
            metadata: None,
        })
        .expect("w");
    }
    let names: Vec<String> = r
        .page(0, 10, RankStyle::Ordinal)
        .into_iter()
        .map(|e| e.member)
        .collect();
    assert_eq!(names, ["c", "a", "b"]);
    let ranks: Vec<u64> = r
        .page(0, 10, RankStyle::Competition)
        .into_iter()
        .map(|e| e.rank)
        .collect();
    assert_eq!(ranks, [1, 1, 1]);
}

#[test]
fn metadata_is_replaced_when_given_and_kept_when_omitted() {
    let mut r = Ranking::new(Order::Desc);
    let w = |value, metadata| Write {
        member: "a",
        op: Op::Incr,
        value,
        at_us: 1,
        metadata,
    };
    r.submit(&w(1, Some(r#"{"level":1}"#))).expect("w");
    r.submit(&w(1, None)).expect("w");
    assert_eq!(
        r.member("a", RankStyle::Ordinal)
            .expect("a")
            .metadata
            .as_deref(),
        Some(r#"{"level":1}"#)
    );
    r.submit(&w(0, Some(r#"{"level":2}"#))).expect("w");
    assert_eq!(
        r.member("a", RankStyle::Ordinal)
            .expect("a")
            .metadata
            .as_deref(),
        Some(r#"{"level":2}"#)
    );
    let big = format!(r#"{{"x":"{}"}}"#, "y".repeat(1100));
    assert!(matches!(
        r.submit(&w(5, Some(&big))),
        Err(BoardError::MetadataTooLarge(_))
    ));
    assert_eq!(r.member("a", RankStyle::Ordinal).expect("a").score, 2);
}

#[test]
fn invalid_members_change_nothing() {
    let mut r = Ranking::new(Order::Desc);
    for bad in ["", "a\u{0}b", &"x".repeat(129)] {
        let got = r.submit(&Write {
            member: bad,
            op: Op::Incr,
            value: 1,
            at_us: 1,
            metadata: None,
        });
        assert!(matches!(got, Err(BoardError::InvalidMemberName(_))));
    }
    assert!(r.is_empty());
}

#[test]
fn saved_entries_reload_into_an_identical_ranking() {
    let mut r = Ranking::new(Order::Desc);
    for (i, m) in ["a", "b", "long-member-name-over-16", "d", "e"]
        .iter()
        .enumerate()
    {
        let meta = (i % 2 == 0).then_some(r#"{"k":1}"#);
        r.submit(&Write {
            member: m,
            op: Op::Incr,
            value: (i % 3) as i64,
            at_us: i as i64,
            metadata: meta,
        })
        .expect("w");
    }
    use photofinish_core::ranking::SavedEntry;
    let mut saved: Vec<(String, i64, i64, u64, Option<String>)> = Vec::new();
    r.for_each_entry(|m, s, at, seq, meta| {
        saved.push((m.to_owned(), s, at, seq, meta.map(str::to_owned)))
    });
    let load = |saved: &[(String, i64, i64, u64, Option<String>)]| {
        let entries = saved.iter().map(|e| {
            Ok(SavedEntry {
                member: &e.0,
                score: e.1,
                reached_at_us: e.2,
                seq: e.3,
                metadata: e.4.as_deref(),
            })
        });
        Ranking::from_sorted(Order::Desc, saved.len(), entries)
    };
    let mut copy = load(&saved).expect("load");
    copy.check_invariants();
    copy.reserve_seq(r.next_seq());
    for style in STYLES {
        assert_eq!(copy.page(0, 10, style), r.page(0, 10, style));
    }
    assert_eq!(copy.next_seq(), r.next_seq());
    let mut dup = saved.clone();
    dup.push(("a".into(), i64::MIN, 1, 99, None));
    assert!(
        matches!(load(&dup), Err(BoardError::InvalidEntries(m)) if m.contains("\"a\" appears twice")),
        "duplicate"
    );
    let w = Write {
        member: "z",
        op: Op::Set,
        value: 0,
        at_us: 9,
        metadata: None,
    };
    assert_eq!(copy.submit(&w), r.submit(&w));
    copy.check_invariants();
}

#[test]
fn bulk_loading_sorted_entries_rebuilds_an_identical_ranking() {
    use photofinish_core::ranking::SavedEntry;
    let mut r = Ranking::new(Order::Asc);
    for i in 0..3000i64 {
        let m = format!(
            "{}-{i}",
            if i % 5 == 0 {
                "a-rather-long-member-name"
            } else {
                "m"
            }
        );
        let meta = (i % 3 == 0).then_some(r#"{"i":1}"#);
        r.submit(&Write {
            member: &m,
            op: Op::Set,
            value: i % 17 - 8,
            at_us: i % 11,
            metadata: meta,
        })
        .expect("w");
    }
    let mut saved: Vec<(String, i64, i64, u64, Option<String>)> = Vec::new();
    r.for_each_entry(|m, s, at, seq, meta| {
        saved.push((m.to_owned(), s, at, seq, meta.map(str::to_owned)))
    });
    type Saved = (String, i64, i64, u64, Option<String>);
    fn entry(e: &Saved) -> Result<SavedEntry<'_>, BoardError> {
        Ok(SavedEntry {
            member: &e.0,
            score: e.1,
            reached_at_us: e.2,
            seq: e.3,
            metadata: e.4.as_deref(),
        })
    }
    let bulk =
        Ranking::from_sorted(Order::Asc, saved.len(), saved.iter().map(entry)).expect("bulk");
    bulk.check_invariants();
    for style in STYLES {
        assert_eq!(
            bulk.page(0, usize::MAX, style),
            r.page(0, usize::MAX, style)
        );
    }
    assert_eq!(bulk.next_seq(), r.next_seq());
    let mut swapped = saved.clone();
    swapped.swap(10, 11);
    assert!(
        matches!(
            Ranking::from_sorted(Order::Asc, swapped.len(), swapped.iter().map(entry)),
            Err(BoardError::InvalidEntries(m)) if m.contains("out of order")
        ),
        "out of order"
    );
    let mut dup = saved.clone();
    dup[20].0 = dup[19].0.clone();
    assert!(
        matches!(
            Ranking::from_sorted(Order::Asc, dup.len(), dup.iter().map(entry)),
            Err(BoardError::InvalidEntries(_))
        ),
        "duplicate"
    );
    // The builder takes the same entries in any order (an import): it sorts them itself.
    use photofinish_core::ranking::RankingBuilder;
    let build = |entries: &[Saved]| {
        let mut b = RankingBuilder::new(Order::Asc, entries.len());
        for e in entries {
            b.push(entry(e)?)?;
        }
        b.finish()
    };
    let mut shuffled = saved.clone();
    shuffled.reverse();
    shuffled.swap(0, 1500);
    let unsorted = build(&shuffled).expect("unsorted bulk");
    unsorted.check_invariants();
    for style in STYLES {
        assert_eq!(
            unsorted.page(0, usize::MAX, style),
            r.page(0, usize::MAX, style)
        );
    }
    // Two members with the same score, time and sequence have no order between them.
    let mut same_key = shuffled.clone();
    let twin = (same_key[7].1, same_key[7].2, same_key[7].3);
    (same_key[900].1, same_key[900].2, same_key[900].3) = twin;
    assert!(
        matches!(
            build(&same_key),
            Err(BoardError::InvalidEntries(m)) if m.contains("same score, time and sequence")
        ),
        "equal keys"
    );
}

/// A ranking of at least `PARALLEL_BUILD_MIN` entries builds its member table and its
/// index on two threads: the order, ranks and lookups are the ones its entries say, and a
/// duplicate member (found by the member table's thread) is still refused.
#[test]
fn a_large_bulk_load_on_two_threads_is_the_ranking_its_entries_say() {
    use photofinish_core::ranking::{SavedEntry, PARALLEL_BUILD_MIN};
    let n = PARALLEL_BUILD_MIN + 4321;
    let mut names: Vec<String> = (0..n).map(|i| format!("m{i:07}")).collect();
    // A desc board in rank order: the score falls every 7 entries (ties), and inside a tie
    // the time rises.
    let load = |names: &[String]| {
        Ranking::from_sorted(
            Order::Desc,
            n,
            names.iter().enumerate().map(|(i, name)| {
                Ok(SavedEntry {
                    member: name,
                    score: (n / 7 - i / 7) as i64,
                    reached_at_us: i as i64,
                    seq: i as u64 + 1,
                    metadata: None,
                })
            }),
        )
    };
    let r = load(&names).expect("bulk");
    r.check_invariants();
    assert_eq!(r.len(), n as u64);
    let page = r.page(0, usize::MAX, RankStyle::Ordinal);
    assert!(page.iter().map(|e| &e.member).eq(names.iter()), "order");
    for i in (0..n).step_by(997).chain([n - 1]) {
        let at = |style| r.member(&names[i], style).map(|e| e.rank);
        assert_eq!(at(RankStyle::Ordinal), Some(i as u64 + 1), "{i}");
        assert_eq!(
            at(RankStyle::Competition),
            Some((i / 7 * 7) as u64 + 1),
            "{i}"
        );
        assert_eq!(at(RankStyle::Dense), Some((i / 7) as u64 + 1), "{i}");
    }
    // The same entries unsorted (an import): one thread sorts them and builds the index
    // while the other fills the member table.
    use photofinish_core::ranking::RankingBuilder;
    // The row of the entry at rank position k, as `load` made it.
    let entry = |name: &str, k: usize| -> (String, i64, i64, u64) {
        (
            name.to_owned(),
            (n / 7 - k / 7) as i64,
            k as i64,
            k as u64 + 1,
        )
    };
    let build = |rows: &[(String, i64, i64, u64)]| {
        let mut b = RankingBuilder::new(Order::Desc, rows.len());
        for (member, score, reached_at_us, seq) in rows {
            b.push(SavedEntry {
                member,
                score: *score,
                reached_at_us: *reached_at_us,
                seq: *seq,
                metadata: None,
            })?;
        }
        b.finish()
    };
    // Pushed in a scrambled order: i * 7919 mod n visits every index once (n is odd and
    // not a multiple of 7919).
    let mut rows: Vec<_> = (0..n)
        .map(|i| {
            let k = i * 7919 % n;
            entry(&names[k], k)
        })
        .collect();
    let unsorted = build(&rows).expect("unsorted bulk");
    unsorted.check_invariants();
    assert_eq!(
        unsorted.page(0, usize::MAX, RankStyle::Dense),
        r.page(0, usize::MAX, RankStyle::Dense)
    );
    // Two entries with one key: refused, and named before a duplicate member would be.
    rows[10].1 = rows[20].1;
    rows[10].2 = rows[20].2;
    rows[10].3 = rows[20].3;
    rows[30].0 = rows[40].0.clone();
    assert!(
        matches!(build(&rows), Err(BoardError::InvalidEntries(m)) if m.contains("same score, time and sequence")),
        "same key"
    );
    rows[10] = entry(&names[10 * 7919 % n], 10 * 7919 % n);
    assert!(
        matches!(build(&rows), Err(BoardError::InvalidEntries(m)) if m.contains("appears twice")),
        "duplicate in an import"
    );
    names[n - 1] = names[3].clone();
    assert!(
        matches!(load(&names), Err(BoardError::InvalidEntries(m)) if m.contains("appears twice")),
        "duplicate"
    );
}

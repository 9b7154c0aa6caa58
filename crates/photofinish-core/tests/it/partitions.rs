//! Partitions (docs/SPEC.md §17) against a plain model: random writes of every operator
//! naming a partition or none, removals and hidden members, on one-column boards in both
//! orders with values that collide often and include the i64 extremes. After every step
//! each partition's standings — its listing, every member's rank in the three styles, the
//! rank a score would get, windows, totals — equal the model's, recomputed from the
//! member entries; a write naming another partition than its member's, or one too many,
//! is refused and changes nothing; a replay (unranked writes, the indexes rebuilt) and a
//! snapshot's reload (entries, then each member's partition) reach the same standings.

use std::collections::{BTreeMap, BTreeSet};

use photofinish_core::ranking::SavedEntry;
use photofinish_core::{
    ErrorCode, Op, Operands, Order, Outcome, RankStyle, Ranking, Scores, Shape, Write,
};
use proptest::prelude::*;

const STYLES: [RankStyle; 3] = [RankStyle::Ordinal, RankStyle::Competition, RankStyle::Dense];
const KEYS: [&str; 5] = ["FR", "DE", "steam", "eu-west_1", "Z"];

#[derive(Debug, Clone)]
enum Action {
    Write {
        member: u8,
        op: Op,
        value: i64,
        at: i64,
        partition: Option<u8>,
    },
    Remove {
        member: u8,
    },
}

/// member → (score, reached_at, seq, partition)
struct Model {
    order: Order,
    max: usize,
    entries: BTreeMap<String, (i64, i64, u64, Option<String>)>,
    next_seq: u64,
}

impl Model {
    fn norm(&self, score: i64) -> i128 {
        match self.order {
            Order::Desc => -i128::from(score),
            Order::Asc => i128::from(score),
        }
    }

    fn live(&self) -> BTreeSet<String> {
        self.entries.values().filter_map(|e| e.3.clone()).collect()
    }

    /// The outcome of a write, or the code of its refusal (nothing changes then).
    fn write(
        &mut self,
        member: &str,
        op: Op,
        v: i64,
        at: i64,
        asked: Option<&str>,
    ) -> Result<Outcome, ErrorCode> {
        let old = self.entries.get(member).cloned();
        if let Some(asked) = asked {
            match &old {
                Some(e) if e.3.as_deref() != Some(asked) => {
                    return Err(ErrorCode::PartitionConflict)
                }
                None if !self.live().contains(asked) && self.live().len() >= self.max => {
                    return Err(ErrorCode::TooManyPartitions)
                }
                _ => {}
            }
        }
        let new = match (&old, op) {
            (None, _) => v,
            (Some(e), Op::Incr) => e.0.checked_add(v).ok_or(ErrorCode::ScoreOverflow)?,
            (Some(_), Op::Set) => v,
            (Some(e), Op::Best) => {
                if self.norm(v) < self.norm(e.0) {
                    v
                } else {
                    e.0
                }
            }
        };
        let changed = old.as_ref().map(|e| e.0) != Some(new);
        let partition = match &old {
            Some(e) => e.3.clone(),
            None => asked.map(str::to_owned),
        };
        if changed {
            self.entries.insert(
                member.to_owned(),
                (new, at, self.next_seq, partition.clone()),
            );
            self.next_seq += 1;
        }
        let rank_in = |list: Vec<(String, i64)>| {
            list.iter().position(|e| e.0 == member).expect("listed") as u64 + 1
        };
        let e = &self.entries[member];
        Ok(Outcome {
            scores: Scores::one(new),
            rank: rank_in(self.sorted(None, &[])),
            reached_at_us: e.1,
            changed,
            partition_rank: partition
                .as_deref()
                .map(|p| rank_in(self.sorted(Some(p), &[]))),
        })
    }

    /// (member, score) of partition `p` (everyone for `None`) in rank order, the members
    /// in `hidden` left out.
    fn sorted(&self, p: Option<&str>, hidden: &[String]) -> Vec<(String, i64)> {
        let mut v: Vec<_> = self
            .entries
            .iter()
            .filter(|(m, e)| (p.is_none() || e.3.as_deref() == p) && !hidden.contains(m))
            .map(|(m, e)| (self.norm(e.0), e.1, e.2, m.clone(), e.0))
            .collect();
        v.sort();
        v.into_iter().map(|(_, _, _, m, s)| (m, s)).collect()
    }
}

/// The rank in `style` of an entry at score `s` among `list` (in rank order), counted the
/// obvious way; `after_ties`: an ordinal rank after everyone already at `s`.
fn rank_at(
    model: &Model,
    list: &[(String, i64)],
    s: i64,
    style: RankStyle,
    after_ties: bool,
) -> u64 {
    let n = model.norm(s);
    let better = list.iter().filter(|e| model.norm(e.1) < n);
    match style {
        RankStyle::Ordinal if after_ties => {
            list.iter().filter(|e| model.norm(e.1) <= n).count() as u64 + 1
        }
        RankStyle::Ordinal | RankStyle::Competition => better.count() as u64 + 1,
        RankStyle::Dense => better.map(|e| e.1).collect::<BTreeSet<_>>().len() as u64 + 1,
    }
}

fn name(m: u8) -> String {
    format!("m{m}")
}

/// Each partition's standings as `own` reads them, `hidden` marked in the ranking
/// (nothing hidden: the ranking's own reads).
fn check(r: &Ranking, model: &Model, hidden: &[String], own: Option<&str>) {
    let whole = hidden.is_empty();
    let view_of = |key: Option<&str>| {
        if whole {
            r.whole().in_partition(key)
        } else {
            r.view_in(own, key)
        }
    };
    let unseen: Vec<String> = hidden
        .iter()
        .filter(|h| Some(h.as_str()) != own)
        .cloned()
        .collect();
    let mut counts: Vec<(String, u64)> = Vec::new();
    for key in KEYS {
        let list = model.sorted(Some(key), &unseen);
        let view = view_of(Some(key));
        assert_eq!(view.len(), list.len() as u64, "{key} total");
        if !list.is_empty() {
            counts.push((key.to_owned(), list.len() as u64));
        }
        for style in STYLES {
            let want: Vec<(String, u64)> = list
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let rank = match style {
                        RankStyle::Ordinal => i as u64 + 1,
                        _ => rank_at(model, &list, e.1, style, false),
                    };
                    (e.0.clone(), rank)
                })
                .collect();
            let page = view.page(0, usize::MAX, style);
            let got: Vec<(String, u64)> = page.iter().map(|e| (e.member.clone(), e.rank)).collect();
            assert_eq!(got, want, "{key} {style:?} listing");
            assert!(page.iter().all(|e| e.partition.as_deref() == Some(key)));
            for (i, (m, rank)) in want.iter().enumerate() {
                let (e, ordinal) = view.member_ranked(m, style).expect("member");
                assert_eq!(
                    (e.rank, ordinal),
                    (*rank, i as u64 + 1),
                    "{key} {style:?} {m}"
                );
                let around = view.around(m, 1, 1, style).expect("around");
                let start = i
                    .saturating_sub(1)
                    .min(list.len().saturating_sub(3.min(list.len())));
                assert_eq!(
                    around,
                    page[start..(start + 3).min(list.len())].to_vec(),
                    "{key} around {m}"
                );
            }
            for probe in [i64::MIN, -1, 0, 1, i64::MAX] {
                assert_eq!(
                    view.rank_of_scores(&Scores::one(probe), style),
                    rank_at(model, &list, probe, style, true),
                    "{key} {style:?} rank of {probe}"
                );
            }
        }
        // A member of another partition, or a hidden one, is not in this one's view.
        for (m, e) in &model.entries {
            let seen = e.3.as_deref() == Some(key) && !unseen.contains(m);
            assert_eq!(view.shows(m), seen, "{key} shows {m}");
        }
    }
    counts.sort();
    assert_eq!(view_of(None).partition_counts(), counts, "partition counts");
    for (m, e) in &model.entries {
        assert_eq!(r.partition_of(m), e.3.as_deref(), "partition of {m}");
    }
}

fn value() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -2i64..3,
        1 => Just(i64::MAX),
        1 => Just(i64::MIN),
        1 => any::<i64>(),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    let op = prop_oneof![Just(Op::Incr), Just(Op::Set), Just(Op::Best)];
    prop_oneof![
        8 => (0u8..20, op, value(), 0i64..6, prop::option::of(0u8..KEYS.len() as u8))
            .prop_map(|(member, op, value, at, partition)| Action::Write { member, op, value, at, partition }),
        1 => (0u8..20).prop_map(|member| Action::Remove { member }),
    ]
}

/// A snapshot's reload: entries in rank order, then each member's partition.
fn reloaded(r: &Ranking, shape: Shape, max: u32) -> Ranking {
    let mut saved: Vec<(String, i64, i64, u64)> = Vec::new();
    r.for_each_entry(|m, s, at, seq, _| saved.push((m.to_owned(), s.first(), at, seq)));
    let entries = saved.iter().map(|e| {
        Ok(SavedEntry {
            member: &e.0,
            scores: Scores::one(e.1),
            reached_at_us: e.2,
            seq: e.3,
            metadata: None,
        })
    });
    let mut copy = Ranking::from_sorted(shape, saved.len(), entries)
        .expect("load")
        .with_partitions(Some(max));
    let mut pairs: Vec<(String, String)> = Vec::new();
    r.for_each_partitioned(|m, p| pairs.push((m.to_owned(), p.to_owned())));
    copy.load_partitions(pairs.iter().map(|(m, p)| (m.as_str(), p.as_str())))
        .expect("partitions");
    copy.reserve_seq(r.next_seq());
    copy
}

fn run(desc: bool, max: u32, actions: Vec<Action>, hidden: Vec<u8>, own: Option<u8>) {
    let order = if desc { Order::Desc } else { Order::Asc };
    let shape = Shape::single(order, Op::Incr);
    let mut r = Ranking::new(shape).with_partitions(Some(max));
    let mut unranked = Ranking::new(shape).with_partitions(Some(max));
    let mut model = Model {
        order,
        max: max as usize,
        entries: BTreeMap::new(),
        next_seq: 1,
    };
    let hidden: Vec<String> = hidden.into_iter().map(name).collect();
    let own = own.map(name);
    for (step, a) in actions.into_iter().enumerate() {
        match &a {
            Action::Write {
                member,
                op,
                value,
                at,
                partition,
            } => {
                let m = name(*member);
                let key = partition.map(|p| KEYS[p as usize]);
                let w = Write {
                    member: &m,
                    op: Some(*op),
                    values: Operands::one(*value),
                    at_us: *at,
                    metadata: None,
                    partition: key,
                    team: None,
                    hidden: false,
                };
                let before = r.page(0, usize::MAX, RankStyle::Ordinal);
                let got = r.submit(&w).map_err(|e| e.code());
                if hidden.contains(&m) {
                    r.mark_hidden(&m, true);
                }
                let want = model.write(&m, *op, *value, *at, key);
                if want.is_err() {
                    assert_eq!(
                        r.page(0, usize::MAX, RankStyle::Ordinal),
                        before,
                        "refused {a:?} changed nothing"
                    );
                }
                let quiet = unranked.submit_unranked(&w).map_err(|e| e.code());
                assert_eq!(
                    quiet,
                    want.map(|o| Outcome {
                        rank: 0,
                        partition_rank: None,
                        ..o
                    }),
                    "unranked {a:?}"
                );
                assert_eq!(got, want, "{a:?}");
            }
            Action::Remove { member } => {
                let m = name(*member);
                assert_eq!(r.remove(&m, 0), model.entries.remove(&m).is_some());
                unranked.remove(&m, 0);
            }
        }
        r.check_invariants();
        check(&r, &model, &[], None);
        if step % 7 == 0 {
            check(&r, &model, &hidden, own.as_deref());
        }
        if step % 11 == 10 {
            unranked.rebuild_index();
            unranked.check_invariants();
            check(&unranked, &model, &[], None);
            let copy = reloaded(&r, shape, max);
            copy.check_invariants();
            check(&copy, &model, &[], None);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Few members and partitions, many collisions and refusals: every step checked.
    #[test]
    fn each_partition_matches_the_model(
        desc in any::<bool>(),
        max in 1u32..5,
        actions in prop::collection::vec(action(), 1..160),
        hidden in prop::collection::vec(0u8..20, 0..5),
        own in prop::option::of(0u8..20),
    ) {
        run(desc, max, actions, hidden, own);
    }
}

/// A partition named on a board without partitions is refused, and changes nothing.
#[test]
fn a_partition_needs_a_board_of_partitions() {
    let mut r = Ranking::new(Shape::single(Order::Desc, Op::Incr));
    let w = |partition| Write {
        member: "ann",
        op: Some(Op::Set),
        values: Operands::one(5),
        at_us: 1,
        metadata: None,
        partition,
        team: None,
        hidden: false,
    };
    let e = r.submit(&w(Some("FR"))).expect_err("refused");
    assert_eq!(e.code(), ErrorCode::InvalidParameter);
    assert!(r.is_empty());
    assert!(r.submit(&w(None)).is_ok());
    assert_eq!(r.view_in(None, Some("FR")).len(), 0);
}

/// A partition its last member left closes: its slot takes the next one opened, and the
/// limit counts partitions holding a member.
#[test]
fn a_partition_left_empty_frees_its_place() {
    let mut r = Ranking::new(Shape::single(Order::Desc, Op::Incr)).with_partitions(Some(1));
    let w = |member, partition| Write {
        member,
        op: Some(Op::Set),
        values: Operands::one(5),
        at_us: 1,
        metadata: None,
        partition: Some(partition),
        team: None,
        hidden: false,
    };
    r.submit(&w("ann", "FR")).expect("FR opens");
    let e = r.submit(&w("bob", "DE")).expect_err("one too many");
    assert_eq!(e.code(), ErrorCode::TooManyPartitions);
    assert!(r.remove("ann", 0));
    r.submit(&w("bob", "DE")).expect("DE takes FR's place");
    r.check_invariants();
    assert_eq!(r.whole().partition_counts(), vec![("DE".to_owned(), 1)]);
    assert_eq!(r.view_in(None, Some("FR")).len(), 0);
}

//! The ranking against a plain model: a map of members to their tuples, sorted into a Vec
//! on every check. Random operation sequences over a few hundred members, with values that
//! collide often and include the i64 extremes, on boards of one column in both orders and
//! of 2 to 5 columns with mixed directions and update rules (docs/SPEC.md §13); after
//! every step every member's rank in all three styles, the full listing, random pages,
//! around windows, members sets and the rank a tuple would get must agree.
//!
//! The model is written from the spec's sentences, not from the engine's code: a write
//! resolves its operator, checks the columns it names, then combines column by column
//! (or keeps the better whole tuple), and the order compares normalized tuples.

use std::collections::BTreeMap;

use photofinish_core::error::ScoreLimit;
use photofinish_core::{
    BoardError, Column, ErrorCode, Op, Operands, Order, Outcome, RankStyle, Ranking, Scores, Shape,
    Update, Write,
};
use proptest::prelude::*;

/// A board's columns as the model sees them.
#[derive(Debug, Clone)]
struct Spec {
    orders: Vec<Order>,
    updates: Vec<Update>,
    /// The board's update is `best`.
    best: bool,
    /// The board's update when it is not `best` (the default of every column's).
    update: Op,
}

impl Spec {
    fn one(order: Order) -> Self {
        Spec {
            orders: vec![order],
            updates: vec![Update::Incr],
            best: false,
            update: Op::Incr,
        }
    }

    fn shape(&self) -> Shape {
        let update = if self.best { Op::Best } else { self.update };
        if self.orders.len() == 1 && self.updates[0] == default_update(update) {
            return Shape::single(self.orders[0], update);
        }
        let columns: Vec<Column> = self
            .orders
            .iter()
            .zip(&self.updates)
            .enumerate()
            .map(|(i, (&order, &u))| Column {
                order: Some(order),
                update: (!self.best).then_some(u),
                ..Column::named(&format!("c{i}"))
            })
            .collect();
        Shape::new(self.orders[0], update, &columns)
    }

    /// A tuple normalized so that smaller is better, column by column.
    fn normalized(&self, t: &[i64]) -> Vec<i128> {
        t.iter()
            .zip(&self.orders)
            .map(|(&v, o)| match o {
                Order::Asc => i128::from(v),
                Order::Desc => -i128::from(v),
            })
            .collect()
    }
}

fn default_update(update: Op) -> Update {
    if update == Op::Set {
        Update::Set
    } else {
        Update::Incr
    }
}

#[derive(Debug, Clone)]
enum Action {
    Write {
        member: u16,
        op: Option<Op>,
        /// One entry per possible column: `Some` when written.
        values: [Option<i64>; 5],
        at: i64,
    },
    Remove {
        member: u16,
    },
}

struct Model {
    spec: Spec,
    /// member → (tuple, reached_at, seq)
    entries: BTreeMap<String, (Vec<i64>, i64, u64)>,
    next_seq: u64,
}

impl Model {
    fn new(spec: Spec) -> Self {
        Self {
            spec,
            entries: BTreeMap::new(),
            next_seq: 1,
        }
    }

    /// The outcome of a write, or the code of its refusal (the state is then unchanged).
    fn write(
        &mut self,
        member: &str,
        op: Option<Op>,
        values: &[Option<i64>; 5],
        at: i64,
    ) -> Result<Outcome, ErrorCode> {
        let n = self.spec.orders.len();
        let op = op.or(self.spec.best.then_some(Op::Best));
        let named_beyond = values[n..].iter().any(Option::is_some);
        let none = values[..n].iter().all(Option::is_none);
        let partial = values[..n].iter().any(Option::is_none);
        if named_beyond || none || (op == Some(Op::Best) && partial) {
            return Err(ErrorCode::InvalidScore);
        }
        let old = self.entries.get(member).map(|e| e.0.clone());
        let new: Vec<i64> = match &old {
            None => (0..n).map(|i| values[i].unwrap_or(0)).collect(),
            Some(old) if op == Some(Op::Best) => {
                let candidate: Vec<i64> = (0..n).map(|i| values[i].unwrap_or(old[i])).collect();
                if self.spec.normalized(&candidate) < self.spec.normalized(old) {
                    candidate
                } else {
                    old.clone()
                }
            }
            Some(old) => {
                let mut t = old.clone();
                for i in 0..n {
                    let Some(v) = values[i] else { continue };
                    let rule = match op {
                        Some(Op::Set) => Update::Set,
                        Some(_) => Update::Incr,
                        None => self.spec.updates[i],
                    };
                    t[i] = match rule {
                        Update::Incr => old[i].checked_add(v).ok_or(ErrorCode::ScoreOverflow)?,
                        Update::Set => v,
                        Update::Min => old[i].min(v),
                        Update::Max => old[i].max(v),
                    };
                }
                t
            }
        };
        let changed = old.as_ref() != Some(&new);
        if changed {
            self.entries
                .insert(member.to_owned(), (new.clone(), at, self.next_seq));
            self.next_seq += 1;
        }
        let sorted = self.sorted();
        let rank = sorted.iter().position(|e| e.0 == member).expect("present") as u64 + 1;
        Ok(Outcome {
            scores: Scores::new(&new).expect("1 to 5 columns"),
            rank,
            reached_at_us: self.entries[member].1,
            changed,
            partition_rank: None,
        })
    }

    /// (member, tuple, reached_at) in rank order.
    fn sorted(&self) -> Vec<(String, Vec<i64>, i64)> {
        let mut v: Vec<_> = self
            .entries
            .iter()
            .map(|(m, (t, at, seq))| (self.spec.normalized(t), *at, *seq, m.clone(), t.clone()))
            .collect();
        v.sort();
        v.into_iter().map(|(_, at, _, m, t)| (m, t, at)).collect()
    }

    /// The normalized tuples of the entries in rank order (what `rank_at` counts over).
    fn normalized_sorted(&self) -> Vec<Vec<i128>> {
        self.sorted()
            .iter()
            .map(|e| self.spec.normalized(&e.1))
            .collect()
    }

    /// Rank of each listed entry in `style`.
    fn ranks(&self, style: RankStyle) -> Vec<u64> {
        let norm = self.normalized_sorted();
        norm.iter()
            .enumerate()
            .map(|(i, t)| match style {
                RankStyle::Ordinal => i as u64 + 1,
                _ => rank_at(&norm, t, style, false),
            })
            .collect()
    }
}

/// The rank a member at normalized tuple `t` gets in `style` among the entries `norm`
/// (normalized, in rank order), counted the slow, obvious way; `ordinal_after_ties`: an
/// ordinal rank after every entry already at `t`.
fn rank_at(norm: &[Vec<i128>], t: &[i128], style: RankStyle, ordinal_after_ties: bool) -> u64 {
    let better = norm.iter().filter(|e| e.as_slice() < t);
    let mut distinct: Vec<&Vec<i128>> = better.clone().collect();
    distinct.dedup();
    let equal = norm.iter().filter(|e| e.as_slice() == t).count();
    1 + match style {
        RankStyle::Ordinal if ordinal_after_ties => better.count() + equal,
        RankStyle::Ordinal | RankStyle::Competition => better.count(),
        RankStyle::Dense => distinct.len(),
    } as u64
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

fn scores(t: &[i64]) -> Scores {
    Scores::new(t).expect("1 to 5 columns")
}

/// The tuples whose rank `check` asks for: those held (every one on a small board, an
/// even spread of about 40 on a larger one), each with every column moved by one either
/// way, and the ends.
fn probe_tuples(sorted: &[(String, Vec<i64>, i64)], n: usize) -> Vec<Vec<i64>> {
    let mut out = vec![vec![i64::MIN; n], vec![i64::MAX; n], vec![0; n]];
    let stride = sorted.len().div_ceil(40).max(1);
    for (_, t, _) in sorted.iter().step_by(stride) {
        out.push(t.clone());
        for i in 0..n {
            for d in [-1i64, 1] {
                if let Some(v) = t[i].checked_add(d) {
                    let mut p = t.clone();
                    p[i] = v;
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn check(r: &Ranking, model: &Model, probes: &[(u64, usize, u16, u64, u64)]) {
    let sorted = model.sorted();
    let n = model.spec.orders.len();
    assert_eq!(r.len(), sorted.len() as u64);
    let tuples = probe_tuples(&sorted, n);
    let norm = model.normalized_sorted();
    for style in STYLES {
        let ranks = model.ranks(style);
        let listed = r.page(0, usize::MAX, style);
        assert_eq!(listed.len(), sorted.len());
        for (i, (e, (m, t, at))) in listed.iter().zip(&sorted).enumerate() {
            assert_eq!(
                (&e.member, e.scores.as_slice(), e.reached_at_us, e.rank),
                (m, &t[..], *at, ranks[i]),
                "{style:?} at {i}"
            );
            assert_eq!(e.score(), t[0]);
            let one = r.member(m, style).expect("member present");
            assert_eq!(one.rank, ranks[i], "{style:?} rank of {m}");
            let (ranked, ordinal) = r.member_ranked(m, style).expect("member present");
            assert_eq!((ranked.rank, ordinal), (ranks[i], i as u64 + 1));
            assert_eq!(r.at(i as u64), Some((m.clone(), scores(t))), "entry at {i}");
            assert_eq!(r.scores_of(m), Some(scores(t)));
        }
        assert_eq!(r.at(sorted.len() as u64), None);
        // The rank a tuple would get, for every tuple held, its neighbours and the ends.
        for t in &tuples {
            assert_eq!(
                r.rank_of_scores(&scores(t), style),
                rank_at(&norm, &model.spec.normalized(t), style, true),
                "{style:?} rank of scores {t:?}"
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

/// The ranking as a reader sees it while the members `hidden` are hidden and the reader
/// is `own` (docs/SPEC.md §15), against the model's entries without them: its length,
/// every page, each member's rank (a hidden one's: the rank it would have among the
/// shown members), the entry at each position, the rank a tuple would get, sets of
/// members (with and without an admin's `reveal`), pages and windows.
fn check_hidden(
    r: &Ranking,
    model: &Model,
    hidden: &[String],
    own: Option<&str>,
    probes: &[(u64, usize, u16, u64, u64)],
) {
    // The view made on the spot from the names, and the one from the hidden members the
    // ranking keeps (marked at each of their writes, as a board does): both as the model.
    let made = r.visible(hidden.iter().filter(|m| Some(m.as_str()) != own));
    check_view(&made, model, hidden, own, probes);
    check_view(&r.view(own), model, hidden, own, probes);
}

fn check_view(
    view: &photofinish_core::ranking::Visible<'_>,
    model: &Model,
    hidden: &[String],
    own: Option<&str>,
    probes: &[(u64, usize, u16, u64, u64)],
) {
    let hides = |m: &str| hidden.iter().any(|h| h == m) && Some(m) != own;
    let sorted = model.sorted();
    let shown: Vec<_> = sorted.iter().filter(|e| !hides(&e.0)).cloned().collect();
    let norm = |list: &[(String, Vec<i64>, i64)]| -> Vec<Vec<i128>> {
        list.iter().map(|e| model.spec.normalized(&e.1)).collect()
    };
    let norm_shown = norm(&shown);
    assert_eq!(view.len(), shown.len() as u64, "visible len");
    let tuples = probe_tuples(&sorted, model.spec.orders.len());
    for style in STYLES {
        let rank_of = |list: &[Vec<i128>], i: usize| match style {
            RankStyle::Ordinal => i as u64 + 1,
            _ => rank_at(list, &list[i], style, false),
        };
        let listed = view.page(0, usize::MAX, style);
        let want: Vec<(String, u64)> = (0..shown.len())
            .map(|i| (shown[i].0.clone(), rank_of(&norm_shown, i)))
            .collect();
        let got: Vec<(String, u64)> = listed.iter().map(|e| (e.member.clone(), e.rank)).collect();
        assert_eq!(
            got, want,
            "{style:?} visible listing, hidden {hidden:?} own {own:?}"
        );
        assert!(listed.iter().all(|e| !e.hidden));
        for (i, (m, t, _)) in shown.iter().enumerate() {
            assert_eq!(
                view.at(i as u64),
                Some((m.clone(), scores(t))),
                "visible at {i}"
            );
        }
        assert_eq!(view.at(shown.len() as u64), None);
        // Each member: a shown one at its rank; a hidden one at the rank it would have
        // among the shown members, marked.
        let mut would = Vec::new();
        for (m, _, _) in &sorted {
            let with: Vec<_> = sorted
                .iter()
                .filter(|e| !hides(&e.0) || e.0 == *m)
                .cloned()
                .collect();
            let i = with.iter().position(|e| e.0 == *m).expect("listed");
            let rank = rank_of(&norm(&with), i);
            let (e, ordinal) = view.member_ranked(m, style).expect("present");
            assert_eq!(
                (e.rank, ordinal, e.hidden),
                (rank, i as u64 + 1, hides(m)),
                "{style:?} member {m}, hidden {hidden:?} own {own:?}"
            );
            assert_eq!(view.shows(m), !hides(m));
            would.push((m.clone(), rank));
        }
        for t in &tuples {
            assert_eq!(
                view.rank_of_scores(&scores(t), style),
                rank_at(&norm_shown, &model.spec.normalized(t), style, true),
                "{style:?} visible rank of scores {t:?}"
            );
        }
        let asked: Vec<String> = probes
            .iter()
            .map(|p| name(p.2))
            .chain(hidden.iter().cloned())
            .chain(["absent".to_owned()])
            .collect();
        for reveal in [false, true] {
            let (entries, missing) = view.members_of(&asked, style, reveal);
            let want: Vec<(String, u64, bool)> = sorted
                .iter()
                .filter(|e| asked.contains(&e.0) && (reveal || !hides(&e.0)))
                .map(|e| {
                    let rank = would.iter().find(|w| w.0 == e.0).expect("ranked").1;
                    (e.0.clone(), rank, hides(&e.0))
                })
                .collect();
            let got: Vec<(String, u64, bool)> = entries
                .iter()
                .map(|e| (e.member.clone(), e.rank, e.hidden))
                .collect();
            assert_eq!(got, want, "{style:?} members_of reveal={reveal}");
            for (i, m) in asked.iter().enumerate() {
                let present = sorted.iter().any(|e| &e.0 == m);
                let found = present && (reveal || !hides(m));
                assert_eq!(missing.contains(&i), !found, "{style:?} {m} missing");
            }
        }
        for &(offset, limit, member, before, after) in probes {
            let offset = offset % (shown.len() as u64 + 2);
            let page = view.page(offset, limit, style);
            let want: Vec<_> = listed
                .iter()
                .skip(offset as usize)
                .take(limit)
                .cloned()
                .collect();
            assert_eq!(page, want, "{style:?} visible page {offset}+{limit}");
            let m = name(member);
            match shown.iter().position(|e| e.0 == m) {
                None => assert!(view.around(&m, before, after, style).is_none()),
                Some(pos) => {
                    let n = shown.len() as u64;
                    let size = (before + after + 1).min(n);
                    let start = (pos as u64).saturating_sub(before).min(n - size);
                    let got = view.around(&m, before, after, style).expect("around");
                    let want: Vec<_> = listed
                        .iter()
                        .skip(start as usize)
                        .take(size as usize)
                        .cloned()
                        .collect();
                    assert_eq!(got, want, "{style:?} visible around {m}");
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

/// A write of the first column alone with an explicit operator (every one-column write),
/// or, on `multi` boards, of any columns with or without one — now and then none or one
/// past the board's, which must be refused.
fn action(members: u16, multi: bool) -> impl Strategy<Value = Action> {
    let op = prop_oneof![Just(Op::Incr), Just(Op::Set), Just(Op::Best)];
    let one =
        (0..members, op.clone(), value(), 0i64..6).prop_map(|(member, op, v, at)| Action::Write {
            member,
            op: Some(op),
            values: [Some(v), None, None, None, None],
            at,
        });
    let cell = prop_oneof![3 => value().prop_map(Some), 1 => Just(None)];
    let many = (
        0..members,
        prop::option::weighted(0.4, op),
        [cell.clone(), cell.clone(), cell.clone(), cell.clone(), cell],
        0i64..6,
    )
        .prop_map(|(member, op, values, at)| Action::Write {
            member,
            op,
            values,
            at,
        });
    let remove = (0..members).prop_map(|member| Action::Remove { member });
    if multi {
        prop_oneof![8 => many, 1 => remove].boxed()
    } else {
        prop_oneof![8 => one, 1 => remove].boxed()
    }
}

/// Boards of 2 to 5 columns: each column's direction and update rule, and the board's
/// update (`best` compares whole tuples; its columns have no rule of their own).
fn multi_spec() -> impl Strategy<Value = Spec> {
    let order = prop_oneof![Just(Order::Desc), Just(Order::Asc)];
    let update = prop_oneof![
        Just(Update::Incr),
        Just(Update::Set),
        Just(Update::Min),
        Just(Update::Max)
    ];
    let board = prop_oneof![Just(Op::Incr), Just(Op::Set), Just(Op::Best)];
    (2usize..=5).prop_flat_map(move |n| {
        (
            prop::collection::vec(order.clone(), n),
            prop::collection::vec(update.clone(), n),
            board.clone(),
        )
            .prop_map(|(orders, updates, board)| Spec {
                orders,
                updates,
                best: board == Op::Best,
                update: if board == Op::Set { Op::Set } else { Op::Incr },
            })
    })
}

fn operands(values: &[Option<i64>; 5]) -> Operands {
    let mut o = Operands::default();
    for (i, v) in values.iter().enumerate() {
        if let Some(v) = v {
            o.set(i, *v);
        }
    }
    o
}

/// Members hidden while a run is checked, and the reader (a hidden member reads itself).
#[derive(Debug, Clone)]
struct Hiding {
    members: Vec<u16>,
    own: Option<u16>,
}

fn hiding(members: u16) -> impl Strategy<Value = Hiding> {
    (
        prop::collection::vec(0..members, 0..8),
        prop::option::of(0..members),
    )
        .prop_map(|(members, own)| Hiding { members, own })
}

fn run(spec: Spec, actions: Vec<Action>, probes: Vec<(u64, usize, u16, u64, u64)>, hiding: Hiding) {
    let hidden: Vec<String> = hiding.members.iter().map(|&m| name(m)).collect();
    let own = hiding.own.map(name);
    let shape = spec.shape();
    let mut r = Ranking::new(shape);
    // The same writes without ranks (as log replay applies them) must reach the same state.
    let mut unranked = Ranking::new(shape);
    let mut model = Model::new(spec);
    for (step, a) in actions.into_iter().enumerate() {
        match &a {
            Action::Write {
                member,
                op,
                values,
                at,
            } => {
                let m = name(*member);
                let w = Write {
                    member: &m,
                    op: *op,
                    values: operands(values),
                    at_us: *at,
                    metadata: None,
                    partition: None,
                    team: None,
                    hidden: false,
                };
                let got = r.submit(&w).map_err(|e| e.code());
                if hidden.contains(&m) {
                    // As a board does after each write of a hidden member.
                    r.mark_hidden(&m, true);
                }
                let want = model.write(&m, *op, values, *at);
                let quiet = unranked.submit_unranked(&w).map_err(|e| e.code());
                assert_eq!(
                    quiet,
                    want.map(|o| Outcome { rank: 0, ..o }),
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
        unranked.check_invariants();
        check(&r, &model, &probes);
        // Every few steps (a larger board's check costs n² in the model).
        let every = if model.entries.len() > 40 { 40 } else { 5 };
        if step % every == 0 {
            check_hidden(&r, &model, &hidden, own.as_deref(), &probes);
        }
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

fn one_column(desc: bool) -> Spec {
    Spec::one(if desc { Order::Desc } else { Order::Asc })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Few members, many collisions: every step fully checked.
    #[test]
    fn small_boards_match_the_model(desc in any::<bool>(), actions in prop::collection::vec(action(24, false), 1..200), probes in probes(), hiding in hiding(24)) {
        run(one_column(desc), actions, probes, hiding);
    }

    /// Boards of 2 to 5 columns, mixed directions and rules, few members.
    #[test]
    fn small_boards_of_several_columns_match_the_model(spec in multi_spec(), actions in prop::collection::vec(action(24, true), 1..200), probes in probes(), hiding in hiding(24)) {
        run(spec, actions, probes, hiding);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// A few hundred members: enough entries for multi-level trees, splits and merges.
    #[test]
    fn larger_boards_match_the_model(desc in any::<bool>(), actions in prop::collection::vec(action(300, false), 300..700), probes in probes(), hiding in hiding(300)) {
        run(one_column(desc), actions, probes, hiding);
    }

    /// The same with several columns.
    #[test]
    fn larger_boards_of_several_columns_match_the_model(spec in multi_spec(), actions in prop::collection::vec(action(300, true), 300..700), probes in probes(), hiding in hiding(300)) {
        run(spec, actions, probes, hiding);
    }
}

/// A one-column board's shape.
fn shape(order: Order) -> Shape {
    Shape::single(order, Op::Incr)
}

#[test]
fn overflow_is_an_error_that_changes_nothing() {
    let mut r = Ranking::new(shape(Order::Desc));
    let w = |value, at| Write {
        member: "a",
        op: Some(Op::Incr),
        values: Operands::one(value),
        at_us: at,
        metadata: None,
        partition: None,
        team: None,
        hidden: false,
    };
    r.submit(&w(i64::MAX, 1)).expect("first");
    let before = r.member("a", RankStyle::Ordinal);
    assert_eq!(
        r.submit(&w(1, 2)),
        Err(BoardError::ScoreOverflow {
            column: None,
            old: i64::MAX,
            delta: 1,
            limit: ScoreLimit::I64,
        })
    );
    assert_eq!(r.member("a", RankStyle::Ordinal), before);
    r.submit(&Write {
        values: Operands::one(i64::MIN),
        ..w(0, 3)
    })
    .expect("back to -1");
    assert_eq!(r.member("a", RankStyle::Ordinal).expect("a").score(), -1);
    assert_eq!(
        r.submit(&w(i64::MIN, 4)),
        Err(BoardError::ScoreOverflow {
            column: None,
            old: -1,
            delta: i64::MIN,
            limit: ScoreLimit::I64,
        })
    );
}

#[test]
fn reached_at_moves_only_when_the_score_changes() {
    let mut r = Ranking::new(shape(Order::Desc));
    let w = |op, value, at| Write {
        member: "a",
        op: Some(op),
        values: Operands::one(value),
        at_us: at,
        metadata: None,
        partition: None,
        team: None,
        hidden: false,
    };
    assert!(r.submit(&w(Op::Set, 10, 100)).expect("w").changed);
    for (op, value) in [(Op::Incr, 0), (Op::Set, 10), (Op::Best, 9), (Op::Best, 10)] {
        let o = r.submit(&w(op, value, 200)).expect("w");
        assert_eq!(
            (o.score(), o.reached_at_us, o.changed),
            (10, 100, false),
            "{op:?} {value}"
        );
    }
    let o = r.submit(&w(Op::Best, 11, 300)).expect("w");
    assert_eq!((o.score(), o.reached_at_us, o.changed), (11, 300, true));
}

#[test]
fn equal_scores_and_equal_times_order_by_sequence() {
    let mut r = Ranking::new(shape(Order::Desc));
    for m in ["c", "a", "b"] {
        r.submit(&Write {
            member: m,
            op: Some(Op::Set),
            values: Operands::one(7),
            at_us: 50,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
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
    let mut r = Ranking::new(shape(Order::Desc));
    let w = |value, metadata| Write {
        member: "a",
        op: Some(Op::Incr),
        values: Operands::one(value),
        at_us: 1,
        metadata,
        partition: None,
        team: None,
        hidden: false,
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
    assert_eq!(r.member("a", RankStyle::Ordinal).expect("a").score(), 2);
}

#[test]
fn invalid_members_change_nothing() {
    let mut r = Ranking::new(shape(Order::Desc));
    for bad in ["", "a\u{0}b", &"x".repeat(129)] {
        let got = r.submit(&Write {
            member: bad,
            op: Some(Op::Incr),
            values: Operands::one(1),
            at_us: 1,
            metadata: None,
            partition: None,
            team: None,
            hidden: false,
        });
        assert!(matches!(got, Err(BoardError::InvalidMemberName(_))));
    }
    assert!(r.is_empty());
}

#[test]
fn saved_entries_reload_into_an_identical_ranking() {
    let mut r = Ranking::new(shape(Order::Desc));
    for (i, m) in ["a", "b", "long-member-name-over-16", "d", "e"]
        .iter()
        .enumerate()
    {
        let meta = (i % 2 == 0).then_some(r#"{"k":1}"#);
        r.submit(&Write {
            member: m,
            op: Some(Op::Incr),
            values: Operands::one((i % 3) as i64),
            at_us: i as i64,
            metadata: meta,
            partition: None,
            team: None,
            hidden: false,
        })
        .expect("w");
    }
    use photofinish_core::ranking::SavedEntry;
    let mut saved: Vec<(String, i64, i64, u64, Option<String>)> = Vec::new();
    r.for_each_entry(|m, s, at, seq, meta| {
        saved.push((m.to_owned(), s.first(), at, seq, meta.map(str::to_owned)))
    });
    let load = |saved: &[(String, i64, i64, u64, Option<String>)]| {
        let entries = saved.iter().map(|e| {
            Ok(SavedEntry {
                member: &e.0,
                scores: Scores::one(e.1),
                reached_at_us: e.2,
                seq: e.3,
                metadata: e.4.as_deref(),
            })
        });
        Ranking::from_sorted(shape(Order::Desc), saved.len(), entries)
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
        op: Some(Op::Set),
        values: Operands::one(0),
        at_us: 9,
        metadata: None,
        partition: None,
        team: None,
        hidden: false,
    };
    assert_eq!(copy.submit(&w), r.submit(&w));
    copy.check_invariants();
}

#[test]
fn bulk_loading_sorted_entries_rebuilds_an_identical_ranking() {
    use photofinish_core::ranking::SavedEntry;
    let mut r = Ranking::new(shape(Order::Asc));
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
            op: Some(Op::Set),
            values: Operands::one(i % 17 - 8),
            at_us: i % 11,
            metadata: meta,
            partition: None,
            team: None,
            hidden: false,
        })
        .expect("w");
    }
    let mut saved: Vec<(String, i64, i64, u64, Option<String>)> = Vec::new();
    r.for_each_entry(|m, s, at, seq, meta| {
        saved.push((m.to_owned(), s.first(), at, seq, meta.map(str::to_owned)))
    });
    type Saved = (String, i64, i64, u64, Option<String>);
    fn entry(e: &Saved) -> Result<SavedEntry<'_>, BoardError> {
        Ok(SavedEntry {
            member: &e.0,
            scores: Scores::one(e.1),
            reached_at_us: e.2,
            seq: e.3,
            metadata: e.4.as_deref(),
        })
    }
    let bulk = Ranking::from_sorted(shape(Order::Asc), saved.len(), saved.iter().map(entry))
        .expect("bulk");
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
            Ranking::from_sorted(shape(Order::Asc), swapped.len(), swapped.iter().map(entry)),
            Err(BoardError::InvalidEntries(m)) if m.contains("out of order")
        ),
        "out of order"
    );
    let mut dup = saved.clone();
    dup[20].0 = dup[19].0.clone();
    assert!(
        matches!(
            Ranking::from_sorted(shape(Order::Asc), dup.len(), dup.iter().map(entry)),
            Err(BoardError::InvalidEntries(_))
        ),
        "duplicate"
    );
    // The builder takes the same entries in any order (an import): it sorts them itself.
    use photofinish_core::ranking::RankingBuilder;
    let build = |entries: &[Saved]| {
        let mut b = RankingBuilder::new(shape(Order::Asc), entries.len());
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
            shape(Order::Desc),
            n,
            names.iter().enumerate().map(|(i, name)| {
                Ok(SavedEntry {
                    member: name,
                    scores: Scores::one((n / 7 - i / 7) as i64),
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
        let mut b = RankingBuilder::new(shape(Order::Desc), rows.len());
        for (member, score, reached_at_us, seq) in rows {
            b.push(SavedEntry {
                member,
                scores: Scores::one(*score),
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

//! Teams (docs/SPEC.md §17) against a plain model: random writes of every operator naming
//! a team or none, removals, hides and shows, with values that collide often and include
//! the i64 extremes (so team sums pass the range). After every step the team ranking —
//! every team's rank in the three styles, its score (the sum of its visible members'
//! scores), its visible members and when its sum last changed, pages at any offset, and
//! each team's members ranked among themselves — equals the model's, recomputed from the
//! member entries, as everyone sees it and as a hidden member sees it (its own score
//! counted in its team). A write naming another team than its member's, one into a full
//! team, or one taking a team's sum past i64 is refused and changes nothing; a replay
//! (unranked writes) and a snapshot's reload reach the same teams. Teams exist only on
//! boards ordered `desc` (a rule of their config), so this model has that order alone.

use std::collections::{BTreeMap, BTreeSet};

use photofinish_core::ranking::{SavedEntry, TeamEntry, Visible};
use photofinish_core::{ErrorCode, Op, Operands, Order, RankStyle, Ranking, Scores, Shape, Write};
use proptest::prelude::*;

const STYLES: [RankStyle; 3] = [RankStyle::Ordinal, RankStyle::Competition, RankStyle::Dense];
const KEYS: [&str; 4] = ["wolves", "bears", "eu-west_1", "Z"];

#[derive(Debug, Clone)]
enum Action {
    Write {
        member: u8,
        op: Op,
        value: i64,
        team: Option<u8>,
    },
    Remove {
        member: u8,
    },
    Hide {
        member: u8,
        hidden: bool,
    },
}

#[derive(Debug, Clone)]
struct Member {
    score: i64,
    at: i64,
    seq: u64,
    team: Option<String>,
}

#[derive(Debug, Clone)]
struct Team {
    sum: i128,
    at: i64,
    seq: u64,
}

#[derive(Default)]
struct Model {
    max_size: usize,
    members: BTreeMap<String, Member>,
    teams: BTreeMap<String, Team>,
    hidden: BTreeSet<String>,
    next_seq: u64,
    team_seq: u64,
}

/// A team's order: its score, higher first, then when and in what order it got there.
type TeamKey = (std::cmp::Reverse<i64>, i64, u64);

fn clamp(sum: i128) -> i64 {
    sum.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl Model {
    fn team_size(&self, team: &str) -> usize {
        let held = self.members.values();
        held.filter(|m| m.team.as_deref() == Some(team)).count()
    }

    /// Team `team`'s sum changes by `delta` at `at` (nothing when it does not).
    fn change(&mut self, team: &str, delta: i128, at: i64) {
        if delta == 0 {
            return;
        }
        let t = self.teams.get_mut(team).expect("open team");
        t.sum += delta;
        t.at = at;
        t.seq = self.team_seq;
        self.team_seq += 1;
    }

    /// A write's effect, or the code of its refusal (nothing changes then): the member's
    /// score first (an `incr` past i64), then its team (another, a full one), then the
    /// team's sum.
    fn write(
        &mut self,
        member: &str,
        op: Op,
        v: i64,
        at: i64,
        asked: Option<&str>,
    ) -> Result<(), ErrorCode> {
        let old = self.members.get(member).cloned();
        let new = match (&old, op) {
            (None, _) => v,
            (Some(m), Op::Incr) => m.score.checked_add(v).ok_or(ErrorCode::ScoreOverflow)?,
            (Some(_), Op::Set) => v,
            (Some(m), Op::Best) => m.score.max(v),
        };
        if let Some(asked) = asked {
            match &old {
                Some(m) if m.team.as_deref() != Some(asked) => return Err(ErrorCode::TeamConflict),
                None if self.team_size(asked) >= self.max_size => return Err(ErrorCode::TeamFull),
                _ => {}
            }
        }
        let team = match &old {
            Some(m) => m.team.clone(),
            None => asked.map(str::to_owned),
        };
        let visible = !self.hidden.contains(member);
        let delta = if visible {
            i128::from(new) - i128::from(old.as_ref().map_or(0, |m| m.score))
        } else {
            0
        };
        if let (Some(t), true) = (&team, delta != 0) {
            // Past the range and further out than before: a sum a removal or a hide left
            // past it takes writes that bring it back.
            let old = self.teams.get(t).map_or(0, |t| t.sum);
            let past = |x: i128| x.abs_diff(i128::from(clamp(x)));
            if past(old + delta) > past(old) {
                return Err(ErrorCode::ScoreOverflow);
            }
        }
        let changed = old.as_ref().map(|m| m.score) != Some(new);
        if !changed {
            return Ok(());
        }
        self.members.insert(
            member.to_owned(),
            Member {
                score: new,
                at,
                seq: self.next_seq,
                team: team.clone(),
            },
        );
        self.next_seq += 1;
        if let Some(t) = team {
            if !self.teams.contains_key(&t) {
                let seq = self.team_seq;
                self.team_seq += 1;
                self.teams.insert(t.clone(), Team { sum: 0, at, seq });
            }
            self.change(&t, delta, at);
        }
        Ok(())
    }

    fn remove(&mut self, member: &str, at: i64) -> bool {
        let Some(m) = self.members.remove(member) else {
            return false;
        };
        if let Some(t) = m.team {
            if !self.hidden.contains(member) {
                self.change(&t, -i128::from(m.score), at);
            }
            if self.team_size(&t) == 0 {
                self.teams.remove(&t);
            }
        }
        true
    }

    fn hide(&mut self, member: &str, hidden: bool, at: i64) {
        let changed = if hidden {
            self.hidden.insert(member.to_owned())
        } else {
            self.hidden.remove(member)
        };
        let Some(m) = self.members.get(member).cloned() else {
            return;
        };
        if let (true, Some(t)) = (changed, m.team) {
            let delta = i128::from(m.score);
            self.change(&t, if hidden { -delta } else { delta }, at);
        }
    }

    /// The teams as `own` sees them (itself counted if hidden), in rank order:
    /// (team, score, members seen, reached_at).
    fn teams_seen(&self, own: Option<&str>) -> Vec<(String, i64, u64, i64)> {
        let own_hidden = own.filter(|o| self.hidden.contains(*o) && self.members.contains_key(*o));
        let mut rows: Vec<(TeamKey, (String, i64, u64, i64))> = Vec::new();
        for (name, t) in &self.teams {
            let seen: Vec<&str> = self
                .members
                .iter()
                .filter(|(_, e)| e.team.as_deref() == Some(name.as_str()))
                .filter(|(m, _)| !self.hidden.contains(*m) || own_hidden == Some(m.as_str()))
                .map(|(m, _)| m.as_str())
                .collect();
            if seen.is_empty() {
                continue;
            }
            let (mut sum, mut at) = (t.sum, t.at);
            if let Some(o) = own_hidden.filter(|o| seen.contains(o)) {
                let m = &self.members[o];
                sum += i128::from(m.score);
                at = at.max(m.at);
            }
            let score = clamp(sum);
            let key = (std::cmp::Reverse(score), at, t.seq);
            rows.push((key, (name.clone(), score, seen.len() as u64, at)));
        }
        rows.sort();
        rows.into_iter().map(|(_, r)| r).collect()
    }

    /// Team `team`'s members as `own` sees them, in rank order: (member, score).
    fn contributions(&self, team: &str, own: Option<&str>) -> Vec<(String, i64)> {
        let mut v: Vec<_> = self
            .members
            .iter()
            .filter(|(_, e)| e.team.as_deref() == Some(team))
            .filter(|(m, _)| !self.hidden.contains(*m) || own == Some(m.as_str()))
            .map(|(m, e)| (-i128::from(e.score), e.at, e.seq, m.clone(), e.score))
            .collect();
        v.sort();
        v.into_iter().map(|(_, _, _, m, s)| (m, s)).collect()
    }
}

/// The rank in `style` of row `i` of `scores` (in rank order).
fn rank(scores: &[i64], i: usize, style: RankStyle) -> u64 {
    let s = scores[i];
    1 + match style {
        RankStyle::Ordinal => i as u64,
        RankStyle::Competition => scores.iter().filter(|&&x| x > s).count() as u64,
        RankStyle::Dense => scores
            .iter()
            .filter(|&&x| x > s)
            .collect::<BTreeSet<_>>()
            .len() as u64,
    }
}

fn check(r: &Ranking, model: &Model, own: Option<&str>) {
    let view: Visible<'_> = r.view(own);
    let teams = view.teams().expect("a ranking of teams");
    let want = model.teams_seen(own);
    assert_eq!(teams.len(), want.len() as u64, "teams seen by {own:?}");
    let scores: Vec<i64> = want.iter().map(|t| t.1).collect();
    for style in STYLES {
        let expect: Vec<TeamEntry> = want
            .iter()
            .enumerate()
            .map(|(i, (team, score, members, at))| TeamEntry {
                rank: rank(&scores, i, style),
                team: team.clone(),
                score: *score,
                members: *members,
                reached_at_us: *at,
            })
            .collect();
        let page = teams.page(0, usize::MAX, style);
        assert_eq!(page, expect, "teams by {own:?} in {style:?}");
        for offset in 0..=expect.len() {
            for limit in [1, 2] {
                let part = teams.page(offset as u64, limit, style);
                let end = (offset + limit).min(expect.len());
                assert_eq!(part, expect[offset..end], "page {offset}+{limit} {style:?}");
            }
        }
        for e in &expect {
            assert_eq!(
                teams.team(&e.team, style).as_ref(),
                Some(e),
                "team {:?}",
                e.team
            );
        }
    }
    for team in KEYS {
        if !want.iter().any(|t| t.0 == team) {
            assert_eq!(teams.team(team, RankStyle::Ordinal), None, "{team} unseen");
            continue;
        }
        let got: Vec<(String, i64, u64)> = teams
            .contributions(team, 0, usize::MAX, RankStyle::Ordinal)
            .into_iter()
            .map(|e| (e.member, e.scores.first(), e.rank))
            .collect();
        let expect: Vec<(String, i64, u64)> = model
            .contributions(team, own.filter(|o| model.hidden.contains(*o)))
            .into_iter()
            .enumerate()
            .map(|(i, (m, s))| (m, s, i as u64 + 1))
            .collect();
        assert_eq!(got, expect, "team {team}'s members by {own:?}");
    }
}

fn name(i: u8) -> String {
    format!("m{i}")
}

fn value() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => -3i64..4,
        1 => Just(i64::MAX),
        1 => Just(i64::MIN),
        1 => Just(i64::MAX / 2 + 1),
        1 => Just(i64::MIN / 2),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    let op = prop_oneof![Just(Op::Incr), Just(Op::Set), Just(Op::Best)];
    prop_oneof![
        6 => (0u8..10, op, value(), prop::option::of(0u8..4))
            .prop_map(|(member, op, value, team)| Action::Write { member, op, value, team }),
        1 => (0u8..10).prop_map(|member| Action::Remove { member }),
        2 => (0u8..10, any::<bool>()).prop_map(|(member, hidden)| Action::Hide { member, hidden }),
    ]
}

/// The ranking as a snapshot reloads it: its entries, its teams, its hidden members.
fn reloaded(r: &Ranking, max_size: u32, hidden: &BTreeSet<String>) -> Ranking {
    let shape = *r.shape();
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
        .with_teams(Some(max_size));
    copy.load_teams(r.saved_teams(), r.teams_next_seq())
        .expect("teams");
    for m in hidden {
        copy.mark_hidden(m, true);
    }
    copy.recount_teams();
    copy.reserve_seq(r.next_seq());
    copy
}

fn run(max_size: u32, actions: Vec<Action>, own: Option<u8>) {
    let shape = Shape::single(Order::Desc, Op::Incr);
    let mut r = Ranking::new(shape).with_teams(Some(max_size));
    let mut unranked = Ranking::new(shape).with_teams(Some(max_size));
    let mut model = Model {
        max_size: max_size as usize,
        next_seq: 1,
        ..Model::default()
    };
    let own = own.map(name);
    for (step, a) in actions.into_iter().enumerate() {
        let at = step as i64 * 10;
        match &a {
            Action::Write {
                member,
                op,
                value,
                team,
            } => {
                let m = name(*member);
                let key = team.map(|t| KEYS[t as usize]);
                let w = Write {
                    member: &m,
                    op: Some(*op),
                    values: Operands::one(*value),
                    at_us: at,
                    metadata: None,
                    partition: None,
                    team: key,
                    hidden: model.hidden.contains(&m),
                };
                let before = r
                    .view(None)
                    .teams()
                    .map(|t| t.page(0, usize::MAX, RankStyle::Ordinal));
                let got = r.submit(&w).map(|_| ()).map_err(|e| e.code());
                let quiet = unranked
                    .submit_unranked(&w)
                    .map(|_| ())
                    .map_err(|e| e.code());
                if model.hidden.contains(&m) {
                    r.mark_hidden(&m, true);
                    unranked.mark_hidden(&m, true);
                }
                let want = model.write(&m, *op, *value, at, key);
                assert_eq!(got, want, "{a:?}");
                assert_eq!(quiet, want, "unranked {a:?}");
                if want.is_err() {
                    let after = r
                        .view(None)
                        .teams()
                        .map(|t| t.page(0, usize::MAX, RankStyle::Ordinal));
                    assert_eq!(after, before, "refused {a:?} changed nothing");
                }
            }
            Action::Remove { member } => {
                let m = name(*member);
                assert_eq!(r.remove(&m, at), model.remove(&m, at));
                unranked.remove(&m, at);
            }
            Action::Hide { member, hidden } => {
                let m = name(*member);
                r.set_hidden(&m, *hidden, at);
                unranked.set_hidden(&m, *hidden, at);
                model.hide(&m, *hidden, at);
            }
        }
        r.check_invariants();
        check(&r, &model, None);
        check(&r, &model, own.as_deref());
        if step % 9 == 8 {
            unranked.rebuild_index();
            unranked.check_invariants();
            check(&unranked, &model, None);
            let copy = reloaded(&r, max_size, &model.hidden);
            copy.check_invariants();
            check(&copy, &model, None);
            check(&copy, &model, own.as_deref());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Few members and teams, many collisions, refusals and hidden members: every step
    /// checked, as everyone and as one member (hidden at times) sees it.
    #[test]
    fn the_team_ranking_matches_the_model(
        max_size in 1u32..5,
        actions in prop::collection::vec(action(), 1..140),
        own in prop::option::of(0u8..10),
    ) {
        run(max_size, actions, own);
    }
}

/// A team named on a board without teams is refused, and changes nothing.
#[test]
fn a_team_needs_a_board_of_teams() {
    let mut r = Ranking::new(Shape::single(Order::Desc, Op::Incr));
    let w = |team| Write {
        member: "ann",
        op: Some(Op::Set),
        values: Operands::one(5),
        at_us: 1,
        metadata: None,
        partition: None,
        team,
        hidden: false,
    };
    let e = r.submit(&w(Some("wolves"))).expect_err("refused");
    assert_eq!(e.code(), ErrorCode::InvalidParameter);
    assert!(r.is_empty());
    assert!(r.submit(&w(None)).is_ok());
    assert!(r.view(None).teams().is_none());
}

/// Equal sums rank the team that reached its sum first higher, whichever way the sum
/// moved; a change of members that leaves the sum keeps the team's instant.
#[test]
fn equal_sums_rank_the_first_to_reach_them_higher() {
    let mut r = Ranking::new(Shape::single(Order::Desc, Op::Incr)).with_teams(Some(10));
    let mut w = |member: &str, team: &str, value: i64, at_us: i64| {
        let w = Write {
            member,
            op: None,
            values: Operands::one(value),
            at_us,
            metadata: None,
            partition: None,
            team: Some(team),
            hidden: false,
        };
        r.submit(&w).expect("write");
    };
    w("a1", "wolves", 10, 1);
    w("b1", "bears", 12, 2);
    w("b1", "bears", -2, 3); // bears come down to 10 at 3, after wolves reached it at 1
    w("a2", "wolves", 0, 4); // a member scoring 0 joins: the sum, and its instant, stay
    let page = r
        .view(None)
        .teams()
        .expect("teams")
        .page(0, 10, RankStyle::Competition);
    let got: Vec<(&str, i64, u64, u64, i64)> = page
        .iter()
        .map(|t| (t.team.as_str(), t.score, t.rank, t.members, t.reached_at_us))
        .collect();
    assert_eq!(got, vec![("wolves", 10, 1, 2, 1), ("bears", 10, 1, 1, 3)]);
}

/// On a board that resets daily, teams are per period: a member's team is fixed for a
/// period only, and a past period's teams stay as they were; a hide changes every
/// period's sums at its instant, and an erase takes the member out of every period's
/// team (docs/SPEC.md §17).
#[test]
fn teams_are_per_period_and_a_hide_or_an_erase_reaches_every_period() {
    use photofinish_core::board::BoardWrite;
    use photofinish_core::groups::TeamRules;
    use photofinish_core::{Board, BoardConfig, PeriodRef, Reset};
    const DAY1: i64 = 1_795_305_600_000_000; // 2026-11-22T00:00:00Z
    const DAY2: i64 = DAY1 + 86_400_000_000;
    let mut b = Board::checked(BoardConfig {
        reset: Reset::Daily,
        teams: Some(TeamRules { max_size: 3 }),
        ..BoardConfig::default()
    })
    .expect("board");
    let mut w = |member: &str, value: i64, team: &str, at_us: i64| {
        b.submit(&BoardWrite {
            member,
            op: None,
            values: Operands::one(value),
            at_us,
            period_us: None,
            metadata: None,
            partition: None,
            team: Some(team),
            over_budget: None,
        })
        .map(|_| ())
        .map_err(|e| e.code())
    };
    w("ann", 10, "wolves", DAY1 + 1).expect("day 1");
    w("bob", 5, "wolves", DAY1 + 2).expect("day 1");
    assert_eq!(w("ann", 1, "bears", DAY1 + 3), Err(ErrorCode::TeamConflict));
    w("ann", 3, "bears", DAY2 + 1).expect("a new period: a new team");
    let teams = |b: &Board, period: PeriodRef, now: i64| -> Vec<(String, i64, u64, i64)> {
        let (_, r) = b.read(&period, now).expect("period");
        let r = r.expect("ranking");
        let view = r.view(None);
        let t = view.teams().expect("teams");
        t.page(0, 10, RankStyle::Ordinal)
            .into_iter()
            .map(|t| (t.team, t.score, t.members, t.reached_at_us))
            .collect()
    };
    let now = DAY2 + 10;
    assert_eq!(
        teams(&b, PeriodRef::Previous, now),
        [("wolves".into(), 15, 2, DAY1 + 2)]
    );
    assert_eq!(
        teams(&b, PeriodRef::Current, now),
        [("bears".into(), 3, 1, DAY2 + 1)]
    );
    b.hide("bob", DAY2 + 20).expect("hide");
    assert_eq!(
        teams(&b, PeriodRef::Previous, now),
        [("wolves".into(), 10, 1, DAY2 + 20)],
        "bob's 5 left day 1's wolves at the hide's instant"
    );
    b.erase("ann", DAY2 + 30);
    assert_eq!(
        teams(&b, PeriodRef::Previous, now),
        [],
        "wolves holds only hidden bob"
    );
    assert_eq!(
        teams(&b, PeriodRef::Current, now),
        [],
        "bears closed with ann gone"
    );
    b.unhide("bob", DAY2 + 40);
    assert_eq!(
        teams(&b, PeriodRef::Previous, now),
        [("wolves".into(), 5, 1, DAY2 + 40)]
    );
}

/// A removal may leave a team's sum past the i64 range (it is never refused); then a
/// write that brings the sum back toward the range is taken, and one that takes it
/// further out is refused with nothing applied. An import whose rows sum a team past the
/// range is refused whole, as the writes would be.
#[test]
fn a_sum_past_the_range_takes_writes_that_bring_it_back() {
    use photofinish_core::transfer::{ImportBuilder, ImportRow, ImportScores};
    use photofinish_core::BoardConfig;
    let mut r = Ranking::new(Shape::single(Order::Desc, Op::Set)).with_teams(Some(5));
    let w = |r: &mut Ranking, member: &str, value: i64| {
        let w = Write {
            member,
            op: None,
            values: Operands::one(value),
            at_us: 1,
            metadata: None,
            partition: None,
            team: Some("t"),
            hidden: false,
        };
        r.submit(&w).map(|_| ()).map_err(|e| e.code())
    };
    w(&mut r, "a", i64::MAX).expect("a");
    w(&mut r, "c", -i64::MAX).expect("c");
    w(&mut r, "b", i64::MAX).expect("b");
    assert!(r.remove("c", 2), "a removal is never refused");
    let score = |r: &Ranking| {
        r.view(None)
            .teams()
            .and_then(|t| t.team("t", RankStyle::Ordinal))
            .map(|t| t.score)
    };
    assert_eq!(
        score(&r),
        Some(i64::MAX),
        "2 × i64::MAX reads as the range's end"
    );
    w(&mut r, "b", 7).expect("still past the range, but back toward it");
    assert_eq!(
        w(&mut r, "b", 8),
        Err(ErrorCode::ScoreOverflow),
        "further out"
    );
    assert_eq!(r.scores_of("b"), Some(Scores::one(7)), "nothing applied");
    w(&mut r, "b", -10).expect("back inside");
    assert_eq!(score(&r), Some(i64::MAX - 10));
    r.check_invariants();

    let config = BoardConfig {
        teams: Some(photofinish_core::groups::TeamRules { max_size: 5 }),
        ..BoardConfig::default()
    };
    let mut b = ImportBuilder::new(&config);
    for m in ["x", "y"] {
        let row = ImportRow {
            member: m.into(),
            scores: ImportScores::Score(5_000_000_000_000_000_000),
            reached_at_us: Some(1),
            metadata: None,
            hidden: false,
            partition: None,
            team: Some("t".into()),
        };
        b.push(&row, 1, Scores::one(5_000_000_000_000_000_000))
            .expect("row");
    }
    let e = b.finish().map(|_| ()).expect_err("refused whole");
    assert_eq!(e.code(), ErrorCode::InvalidEntries);
}

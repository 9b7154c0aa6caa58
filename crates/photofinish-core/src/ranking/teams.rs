//! A ranking's teams (docs/SPEC.md §17): beside its members, a ranking of teams by the
//! sum of their visible members' current scores, equal sums ordered by the instant each
//! sum last changed (up or down: the team that got there first ranks higher) and then by
//! the order of those changes. A member's team is set by the write that adds it and kept
//! until it leaves the ranking, as its partition is ([`Teams::place`] decides before
//! anything changes, with the refusals: `team_conflict`, `team_full`, and a sum that would
//! leave the i64 range).
//!
//! Each team is a small record (its key, its members' record ids, how many are visible),
//! and the teams holding a visible member are in an order-statistic index of their own
//! ([`RankedIndex`] over the team records), so a page of teams costs O(log t + page). A
//! hidden member's score is not in its team's sum; its own view counts it back in
//! ([`TeamsView`], `teams/view.rs`). Deleting or erasing a member takes its score out, at
//! the instant of the removal; a hide or a show does the same at its own instant. The
//! sum is held in i128: a removal or a hide is never refused, and may leave the other
//! members summing past i64 (only when scores of opposite signs near the range's ends
//! meet) — it reads as the range's end until a change brings it back.

use hashbrown::HashMap;

use super::storage::{prefetch_beside, set_beside};
use crate::error::BoardError;
use crate::groups::InlineGroupKey;
use crate::index::{Approach, Hints, KeyOf, RankedIndex, Spot};
use crate::key::Key;
use crate::scoring::Order;

mod upkeep;
mod view;

pub use upkeep::SavedTeam;
pub use view::{TeamEntry, TeamsView};

/// One team, but its key (kept apart, [`TeamKeys`]). See the module docs.
#[derive(Debug, Clone)]
pub(super) struct Team {
    /// Inline: a write naming its member's team compares it ([`Teams::place`]).
    pub(super) name: InlineGroupKey,
    /// Its visible members' scores, summed.
    pub(super) sum: i128,
    /// Its members' record ids, hidden ones too.
    pub(super) members: Vec<u32>,
    /// How many of them are not hidden (at most `teams.max_size`, 10,000: two bytes
    /// keep the record at 80 with [`Self::leaf`]).
    pub(super) visible: u16,
    /// The teams' index leaf it was last found in ([`NO_LEAF`] before that): where a
    /// write's small change of its sum is tried first ([`Teams::moved`]).
    leaf: u32,
}

/// A team not yet found in the teams' index ([`Team::leaf`]).
const NO_LEAF: u32 = u32::MAX;

// A team's visible count is two bytes ([`Team::visible`]).
const _: () = assert!(crate::groups::MAX_TEAM_SIZE <= u16::MAX as u32);

impl Team {
    /// Its sum as a score: the i64 range's end it passed, if it did (see the module docs).
    pub(super) fn score(&self) -> i64 {
        clamp(self.sum)
    }
}

/// A team's key in the teams' index: its sum (higher is better), then the instant
/// (`reached_at_us`) and order (`seq`) of the sum's last change.
fn key_of(sum: i128, reached_at_us: i64, seq: u64) -> Key {
    Key {
        nscore: first_of(sum),
        tail: (),
        reached_at_us,
        seq,
    }
}

/// The first column of the key of a team whose sum is `sum` ([`key_of`]).
fn first_of(sum: i128) -> i64 {
    Order::Desc.normalize(clamp(sum))
}

/// `sum` as an i64, at the range's end it passes.
pub(super) fn clamp(sum: i128) -> i64 {
    sum.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// How far `sum` is past the i64 range (0 inside it).
fn excess(sum: i128) -> u128 {
    sum.abs_diff(i128::from(clamp(sum)))
}

/// Each team's key, by id: where the teams' index reads keys — 24 bytes a team in one
/// array, apart from the rest of the team, so a descent's comparisons read few lines.
#[derive(Debug, Clone, Default)]
pub(super) struct TeamKeys(pub(super) Vec<Key>);

impl KeyOf for TeamKeys {
    #[inline]
    fn key_of(&self, id: u32) -> Key {
        self.0[id as usize]
    }
}

/// The teams of one ranking. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Teams {
    /// The most members a team holds (the board's `teams.max_size`).
    max_size: u32,
    teams: Vec<Team>,
    /// Each team's key, by id.
    pub(super) keys: TeamKeys,
    by_name: HashMap<Box<str>, u32>,
    /// Ids of closed teams (their last member left), for the next opened.
    free: Vec<u32>,
    /// The teams holding a visible member, by key (its leaves keep hints, as a
    /// partition's: the search of a team's new place reads keys only among teams whose
    /// sums' digests tie).
    pub(super) index: RankedIndex<(), Hints>,
    /// Record id → its team's id + 1, 0 for none (ids past the end: none).
    of: Vec<u32>,
    /// The order the next change of a sum gets.
    next_seq: u64,
}

/// Where a write puts its member among the teams, decided before the ranking changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TeamPlace {
    /// Where it is (a member already ranked, or a new one naming none).
    Stay,
    /// Into team `t`, which exists and has room.
    Into(u32),
    /// Into a team opened for it, under this key.
    Open(InlineGroupKey),
}

impl Teams {
    pub(super) fn new(max_size: u32) -> Self {
        Self {
            max_size,
            teams: Vec::new(),
            keys: TeamKeys::default(),
            by_name: HashMap::new(),
            free: Vec::new(),
            index: RankedIndex::new(),
            of: Vec::new(),
            next_seq: 1,
        }
    }

    /// The most members a team holds.
    pub(super) fn max_size(&self) -> u32 {
        self.max_size
    }

    /// The team record `id` is in.
    #[inline]
    pub(super) fn of(&self, id: u32) -> Option<u32> {
        match self.of.get(id as usize) {
            Some(&t) if t > 0 => Some(t - 1),
            _ => None,
        }
    }

    /// Asks for the line holding record `id`'s team ([`crate::prefetch`]).
    #[inline]
    pub(super) fn prefetch_of(&self, id: u32) {
        prefetch_beside(&self.of, id);
    }

    /// Asks for the record and the key of record `id`'s team ([`crate::prefetch`]).
    #[inline]
    pub(super) fn prefetch_team(&self, id: u32) {
        if let Some(t) = self.of(id) {
            crate::prefetch::prefetch_value(&self.teams[t as usize]);
            crate::prefetch::prefetch(&self.keys.0[t as usize]);
        }
    }

    /// The way down the teams' index to the leaf that holds record `id`'s team (a
    /// descent, then a prefetch), taken before a write moves the member and kept for the
    /// team's own move ([`Self::moved`]; the partitions' `approach` says why).
    /// None, too, when the leaf the team was last found in still holds it between two
    /// others ([`RankedIndex::holds_inside`]): [`Self::moved`] tries it there first, and
    /// descends only if that fails.
    pub(super) fn approach(&self, id: u32) -> Option<Approach> {
        let t = self.of(id)?;
        let team = self.get(t);
        (team.visible > 0 && !self.index.holds_inside(team.leaf, t))
            .then(|| self.index.approach(&self.key(t), &self.keys))
    }

    /// Asks for the teams' index leaf team `t` was last found in ([`crate::prefetch`]).
    #[inline]
    pub(super) fn prefetch_leaf(&self, t: u32) {
        self.index.prefetch_leaf(self.get(t).leaf);
    }

    /// [`Self::prefetch_leaf`] for record `id`'s team, if it has one.
    #[inline]
    pub(super) fn prefetch_leaf_of(&self, id: u32) {
        if let Some(t) = self.of(id) {
            self.prefetch_leaf(t);
        }
    }

    /// The team named `name`.
    pub(super) fn find(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// Team `t`.
    pub(super) fn get(&self, t: u32) -> &Team {
        &self.teams[t as usize]
    }

    /// Team `t`'s key.
    pub(super) fn key(&self, t: u32) -> Key {
        self.keys.0[t as usize]
    }

    /// Where a write naming `asked` puts `member`, whose record is `existing` when it is
    /// ranked: a member stays in the team its first write put it in (naming none is
    /// staying); a new one joins the team it names, opened if need be, when it has room.
    pub(super) fn place(
        &self,
        member: &str,
        existing: Option<u32>,
        asked: Option<&str>,
    ) -> Result<TeamPlace, BoardError> {
        let Some(asked) = asked else {
            return Ok(TeamPlace::Stay);
        };
        if let Some(id) = existing {
            // The held team's name, not a lookup of the asked one: its record is read
            // next anyway (the sum's check), the names' table is not.
            let held = self.of(id);
            return if held.is_some_and(|t| self.get(t).name.is(asked)) {
                Ok(TeamPlace::Stay)
            } else {
                Err(BoardError::TeamConflict {
                    member: member.to_owned(),
                    held: held
                        .map_or_else(|| "none".to_owned(), |t| format!("{:?}", self.get(t).name)),
                    asked: asked.to_owned(),
                    period: String::new(),
                })
            };
        }
        match self.find(asked) {
            Some(t) if self.get(t).members.len() >= self.max_size as usize => {
                Err(BoardError::TeamFull {
                    team: asked.to_owned(),
                    max_size: self.max_size,
                    period: String::new(),
                })
            }
            Some(t) => Ok(TeamPlace::Into(t)),
            None => Ok(TeamPlace::Open(InlineGroupKey::new(asked)?)),
        }
    }

    /// Refuses a change of `delta` to team `t`'s sum (a new team's when `None`) that
    /// would leave the i64 range (docs/SPEC.md §17).
    /// A sum past the range already (a removal or a hide left it there, see the module
    /// docs) takes any write that does not move it further out.
    pub(super) fn check(&self, t: Option<u32>, delta: i128) -> Result<(), BoardError> {
        let old = t.map_or(0, |t| self.get(t).sum);
        let sum = old + delta;
        if excess(sum) == 0 || excess(sum) <= excess(old) {
            return Ok(());
        }
        let team = t.map_or_else(String::new, |t| format!(" {:?}", self.get(t).name));
        Err(BoardError::TeamOverflow(format!(
            "the write would take team{team}'s sum to {sum}, past the i64 range"
        )))
    }

    /// Puts record `id`, just added with score `score`, where `place` says at `at_us`;
    /// its score counts when it is `visible`.
    pub(super) fn enter(
        &mut self,
        id: u32,
        place: TeamPlace,
        score: i64,
        visible: bool,
        at_us: i64,
    ) {
        let t = match place {
            TeamPlace::Into(t) => t,
            TeamPlace::Open(name) => self.open(name, at_us),
            TeamPlace::Stay => return,
        };
        set_beside(&mut self.of, id, t + 1);
        self.update(t, at_us, None, |team| {
            team.members.push(id);
            if visible {
                team.visible += 1;
                team.sum += i128::from(score);
            }
        });
    }

    /// A team named `name`, opened at `at_us` with nobody in it: a closed one's slot
    /// when there is one.
    fn open(&mut self, name: InlineGroupKey, at_us: i64) -> u32 {
        let seq = self.take_seq();
        let team = Team {
            name,
            sum: 0,
            members: Vec::new(),
            visible: 0,
            leaf: NO_LEAF,
        };
        let key = key_of(0, at_us, seq);
        let t = match self.free.pop() {
            Some(t) => {
                self.teams[t as usize] = team;
                self.keys.0[t as usize] = key;
                t
            }
            None => {
                self.teams.push(team);
                self.keys.0.push(key);
                (self.teams.len() - 1) as u32
            }
        };
        self.by_name.insert((*name).into(), t);
        t
    }

    fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Changes team `t` by `f` at `at_us`, keeping the index in step: found there under
    /// its key before, moved to its new key after while it has a visible member (taken
    /// out when it has none left); a new key when its sum changed.
    /// `at`, when given, is the way down to the team's leaf ([`Self::approach`]).
    fn update(&mut self, t: u32, at_us: i64, at: Option<Approach>, f: impl FnOnce(&mut Team)) {
        let team = &self.teams[t as usize];
        let before = team.sum;
        let spot: Option<Spot> = match at {
            Some(at) => {
                debug_assert!(
                    team.visible > 0,
                    "an approach is taken to a listed team only"
                );
                self.index.spot_from(at, t)
            }
            None if team.visible > 0 => self.index.spot(t, &self.key(t), &self.keys),
            None => None,
        };
        let team = &mut self.teams[t as usize];
        f(team);
        team.leaf = spot.as_ref().map_or(NO_LEAF, Spot::leaf);
        let (listed, after) = (team.visible > 0, team.sum);
        if after != before {
            self.set_key(t, after, at_us);
        }
        match (spot, listed) {
            (Some(spot), true) => {
                self.index.move_to(spot, t, self.key(t), &self.keys);
            }
            (Some(spot), false) => self.index.take(spot, &self.keys),
            (None, true) => {
                self.index.insert(t, self.key(t), &self.keys);
            }
            (None, false) => {}
        }
    }

    /// The score of visible member `id` moved by `delta` at `at_us`; `at` is the way down
    /// to its team's leaf when [`Self::approach`] took it.
    pub(super) fn moved(&mut self, id: u32, delta: i128, at_us: i64, at: Option<Approach>) {
        if let (Some(t), true) = (self.of(id), delta != 0) {
            if at.is_none() && self.moved_in_place(t, delta, at_us) {
                return;
            }
            self.update(t, at_us, at, |team| team.sum += delta);
        }
    }

    /// Team `t`'s sum moved by `delta` at `at_us` inside the leaf it was last found in,
    /// when its new key keeps its slot there ([`RankedIndex::move_in_place`]: a small
    /// change among teams whose sums are far apart, what most writes make); whether it
    /// did. Its key then changes as [`Self::update`] would change it.
    fn moved_in_place(&mut self, t: u32, delta: i128, at_us: i64) -> bool {
        let team = &self.teams[t as usize];
        let sum = team.sum + delta;
        if team.visible == 0 || !self.index.move_in_place(team.leaf, t, first_of(sum)) {
            return false;
        }
        self.teams[t as usize].sum = sum;
        self.set_key(t, sum, at_us);
        true
    }

    /// Team `t`'s key once its sum became `sum` at `at_us`: the next order of a change.
    fn set_key(&mut self, t: u32, sum: i128, at_us: i64) {
        let seq = self.take_seq();
        self.keys.0[t as usize] = key_of(sum, at_us, seq);
    }

    /// Member `id`, of score `score`, hidden (`shown` false) or shown again at `at_us`.
    pub(super) fn shown(&mut self, id: u32, score: i64, shown: bool, at_us: i64) {
        let Some(t) = self.of(id) else {
            return;
        };
        self.update(t, at_us, None, |team| {
            if shown {
                team.visible += 1;
                team.sum += i128::from(score);
            } else {
                team.visible -= 1;
                team.sum -= i128::from(score);
            }
        });
    }

    /// Member `id`, of score `score` (counted when `visible`), leaves its team at
    /// `at_us`; a team its last member left is closed.
    pub(super) fn leave(&mut self, id: u32, score: i64, visible: bool, at_us: i64) {
        let Some(t) = self.of(id) else {
            return;
        };
        self.of[id as usize] = 0;
        self.update(t, at_us, None, |team| {
            team.members.retain(|&m| m != id);
            if visible {
                team.visible -= 1;
                team.sum -= i128::from(score);
            }
        });
        if self.get(t).members.is_empty() {
            let name = std::mem::take(&mut self.teams[t as usize].name);
            self.by_name.remove(&*name);
            self.free.push(t);
        }
    }

    /// Every open team with its key (a snapshot's teams section).
    pub(super) fn open_teams(&self) -> impl Iterator<Item = (&Team, Key)> + '_ {
        self.by_name.values().map(|&t| (self.get(t), self.key(t)))
    }

    /// The first open team whose sum is past the i64 range, by key.
    pub(super) fn past_range(&self) -> Option<&str> {
        let mut past: Vec<&str> = self
            .by_name
            .iter()
            .filter(|(_, &t)| excess(self.get(t).sum) > 0)
            .map(|(name, _)| &**name)
            .collect();
        past.sort_unstable();
        past.first().copied()
    }

    /// The order the next change of a sum gets (a snapshot keeps it).
    pub(super) fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Opens team `name` as a snapshot recorded it — its last change at `reached_at_us`,
    /// in order `seq` — with members `ids`, every one counted; [`Self::recount`] follows.
    /// Refuses a team given twice, a member in two, and a team past its size.
    pub(super) fn restore(
        &mut self,
        name: &str,
        reached_at_us: i64,
        seq: u64,
        ids: Vec<u32>,
    ) -> Result<(), BoardError> {
        let refuse = |what: String| BoardError::InvalidEntries(what);
        if self.find(name).is_some() || ids.is_empty() {
            return Err(refuse(format!("team {name:?} given twice, or empty")));
        }
        if ids.len() > self.max_size as usize {
            return Err(refuse(format!("team {name:?} is past its size")));
        }
        let t = self.open(InlineGroupKey::new(name)?, reached_at_us);
        self.next_seq = self.next_seq.max(seq.saturating_add(1));
        for &id in &ids {
            if self.of(id).is_some() {
                return Err(refuse(format!("a member of team {name:?} is in two")));
            }
            set_beside(&mut self.of, id, t + 1);
        }
        self.keys.0[t as usize].seq = seq;
        self.teams[t as usize].members = ids;
        Ok(())
    }

    /// Sets the order the next change gets (a snapshot's), when it is later than any
    /// restored team's.
    pub(super) fn restore_seq(&mut self, next_seq: u64) {
        self.next_seq = self.next_seq.max(next_seq);
    }

    /// Counts every team's sum and visible members again from `score` (a member's score,
    /// `None` when hidden), keeping each team's instant and order, and builds the index:
    /// a snapshot's load, once the ranking's hidden members are marked.
    pub(super) fn recount(&mut self, score: impl Fn(u32) -> Option<i64>) {
        let mut listed = Vec::new();
        for &t in self.by_name.values() {
            let team = &mut self.teams[t as usize];
            team.sum = 0;
            team.visible = 0;
            for &id in &team.members {
                if let Some(s) = score(id) {
                    team.sum += i128::from(s);
                    team.visible += 1;
                }
            }
            let key = &mut self.keys.0[t as usize];
            *key = key_of(team.sum, key.reached_at_us, key.seq);
            if team.visible > 0 {
                listed.push((*key, t));
            }
        }
        listed.sort_unstable();
        let ids: Vec<u32> = listed.into_iter().map(|(_, t)| t).collect();
        self.index = RankedIndex::from_sorted(&ids, &self.keys);
    }

    /// Checks that each open team's members are the records that name it, that its sum
    /// and visible count are those of `score` (a member's score, `None` when hidden), and
    /// that the index holds exactly the teams with a visible member, in order; panics
    /// with what is wrong. For tests only.
    pub(super) fn check_invariants(
        &self,
        ids: impl Iterator<Item = u32>,
        score: impl Fn(u32) -> Option<i64>,
    ) {
        let mut members: HashMap<u32, Vec<u32>> = HashMap::new();
        for id in ids {
            if let Some(t) = self.of(id) {
                members.entry(t).or_default().push(id);
            }
        }
        let mut listed = Vec::new();
        for (name, &t) in &self.by_name {
            let team = self.get(t);
            assert_eq!(&*team.name, &**name, "team {name:?}: its name");
            let mut held = team.members.clone();
            held.sort_unstable();
            let mut named = members.remove(&t).unwrap_or_default();
            named.sort_unstable();
            assert_eq!(held, named, "team {name:?}: members");
            assert!(
                held.len() <= self.max_size as usize,
                "team {name:?}: past its size"
            );
            assert!(!held.is_empty(), "team {name:?}: open and empty");
            let seen: Vec<i64> = held.iter().filter_map(|&id| score(id)).collect();
            let sum: i128 = seen.iter().map(|&s| i128::from(s)).sum();
            assert_eq!(team.sum, sum, "team {name:?}: sum");
            assert_eq!(team.visible as usize, seen.len(), "team {name:?}: visible");
            let key = self.key(t);
            assert_eq!(
                key,
                key_of(team.sum, key.reached_at_us, key.seq),
                "team {name:?}: key"
            );
            if team.visible > 0 {
                listed.push((key, t));
            }
        }
        assert!(members.is_empty(), "records name a closed team");
        listed.sort_unstable();
        self.index.check_invariants(&self.keys);
        let indexed: Vec<u32> = self.index.iter_from(0).collect();
        let want: Vec<u32> = listed.into_iter().map(|(_, t)| t).collect();
        assert_eq!(indexed, want, "teams: the index");
    }

    pub(super) fn reserved_bytes(&self) -> usize {
        self.of.capacity() * std::mem::size_of::<u32>()
            + self.index.reserved_bytes()
            + self.keys.0.capacity() * std::mem::size_of::<Key>()
            + self
                .teams
                .iter()
                // The record (its key inline), its members, the names' table's copy.
                .map(|t| std::mem::size_of::<Team>() + t.members.capacity() * 4 + t.name.len() + 16)
                .sum::<usize>()
    }
}

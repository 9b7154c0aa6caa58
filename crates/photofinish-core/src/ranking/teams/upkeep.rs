//! How a ranking keeps its teams in step with its members (docs/SPEC.md §17): what a
//! write does to its member's team, decided with its refusals before anything changes
//! ([`TeamStep`]) and applied after; a removal, a hide and a show, each at its instant;
//! and a snapshot's teams, written and loaded.

use super::{TeamPlace, Teams};
use crate::columns::Scores;
use crate::error::BoardError;
use crate::index::Approach;
use crate::ranking::{Ranking, Write};

/// What a write does to its member's team, decided before the ranking changes.
#[derive(Debug, Clone, Copy)]
pub(in crate::ranking) struct TeamStep {
    place: TeamPlace,
    /// The member's score counts in its team (it is not hidden).
    visible: bool,
    /// The change to its team's sum.
    delta: i128,
}

/// A snapshot's record of one team: its key, when and in what order its sum last
/// changed, its members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedTeam {
    /// The team's key.
    pub name: String,
    /// When its sum last changed, µs.
    pub reached_at_us: i64,
    /// The order of that change.
    pub seq: u64,
    /// Its members, hidden ones too.
    pub members: Vec<String>,
}

impl Ranking {
    /// This ranking with teams of at most `max_size` members (docs/SPEC.md §17), when
    /// it is given. For an empty ranking.
    pub fn with_teams(mut self, max_size: Option<u32>) -> Self {
        self.teams = max_size.map(|s| Box::new(Teams::new(s)));
        self
    }

    /// Whether this ranking has teams.
    pub fn has_teams(&self) -> bool {
        self.teams.is_some()
    }

    /// The most members a team holds, when this ranking has teams (an import file keeps
    /// it).
    pub fn team_size(&self) -> Option<u32> {
        self.teams.as_deref().map(Teams::max_size)
    }

    /// The team of record `id`, if it is in one.
    pub(in crate::ranking) fn team_of_id(&self, id: u32) -> Option<&str> {
        let teams = self.teams.as_deref()?;
        teams.of(id).map(|t| &*teams.get(t).name)
    }

    /// The team `member` is in, if it is ranked in one.
    pub fn team_of(&self, member: &str) -> Option<&str> {
        self.team_of_id(self.find(member)?)
    }

    /// What write `w` does to its member's team, its member's record `existing` when it
    /// is ranked, its scores going from `old` to `new`: refused before anything changes
    /// (another team, a full one, one named on a ranking without teams, a sum past i64).
    pub(in crate::ranking) fn team_step(
        &self,
        w: &Write<'_>,
        existing: Option<u32>,
        old: Option<&Scores>,
        new: &Scores,
    ) -> Result<Option<TeamStep>, BoardError> {
        let Some(teams) = self.teams.as_deref() else {
            return match w.team {
                None => Ok(None),
                Some(_) => Err(BoardError::InvalidParameter(
                    "the board has no teams: a write may name a team only on a board \
                     created with teams"
                        .into(),
                )),
            };
        };
        let place = teams.place(w.member, existing, w.team)?;
        let visible = existing.map_or(!w.hidden, |id| !self.is_hidden_id(id));
        let old = old.map_or(0, |s| i128::from(s.first()));
        let delta = if visible {
            i128::from(new.first()) - old
        } else {
            0
        };
        let team = match (existing, place) {
            (Some(id), _) => teams.of(id).map(Some),
            (None, TeamPlace::Into(t)) => Some(Some(t)),
            (None, TeamPlace::Open(_)) => Some(None),
            (None, TeamPlace::Stay) => None,
        };
        if let (Some(team), true) = (team, delta != 0) {
            teams.check(team, delta)?;
            if let Some(t) = team {
                // Its record is here (the check read it): the leaf its move tries first
                // loads while the board's index works.
                teams.prefetch_leaf(t);
            }
        }
        Ok(Some(TeamStep {
            place,
            visible,
            delta,
        }))
    }

    /// Applies `step` of write `w` to record `id`, `added` when the write added it; `at`
    /// is the way down to its team's leaf when the write took it before it moved the
    /// member ([`Teams::approach`]).
    pub(in crate::ranking) fn take_team_step(
        &mut self,
        step: Option<TeamStep>,
        w: &Write<'_>,
        id: u32,
        added: bool,
        at: Option<Approach>,
    ) {
        let (Some(step), Some(teams)) = (step, self.teams.as_deref_mut()) else {
            return;
        };
        if added {
            let score = self
                .shape
                .order(0)
                .denormalize(self.records.slab.get(id).nscore);
            teams.enter(id, step.place, score, step.visible, w.at_us);
        } else if step.visible {
            teams.moved(id, step.delta, w.at_us, at);
        }
    }

    /// Record `id` leaves its team at `at_us` (its member is being removed).
    pub(in crate::ranking) fn leave_team(&mut self, id: u32, at_us: i64) {
        let visible = !self.is_hidden_id(id);
        let score = self.scores_at(id).first();
        if let Some(teams) = self.teams.as_deref_mut() {
            teams.leave(id, score, visible, at_us);
        }
    }

    /// Hides `member` (`hidden`) or shows it again at `at_us`: kept among the hidden
    /// members ([`Ranking::mark_hidden`]) and, when that changed, its score taken out of
    /// its team's sum or put back (docs/SPEC.md §17).
    pub fn set_hidden(&mut self, member: &str, hidden: bool, at_us: i64) {
        let Some(id) = self.find(member) else {
            return;
        };
        let was = self.is_hidden_id(id);
        self.mark_hidden(member, hidden);
        if was != hidden {
            let score = self.scores_at(id).first();
            if let Some(teams) = self.teams.as_deref_mut() {
                teams.shown(id, score, !hidden, at_us);
            }
        }
    }

    /// Every team holding a member, as a snapshot records it, sorted by key.
    pub fn saved_teams(&self) -> Vec<SavedTeam> {
        let Some(teams) = self.teams.as_deref() else {
            return Vec::new();
        };
        let name = |id: u32| String::from_utf8_lossy(self.records.name(id)).into_owned();
        let mut all: Vec<SavedTeam> = teams
            .open_teams()
            .map(|(t, key)| SavedTeam {
                name: t.name.to_string(),
                reached_at_us: key.reached_at_us,
                seq: key.seq,
                members: t.members.iter().map(|&id| name(id)).collect(),
            })
            .collect();
        all.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// The order the next change of a team's sum gets (a snapshot keeps it).
    pub fn teams_next_seq(&self) -> u64 {
        self.teams.as_deref().map_or(0, Teams::next_seq)
    }

    /// Puts back the teams a snapshot recorded, `next_seq` the order their next change
    /// gets, then counts their sums from their members ([`Self::recount_teams`]). Refuses
    /// a member the ranking does not hold or gives twice, a team past its size, and
    /// teams on a ranking without them.
    pub fn load_teams(&mut self, saved: Vec<SavedTeam>, next_seq: u64) -> Result<(), BoardError> {
        let refuse = |what: String| BoardError::InvalidEntries(what);
        for team in saved {
            let mut ids = Vec::with_capacity(team.members.len());
            for m in &team.members {
                ids.push(
                    self.find(m)
                        .ok_or_else(|| refuse(format!("team member {m:?} is not ranked")))?,
                );
            }
            let teams = self
                .teams
                .as_deref_mut()
                .ok_or_else(|| refuse("teams on a board without them".into()))?;
            teams.restore(&team.name, team.reached_at_us, team.seq, ids)?;
        }
        if let Some(teams) = self.teams.as_deref_mut() {
            teams.restore_seq(next_seq);
        }
        self.recount_teams();
        Ok(())
    }

    /// The first team (by key) whose sum is past the i64 range — what an import, which
    /// sums its rows at once, refuses as a write would.
    pub fn team_past_range(&self) -> Option<&str> {
        self.teams.as_deref()?.past_range()
    }

    /// Counts every team's sum again from its members' scores, its hidden ones left
    /// out, and builds the teams' index (a ranking put in place whole, once its hidden
    /// members are marked).
    pub fn recount_teams(&mut self) {
        let Some(mut teams) = self.teams.take() else {
            return;
        };
        teams.recount(|id| (!self.is_hidden_id(id)).then(|| self.scores_at(id).first()));
        self.teams = Some(teams);
    }

    /// Checks the teams against the members (see [`Teams::check_invariants`]).
    pub(in crate::ranking) fn check_teams(&self) {
        if let Some(teams) = self.teams.as_deref() {
            teams.check_invariants(self.members.ids(), |id| {
                (!self.is_hidden_id(id)).then(|| self.scores_at(id).first())
            });
        }
    }
}
